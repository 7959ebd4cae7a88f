"""What the floor knows of each machine, folded from its journal rows as they arrive (pure): kind, state, status, alerts, meters per gaming day.

The floor folds each machine's rows with the machine's own fold (controller/tablestate.py, cabinetstate.py,
progressive.py's link_step), so the floor's meters and the machine's `croupier meters` cannot disagree. The
first row of every journal is its `start` record, which says what the machine is: a table names its game and
rules, a cabinet its title (with the title file's digest), denomination and settings, a link its reset.

A cabinet whose title file on the floor differs from the machine's (another digest), a game or title the
floor's Croupier does not know, or a row the fold refuses stops that machine's fold (`error` says why); its
status, floor seq and lag go on being kept. A cabinet's starting paytable is not journaled (it is the
config's `paytable`, 0 unless set): the floor takes it from its own `paytables` setting.

A floor-engine link (controller/floor/progressive_fold.py) has no journal: its meters per gaming day are what
each message did to its fold's meters (link_day_step), in the gaming day of the cabinet's time on the message.

Meters per gaming day: a row belongs to the gaming day of its journal time (`gaming_day`); a day's meters are
what its rows added to the machine's meters (meters only grow), so the days of a machine add up to its meters.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timedelta, tzinfo
from typing import Any, Mapping

from controller.floor.progressive_fold import PoolState
from controller.floor.wire import FloorRow

__all__ = ["MeterSet", "MachineSummary", "new_summary", "fold_row", "meter_set", "day_meters", "gaming_day",
           "alerts_of", "machine_status", "METER_FIELDS", "LinkDays", "link_day_step"]


@dataclass(frozen=True, slots=True)
class MeterSet:
    """A machine's meters as the floor reports them. Money is in cents; credits are counted in credits.

    table:   games = rounds, handle = stakes, paid = returned to players, win = house win, commission.
    cabinet: games = games played, handle = credits played in cents, paid = credits won (to the meter and
             hand-paid jackpots) in cents, win = handle - paid, drop = coins in, coins_out = paid by the
             hopper, hand_paid = jackpots and cancelled credits paid by an attendant, credits_played/won.
    link:    games = contributions, handle = contributed, paid = awards paid, win = contributed - paid.
    """

    games: int = 0
    handle: int = 0
    paid: int = 0
    win: int = 0
    commission: int = 0
    drop: int = 0
    coins_out: int = 0
    hand_paid: int = 0
    credits_played: int = 0
    credits_won: int = 0

    def __sub__(self, other: MeterSet) -> MeterSet:
        return MeterSet(*(getattr(self, f.name) - getattr(other, f.name) for f in fields(self)))

    def __add__(self, other: MeterSet) -> MeterSet:
        return MeterSet(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def json(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


METER_FIELDS = tuple(f.name for f in fields(MeterSet))
_ZERO = MeterSet()


def gaming_day(ts_ns: int, start_hour: int = 6, tz: tzinfo | None = None) -> str:
    """The gaming day (YYYY-MM-DD) a journal time belongs to: days run from `start_hour` to `start_hour` the next
    morning in `tz` (None: this machine's local time)."""
    when = datetime.fromtimestamp(ts_ns // 1_000_000_000, tz) - timedelta(hours=start_hour)
    return when.date().isoformat()


@dataclass(frozen=True)
class MachineSummary:
    """One machine as the floor knows it. `seq`: its last row on the floor (folded or not)."""

    machine: str
    kind: str = "unknown"           # "table", "cabinet", "link"; "unknown" before its start row
    what: str = ""                  # the game, the title, or "progressive link"
    denomination: int | None = None  # a cabinet's cents per credit
    seq: int = 0
    last_ts_ns: int = 0
    state: Any = field(default=None, compare=False, repr=False)
    error: str | None = None        # why the fold stopped (the rows are still counted)
    day: str | None = None          # the gaming day of the last row folded
    day_open: MeterSet = _ZERO      # the meters before the current run of that day's rows
    # what each earlier run of rows of one gaming day added to the meters, in row order: (day, added); a day comes
    # back when a machine's clock was set back over a day's start
    closed: tuple[tuple[str, MeterSet], ...] = ()


def new_summary(machine: str) -> MachineSummary:
    return MachineSummary(machine)


def _first_state(machine: str, record: Mapping[str, Any], paytable: int) -> tuple[str, str, int | None, Any]:
    """(kind, what, denomination, initial state) from a journal's first start record; ValueError if unknown."""
    if record.get("kind") != "start":
        raise ValueError(f"the first row is a {record.get('kind')!r} record, not the journal's start")
    if "reset_cents" in record:  # a link controller's (its start also names the linked title, maybe none)
        from controller.progressive import new_link_state

        return "link", "progressive link", None, new_link_state(machine, int(record["reset_cents"]))
    if "game" in record:
        from controller.games import get_game
        from controller.games.base import rules_from_mapping
        from controller.tablestate import new_state

        game = get_game(record["game"])
        return "table", game.name, None, new_state(machine, game, rules_from_mapping(game.rules_type, record["rules"]))
    if "title" in record:
        from controller.cabinetstate import Settings
        from controller.cabinetstate import new_state as new_cabinet
        from controller.slots.catalog import get_title

        title = get_title(record["title"])
        if record.get("digest") != title.digest:
            raise ValueError(f"title {title.id}: the machine's title file is not the floor's (digest "
                             f"{str(record.get('digest'))[:12]}, the floor has {title.digest[:12]}): update the floor")
        denomination = int(record["denomination"])
        state = new_cabinet(machine, title, denomination, Settings.from_json(record["settings"]), paytable)
        return "cabinet", title.name, denomination, state
    raise ValueError("a start record of no known machine (no game, title or reset_cents)")


def _step(kind: str, state: Any, record: dict[str, Any]) -> Any:
    if kind == "table":
        from controller.tablestate import step
    elif kind == "cabinet":
        from controller.cabinetstate import step  # type: ignore[assignment]
    else:
        from controller.progressive import link_step as step  # type: ignore[assignment]
    new, _ = step(state, record)
    return new


def meter_set(summary: MachineSummary) -> MeterSet:
    """The machine's meters now (all zero before its first row is folded)."""
    s = summary.state
    if s is None:
        return _ZERO
    if summary.kind == "table":
        m = s.meters
        return MeterSet(games=m.rounds, handle=m.handle, paid=m.returned, win=m.house_win, commission=m.commission)
    if summary.kind == "cabinet":
        m, d = s.meters, s.denomination
        won = m.coin_out + m.jackpot_handpaid
        return MeterSet(games=m.games_played, handle=m.coin_in * d, paid=won * d, win=(m.coin_in - won) * d,
                        drop=m.drop * d, coins_out=m.hopper_out * d,
                        hand_paid=(m.jackpot_handpaid + m.cancelled_handpaid) * d, credits_played=m.coin_in,
                        credits_won=won)
    return MeterSet(games=s.contributions, handle=s.contributed, paid=s.paid, win=s.contributed - s.paid)


def fold_row(summary: MachineSummary, row: FloorRow, *, start_hour: int = 6, tz: tzinfo | None = None,
             paytable: int = 0) -> MachineSummary:
    """The summary after the machine's next row (the floor's chain check has passed it: seq is the next)."""
    summary = replace(summary, seq=row.seq, last_ts_ns=row.ts_ns)
    if summary.error is not None:
        return summary
    try:
        record = json.loads(row.record)
        if summary.state is None:
            kind, what, denomination, state = _first_state(summary.machine, record, paytable)
            summary = replace(summary, kind=kind, what=what, denomination=denomination, state=state)
        day = gaming_day(row.ts_ns, start_hour, tz)
        if day != summary.day:
            if summary.day is not None:
                added = meter_set(summary) - summary.day_open
                summary = replace(summary, closed=summary.closed + ((summary.day, added),))
            summary = replace(summary, day=day, day_open=meter_set(summary))
        state = _step(summary.kind, summary.state, record)
        return replace(summary, state=replace(state, seq=row.seq))
    except Exception as exc:  # noqa: BLE001 - any refusal of the fold: say it on the page, keep counting rows
        return replace(summary, error=f"row {row.seq}: {type(exc).__name__}: {exc}")


def day_meters(summary: MachineSummary, day: str) -> MeterSet | None:
    """The machine's meters over one gaming day; None if it has no row in that day."""
    runs = [added for d, added in summary.closed if d == day]
    if day == summary.day:
        runs.append(meter_set(summary) - summary.day_open)
    total = None
    for added in runs:
        total = added if total is None else total + added
    return total


@dataclass(frozen=True)
class LinkDays:
    """A floor-engine link's meters per gaming day (a link controller's meters: games = contributions, handle =
    contributed, paid = awards paid, win = contributed - paid)."""

    link: str
    days: tuple[tuple[str, MeterSet], ...] = ()   # (gaming day, its meters), in the order the days first came

    def day(self, day: str) -> MeterSet | None:
        return dict(self.days).get(day)


def link_day_step(days: LinkDays, before: PoolState, after: PoolState, ts_ns: int, *, start_hour: int = 6,
                  tz: tzinfo | None = None) -> LinkDays:
    """The days after one message moved the link's fold from `before` to `after` (its time `ts_ns`): what it added
    to the fold's meters goes to its gaming day; a message that added nothing (an open, a duplicate) adds no day."""
    contributed, paid = after.contributed - before.contributed, after.paid - before.paid
    added = MeterSet(games=after.contributions - before.contributions, handle=contributed, paid=paid,
                     win=contributed - paid)
    if added == _ZERO and after.hits == before.hits:
        return days
    day = gaming_day(ts_ns, start_hour, tz)
    table = dict(days.days)
    table[day] = table.get(day, _ZERO) + added
    return replace(days, days=tuple(table.items()))


def alerts_of(summary: MachineSummary) -> tuple[str, ...]:
    """Open alerts and lockups, doors open, and what stops play, as the page lists them."""
    s = summary.state
    if s is None or summary.kind == "link":
        return ()
    out = [f"door open: {d}" for d in s.doors_open]
    if summary.kind == "table":
        out += [f"alert {a.id} {a.kind}: {a.text}" for a in s.alerts]
        if not s.shoe.link and s.shoe.down:
            out.append(f"shoe down: {s.shoe.down}")
    else:
        out += [f"lockup {x.id} {x.kind}: {x.text}" for x in s.lockups]
        if s.host_disabled:
            out.append("disabled by the SAS host")
    return tuple(out)


def machine_status(summary: MachineSummary, now_ns: int, offline_after: float) -> str:
    """"online" when its last row is at most `offline_after` seconds old, "offline" otherwise (or never heard)."""
    if summary.seq == 0:
        return "offline"
    return "online" if now_ns - summary.last_ts_ns <= offline_after * 1_000_000_000 else "offline"
