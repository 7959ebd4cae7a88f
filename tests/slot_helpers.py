"""Scripted stops for slot tests: find the virtual stops that show given symbols, so a test can say what the reels show."""

from __future__ import annotations

from controller.slots import Title


def reel_stop(title: Title, reel: int, centre: str, above: str | None = None, below: str | None = None,
              nth: int = 0) -> int:
    """A virtual stop of `reel` whose window shows `centre` on the payline (and `above`/`below` if given).
    `nth` picks another physical stop showing the same, for tests that need two different ones."""
    r = title.reels[reel]
    found = [p for p in range(r.size) if r.shown(p, 1) == centre
             and (above is None or r.shown(p, 0) == above) and (below is None or r.shown(p, 2) == below)]
    if len(found) <= nth:
        raise AssertionError(f"reel {reel + 1} of {title.id} cannot show {above}/{centre}/{below}")
    return r.physical.index(found[nth])


def stops_for(title: Title, *centre: str) -> tuple[int, int, int]:
    """Virtual stops that put these three symbols on the centre payline, e.g. stops_for(t, "PG", "PG", "PG")."""
    assert len(centre) == 3
    return tuple(reel_stop(title, i, s) for i, s in enumerate(centre))  # type: ignore[return-value]


def losing_stops(title: Title, paytable: int = 0, avoid: tuple[str, ...] = ()) -> tuple[int, int, int]:
    """Stops whose centre payline pays nothing (and shows none of `avoid`)."""
    from itertools import product

    reels = title.reels
    for p in product(*(range(r.size) for r in reels)):
        triple = tuple(r.shown(q, 1) for r, q in zip(reels, p))
        if any(s in avoid for s in triple):
            continue
        if all(x is None for x in title.line_eval(triple, paytable).by_coins):  # type: ignore[arg-type]
            return tuple(r.physical.index(q) for r, q in zip(reels, p))  # type: ignore[return-value]
    raise AssertionError(f"{title.id} has no losing stops")
