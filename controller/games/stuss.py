"""Stuss: faro with no soda, no calling the turn, and the house taking the whole bet on a split (rules text 000_*).

The dealer turns two cards a turn from the first card to the last (26 turns, no hock); everything else, the
layout, coppered bets, bets that stay, the casekeeper, is faro's (`controller/games/faro.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from controller.games import faro
from controller.games.base import GameSpec

__all__ = ["GAME", "Rules"]


@dataclass(frozen=True)
class Rules(faro.Rules):
    NAME: ClassVar[str] = "stuss"
    soda: bool = False
    split_takes: Literal["half", "all"] = "all"
    call_the_turn: bool = False


GAME = GameSpec("stuss", "Stuss", Rules, faro.new_table, faro.apply, faro.expected_next, faro.snapshot, faro.BOXES)
legal_bets = faro.legal_bets
