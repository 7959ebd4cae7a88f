"""The `croupier` command line: one entry point whose subcommands are the modules of controller/commands/."""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
from typing import Sequence

from controller import __version__

__all__ = ["main", "CliError"]


class CliError(Exception):
    """A user-facing error: printed as one line, exit status 2, no traceback."""


def build_parser() -> argparse.ArgumentParser:
    import controller.commands as commands

    parser = argparse.ArgumentParser(
        prog="croupier",
        description="Controller for live casino tables and slot cabinets.",
    )
    parser.add_argument("--version", action="version", version=f"croupier {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    # Each command module registers itself; its heavy imports happen only when it runs.
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"controller.commands.{info.name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except CliError as exc:
        print(f"croupier {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `croupier meters ... | head`: the reader has all it wanted
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes
        return 0


if __name__ == "__main__":
    # `python -m controller.cli` runs this file as __main__, a second copy of the module: the commands raise
    # controller.cli.CliError, which only the imported module's main() catches.
    from controller.cli import main as imported_main

    sys.exit(imported_main())
