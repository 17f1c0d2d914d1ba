"""``shotjudge`` command line. Each subcommand lives in ``judge/cmd_<name>.py`` and provides
``register(subparsers)``; heavy imports happen inside the command, so ``shotjudge referee``
starts without loading OpenCV or torch. A command named on the command line is the only module
imported (``--help`` and anything else not a command import them all, for the list of commands)."""
from __future__ import annotations

import argparse
import errno
import importlib
import pkgutil
import sys

import judge
from judge.errors import is_user_error
from judge.i18n import _, language_from_argv, set_language

__all__ = ["main"]


def _commands() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(judge.__path__) if m.name.startswith("cmd_"))


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or of the command ``only`` alone (its module is the one imported)."""
    parser = argparse.ArgumentParser(prog="shotjudge", description=_("Automatic referee for Novuss and Cvrnkaná."))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in _commands() if only is None else [f"cmd_{only}"]:
        importlib.import_module(f"judge.{name}").register(sub)
    return parser


def _chosen(argv: list[str]) -> str | None:
    """The command ``argv`` names first, if it is one of ours (then its module alone is needed)."""
    if not argv or f"cmd_{argv[0]}" not in _commands():
        return None
    return argv[0]


#: a file or folder the system will not let us read or write: the user's to fix (space, permissions, path)
_DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOENT, errno.EDQUOT,
                          errno.EISDIR, errno.ENOTDIR, errno.EEXIST, errno.ENAMETOOLONG})


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    set_language(language_from_argv(argv))  # before the help texts are made
    parser = build_parser(_chosen(argv))
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print(_("shotjudge: interrupted"), file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        if exc.errno not in _DISK_ERRNOS:
            return _internal_error(args.command, exc)
        where = f"{exc.filename}: " if exc.filename else ""
        print(_("shotjudge {command}: error: {message}").format(command=args.command, message=f"{where}{exc.strerror or exc}"),
              file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - our own errors are one line; anything else is a bug, reported as one
        if not is_user_error(exc):
            return _internal_error(args.command, exc)
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(_("shotjudge {command}: error: {message}").format(command=args.command, message=message), file=sys.stderr)
        return 2


def _internal_error(command: str, exc: BaseException) -> int:
    """A bug of ours: one line saying so and where the full trace was written (``SHOTJUDGE_TRACEBACK=1``
    lets it through instead, for a developer)."""
    import contextlib
    import os
    import tempfile
    import time
    import traceback

    if os.environ.get("SHOTJUDGE_TRACEBACK") == "1":
        raise exc
    text = "".join(traceback.format_exception(exc))
    path = None
    try:
        fd, path = tempfile.mkstemp(prefix=time.strftime("shotjudge-crash-%Y%m%d-%H%M%S-"), suffix=".txt")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(f"shotjudge {command}: {' '.join(sys.argv)}\n\n{text}")
        kept = _("the full trace is in {path}").format(path=path)
    except OSError:
        if path is not None:  # no half-written crash file
            with contextlib.suppress(OSError):
                os.unlink(path)
        kept = _("the trace could not be written to a file")
        sys.stderr.write(text)
    first = str(exc).splitlines()[0] if str(exc) else ""
    print(_("shotjudge {command}: internal error: {error} ({kept}; please report it)").format(
        command=command, error=f"{type(exc).__name__}: {first}", kept=kept), file=sys.stderr)
    return 70  # EX_SOFTWARE


if __name__ == "__main__":
    sys.exit(main())
