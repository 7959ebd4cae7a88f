"""Table paperwork, pure: openers, closers, fills, credits and drop slips, each entered by one role and confirmed by another, and each gaming day's win from them.

A slip is two journal records (controller/tablerecords.py): `SlipEntered` by one role and `SlipConfirmed` by a
second, different role; a slip that is not confirmed does not count. Chips are counted by denomination
(`{"25": 40}`: forty 25-credit chips); a drop slip holds the cash the count room counted, in credits, entered
when it was counted (often the next day, for the gaming day it belongs to). A gaming day's win is

    win = closer - opener + credits - fills + drop

(credits: chips taken from the table to the cage; fills: chips brought to it). Beside it the table's own
meters: the house win the settlements added between the opener's and the closer's entry (tablestate's
`Meters.house_win`, as it stood when each was entered), so the pit sees at once whether the tray and the
layout agree.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any, Mapping

from controller.games.base import IllegalEvent
from controller.tablerecords import SlipConfirmed, SlipEntered

__all__ = ["FORMS", "Slip", "Paperwork", "entered", "confirmed", "day_figures", "paperwork_view", "slip_records",
           "COMMANDS", "MAX_DENOMINATIONS", "MAX_CHIPS"]

FORMS = ("opener", "closer", "fill", "credit", "drop")
COMMANDS = ("slip_enter", "slip_confirm")
MAX_DENOMINATIONS = 24
MAX_CHIPS = 10**7          # chips of one denomination on one slip
MAX_AMOUNT = 10**12        # credits on one slip
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


@dataclass(frozen=True, slots=True)
class Slip:
    slip: int
    form: str
    day: str
    chips: tuple[tuple[int, int], ...]   # (denomination, count), denominations ascending
    amount: int                          # a drop's credits; a chip slip's value
    by: str
    at: int
    house_win: int                       # the table meters' house win when it was entered
    confirmed_by: str | None = None
    confirmed_at: int | None = None

    def json(self) -> dict[str, Any]:
        return {"slip": self.slip, "form": self.form, "day": self.day,
                "chips": {str(d): n for d, n in self.chips}, "amount": self.amount, "by": self.by, "at": self.at,
                "confirmed_by": self.confirmed_by, "confirmed_at": self.confirmed_at}


@dataclass(frozen=True, slots=True)
class Paperwork:
    slips: tuple[Slip, ...] = ()

    @property
    def next_slip(self) -> int:
        return self.slips[-1].slip + 1 if self.slips else 1


def _chips(raw: Any) -> tuple[tuple[int, int], ...]:
    """{denomination: count} checked: whole positive denominations, whole counts from 0, bounded."""
    if not isinstance(raw, Mapping) or not raw:
        raise ValueError("chips must be an object {denomination: count}, e.g. {\"25\": 40}")
    if len(raw) > MAX_DENOMINATIONS:
        raise ValueError(f"chips: at most {MAX_DENOMINATIONS} denominations")
    out: dict[int, int] = {}
    for key, count in raw.items():
        text = str(key)
        if not text.isdigit() or not 0 < int(text) <= MAX_AMOUNT:
            raise ValueError(f"chips: denomination {text[:20]!r} is not a whole number of credits from 1")
        if type(count) is not int or not 0 <= count <= MAX_CHIPS:
            raise ValueError(f"chips.{text}: the count must be a whole number from 0 to {MAX_CHIPS}")
        if int(text) in out:
            raise ValueError(f"chips: denomination {text} given twice")
        out[int(text)] = count
    return tuple(sorted(out.items()))


def entered(pw: Paperwork, rec: SlipEntered, house_win: int) -> Paperwork:
    """The paperwork after a slip's entry (`house_win`: the table meters' house win now). IllegalEvent when the
    slip's number is taken, its form unknown or its day already has a confirmed slip of a once-a-day form."""
    if rec.slip != pw.next_slip:
        raise IllegalEvent(f"slip {rec.slip}: the next slip is number {pw.next_slip}")
    if rec.form not in FORMS:
        raise IllegalEvent(f"form must be one of {', '.join(FORMS)}, not {rec.form!r}")
    if not _DAY.fullmatch(rec.day):
        raise IllegalEvent(f"day must be a gaming day YYYY-MM-DD, not {rec.day!r}")
    if rec.form in ("opener", "closer") and any(s.form == rec.form and s.day == rec.day and s.confirmed_by
                                                for s in pw.slips):
        raise IllegalEvent(f"{rec.day} has a confirmed {rec.form} already")
    if rec.form == "drop":
        if rec.amount is None or type(rec.amount) is not int or not 0 <= rec.amount <= MAX_AMOUNT:
            raise IllegalEvent("a drop slip holds amount: the credits counted, a whole number from 0")
        chips: tuple[tuple[int, int], ...] = ()
        amount = rec.amount
    else:
        try:
            chips = _chips(rec.chips)
        except ValueError as exc:
            raise IllegalEvent(str(exc)) from None
        amount = sum(d * n for d, n in chips)
    return replace(pw, slips=pw.slips + (Slip(rec.slip, rec.form, rec.day, chips, amount, rec.by, rec.at,
                                              house_win),))


def confirmed(pw: Paperwork, rec: SlipConfirmed) -> Paperwork:
    """The paperwork after a confirmation. IllegalEvent for an unknown slip, one confirmed already, a confirmation
    by the role that entered it, or a second opener or closer of a day."""
    i = next((i for i, s in enumerate(pw.slips) if s.slip == rec.slip), None)
    if i is None:
        raise IllegalEvent(f"no slip {rec.slip}")
    slip = pw.slips[i]
    if slip.confirmed_by is not None:
        raise IllegalEvent(f"slip {rec.slip} was confirmed by {slip.confirmed_by} already")
    if rec.by == slip.by:
        raise IllegalEvent(f"slip {rec.slip} was entered by {slip.by}: a second, different role confirms it")
    if slip.form in ("opener", "closer") and any(s.form == slip.form and s.day == slip.day and s.confirmed_by
                                                 for s in pw.slips):
        raise IllegalEvent(f"{slip.day} has a confirmed {slip.form} already")
    slips = list(pw.slips)
    slips[i] = replace(slip, confirmed_by=rec.by, confirmed_at=rec.at)
    return replace(pw, slips=tuple(slips))


def day_figures(pw: Paperwork, day: str) -> dict[str, Any]:
    """A gaming day from its confirmed slips: opener, closer, fills, credits, drop, win (None until both the
    opener and the closer are confirmed), the meters' house win over the same span and the difference."""
    done = [s for s in pw.slips if s.day == day and s.confirmed_by is not None]
    opener = next((s for s in done if s.form == "opener"), None)
    closer = next((s for s in done if s.form == "closer"), None)
    fills = sum(s.amount for s in done if s.form == "fill")
    credits = sum(s.amount for s in done if s.form == "credit")
    drop = sum(s.amount for s in done if s.form == "drop")
    win = meters = None
    if opener is not None and closer is not None:
        win = closer.amount - opener.amount + credits - fills + drop
        meters = closer.house_win - opener.house_win
    return {"day": day, "opener": opener.amount if opener else None, "closer": closer.amount if closer else None,
            "fills": fills, "credits": credits, "drop": drop, "win": win, "meters_house_win": meters,
            "difference": None if win is None or meters is None else win - meters,
            "unconfirmed": [s.slip for s in pw.slips if s.day == day and s.confirmed_by is None]}


def paperwork_view(pw: Paperwork) -> dict[str, Any]:
    """For the pit: every gaming day's figures and every slip (the unconfirmed ones marked so)."""
    days = sorted({s.day for s in pw.slips})
    return {"days": [day_figures(pw, d) for d in days], "slips": [s.json() for s in pw.slips]}


def slip_records(pw: Paperwork, by: str, command: str, args: Mapping[str, Any], now: int,
                 today: str) -> list[dict[str, Any]]:
    """The journal record a paperwork command asks for (`by`: the role; `today`: the gaming day when the command
    names none). ValueError/KeyError/TypeError name the bad argument."""
    if command == "slip_enter":
        form = args["form"]
        if form not in FORMS:
            raise ValueError(f"form must be one of {', '.join(FORMS)}, not {str(form)[:20]!r}")
        day = args.get("day", today)
        if not isinstance(day, str) or not _DAY.fullmatch(day):
            raise ValueError("day must be a gaming day YYYY-MM-DD")
        if form == "drop":
            amount = args["amount"]
            if isinstance(amount, str) and amount.isdigit() and len(amount) <= 13:
                amount = int(amount)
            if type(amount) is not int or not 0 <= amount <= MAX_AMOUNT:
                raise ValueError("amount must be the credits counted, a whole number from 0")
            return [SlipEntered(pw.next_slip, form, day, by, now, amount=amount).to_json()]
        raw = args["chips"]
        chips = _chips(json.loads(raw) if isinstance(raw, str) else raw)   # `croupier command` sends text
        return [SlipEntered(pw.next_slip, form, day, by, now, chips={str(d): n for d, n in chips}).to_json()]
    if command == "slip_confirm":
        slip = args["slip"]
        if isinstance(slip, str) and slip.isdigit() and len(slip) <= 12:
            slip = int(slip)
        if type(slip) is not int:
            raise TypeError("slip must be a slip's number")
        return [SlipConfirmed(slip, by, now).to_json()]
    raise ValueError(f"{command} is no paperwork command")
