"""What a spin changes besides the credits: a meter's change (`MeterChange`) and the free spins a feature grants
(`FreeSpins`); the engine and the features both make them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from controller.slots.title import Bet

__all__ = ["FREE_SPINS", "FreeSpins", "MeterChange"]

FREE_SPINS = "free_spins"  # the name under which changes of the free-spin counter are listed


@dataclass(frozen=True, slots=True)
class FreeSpins:
    """Spins the player does not pay for, all at the bet of the spin that won them."""

    remaining: int
    bet: Bet
    guaranteed: bool = False  # free *winning* spins: every one of them must win (draw_stops makes sure)
    feature: str = ""         # the feature kind that granted them

    def to_json(self) -> dict[str, Any]:
        return {"remaining": self.remaining, "bet": self.bet.to_json(), "guaranteed": self.guaranteed,
                "feature": self.feature}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FreeSpins:
        return cls(int(data["remaining"]), Bet.from_json(data["bet"]), bool(data["guaranteed"]), str(data["feature"]))


@dataclass(frozen=True, slots=True)
class MeterChange:
    meter: str
    before: int
    after: int
    why: str

    def to_json(self) -> dict[str, Any]:
        return {"meter": self.meter, "before": self.before, "after": self.after, "why": self.why}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> MeterChange:
        return cls(d["meter"], int(d["before"]), int(d["after"]), d["why"])
