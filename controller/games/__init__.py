"""Table games: one pure module per game (exporting `GAME`, a GameSpec), found by name with `get_game`."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from controller.games.base import GameSpec

__all__ = ["get_game", "game_names"]

_NOT_GAMES = {"base", "bets"}  # shared modules of the games package, not games


def _module_name(name: str) -> str:
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def get_game(name: str) -> GameSpec[Any]:
    """The game registered as `name` ('blackjack', 'three-card-poker', ...); a clear error otherwise."""
    module_name = _module_name(name)
    if module_name in _NOT_GAMES or not module_name.isidentifier():
        raise ValueError(f"unknown game {name!r} (known: {', '.join(game_names())})")
    try:
        module = importlib.import_module(f"controller.games.{module_name}")
    except ModuleNotFoundError as exc:
        if exc.name == f"controller.games.{module_name}":
            raise ValueError(f"unknown game {name!r} (known: {', '.join(game_names())})") from None
        raise
    game = getattr(module, "GAME", None)
    if not isinstance(game, GameSpec):
        raise ValueError(f"unknown game {name!r} (known: {', '.join(game_names())})")
    return game


def game_names() -> list[str]:
    """Registry names of every game module, hyphenated as on the command line."""
    import controller.games as pkg

    return sorted(m.name.replace("_", "-") for m in pkgutil.iter_modules(pkg.__path__)
                  if m.name not in _NOT_GAMES and not m.name.startswith("_"))
