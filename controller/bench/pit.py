"""`croupier bench pit`: how long a running table takes to answer the pit's `pit` command (ratings, paperwork, advantage-play alerts, the shift's analytics) on a long journal, against a replay of that journal.

A seeded blackjack journal (controller/bench/apalerts.py's players: a counter, a flat and a random bettor, the
counter rated) of at least `--rounds` rounds is written, a round at a time, `--seconds-per-round` apart on the
table's clock; a table is started on it (the one pass that rebuilds its state and its pit watch is timed) and
asked `pit` `--asks` times through its writer, as a bus command would be. Beside it, what one answer would cost if
it replayed the journal (tableanalytics and apalerts over every row, each with the table's fold), and the table's
own fold alone (what a start cost before the pit's watch), both after an untimed replay (the rating's exact EVs are
cached per hand once computed).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

HELP = ("the pit command's answer time on a long seeded blackjack journal (default 10,000 rounds), against a "
        "replay of that journal per answer")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=10_000, help="rounds in the journal, at least (default 10000)")
    parser.add_argument("--asks", type=int, default=200, help="pit commands timed (default 200)")
    parser.add_argument("--seconds-per-round", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=1)


def _journal(path: Path, rounds: int, seed: int, per_round: float, t0: float) -> tuple[int, int]:
    """Write the seeded journal: (rounds, records)."""
    from controller import __version__
    from controller.bench.apalerts import simulate
    from controller.games import blackjack as bj
    from controller.journal import Journal, default_anchor
    from controller.tablerecords import DealerSignIn, RatingStart, Start

    shoes = max(1, rounds // 20 + 1)
    records: list[dict[str, Any]] = []
    while sum(r["event"]["kind"] == "settle" for r in records) < rounds:
        records = simulate(seed, shoes, 75, keep_records=True, players=("counter", "flat", "random")).records or []
        shoes += max(1, shoes // 10)
    rules = bj.Rules(spots=3, penetration=75).to_json()
    n = 0
    t = t0
    with Journal(path, "bench-pit", anchor=default_anchor(path)) as journal:
        journal.append_many([Start("blackjack", rules, __version__).to_json(), DealerSignIn("D-1").to_json(),
                             RatingStart(1, "40000001", int(t), "pit").to_json()], int(t * 1e9))
        batch: list[dict[str, Any]] = []
        for record in records:
            batch.append(record)
            if record["event"]["kind"] == "settle":
                t += per_round
                journal.append_many(batch, int(t * 1e9))
                n += 1
                batch = []
                if n >= rounds:
                    break
    return n, len(records)


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    from controller import apalerts
    from controller.bus import Role
    from controller.config import config_from_mapping
    from controller.games import blackjack as bj
    from controller.journal import Journal
    from controller.table import Table
    from controller.tableanalytics import analyse
    from controller.tablestate import new_state
    from controller.tablestate import replay as replay_state
    from controller.pitwatch import PitWatch
    from controller.pitwatch import replay as watch_replay

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        t0 = 1_790_000_000.0
        began = time.perf_counter()
        rounds, _ = _journal(folder / "t.journal", args.rounds, args.seed, args.seconds_per_round, t0)
        say(f"journal of {rounds} rounds written in {time.perf_counter() - began:.1f} s")
        cfg = config_from_mapping({
            "table": {"id": "bench-pit", "game": "blackjack", "journal": str(folder / "t.journal")},
            "rules": {"spots": 3, "penetration": 75}, "shoe": {"port": "none"},
            "bus": {"publish": "inproc://bench-pit-pub", "snapshot": "inproc://bench-pit-snap",
                    "commands": "inproc://bench-pit-cmd"}}, folder / "table.toml")
        now = t0 + rounds * args.seconds_per_round

        with Journal(cfg.journal, cfg.table_id) as journal:
            entries = [(e.time, e.record) for e in journal.entries()]
        rules = bj.Rules(spots=3, penetration=75)

        def state_only() -> float:
            began = time.perf_counter()
            replay_state(new_state("bench-pit", bj.GAME, rules), ((i, r) for i, (_, r) in enumerate(entries, 1)))
            return time.perf_counter() - began

        # once untimed: the rating's exact EVs are cached per hand after their first computation, for both runs
        state_only()

        async def main() -> tuple[float, list[float], dict[str, Any]]:
            table = Table(cfg, clock=lambda: now)
            began = time.perf_counter()
            await table.start()
            started = time.perf_counter() - began
            try:
                times = []
                view: dict[str, Any] = {}
                for _ in range(args.asks):
                    t = time.perf_counter()
                    view = (await table.command(Role("pit"), "pit", {}))["result"]
                    times.append(time.perf_counter() - t)
                return started, times, view
            finally:
                await table.stop()

        started, times, view = asyncio.run(main())
        state_alone = state_only()
        began = time.perf_counter()
        watch_replay(new_state("bench-pit", bj.GAME, rules), ((i, t, r) for i, (t, r) in enumerate(entries, 1)),
                     PitWatch())
        with_watch = time.perf_counter() - began
        began = time.perf_counter()
        analyse("bench-pit", bj.GAME, bj.Rules(spots=3, penetration=75), entries)
        apalerts.replay(new_state("bench-pit", bj.GAME, bj.Rules(spots=3, penetration=75)), (r for _, r in entries))
        replayed = time.perf_counter() - began
    times.sort()
    report = {"rounds": rounds, "records": len(entries), "asks": len(times),
              "answer_ms": {"median": round(1000 * statistics.median(times), 3),
                            "p99": round(1000 * times[min(len(times) - 1, int(0.99 * len(times)))], 3),
                            "max": round(1000 * times[-1], 3)},
              "answer_bytes": len(__import__("json").dumps(view)),
              "start_s": round(started, 3), "state_replay_s": round(state_alone, 3),
              "state_and_watch_replay_s": round(with_watch, 3),
              "replay_per_answer_s": round(replayed, 3), "alerts": view["advantage_play"]["alerts_total"],
              "alerts_in_answer": len(view["advantage_play"]["alerts"])}
    say(f"{rounds} rounds, {len(entries)} records: the pit answers in {report['answer_ms']['median']} ms (median; "
        f"p99 {report['answer_ms']['p99']} ms, {report['answer_bytes']} bytes); the table starts in "
        f"{report['start_s']} s (its fold with the pit's watch: {report['state_and_watch_replay_s']} s, its own fold "
        f"alone: {report['state_replay_s']} s); a replay per answer "
        f"would take {report['replay_per_answer_s']} s")
    return report
