"""Bets on the layout during a round, per spot and box, within the table's limits: shared by every table game."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Sequence

from controller.games.base import IllegalEvent, PlaceBet, RemoveBet, RulesError, StakeChanged

__all__ = ["Limit", "Bets", "check_limits", "sample_bets"]


@dataclass(frozen=True, slots=True)
class Limit:
    """Table minimum and maximum for one box, in credits."""

    min: int = 1
    max: int = 1_000

    def __post_init__(self) -> None:
        if not isinstance(self.min, int) or not isinstance(self.max, int) or self.min < 1 or self.max < self.min:
            raise ValueError(f"a box limit needs 1 <= min <= max, got min {self.min}, max {self.max}")


def check_limits(limits: Mapping[str, Limit], boxes: tuple[str, ...], where: str = "rules.limits") -> None:
    """Rules validation: every box has a limit and no limit names an unknown box."""
    unknown = sorted(set(limits) - set(boxes))
    if unknown:
        raise RulesError(f"{where}: no such box {', '.join(unknown)} (boxes: {', '.join(boxes)})")
    missing = [b for b in boxes if b not in limits]
    if missing:
        raise RulesError(f"{where}: no limit for box {', '.join(missing)}")


def sample_bets(spots: int, limits: Mapping[str, Limit], boxes: Sequence[str], rng: Any,
                default: str | None = None) -> list[PlaceBet]:
    """Bets a table might see in one round, for the property-test harness and the demo: about a third of the spots
    bet on one box each, small amounts (a later pass may add to a bet that noise left under its minimum), and spot
    1 bets the minimum on `default` (the first box) if nobody else bet."""
    bets = []
    for spot in range(1, spots + 1):
        if rng.randbelow(3) == 0:
            box = rng.choice(boxes)
            limit = limits[box]
            bets.append(PlaceBet(spot, box, limit.min + rng.randbelow(max(1, min(limit.max - limit.min, limit.min)))))
    box = default or boxes[0]
    return bets or [PlaceBet(1, box, limits[box].min)]


@dataclass(frozen=True, slots=True)
class Bets:
    """Credits on each (spot, box), kept sorted so equal bets compare and serialise equally."""

    stakes: tuple[tuple[int, str, int], ...] = ()

    def get(self, spot: int, box: str) -> int:
        for s, b, amount in self.stakes:
            if s == spot and b == box:
                return amount
        return 0

    def __iter__(self) -> Iterator[tuple[int, str, int]]:
        return iter(self.stakes)

    def __bool__(self) -> bool:
        return bool(self.stakes)

    @property
    def total(self) -> int:
        return sum(a for _, _, a in self.stakes)

    def spots(self) -> tuple[int, ...]:
        """Spots with at least one bet, in order."""
        return tuple(sorted({s for s, _, _ in self.stakes}))

    def spot_total(self, spot: int) -> int:
        return sum(a for s, _, a in self.stakes if s == spot)

    def with_amount(self, spot: int, box: str, amount: int) -> Bets:
        """These bets with (spot, box) set to `amount` (0 removes it)."""
        if amount < 0:
            raise ValueError(f"a stake cannot be negative: spot {spot} {box} {amount}")
        rest = [(s, b, a) for s, b, a in self.stakes if not (s == spot and b == box)]
        if amount:
            rest.append((spot, box, amount))
        return Bets(tuple(sorted(rest)))

    def place(self, event: PlaceBet, spots: int, limits: Mapping[str, Limit]) -> tuple[Bets, StakeChanged]:
        """Add to a bet: the box's stake after it must lie within the table's limits (refused at once, so a
        player learns it while he can still bet more, not when bets close)."""
        self._check_target(event.spot, event.box, spots, limits)
        if isinstance(event.amount, bool) or not isinstance(event.amount, int) or event.amount < 1:
            raise IllegalEvent(f"a bet is a whole number of credits above zero, not {event.amount!r}")
        new = self.get(event.spot, event.box) + event.amount
        limit = limits[event.box]
        if new < limit.min:
            raise IllegalEvent(f"spot {event.spot} {event.box}: {new} is under the table minimum of {limit.min}")
        if new > limit.max:
            raise IllegalEvent(f"spot {event.spot} {event.box}: {new} would be over the table maximum of {limit.max}")
        return self.with_amount(event.spot, event.box, new), StakeChanged(event.spot, event.box, new, event.amount)

    def remove(self, event: RemoveBet, spots: int, limits: Mapping[str, Limit]) -> tuple[Bets, StakeChanged]:
        self._check_target(event.spot, event.box, spots, limits)
        have = self.get(event.spot, event.box)
        if isinstance(event.amount, bool) or not isinstance(event.amount, int) or event.amount < 1:
            raise IllegalEvent(f"a bet is a whole number of credits above zero, not {event.amount!r}")
        if event.amount > have:
            raise IllegalEvent(f"spot {event.spot} {event.box} holds {have}, cannot take back {event.amount}")
        new = have - event.amount
        minimum = limits[event.box].min
        if 0 < new < minimum:
            raise IllegalEvent(f"spot {event.spot} {event.box}: taking back {event.amount} would leave {new}, under "
                               f"the table minimum of {minimum} (take back all {have}, or at most {have - minimum})")
        return self.with_amount(event.spot, event.box, new), StakeChanged(event.spot, event.box, new, -event.amount)

    def check_minimums(self, limits: Mapping[str, Limit]) -> None:
        """At close of betting: every bet is at least its box's minimum (placing and taking back keep it so; this
        guards the stakes a game sets by other means)."""
        for spot, box, amount in self.stakes:
            if amount < limits[box].min:
                raise IllegalEvent(f"spot {spot} {box}: {amount} is under the table minimum of {limits[box].min}")

    @staticmethod
    def _check_target(spot: int, box: str, spots: int, limits: Mapping[str, Limit]) -> None:
        if isinstance(spot, bool) or not isinstance(spot, int) or not 1 <= spot <= spots:
            raise IllegalEvent(f"no spot {spot!r} at this table (spots 1 to {spots})")
        if box not in limits:
            raise IllegalEvent(f"no box {box!r} in this game (boxes: {', '.join(limits)})")

    def json(self) -> list[dict[str, Any]]:
        return [{"spot": s, "box": b, "amount": a} for s, b, a in self.stakes]
