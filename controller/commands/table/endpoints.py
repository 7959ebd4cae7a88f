"""Where a table's bus is, for the commands that talk to it (`watch`, `command`): from its config or from --table/--host/--ports."""

from __future__ import annotations

import argparse
from typing import Any

from controller.cli import CliError
from controller.commands._common import load

DEMO_PORTS = (5550, 5551, 5552)


def endpoint_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="the table's TOML config (endpoints and table id)")
    p.add_argument("--table", help="table id (without --config)")
    p.add_argument("--host", default="127.0.0.1", help="host of the demo's bus (without --config)")
    p.add_argument("--ports", type=int, nargs=3, default=DEMO_PORTS, metavar=("PUB", "SNAP", "CMD"))


def resolve_endpoints(args: argparse.Namespace) -> tuple[str, Any, Any]:
    from controller.bus import BusEndpoints

    if args.config:
        cfg = load(args.config)
        return cfg.table_id, cfg.bus.endpoints, cfg
    if not args.table:
        raise CliError("give --config FILE, or --table ID (and --host/--ports for a table not on this machine)")
    pub, snap, cmd = args.ports
    return args.table, BusEndpoints(f"tcp://{args.host}:{pub}", f"tcp://{args.host}:{snap}",
                                    f"tcp://{args.host}:{cmd}"), None


def key_pair(path: str, cfg: Any) -> tuple[tuple[bytes, bytes], bytes]:
    """Our CURVE key pair from `path` and the table's public key from its config's keys folder."""
    from controller.bus import load_public_key, load_secret_keys

    try:
        return load_secret_keys(path), load_public_key(cfg.bus.keys / "server.key")
    except (OSError, ValueError) as exc:
        raise CliError(f"--key: {exc}") from None
