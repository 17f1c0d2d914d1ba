"""Make ultralytics work without a network: no weights, fonts, telemetry, settings sync or auto-installs.

Must run before ``ultralytics`` is first imported (its ``ONLINE`` flag and settings are read at import).
Settings live in a private folder (default ``~/.cache/shotjudge/ultralytics``, or ``YOLO_CONFIG_DIR``)
with sync and every logger integration off; ``check_font`` (called by the dataset check even with ``plots=False``) would try to download
Arial.ttf, so it is replaced by a no-op — plots are off, nothing needs a font.
"""
from __future__ import annotations

import os
from pathlib import Path

__all__ = ["offline_ultralytics"]

_DONE = False


def offline_ultralytics(config_dir: str | Path | None = None):
    """Configure and import ultralytics for offline use; returns the ``ultralytics`` module."""
    global _DONE
    if not _DONE:
        os.environ["YOLO_OFFLINE"] = "1"  # ONLINE = False: no hub, no GitHub asset look-ups
        os.environ["YOLO_AUTOINSTALL"] = "0"  # never pip-install a missing export dependency at run time
        if config_dir is not None or "YOLO_CONFIG_DIR" not in os.environ:
            d = Path(config_dir or Path.home() / ".cache" / "shotjudge" / "ultralytics").resolve()
            d.mkdir(parents=True, exist_ok=True)
            os.environ["YOLO_CONFIG_DIR"] = str(d)
    import ultralytics
    from ultralytics.utils import SETTINGS

    if not _DONE:
        off = {k: False for k in ("sync", "clearml", "comet", "dvc", "mlflow", "raytune", "tensorboard", "wandb",
                                  "vscode_msg", "openvino_msg") if k in SETTINGS}
        if any(SETTINGS.get(k) for k in off):
            SETTINGS.update(off)
        import ultralytics.data.utils as data_utils

        data_utils.check_font = lambda *a, **k: None
        _DONE = True
    return ultralytics
