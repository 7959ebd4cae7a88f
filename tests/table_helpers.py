"""Helpers for table runtime tests: a config on free loopback ports with a simulated shoe, run with an autoplay."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from controller.config import TableConfig, config_from_mapping


def free_ports(n: int) -> list[int]:
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


def table_config(tmp: Path, game: str = "baccarat", seed: int = 7, rules: dict[str, Any] | None = None,
                 panel: str | None = None, **table: Any) -> TableConfig:
    p1, p2, p3 = free_ports(3)
    data: dict[str, Any] = {
        "table": {"id": f"{game}-1", "game": game, "journal": str(tmp / f"{game}.journal"), **table},
        "rules": rules or {},
        "shoe": {"port": "sim", "seed": seed},
        "bus": {"publish": f"tcp://127.0.0.1:{p1}", "snapshot": f"tcp://127.0.0.1:{p2}",
                "commands": f"tcp://127.0.0.1:{p3}", "heartbeat": 0.2},
    }
    if panel:
        data["panel"] = {"file": panel, "driver": "sim"}
    return config_from_mapping(data, tmp / "table.toml")
