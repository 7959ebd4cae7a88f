"""Helpers for cabinet runtime tests: configs on free loopback ports over simulated panels (fast reels and hopper)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from controller.config import CabinetConfig, cabinet_config_from_mapping
from tests.table_helpers import free_ports

ROOT = Path(__file__).resolve().parent.parent
SCREEN_MAP = ROOT / "deploy" / "config" / "panel-cabinet-3reel.toml"
MECHANICAL_MAP = ROOT / "deploy" / "config" / "panel-cabinet-3reel-mechanical.toml"


def fast_map(tmp: Path, source: Path = MECHANICAL_MAP, stops: int | None = None) -> Path:
    """A copy of an example pin map whose reels turn 125 times faster (tests wait on them in real time)."""
    text = source.read_text()
    text = re.sub(r"^rate = \d+", "rate = 100000", text, flags=re.M)
    if stops is not None:
        text = re.sub(r"^stops = \d+", f"stops = {stops}", text, flags=re.M)
    tmp.mkdir(parents=True, exist_ok=True)
    path = tmp / f"fast-{source.name}"
    path.write_text(text)
    return path


def cabinet_config(tmp: Path, title: str = "frozen-assets", *, panel: Path | str | None = "mechanical",
                   progressive: dict[str, Any] | None = None, bus: dict[str, Any] | None = None,
                   **cabinet: Any) -> CabinetConfig:
    p1, p2, p3 = free_ports(3)
    data: dict[str, Any] = {
        "cabinet": {"id": f"{title}-1", "title": title, "journal": str(tmp / f"{title}.journal"), "seed": 11,
                    "spin_seconds": 0.0, "hopper_timeout": 0.5, "attract_seconds": 0, **cabinet},
        "bus": {"publish": f"tcp://127.0.0.1:{p1}", "snapshot": f"tcp://127.0.0.1:{p2}",
                "commands": f"tcp://127.0.0.1:{p3}", "heartbeat": 0.2, **(bus or {})},
    }
    if progressive is not None:
        data["cabinet"]["progressive"] = progressive
    if panel == "mechanical":
        data["panel"] = {"file": str(fast_map(tmp)), "driver": "sim"}
        data["cabinet"].setdefault("reels", "mechanical")
    elif panel == "screen":
        data["panel"] = {"file": str(SCREEN_MAP), "driver": "sim"}
    elif panel is not None:
        data["panel"] = {"file": str(panel), "driver": "sim"}
    return cabinet_config_from_mapping(data, tmp / "cabinet.toml")


class Script:
    """An Rng whose draws come from a list first (the stops a rule needs), then from a seeded stream."""

    def __init__(self, values: list[int] | None = None, seed: int = 1) -> None:
        from controller.rng import SeededRng

        self.values = list(values or [])
        self.rest = SeededRng(seed)

    def randbelow(self, n: int) -> int:
        if self.values:
            value = self.values.pop(0)
            assert 0 <= value < n, f"scripted draw {value} is outside 0..{n - 1}"
            return value
        return self.rest.randbelow(n)

    def randbits(self, k: int) -> int:
        return self.rest.randbits(k)


def stop_for(title: Any, reel: int, symbol: str) -> int:
    """A virtual stop of `reel` that puts `symbol` on the centre payline."""
    r = title.reels[reel]
    return next(v for v, p in enumerate(r.physical) if r.stops[p] == symbol)


def stops_for(title: Any, *symbols: str) -> list[int]:
    return [stop_for(title, i, s) for i, s in enumerate(symbols)]


RUNNING: list[Any] = []  # runtimes a test started: `run` stops those its coroutine did not


async def started(cfg: Any, **kw: Any) -> Any:
    """A started cabinet whose reels have come to rest: mechanical reels home at start, and a cabinet refuses
    play and cash-out while they turn."""
    import asyncio

    from controller.cabinet import Cabinet

    cab = Cabinet(cfg, **kw)
    RUNNING.append(cab)
    await cab.start()
    await asyncio.wait_for(cab.shown.wait(), 10)
    return cab


def journal(cfg: Any) -> list[dict[str, Any]]:
    """A cabinet's journal records, in order."""
    from controller.journal import Journal

    with Journal(cfg.journal, cfg.table_id) as j:
        return [e.record for e in j.entries()]


def replayed(cfg: Any) -> Any:
    """A cabinet's state replayed from its journal (what recall, meters and a restart start from)."""
    from controller.cabinetstate import new_state, replay
    from controller.journal import Journal

    with Journal(cfg.journal, cfg.table_id) as j:
        entries = [(e.seq, e.record) for e in j.entries()]
    return replay(new_state(cfg.cabinet_id, cfg.title, cfg.denomination, cfg.settings, cfg.paytable), entries)


def run(coro: Any, timeout: float = 60) -> Any:
    """Run a test's coroutine; whatever it leaves running (a failed assertion skips its stop) is stopped, so a
    failure never leaves bus sockets open behind it."""
    import asyncio

    async def main() -> Any:
        try:
            return await asyncio.wait_for(coro, timeout)
        finally:
            while RUNNING:
                await RUNNING.pop().stop()

    return asyncio.run(main())
