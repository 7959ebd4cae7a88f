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
from controller.tablerecords import AlertRecord, DealerSignIn, Refused, Resolve, Start, TableRecord, table_record
from controller.tablestate import TableState, new_state, step

Effects = tuple[Any, ...]

__all__ = ["Periods", "Figures", "Tally", "analyse", "parse_hhmm"]

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


class Tally:
    """The analytics folded one record at a time, beside a fold of the table's own (`analyse` runs one over a whole
    journal; a running table feeds it each record it writes, so the pit's figures never need a replay)."""

    SERIES = 720   # the points kept of the current shift's win line (halved, every other dropped, when full)

    def __init__(self, periods: Periods = Periods()) -> None:
        self.periods = periods
        self.total = Figures()
        self.days: dict[str, Figures] = {}
        self.shifts: dict[tuple[str, str], Figures] = {}
        self.dealer = "(not signed in)"
        self.last: tuple[float, str, str] | None = None   # (time, state it left the table in, dealer then)
        self.first_t: float | None = None
        self.series: tuple[tuple[str, str], list[tuple[float, int]]] | None = None   # (day, shift), [(t, win)]
        self._period: tuple[float, float, str, str] = (0.0, 0.0, "", "")   # (from, until, day, shift) last found

    def _at(self, t: float) -> tuple[str, str]:
        """(gaming day, shift) of `t`; the period last found is kept (a table's records come in time order)."""
        since, ends, day, shift = self._period
        if not since <= t < ends:
            day, shift, ends = self.periods.at(t)
            self._period = (t, ends, day, shift)
        return day, shift

    def _buckets(self, t: float) -> list[Figures]:
        day, shift = self._at(t)
        return [self.total, self.days.setdefault(day, Figures()), self.shifts.setdefault((day, shift), Figures())]

    def _spend(self, t0: float, t1: float, what: str, who: str) -> None:
        while t1 > t0:
            _, _, ends = self.periods.at(t0)
            upto = min(t1, ends)
            for f in self._buckets(t0):
                f.seconds[what] = f.seconds.get(what, 0.0) + (upto - t0)
                if what != "off":
                    f.dealers.setdefault(who, [0, 0.0])[1] += upto - t0
            t0 = upto

    def add(self, t: float, rec: TableRecord, before: TableState, after: TableState, effects: Effects) -> None:
        """One record at epoch time `t`, which the table's fold took from `before` to `after` with `effects`."""
        if self.first_t is None:
            self.first_t = t
        if self.last is not None:
            self._spend(self.last[0], t, "off" if isinstance(rec, Start) else self.last[1], self.last[2])
        if isinstance(rec, DealerSignIn):
            self.dealer = rec.dealer or "(not signed in)"
        settled = after.meters.rounds - before.meters.rounds
        won = after.meters.house_win - before.meters.house_win
        for f in self._buckets(t):
            f.rounds += settled
            f.handle += after.meters.handle - before.meters.handle
            f.win += won
            f.voids += sum(isinstance(e, RoundVoided) for e in effects)
            if settled:
                f.dealers.setdefault(self.dealer, [0, 0.0])[0] += settled
            if isinstance(rec, AlertRecord):
                f.alerts += 1
                f.camera += rec.alert.get("kind") == "camera"
            elif isinstance(rec, Resolve) and rec.reassign:
                f.corrections += 1
            elif isinstance(rec, Refused) and rec.who == "dealer":
                f.refused += 1
        if settled or won:
            day, shift = self._at(t)
            if self.series is None or self.series[0] != (day, shift):
                self.series = ((day, shift), [])
            points = self.series[1]
            points.append((t, self.shifts[(day, shift)].win))
            if len(points) > self.SERIES:
                del points[-2::-2]   # every other point, the latest kept
        same = self.last is not None and after.game is before.game and after.alerts is before.alerts
        self.last = (t, self.last[1] if same and self.last is not None else _phase(after), self.dealer)

    def report(self, table_id: str, game: str) -> dict[str, Any]:
        """Totals, per gaming day and per shift (what `croupier analytics` prints)."""
        p = self.periods
        return {
            "table": table_id, "game": game,
            "periods": {"day_start": p.day_start, "shifts": list(p.shifts), "utc_offset_minutes": p.utc_offset_minutes},
            "from": self.first_t, "to": self.last[0] if self.last else None,
            "total": self.total.json(),
            "days": {d: {**f.json(), "shifts": {s: self.shifts[(d, s)].json() for (dd, s) in sorted(self.shifts)
                                                if dd == d}}
                     for d, f in sorted(self.days.items())},
        }

    def shift_view(self, now: float) -> dict[str, Any]:
        """The pit's: the gaming day and shift of `now`, their figures, the dealer signed in and the shift's win line
        ([epoch seconds, the shift's win so far] at each round settled)."""
        day, shift, ends = self.periods.at(now)
        empty = Figures().json()
        series = self.series[1] if self.series is not None and self.series[0] == (day, shift) else []
        return {"day": day, "shift": shift, "shift_ends": ends, "dealer": None if self.dealer == "(not signed in)"
                else self.dealer,
                "day_figures": self.days[day].json() if day in self.days else empty,
                "shift_figures": self.shifts[(day, shift)].json() if (day, shift) in self.shifts else empty,
                "win_series": [[round(t, 3), w] for t, w in series]}


def analyse(table_id: str, game: GameSpec[Any], rules: RulesBase, entries: Iterable[tuple[float, Mapping[str, Any]]],
            periods: Periods = Periods()) -> dict[str, Any]:
    """The analytics of a journal's (epoch seconds, record) pairs: totals, per gaming day and per shift."""
    state = new_state(table_id, game, rules)
    tally = Tally(periods)
    for t, row in entries:
        rec = table_record(row)
        after, effects = step(state, rec)
        tally.add(t, rec, state, after, effects)
        state = after
    return tally.report(table_id, game.name)
