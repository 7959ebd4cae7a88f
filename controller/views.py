"""Views: the public, dealer and audit projections of a table's state; face-down cards reach no screen-facing view.

A game's snapshot follows the contract in controller/games/base.py: every card is an object
{"card": "AS", "up": bool}, and anything derived from a face-down card lives under "audit". The
projection is generic, so no game can leak a hole card through a view by forgetting a special case.
"""

from __future__ import annotations

import operator
from typing import Any

__all__ = ["AUDIENCES", "SCREEN_AUDIENCES", "project", "screen_views", "ScreenViews", "leaks"]

AUDIENCES = ("public", "dealer", "audit")
SCREEN_AUDIENCES = ("public", "dealer")  # may be shown on a screen or published on the bus


def _is_card(node: dict[str, Any]) -> bool:
    return "card" in node and "up" in node and isinstance(node["up"], bool)


def _mask(node: Any) -> Any:
    # Recurse only into containers: views are built for every journal record, so leaves are not visited.
    if type(node) is dict:
        if node.get("up") is False and "card" in node:
            return {k: (None if k == "card" else v) for k, v in node.items()}
        return {k: (_mask(v) if type(v) in (dict, list) else v) for k, v in node.items() if k != "audit"}
    return [(_mask(v) if type(v) in (dict, list) else v) for v in node]


def project(state: dict[str, Any], audience: str) -> dict[str, Any]:
    """The view of `state` (a runtime picture holding the game snapshot) for `audience`.

    public: what players may see; dealer: the same cards plus what the dealer works with (the runtime
    adds alerts and meters under "dealer_only", dropped for the public); audit: all.
    """
    if audience == "audit":
        return state
    if audience not in SCREEN_AUDIENCES:
        raise ValueError(f"unknown view {audience!r} (views: {', '.join(AUDIENCES)})")
    masked = _mask(state)
    if audience == "public":
        masked.pop("dealer_only", None)
    return masked


def screen_views(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Both screen views at once, masking once: {"public": ..., "dealer": ...}."""
    dealer = _mask(state)
    public = {k: v for k, v in dealer.items() if k != "dealer_only"}
    return {"public": public, "dealer": dealer}


class ScreenViews:
    """`screen_views` for a runtime that publishes after every journal record.

    Most of a picture is the same from one record to the next: the history, the last round and the
    scoreboard are written once at a settlement and then only carried along. Their parts are the very same
    objects in the next picture, so their masked copies are kept and reused (an object is matched by
    identity and held while its copy is, so a new object can never be taken for it). Views are shared
    between publishes, as `screen_views`' two views already share their parts: nobody may change them.
    """

    def __init__(self) -> None:
        self._memo: dict[int, tuple[Any, Any]] = {}
        self._lists: dict[str, tuple[list[Any], list[Any]]] = {}

    def __call__(self, state: dict[str, Any]) -> dict[str, dict[str, Any]]:
        old, new = self._memo, {}

        def masked(node: Any, depth: int = 1) -> Any:
            if type(node) not in (dict, list):
                return node
            hit = old.get(id(node))
            if hit is not None and hit[0] is node:
                copy = hit[1]
            elif depth and type(node) is dict and not (node.get("up") is False and "card" in node):
                # One level down too: a fresh section may still hold parts that did not change (the meters).
                copy = {k: masked(v, depth - 1) for k, v in node.items() if k != "audit"}
            else:
                copy = _mask(node)
            new[id(node)] = (node, copy)
            return copy

        dealer: dict[str, Any] = {}
        for key, value in state.items():
            if key == "audit":
                continue
            if type(value) is list:
                # A list rebuilt around the same parts (the history at every record) stays the same list;
                # when one part changes, the list is masked again (once a round).
                last = self._lists.get(key)
                if last is not None and len(last[0]) == len(value) and all(map(operator.is_, last[0], value)):
                    parts = last[1]
                else:
                    parts = [masked(v) for v in value]
                self._lists[key] = (value, parts)
                dealer[key] = parts
            else:
                dealer[key] = masked(value)
        self._memo = new
        public = {k: v for k, v in dealer.items() if k != "dealer_only"}
        return {"public": public, "dealer": dealer}


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
