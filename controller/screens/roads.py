"""Baccarat's derived roads (big eye boy, small road, cockroach pig) and their "ask" preview, from the big road: pure functions, no I/O.

The player page draws them with `Felt.derivedRoads` in static/felt.js, which follows this module rule for
rule (tests/test_screens_fit.py runs both on the same shoes). The rules, as the scoreboard guides give them:

- The big road: a column per streak of banker or player wins; ties add no mark. Its columns here are the
  streaks themselves (a dragon tail turning right along the bottom is still its streak's column).
- A derived road with offset k (big eye boy 1, small road 2, cockroach pig 3) adds one mark for every
  banker or player mark on the big road from column k+1, row 2 on (or column k+2, row 1 when column k+1
  has a single mark), counting columns and rows from 1:
  - a mark that starts a new column: red when the two columns before it, k apart (the one just before it
    and the one k columns further left), are equally long, else blue;
  - a mark further down its column: look k columns to the left, on the same row: red when there is a mark
    there, and red when there is none on that row nor on the row above it ("straight drop"); blue when
    that column ends on the row just above.
- The marks of a derived road lie like the big road's: a column per streak of one colour.
"""

from __future__ import annotations

from typing import Iterable, Sequence

__all__ = ["ROADS", "columns", "derived", "derived_roads", "ask"]

ROADS = (("big_eye_boy", 1), ("small_road", 2), ("cockroach_pig", 3))


def columns(winners: Iterable[str]) -> list[int]:
    """The big road's column lengths (the streaks of "banker" or "player"; "tie" adds nothing)."""
    lengths: list[int] = []
    last = None
    for w in winners:
        if w not in ("banker", "player"):
            if w != "tie":
                raise ValueError(f"winner: {w!r} is not banker, player or tie")
            continue
        if w == last:
            lengths[-1] += 1
        else:
            lengths.append(1)
            last = w
    return lengths


def _mark(lengths: Sequence[int], col: int, row: int, k: int) -> str | None:
    """The mark the big road's mark at (col, row), 0-based, adds to the road of offset k (None: not yet)."""
    if col < k or (col == k and row == 0):
        return None
    if row == 0:
        return "red" if lengths[col - 1] == lengths[col - 1 - k] else "blue"
    return "blue" if lengths[col - k] == row else "red"


def derived(winners: Iterable[str], k: int) -> list[str]:
    """The marks ("red" or "blue"), in order, of the derived road with offset k."""
    marks: list[str] = []
    lengths: list[int] = []
    last = None
    for w in winners:
        if w == "tie":
            continue
        if w not in ("banker", "player"):
            raise ValueError(f"winner: {w!r} is not banker, player or tie")
        if w == last:
            lengths[-1] += 1
        else:
            lengths.append(1)
            last = w
        mark = _mark(lengths, len(lengths) - 1, lengths[-1] - 1, k)
        if mark is not None:
            marks.append(mark)
    return marks


def derived_roads(winners: Sequence[str]) -> dict[str, list[str]]:
    """Every derived road's marks: {"big_eye_boy": [...], "small_road": [...], "cockroach_pig": [...]}."""
    return {name: derived(winners, k) for name, k in ROADS}


def ask(winners: Sequence[str]) -> dict[str, dict[str, str | None]]:
    """The ask preview: the mark the next banker (and player) win would add to each derived road, None
    where it would add none yet. {"banker": {"big_eye_boy": "red", ...}, "player": {...}}."""
    out: dict[str, dict[str, str | None]] = {}
    for side in ("banker", "player"):
        lengths = columns([*winners, side])
        col, row = len(lengths) - 1, lengths[-1] - 1
        out[side] = {name: _mark(lengths, col, row, k) for name, k in ROADS}
    return out
