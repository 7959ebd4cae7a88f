"""Views: the public, dealer and audit projections of a table's state; face-down cards reach no screen-facing view.

A game's snapshot follows the contract in controller/games/base.py: every card is an object
{"card": "AS", "up": bool}, and anything derived from a face-down card lives under "audit". The
projection is generic, so no game can leak a hole card through a view by forgetting a special case.
"""

from __future__ import annotations

from typing import Any

__all__ = ["AUDIENCES", "SCREEN_AUDIENCES", "project", "leaks"]

AUDIENCES = ("public", "dealer", "audit")
SCREEN_AUDIENCES = ("public", "dealer")  # may be shown on a screen or published on the bus


def _is_card(node: dict[str, Any]) -> bool:
    return "card" in node and "up" in node and isinstance(node["up"], bool)


def _mask(node: Any) -> Any:
    if isinstance(node, dict):
        if _is_card(node) and not node["up"]:
            return {k: (None if k == "card" else _mask(v)) for k, v in node.items()}
        return {k: _mask(v) for k, v in node.items() if k != "audit"}
    if isinstance(node, list):
        return [_mask(v) for v in node]
    return node


def project(state: dict[str, Any], audience: str) -> dict[str, Any]:
    """The view of `state` (a runtime picture holding the game snapshot) for `audience`.

    public: what players may see; dealer: the same cards plus what the dealer works with (the runtime
    adds alerts, expected-next and meters under "dealer" keys, dropped for the public); audit: all.
    """
    if audience == "audit":
        return state
    if audience not in SCREEN_AUDIENCES:
        raise ValueError(f"unknown view {audience!r} (views: {', '.join(AUDIENCES)})")
    masked = _mask(state)
    if audience == "public":
        masked.pop("dealer_only", None)
    return masked


def leaks(view: Any) -> list[str]:
    """Face-down card identities and audit sections present in a view; a screen view must have none."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if _is_card(node) and not node["up"] and node["card"] is not None:
                found.append(str(node["card"]))
            if "audit" in node:
                found.append("an audit section")
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(view)
    return found
