"""What a cash-out ticket says and where: the text a casino ticket carries, its Interleaved 2 of 5 barcode, and the printer template's fields (pure, no I/O).

A ticket reads, top to bottom: the venue and its address, CASHOUT TICKET (PLAYABLE ONLY for restricted
credits), the validation number as 00-0000-0000-0000-0000, the date and time, TICKET # n, the amount in figures
and in words, the machine and its asset number, the expiry, and the validation number's barcode.

The barcode is Interleaved 2 of 5 (ISO/IEC 16390; the symbology TITO tickets carry their 18-digit validation
number in): each pair of digits is one character, the first digit in the bars, the second in the spaces, each
digit five elements of which two are wide; a start code (narrow bar, space, bar, space), a stop code (wide bar,
narrow space, narrow bar) and a quiet zone of at least ten narrow widths each side (ISO/IEC 16390 asks 10X).

`CROUPIER_TEMPLATE` is the cabinet's printer template as the TCL driver fills it: the variable fields in the
order the template's regions take them (the labels, TICKET #, ASSET #, ..., are the template's static text), and
back again (the simulated printer decodes what it was sent).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

from drivers.printer.events import TicketData

__all__ = ["LayoutError", "TicketLayout", "Barcode", "CroupierTemplate", "CROUPIER_TEMPLATE", "layout",
           "amount_in_words", "amount_in_figures", "format_validation", "interleaved_2_of_5", "ticket_lines",
           "expiry_text", "TITLE_CASHOUT", "TITLE_RESTRICTED", "NARROW", "WIDE", "QUIET", "LINE_WIDTH"]

TITLE_CASHOUT = "CASHOUT TICKET"
TITLE_RESTRICTED = "PLAYABLE ONLY"
LINE_WIDTH = 42  # characters of the text rendering (the attendant page's "last tickets"), not the printer's
NARROW, WIDE = 1, 3  # bar and space widths in modules: 3:1, the top of ISO/IEC 16390's 2:1..3:1 range
QUIET = 10  # modules of quiet zone each side (ISO/IEC 16390: at least 10X)


class LayoutError(ValueError):
    """A ticket that cannot be printed as given, or template fields that are not a ticket; names the field."""


# ---- amounts ---------------------------------------------------------------------------------------------------

_ONES = ("ZERO", "ONE", "TWO", "THREE", "FOUR", "FIVE", "SIX", "SEVEN", "EIGHT", "NINE", "TEN", "ELEVEN", "TWELVE",
         "THIRTEEN", "FOURTEEN", "FIFTEEN", "SIXTEEN", "SEVENTEEN", "EIGHTEEN", "NINETEEN")
_TENS = ("", "", "TWENTY", "THIRTY", "FORTY", "FIFTY", "SIXTY", "SEVENTY", "EIGHTY", "NINETY")
_SCALES = ("", "THOUSAND", "MILLION", "BILLION", "TRILLION")


def _under_thousand(n: int) -> list[str]:
    words: list[str] = []
    hundreds, rest = divmod(n, 100)
    if hundreds:
        words += [_ONES[hundreds], "HUNDRED"]
    if rest >= 20:
        tens, ones = divmod(rest, 10)
        words.append(_TENS[tens] + (f"-{_ONES[ones]}" if ones else ""))
    elif rest:
        words.append(_ONES[rest])
    return words


def _number_words(n: int) -> str:
    if n == 0:
        return "ZERO"
    groups: list[str] = []
    scale = 0
    while n:
        n, group = divmod(n, 1000)
        if group:
            groups.insert(0, " ".join(_under_thousand(group) + ([_SCALES[scale]] if _SCALES[scale] else [])))
        scale += 1
    return " ".join(groups)


def amount_in_words(cents: int) -> str:
    """The amount as a cheque writes it, US style (no AND inside the dollars): 123456 -> "ONE THOUSAND TWO HUNDRED
    THIRTY-FOUR DOLLARS AND FIFTY-SIX CENTS"; no cents reads "AND NO CENTS", as on a cheque."""
    if isinstance(cents, bool) or not isinstance(cents, int) or cents < 0:
        raise LayoutError(f"cents: a whole number of cents, 0 or more, got {cents!r}")
    dollars, rest = divmod(cents, 100)
    if dollars >= 1000 ** len(_SCALES):
        raise LayoutError(f"cents: {cents} is beyond what a ticket can say in words")
    dollar_words = f"{_number_words(dollars)} {'DOLLAR' if dollars == 1 else 'DOLLARS'}"
    cent_words = "NO CENTS" if rest == 0 else f"{_number_words(rest)} {'CENT' if rest == 1 else 'CENTS'}"
    return f"{dollar_words} AND {cent_words}"


def amount_in_figures(cents: int) -> str:
    """123456 -> "$1,234.56"."""
    if isinstance(cents, bool) or not isinstance(cents, int) or cents < 0:
        raise LayoutError(f"cents: a whole number of cents, 0 or more, got {cents!r}")
    return f"${cents // 100:,}.{cents % 100:02d}"


def _cents_from_figures(text: str) -> int:
    match = re.fullmatch(r"\$(\d{1,3}(?:,\d{3})*)\.(\d\d)", text)
    if not match:
        raise LayoutError(f"amount: expected $1,234.56, got {text!r}")
    return int(match.group(1).replace(",", "")) * 100 + int(match.group(2))


# ---- the validation number and its barcode ---------------------------------------------------------------------

def _check_validation(validation: str) -> str:
    if not isinstance(validation, str) or not re.fullmatch(r"[0-9]{18}", validation, re.ASCII):
        raise LayoutError(f"validation: 18 digits, got {validation!r}")
    return validation


def format_validation(validation: str) -> str:
    """The 18 digits as a ticket prints them: 00-0000-0000-0000-0000."""
    v = _check_validation(validation)
    return "-".join((v[:2], v[2:6], v[6:10], v[10:14], v[14:]))


# Each digit's five elements, N narrow, W wide (ISO/IEC 16390, table 1; the same table as zint's and zxing's).
_DIGIT_WIDTHS = ("NNWWN", "WNNNW", "NWNNW", "WWNNN", "NNWNW", "WNWNN", "NWWNN", "NNNWW", "WNNWN", "NWNWN")


@dataclass(frozen=True)
class Barcode:
    """An Interleaved 2 of 5 symbol: `widths` alternate bar, space, bar, ... from the start code's first bar to the
    stop code's last bar, in modules; `quiet` modules of blank each side."""
    digits: str
    widths: tuple[int, ...]
    quiet: int = QUIET

    def modules(self, with_quiet: bool = True) -> str:
        """The symbol as modules, "1" a dark module and "0" a light one (the quiet zones included unless told)."""
        body = "".join(("1" if i % 2 == 0 else "0") * w for i, w in enumerate(self.widths))
        pad = "0" * self.quiet if with_quiet else ""
        return pad + body + pad

    @property
    def width(self) -> int:
        """Modules from one quiet zone's outer edge to the other's."""
        return sum(self.widths) + 2 * self.quiet


def interleaved_2_of_5(digits: str, narrow: int = NARROW, wide: int = WIDE, quiet: int = QUIET) -> Barcode:
    """Encode an even number of digits as Interleaved 2 of 5 (no check digit: the ticket's validation number
    carries its own)."""
    if not isinstance(digits, str) or not re.fullmatch(r"(?:[0-9]{2})+", digits, re.ASCII):
        raise LayoutError(f"barcode: an even number of digits, got {digits!r}")
    if not 1 <= narrow < wide:
        raise LayoutError(f"barcode: a wide element must be wider than a narrow one (got {narrow} and {wide})")
    size = {"N": narrow, "W": wide}
    widths: list[int] = [narrow] * 4  # start: narrow bar, space, bar, space
    for i in range(0, len(digits), 2):
        bars, spaces = _DIGIT_WIDTHS[int(digits[i])], _DIGIT_WIDTHS[int(digits[i + 1])]
        for bar, space in zip(bars, spaces):
            widths += [size[bar], size[space]]
    widths += [wide, narrow, narrow]  # stop: wide bar, narrow space, narrow bar
    return Barcode(digits, tuple(widths), quiet)


# ---- the whole ticket ------------------------------------------------------------------------------------------

def expiry_text(days: int) -> str:
    """0 -> "NEVER EXPIRES"; 30 -> "VOID AFTER 30 DAYS"."""
    if isinstance(days, bool) or not isinstance(days, int) or days < 0:
        raise LayoutError(f"expires_days: a whole number of days, 0 (never) or more, got {days!r}")
    if days == 0:
        return "NEVER EXPIRES"
    return f"VOID AFTER {days} {'DAY' if days == 1 else 'DAYS'}"


def _expiry_days(text: str) -> int:
    if text == "NEVER EXPIRES":
        return 0
    match = re.fullmatch(r"VOID AFTER ([1-9][0-9]*) DAYS?", text)
    if not match:
        raise LayoutError(f"expiry: expected VOID AFTER n DAYS or NEVER EXPIRES, got {text!r}")
    return int(match.group(1))


@dataclass(frozen=True)
class TicketLayout:
    """The ticket's printed texts, each as the ticket shows it."""
    venue: str
    address: str
    title: str            # CASHOUT TICKET or PLAYABLE ONLY
    validation: str       # 00-0000-0000-0000-0000
    date: str             # MM/DD/YYYY
    time: str             # HH:MM:SS (24 hours)
    number: str           # the ticket number, after "TICKET #"
    figures: str          # $1,234.56
    words: str            # ONE THOUSAND ... CENTS
    machine: str
    asset: str            # after "ASSET #"
    expiry: str           # VOID AFTER 30 DAYS or NEVER EXPIRES
    barcode: Barcode


def _check_count(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise LayoutError(f"{name}: a whole number, 0 or more, got {value!r}")
    return value


def _check_text(name: str, value: object) -> str:
    if not isinstance(value, str):
        raise LayoutError(f"{name}: text, got {value!r}")
    if any(ch in value for ch in "\r\n"):
        raise LayoutError(f"{name}: one line of text, got {value!r}")
    return value


def layout(ticket: TicketData) -> TicketLayout:
    """Lay the ticket out; a field that cannot be printed raises LayoutError naming it."""
    try:
        when = datetime.fromisoformat(_check_text("printed", ticket.printed))
    except ValueError as exc:
        raise LayoutError(f"printed: an ISO 8601 date and time, got {ticket.printed!r}") from exc
    return TicketLayout(
        venue=_check_text("venue", ticket.venue),
        address=_check_text("address", ticket.address),
        title=TITLE_RESTRICTED if ticket.restricted else TITLE_CASHOUT,
        validation=format_validation(ticket.validation),
        date=f"{when.month:02d}/{when.day:02d}/{when.year:04d}",  # strftime's %Y drops a year's leading zeros
        time=f"{when.hour:02d}:{when.minute:02d}:{when.second:02d}",
        number=str(_check_count("number", ticket.number)),
        figures=amount_in_figures(ticket.cents),
        words=amount_in_words(ticket.cents),
        machine=_check_text("machine", ticket.machine),
        asset=str(_check_count("asset", ticket.asset)),
        expiry=expiry_text(ticket.expires_days),
        barcode=interleaved_2_of_5(ticket.validation),
    )


def _wrap(text: str, width: int) -> list[str]:
    lines: list[str] = []
    line = ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + [line] if line else lines


def ticket_lines(ticket: TicketData | TicketLayout, width: int = LINE_WIDTH) -> list[str]:
    """The ticket as lines of text, `width` wide (the barcode is `layout(ticket).barcode`, drawn apart)."""
    t = ticket if isinstance(ticket, TicketLayout) else layout(ticket)

    def spread(left: str, right: str) -> list[str]:
        if len(left) + 1 + len(right) > width:
            return [left, right]
        return [left + " " * (width - len(left) - len(right)) + right]

    return [
        *(line.center(width).rstrip() for line in _wrap(t.venue, width)),
        *(line.center(width).rstrip() for line in _wrap(t.address, width)),
        t.title.center(width).rstrip(),
        t.validation.center(width).rstrip(),
        *spread(f"{t.date} {t.time}", f"TICKET # {t.number}"),
        t.figures,
        *_wrap(t.words, width),
        *spread(f"MACHINE {t.machine}", f"ASSET # {t.asset}"),
        t.expiry,
    ]


# ---- the printer template --------------------------------------------------------------------------------------

FIELDS = ("venue", "address", "title", "validation", "date", "time", "number", "figures", "words", "machine",
          "asset", "expiry", "barcode")


@dataclass(frozen=True)
class CroupierTemplate:
    """The cabinet's ticket template in the printer: the order of its variable fields (FIELDS: the barcode region
    takes the 18 digits and draws the Interleaved 2 of 5 itself). Its id in the printer is [printer] template."""

    def fields(self, ticket: TicketData) -> list[str]:
        t = layout(ticket)
        return [t.venue, t.address, t.title, t.validation, t.date, t.time, t.number, t.figures, t.words, t.machine,
                t.asset, t.expiry, t.barcode.digits]

    def decode(self, fields: Sequence[str]) -> TicketData:
        """The ticket a printer was sent, back from its fields (the time to the second, as printed)."""
        if len(fields) != len(FIELDS):
            raise LayoutError(f"fields: the template takes {len(FIELDS)} fields ({', '.join(FIELDS)}), "
                              f"got {len(fields)}")
        f = dict(zip(FIELDS, fields))
        digits = f["validation"].replace("-", "")
        if format_validation(_check_validation(f["barcode"])) != f["validation"]:
            raise LayoutError(f"validation: {f['validation']!r} is not the barcode's {f['barcode']!r}")
        if f["title"] not in (TITLE_CASHOUT, TITLE_RESTRICTED):
            raise LayoutError(f"title: expected {TITLE_CASHOUT} or {TITLE_RESTRICTED}, got {f['title']!r}")
        moment = re.fullmatch(r"(\d\d)/(\d\d)/(\d{4}) (\d\d):(\d\d):(\d\d)", f"{f['date']} {f['time']}", re.ASCII)
        try:
            if not moment:
                raise ValueError("not MM/DD/YYYY HH:MM:SS")
            month, day, year, hour, minute, second = map(int, moment.groups())
            when = datetime(year, month, day, hour, minute, second)
        except ValueError as exc:
            raise LayoutError(f"date, time: expected MM/DD/YYYY and HH:MM:SS, got {f['date']!r} {f['time']!r}") \
                from exc
        for name in ("number", "asset"):
            if not re.fullmatch(r"0|[1-9][0-9]*", f[name], re.ASCII):
                raise LayoutError(f"{name}: a whole number, got {f[name]!r}")
        cents = _cents_from_figures(f["figures"])
        if amount_in_words(cents) != f["words"]:
            raise LayoutError(f"words: {f['words']!r} does not say {f['figures']}")
        return TicketData(venue=f["venue"], address=f["address"], machine=f["machine"], asset=int(f["asset"]),
                          number=int(f["number"]), cents=cents, validation=digits, printed=when.isoformat(),
                          expires_days=_expiry_days(f["expiry"]), restricted=f["title"] == TITLE_RESTRICTED)

    def lines(self, ticket: TicketData) -> list[str]:
        return ticket_lines(ticket)


CROUPIER_TEMPLATE = CroupierTemplate()
