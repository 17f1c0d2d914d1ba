"""Write a file all or nothing: into a temp file beside it, then rename over the target."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Callable

from .errors import CalibrationError

__all__ = ["write_atomic"]


def write_atomic(path, write: Callable[[str], object]) -> Path:
    """Call ``write(tmp_path)`` and move the result to ``path``; on any failure ``path`` is untouched."""
    path = Path(path).resolve()
    if not path.parent.is_dir():
        raise CalibrationError(f"cannot write {path.name}: folder {path.parent} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    os.close(fd)
    try:
        write(tmp)
        if os.path.getsize(tmp) == 0:
            raise OSError(f"nothing was written to {path}")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
