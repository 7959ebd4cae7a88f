"""The floor's meters report: one CSV line per machine that played in a gaming day (pure).

Columns: gaming_day, machine, kind, what (game or title), denomination (cents per credit, cabinets), then
the MeterSet fields (controller/floor/summary.py: money in cents, credits in credits), then `error` (why the
floor could not fold the machine's rows; its figures are then those up to that row). Machines are sorted by
id; a machine with no row in the day is left out.
"""

from __future__ import annotations

import csv
import io
from typing import Iterable

from controller.floor.summary import METER_FIELDS, MachineSummary, day_meters

__all__ = ["HEADER", "report_rows", "report_csv"]

HEADER = ("gaming_day", "machine", "kind", "what", "denomination", *METER_FIELDS, "error")


def report_rows(summaries: Iterable[MachineSummary], day: str) -> list[tuple[str | int, ...]]:
    """The report's lines for one gaming day (without the header)."""
    out = []
    for s in sorted(summaries, key=lambda s: s.machine):
        meters = day_meters(s, day)
        if meters is None:
            continue
        values = meters.json()
        out.append((day, s.machine, s.kind, s.what, s.denomination if s.denomination is not None else "",
                    *(values[f] for f in METER_FIELDS), s.error or ""))
    return out


def report_csv(summaries: Iterable[MachineSummary], day: str) -> str:
    """The report as CSV text (header line first, CRLF line ends as RFC 4180 has them)."""
    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(HEADER)
    writer.writerows(report_rows(summaries, day))
    return buf.getvalue()
