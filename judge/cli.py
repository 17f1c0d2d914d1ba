"""``shotjudge`` command line. Each subcommand lives in ``judge/cmd_<name>.py`` and provides
``register(subparsers)``; heavy imports happen inside the command, so ``shotjudge referee``
starts without loading OpenCV or torch."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

import judge
from judge.errors import is_user_error

__all__ = ["main"]


def _commands() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(judge.__path__) if m.name.startswith("cmd_"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="shotjudge", description="Automatic referee for Novuss and Cvrnkaná.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in _commands():
        importlib.import_module(f"judge.{name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("shotjudge: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # noqa: BLE001 - only our own errors are turned into one line
        if not is_user_error(exc):
            raise
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        print(f"shotjudge {args.command}: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
