"""Table analytics from the journal: rounds per hour per dealer, handle, win and hold, dealer errors, camera/shoe disagreements and time in each state, per shift and per gaming day.

A pure function of the journal's (time, record) pairs: the table's own fold (controller/tablestate.py) replays
them, and each record's time up to the next is given to the state the table was in (the game's phase, or
"paused" under a dealer alert, or "off" before a record that starts the service again), split at the shift and
gaming-day boundaries. Times are epoch seconds; the gaming day starts at `day_start` local time, local time
being UTC plus a fixed `utc_offset_minutes` (no daylight saving change inside one report).

What counts as a dealer error (each per hundred rounds settled):
- voids: rounds voided (RoundVoided);
- alerts: dealer alerts raised (`alert` records: a misdeal, a draw gap, a camera disagreement, a door, a shoe reset);
- corrections: alerts resolved by reassigning cards (`resolve` with reassign);
- refused: commands refused to the dealer's role (`refused` with who "dealer").
Camera/shoe disagreements are the `alert` records of kind "camera". Drop is not in a table's journal (the
paperwork's records bring it); win is the house win of the settled rounds, and hold is win over handle.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.games.base import GameSpec, RoundVoided, RulesBase
from controller.tablerecords import AlertRecord, DealerSignIn, Refused, Resolve, Start, table_record
from controller.tablestate import TableState, new_state, step

__all__ = ["Periods", "Figures", "analyse", "parse_hhmm"]

_DAY = 86_400


def parse_hhmm(text: str, what: str = "time") -> int:
    """Seconds after midnight of "HH:MM"; ValueError naming `what` otherwise."""
    try:
        hh, mm = text.split(":")
        h, m = int(hh), int(mm)
    except ValueError:
        raise ValueError(f"{what}: expected HH:MM, got {text!r}") from None
    if not (0 <= h < 24 and 0 <= m < 60):
        raise ValueError(f"{what}: expected HH:MM between 00:00 and 23:59, got {text!r}")
    return h * 3600 + m * 60


@dataclass(frozen=True, slots=True)
class Periods:
    """The gaming day's start and the shifts' starts (local "HH:MM"; one of them the day's), and local time's offset
    from UTC."""

    day_start: str = "06:00"
    shifts: tuple[str, ...] = ("06:00", "14:00", "22:00")
    utc_offset_minutes: int = 0

    def __post_init__(self) -> None:
        parse_hhmm(self.day_start, "day_start")
        if not self.shifts:
            raise ValueError("shifts: at least one shift start")
        for s in self.shifts:
            parse_hhmm(s, "shifts")
        if parse_hhmm(self.day_start) not in {parse_hhmm(s) for s in self.shifts}:
            # a shift that ran over the day's start would be two pieces of one gaming day under one name
            raise ValueError(f"shifts: one shift starts when the gaming day does ({self.day_start})")

    def _offsets(self) -> list[tuple[int, str]]:
        """Each shift's start as seconds into the gaming day, in order."""
        start = parse_hhmm(self.day_start)
        return sorted(((parse_hhmm(s) - start) % _DAY, s) for s in self.shifts)

    def at(self, t: float) -> tuple[str, str, float]:
        """(gaming day, shift, the epoch time the shift or day ends) of epoch time `t`."""
        local = t + self.utc_offset_minutes * 60
        into_day = local - parse_hhmm(self.day_start)
        day_index = int(into_day // _DAY)
        s = into_day - day_index * _DAY
        offsets = self._offsets()
        shift, ends = offsets[0][1], float(_DAY)   # offsets[0] is the day's start (0)
        for i, (off, name) in enumerate(offsets):
            if s >= off:
                shift = name
                ends = float(offsets[i + 1][0]) if i + 1 < len(offsets) else float(_DAY)
        day = (dt.date(1970, 1, 1) + dt.timedelta(days=day_index)).isoformat()
        # the end in whole seconds from the epoch, so that at() of it is exactly the next period's start
        return day, shift, float(day_index * _DAY + int(ends) + parse_hhmm(self.day_start) - self.utc_offset_minutes * 60)


@dataclass
class Figures:
    """One period's sums (a local accumulator of `analyse`)."""

    rounds: int = 0
    voids: int = 0
    handle: int = 0
    win: int = 0
    alerts: int = 0
    camera: int = 0
    corrections: int = 0
    refused: int = 0
    seconds: dict[str, float] = field(default_factory=dict)
    dealers: dict[str, list[float]] = field(default_factory=dict)   # dealer -> [rounds, seconds open]

    def _per100(self, n: int) -> float | None:
        return round(100 * n / self.rounds, 3) if self.rounds else None

    def json(self) -> dict[str, Any]:
        errors = self.voids + self.alerts + self.corrections + self.refused
        return {
            "rounds": self.rounds, "voids": self.voids, "handle": self.handle, "win": self.win,
            "hold": round(self.win / self.handle, 5) if self.handle else None, "drop": None,
            "dealer_errors": {"voids": self.voids, "alerts": self.alerts, "corrections": self.corrections,
                              "refused": self.refused, "total": errors, "per_100_rounds": self._per100(errors)},
            "camera_shoe_disagreements": self.camera,
            "camera_shoe_disagreements_per_100_rounds": self._per100(self.camera),
            "seconds_in_state": {k: round(v, 3) for k, v in sorted(self.seconds.items())},
            "dealers": {d: {"rounds": int(r), "hours": round(s / 3600, 4),
                            "rounds_per_hour": round(r / (s / 3600), 2) if s > 0 else None}
                        for d, (r, s) in sorted(self.dealers.items())},
        }


def _phase(state: TableState) -> str:
    if state.paused:
        return "paused"
    return str(state.game_spec.expected_next(state.game).phase.value)


def analyse(table_id: str, game: GameSpec[Any], rules: RulesBase, entries: Iterable[tuple[float, Mapping[str, Any]]],
            periods: Periods = Periods()) -> dict[str, Any]:
    """The analytics of a journal's (epoch seconds, record) pairs: totals, per gaming day and per shift."""
    state = new_state(table_id, game, rules)
    total = Figures()
    days: dict[str, Figures] = {}
    shifts: dict[tuple[str, str], Figures] = {}
    dealer = "(not signed in)"
    last: tuple[float, str, str] | None = None   # (time, state it left the table in, dealer then)
    first_t: float | None = None

    def buckets(t: float) -> list[Figures]:
        day, shift, _ = periods.at(t)
        return [total, days.setdefault(day, Figures()), shifts.setdefault((day, shift), Figures())]

    def spend(t0: float, t1: float, what: str, who: str) -> None:
        while t1 > t0:
            _, _, ends = periods.at(t0)
            upto = min(t1, ends)
            for f in buckets(t0):
                f.seconds[what] = f.seconds.get(what, 0.0) + (upto - t0)
                if what != "off":
                    f.dealers.setdefault(who, [0, 0.0])[1] += upto - t0
            t0 = upto

    for t, row in entries:
        rec = table_record(row)
        if first_t is None:
            first_t = t
        if last is not None:
            spend(last[0], t, "off" if isinstance(rec, Start) else last[1], last[2])
        before = state.meters
        state, effects = step(state, rec)
        after = state.meters
        if isinstance(rec, DealerSignIn):
            dealer = rec.dealer or "(not signed in)"
        for f in buckets(t):
            settled = after.rounds - before.rounds
            f.rounds += settled
            f.handle += after.handle - before.handle
            f.win += after.house_win - before.house_win
            f.voids += sum(isinstance(e, RoundVoided) for e in effects)
            if settled:
                f.dealers.setdefault(dealer, [0, 0.0])[0] += settled
            if isinstance(rec, AlertRecord):
                f.alerts += 1
                f.camera += rec.alert.get("kind") == "camera"
            elif isinstance(rec, Resolve) and rec.reassign:
                f.corrections += 1
            elif isinstance(rec, Refused) and rec.who == "dealer":
                f.refused += 1
        last = (t, _phase(state), dealer)
    return {
        "table": table_id, "game": game.name,
        "periods": {"day_start": periods.day_start, "shifts": list(periods.shifts),
                    "utc_offset_minutes": periods.utc_offset_minutes},
        "from": first_t, "to": last[0] if last else None,
        "total": total.json(),
        "days": {d: {**f.json(), "shifts": {s: shifts[(d, s)].json() for (dd, s) in sorted(shifts) if dd == d}}
                 for d, f in sorted(days.items())},
    }
