"""`croupier keys`: create CURVE key pairs for the bus (the table's server key, one per dealer, terminal or operator)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("keys", help="create CURVE key pairs for the bus",
                       description="Create a CURVE key pair NAME.key (public: give it to the other side) and "
                                   "NAME.key_secret (private: stays on this machine, mode 0600).")
    p.add_argument("names", nargs="+", metavar="NAME", help="key names, e.g. server dealer spot3 ops")
    p.add_argument("--dir", default="keys", help="folder for the key files (default ./keys)")
    p.add_argument("--force", action="store_true", help="replace existing key files")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from controller.bus import create_keys
    from controller.cli import CliError

    folder = Path(args.dir)
    for name in args.names:
        if not name.replace("-", "").replace("_", "").isalnum():
            raise CliError(f"key name {name!r}: use letters, digits, - and _")
        if (folder / f"{name}.key_secret").exists() and not args.force:
            raise CliError(f"{folder / (name + '.key_secret')} exists (use --force to replace it)")
        public, secret = create_keys(folder, name)
        print(f"{name}: public {public}, secret {secret}")
    return 0
