"""An output folder that appears complete or not at all.

Everything is written into a hidden temporary folder next to the target (same file system) and moved
into place only when it is finished; on any failure the temporary folder is removed and the target is
left as it was. A target that already exists must be empty or a previous output of the same kind (only
the names this output writes), so a rerun replaces it but a user's other files are never touched.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from calibration.atomic import named_error

__all__ = ["OutputDirError", "check_target", "staged_dir"]


class OutputDirError(ValueError):
    """The output folder cannot be used (a file, inside a file, or full of someone else's files)."""


def _existing_ancestor(path: Path) -> Path:
    p = path.parent
    while not p.exists():
        p = p.parent
    return p


def check_target(target: str | Path, owned: Iterable[str], marker: str) -> Path:
    """Refuse a target that is a file, sits under a file, or holds anything but a previous output (one with
    ``marker`` in it and only ``owned`` names). Returns the absolute target."""
    path = Path(os.path.abspath(target))
    if path.exists() and not path.is_dir():
        raise OutputDirError(f"--out {target} is a file, not a folder")
    if not path.exists():
        anc = _existing_ancestor(path)
        if not anc.is_dir():
            raise OutputDirError(f"--out {target}: {anc} is a file, not a folder")
        return path
    names = {p.name for p in path.iterdir()}
    owned = set(owned)
    if names and (marker not in names or names - owned):
        foreign = sorted(names - owned) or sorted(names)
        raise OutputDirError(f"--out {target} is not empty and not a previous output of this command "
                             f"(it holds {', '.join(foreign[:3])}{', ...' if len(foreign) > 3 else ''})")
    return path


@contextmanager
def staged_dir(target: str | Path, owned: Iterable[str], marker: str) -> Iterator[Path]:
    """``with staged_dir(out, owned, marker) as tmp:`` write into ``tmp``; on success its content replaces
    the target's (``marker`` moved last), on failure nothing of it remains."""
    owned = tuple(owned)
    path = check_target(target, owned, marker)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.part-", dir=_existing_ancestor(path)))
    try:
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o777 & ~mask)  # a normal folder once in place, not mkdtemp's private one
        yield tmp
        _commit(tmp, path, owned, marker)
    except OSError as exc:  # a disk error names the file as it would have been called, not its temporary name
        shutil.rmtree(tmp, ignore_errors=True)
        raise named_error(exc, tmp, path) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _commit(tmp: Path, path: Path, owned: tuple[str, ...], marker: str) -> None:
    check_target(path, owned, marker)  # nothing appeared there while we worked
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        os.rename(tmp, path)  # one atomic step
        return
    made = sorted((p.name for p in tmp.iterdir()), key=lambda n: n == marker)  # the marker last
    old = [n for n in owned if (path / n).exists() or (path / n).is_symlink()]
    trash = Path(tempfile.mkdtemp(prefix=f".{path.name}.old-", dir=path.parent))
    try:
        if marker in old:  # first withdraw the marker: a half-swapped folder never looks complete
            os.rename(path / marker, trash / marker)
        for n in old:
            if n != marker:
                os.rename(path / n, trash / n)
        for n in made:
            os.rename(tmp / n, path / n)
    finally:
        shutil.rmtree(trash, ignore_errors=True)
    tmp.rmdir()
