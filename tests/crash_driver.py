"""Crash-test driver: forks a simulated table with autoplay, SIGKILLs it at seeded journal points, restarts, repeats.

Run as `python -m tests.crash_driver CONFIG.json KILLS SEED`; prints one JSON line per kill and a last line
{"done": ...}. The parent imports everything once and forks a fresh child per life, so 200 restarts cost
seconds, not minutes; the child dies by SIGKILL exactly as a power cut would leave the journal.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

from controller.autoplay import Autoplay
from controller.config import config_from_mapping
from controller.journal import Journal
from controller.rng import SeededRng
from controller.table import Table


def life(cfg, kill_at, seed: int, rounds: int | None) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        table = Table(cfg, kill_at=kill_at)
        await table.start()
        await asyncio.wait_for(Autoplay(table, SeededRng(seed), rounds=rounds).run(), 60)
        await table.stop()

    asyncio.run(main())


def last_seq(cfg) -> int:  # type: ignore[no-untyped-def]
    if not cfg.journal.exists():
        return 0
    with Journal(cfg.journal, cfg.table_id, verify=False) as j:
        return j.last_seq


def record_at(cfg, seq: int) -> dict | None:  # type: ignore[no-untyped-def]
    with Journal(cfg.journal, cfg.table_id, verify=False) as j:
        for entry in j.entries(after=seq - 1):
            return entry.record
    return None


def fork_life(cfg, kill_at, seed: int, rounds: int | None) -> int:  # type: ignore[no-untyped-def]
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            life(cfg, kill_at, seed, rounds)
        except BaseException as exc:  # the child reports and exits; never returns into the parent's loop
            print(json.dumps({"child_error": repr(exc)}), flush=True)
            code = 3
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return status


def main() -> int:
    data = json.loads(Path(sys.argv[1]).read_text())
    kills, seed = int(sys.argv[2]), int(sys.argv[3])
    cfg = config_from_mapping(data, Path(sys.argv[1]))
    rng = SeededRng(seed)
    for i in range(kills):
        before = last_seq(cfg)
        mode = "before_journal" if rng.randbelow(3) == 0 else "after_journal"
        target = before + 2 + rng.randbelow(40)  # seq 1 of a life is its own start record
        status = fork_life(cfg, (mode, target), seed * 1000 + i, None)
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
        rec = record_at(cfg, target) if mode == "after_journal" else None
        print(json.dumps({"kill": i, "mode": mode, "seq": target, "killed": killed, "last_seq": last_seq(cfg),
                          "record": rec}), flush=True)
        if not killed:
            return 1
    # A last life without a kill: it must finish the round the last kill interrupted.
    status = fork_life(cfg, None, seed * 1000 + kills, 1)
    print(json.dumps({"done": os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
