"""The pit's live folds beside a running table's: advantage-play alerts and the shift's analytics, fed every record the table writes as a replay of its journal would be.

A running table keeps one `PitWatch`: at its start the journal's (time, record) pairs are folded into it in the
same pass that rebuilds the table's state (`replay`), and after each group commit every record written
(`add`). The folds are the pure ones of controller/apalerts.py (`step`) and controller/tableanalytics.py
(`Tally`), so what the pit sees live is what `apalerts.replay` and `tableanalytics.analyse` give for the same
journal. The `pit` command's answer (`view`) costs the size of what it shows, never a replay: 10,000 rounds in,
it is as quick as at the first (`croupier bench pit`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from controller import apalerts
from controller.tableanalytics import Periods, Tally
from controller.tablerecords import TableRecord, table_record
from controller.tablestate import TableState, step

__all__ = ["PitWatch", "replay", "ALERTS_SHOWN"]

log = logging.getLogger("croupier.table")

ALERTS_SHOWN = 20   # the pit's answer carries the latest alerts with their evidence (and how many there are in all)


class PitWatch:
    """Advantage-play alerts (`ap`) and the analytics (`tally`) of one table, folded record by record."""

    def __init__(self, periods: Periods = Periods(), thresholds: apalerts.Thresholds = apalerts.Thresholds()) -> None:
        self.ap = apalerts.new_state(thresholds)
        self.tally = Tally(periods)
        self.failed: str | None = None   # why the watch stopped folding (a bug: the table goes on without it)

    def add(self, t: float, record: Mapping[str, Any], before: TableState, after: TableState,
            effects: tuple[Any, ...], typed: TableRecord | None = None) -> None:
        """One record the table wrote at epoch time `t`, which its fold took from `before` to `after` (`typed`: the
        record as the fold read it, when at hand)."""
        if self.failed is not None:
            return
        try:
            self.ap = apalerts.step(self.ap, record, effects)
            self.tally.add(t, typed if typed is not None else table_record(record), before, after, effects)
        except Exception as exc:  # noqa: BLE001 - the pit's watch must never stop the table (nor its start)
            self.failed = f"{type(exc).__name__}: {exc}"
            log.exception("the pit's watch stopped at a %s record (the table goes on)", record.get("kind"))

    def view(self, state: TableState, now: float) -> dict[str, Any]:
        """The pit's view of the table: its ratings and paperwork (controller/rating.py), the advantage-play watch
        and its alerts with their evidence, and the gaming day's and the shift's figures with the shift's win line.
        Pit only: never for a screen at the table."""
        from controller import rating

        return {**rating.pit_view(state, compute=False), "watch_failed": self.failed,
                "advantage_play": apalerts.pit_view(self.ap, state.table_id, ALERTS_SHOWN),
                "analytics": self.tally.shift_view(now)}


def replay(state: TableState, entries: Iterable[tuple[int, float, Mapping[str, Any]]],
           watch: PitWatch) -> TableState:
    """The table's state after a journal's (seq, epoch seconds, record) rows, each also fed to `watch`: one pass
    for both (what tablestate.replay gives, and the watch a live table would hold)."""
    for seq, t, row in entries:
        rec = table_record(row, f"journal row {seq}")
        after, effects = step(state, rec)
        after = replace(after, seq=seq)
        watch.add(t, row, state, after, effects, rec)
        state = after
    return state
