"""The floor's meters report: one CSV line per machine that played in a gaming day (pure).

Columns: gaming_day, machine, kind, what (game or title), denomination (cents per credit, cabinets), then
the MeterSet fields (controller/floor/summary.py: money in cents, credits in credits), then `error` (why the
floor could not fold the machine's rows; its figures are then those up to that row). Floor-engine links (no
journal: their messages on the progressive stream, summary.LinkDays) are lines of kind `floor-link`. Machines
and links are sorted by id; one with no row or message in the day is left out.
"""

from __future__ import annotations

import csv
import io
from typing import Iterable

from controller.floor.summary import METER_FIELDS, LinkDays, MachineSummary, MeterSet, day_meters

__all__ = ["HEADER", "report_rows", "report_csv"]

HEADER = ("gaming_day", "machine", "kind", "what", "denomination", *METER_FIELDS, "error")


def report_rows(summaries: Iterable[MachineSummary], day: str,
                links: Iterable[LinkDays] = ()) -> list[tuple[str | int, ...]]:
    """The report's lines for one gaming day (without the header)."""
    lines: list[tuple[str, MeterSet, tuple[str, str, str | int], str]] = []
    for s in summaries:
        meters = day_meters(s, day)
        if meters is not None:
            lines.append((s.machine, meters, (s.kind, s.what, s.denomination if s.denomination is not None else ""),
                          s.error or ""))
    for link in links:
        meters = link.day(day)
        if meters is not None:
            lines.append((link.link, meters, ("floor-link", "progressive link", ""), ""))
    out = []
    for ident, meters, (kind, what, denomination), error in sorted(lines, key=lambda line: line[0]):
        values = meters.json()
        out.append((day, ident, kind, what, denomination, *(values[f] for f in METER_FIELDS), error))
    return out


def report_csv(summaries: Iterable[MachineSummary], day: str, links: Iterable[LinkDays] = ()) -> str:
    """The report as CSV text (header line first, CRLF line ends as RFC 4180 has them)."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(HEADER)
    writer.writerows(report_rows(summaries, day, links))
    return buf.getvalue()
