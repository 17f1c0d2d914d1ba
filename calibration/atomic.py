"""Files that appear whole or not at all, the one way every verb writes its outputs.

Each file is written under a temporary name in its own folder and renamed over its target only when every
file of its group is complete; on any failure the temporary files are removed and the targets are as they
were. Before the rename each file's data is flushed to the disk, and after it the folder's entry, so a power
cut leaves the old file or the new one, whole (a rename alone can reach the disk before the data it names).
A disk error names the target, not the temporary name the user never sees.
"""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from .errors import CalibrationError

__all__ = ["Staged", "staged_files", "write_atomic", "write_text_atomic", "named_error", "FILE_MODE", "DIR_MODE"]


def _umask() -> int:
    mask = os.umask(0)  # read once, at import (single-threaded)
    os.umask(mask)
    return mask


#: the modes an ordinary new file and folder get (0644 and 0755 under the usual umask 022): an output made
#: under a private temporary name (mkstemp: 0600, mkdtemp: 0700) is given these before it is moved into place
FILE_MODE = 0o666 & ~_umask()
DIR_MODE = 0o777 & ~_umask()
_MODE = FILE_MODE


def named_error(exc: OSError, tmp: str | Path, target: str | Path) -> OSError:
    """``exc`` naming ``target`` where it named ``tmp`` (or something under it) or no file at all."""
    if exc.errno is None:
        return exc
    name, tmp = exc.filename, str(tmp)
    if name is None:
        name = str(target)
    elif str(name) == tmp or str(name).startswith(tmp + os.sep):
        name = str(target) + str(name)[len(tmp):]
    else:
        return exc
    return OSError(exc.errno, exc.strerror, name)


class Staged:
    """The files of one output under temporary names; ``commit`` renames them all into place."""

    def __init__(self) -> None:
        self._files: list[tuple[Path, Path]] = []

    def temp(self, path: str | Path) -> Path:
        """A new temporary file beside ``path``, renamed to it on ``commit``: for a writer that fills it
        bit by bit (a video)."""
        target = Path(path).resolve()
        if not target.parent.is_dir():
            raise CalibrationError(f"cannot write {target.name}: folder {target.parent} does not exist")
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=target.suffix, dir=target.parent)
        os.close(fd)
        self._files.append((Path(tmp), target))
        return Path(tmp)

    def file(self, path: str | Path, write: Callable[[str], object]) -> Path:
        """Call ``write(tmp)`` now; the file is moved to ``path`` on ``commit``."""
        tmp = self.temp(path)
        try:
            write(str(tmp))
        except OSError as exc:
            raise named_error(exc, tmp, self._files[-1][1]) from None
        return self._files[-1][1]

    def commit(self) -> None:
        for tmp, target in self._files:
            os.chmod(tmp, _MODE)  # mkstemp's file is private; an output is an ordinary file
            _sync(tmp)
        for tmp, target in self._files:
            os.replace(tmp, target)
        for folder in {target.parent for _, target in self._files}:
            _sync(folder)
        self._files.clear()

    def discard(self) -> None:
        for tmp, _ in self._files:
            tmp.unlink(missing_ok=True)
        self._files.clear()


def _sync(path: Path) -> None:
    """Flush a file's data, or a folder's entries, to the disk (where the system lets a folder be opened)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        if path.is_dir():
            return  # a system that cannot open folders (Windows): the rename is as durable as it gets
        raise
    try:
        os.fsync(fd)
    except OSError:
        if not path.is_dir():
            raise
    finally:
        os.close(fd)


@contextmanager
def staged_files() -> Iterator[Staged]:
    """``with staged_files() as stage: stage.file(a, ...); stage.file(b, ...)``: both or neither."""
    stage = Staged()
    try:
        yield stage
        stage.commit()
    finally:
        stage.discard()


def write_atomic(path: str | Path, write: Callable[[str], object]) -> Path:
    """Call ``write(tmp_path)`` and move the result to ``path``; on any failure ``path`` is untouched."""
    with staged_files() as stage:
        target = stage.file(path, write)
    return target


def write_text_atomic(path: str | Path, text: str) -> Path:
    return write_atomic(path, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"))
