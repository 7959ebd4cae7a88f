"""Crash driver for the pit's records: a simulated table dealt by an autoplay while the pit rates players and
enters and confirms paperwork slips, SIGKILLed at seeded journal points and restarted each time.

Run as `python -m tests.rating_crash_driver CONFIG.json KILLS SEED`; one JSON line per kill, then {"done": ...}.
Every other life dies at one of its first pit records (before or after its durable write), the others at a seeded
journal point within 30 records of the life's start (tests/crash_driver.py's KillingJournal).
Every life sends the whole script again from its first command, each command with the same bus id, as a client
that never saw its answers would: what the journal holds already is answered from the journal (never applied
twice), what it lost is applied now (never lost). A round of the autoplay follows each command.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from controller.autoplay import Autoplay
from controller.bus import Origin, Role
from controller.buswire import digest
from controller.config import any_config_from_mapping
from controller.rng import SeededRng
from tests.crash_driver import _killed_at, last_seq, record_at

DAY = "2026-11-26"
SCRIPT: list[tuple[str, str, dict[str, Any]]] = [
    ("pit", "rating_start", {"spot": 1, "player": "100200300"}),
    ("dealer", "slip_enter", {"form": "opener", "day": DAY, "chips": {"5": 400, "25": 200, "100": 50}}),
    ("dealer", "slip_confirm", {"slip": 1}),       # refused: the role that entered it
    ("pit", "slip_confirm", {"slip": 1}),
    ("dealer", "rating_start", {"spot": 2, "player": "555000111"}),
    ("pit", "slip_enter", {"form": "fill", "day": DAY, "chips": {"25": 40}}),
    ("dealer", "slip_confirm", {"slip": 2}),
    ("pit", "rating_move", {"from": 1, "to": 3}),
    ("ops", "slip_enter", {"form": "credit", "day": DAY, "chips": {"100": 10}}),
    ("pit", "slip_confirm", {"slip": 3}),
    ("dealer", "rating_stop", {"spot": 2}),
    ("ops", "slip_enter", {"form": "drop", "day": DAY, "amount": 4321}),
    ("dealer", "slip_enter", {"form": "closer", "day": DAY, "chips": {"5": 380, "25": 230, "100": 41}}),
    ("pit", "slip_confirm", {"slip": 4}),
    ("ops", "slip_confirm", {"slip": 5}),
    ("pit", "rating_stop", {"spot": 3}),
]


def is_pit(record: Any) -> bool:
    """Whether `record` is a pit record: a rating, a slip, or a refusal of a pit command."""
    origin = record.get("origin") or {}
    return record.get("kind") in ("rating", "slip") or str(origin.get("id", "")).startswith("pit-")


async def _life(cfg: Any, kill_at: Any, seed: int) -> None:
    from controller.table import Table

    if kill_at is not None and kill_at[0].startswith("pit "):  # at this life's nth pit record, wherever it lies
        kill_at = (kill_at[0][4:], sys.maxsize, is_pit, kill_at[1])
    table = _killed_at(Table(cfg), kill_at)
    await table.start()
    play = Autoplay(table, SeededRng(seed), rounds=None)
    for i, (who, command, args) in enumerate(SCRIPT):
        origin = Origin(f"key-{who}", None, f"pit-{i}", digest(command, args))
        await table.command(Role(who), command, dict(args), origin)
        play.rounds, play.settled = 1, 0
        await asyncio.wait_for(play.run(), 60)
    await table.stop()


def main() -> int:
    data = json.loads(Path(sys.argv[1]).read_text())
    kills, seed = int(sys.argv[2]), int(sys.argv[3])
    cfg = any_config_from_mapping(data, Path(sys.argv[1]))
    rng = SeededRng(seed)
    for i in range(kills + 1):
        before = last_seq(cfg)
        kill_at = None
        if i < kills:
            mode = "before_journal" if rng.randbelow(3) == 0 else "after_journal"
            # every other life dies at one of its first pit records, the others anywhere within 30 records
            kill_at = (f"pit {mode}", 1 + rng.randbelow(2)) if i % 2 == 0 else (mode, before + 2 + rng.randbelow(30))
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                asyncio.run(_life(cfg, kill_at, seed * 1000 + i))
            except BaseException as exc:
                print(json.dumps({"child_error": repr(exc)}), flush=True)
                code = 3
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        if kill_at is None:
            print(json.dumps({"done": os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0}), flush=True)
            return 0
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        rec = record_at(cfg, kill_at[1]) if kill_at[0] == "after_journal" else \
            record_at(cfg, last_seq(cfg)) if kill_at[0] == "pit after_journal" else None
        print(json.dumps({"kill": i, "mode": kill_at[0], "seq": kill_at[1], "killed": killed,
                          "record": rec}), flush=True)
        if not killed:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
