"""Money on a table game's layout: payout ratios applied to whole-credit stakes, and how a fraction of a credit is
rounded (re-exported by controller.games.base, where the games import them from)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

__all__ = ["Rounding", "Payout"]


class Rounding(enum.Enum):
    """How a fractional credit is settled (3:2 on an odd bet, 5% commission on 15)."""

    DOWN = "down"        # toward zero: the house keeps the fraction (usual for payouts)
    UP = "up"            # away from zero (usual for commission owed to the house)
    HALF_UP = "half_up"  # to the nearest credit, halves up

    def divide(self, numerator: int, denominator: int) -> int:
        """numerator / denominator for non-negative integers, rounded by this rule."""
        if numerator < 0 or denominator <= 0:
            raise ValueError("rounding is defined for a non-negative numerator and a positive denominator")
        q, r = divmod(numerator, denominator)
        if r == 0 or self is Rounding.DOWN:
            return q
        if self is Rounding.UP:
            return q + 1
        return q + 1 if 2 * r >= denominator else q


@dataclass(frozen=True, slots=True)
class Payout:
    """A payout ratio 'win:per' (3:2 pays 3 for every 2 staked, on top of the returned stake)."""

    win: int
    per: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.win, int) or not isinstance(self.per, int) or self.win < 0 or self.per < 1:
            raise ValueError(f"a payout ratio needs whole numbers win >= 0 and per >= 1, got {self.win}:{self.per}")

    @classmethod
    def parse(cls, text: str | int) -> Payout:
        """'3:2', '3 to 2', '8:1' or a whole number (8 means 8:1)."""
        if isinstance(text, int) and not isinstance(text, bool):
            return cls(text, 1)
        if not isinstance(text, str):
            raise ValueError(f"a payout is written like '3:2' or '8', got {text!r}")
        parts = text.replace(" to ", ":").replace("to", ":").split(":")
        try:
            nums = [int(p.strip()) for p in parts]
        except ValueError:
            raise ValueError(f"a payout is written like '3:2' or '8', got {text!r}") from None
        if len(nums) == 1:
            return cls(nums[0], 1)
        if len(nums) == 2:
            return cls(nums[0], nums[1])
        raise ValueError(f"a payout is written like '3:2' or '8', got {text!r}")

    def on(self, stake: int, rounding: Rounding = Rounding.DOWN) -> int:
        """Winnings on `stake` at this ratio, in whole credits."""
        return rounding.divide(stake * self.win, self.per)

    def __str__(self) -> str:
        return f"{self.win}:{self.per}"
