"""Views: the public, dealer and audit projections of a table's state; face-down cards and burns reach no screen-facing view.

A game's snapshot follows the contract in controller/games/base.py: every card is an object
{"card": "AS", "up": bool}, and anything derived from a face-down card lives under "audit". The
projection is generic, so no game can leak a hole card through a view by forgetting a special case.
Burn cards ("burns", hold'em's) are dropped whole, not masked: a burn is never shown, not even as a
card back, so a screen cannot draw one however it lays the table out.
"""

from __future__ import annotations

import json
import operator
from typing import Any

__all__ = ["AUDIENCES", "SCREEN_AUDIENCES", "project", "screen_views", "ScreenViews", "leaks"]

AUDIENCES = ("public", "dealer", "audit")
SCREEN_AUDIENCES = ("public", "dealer")  # may be shown on a screen or published on the bus
_DROPPED = ("audit", "burns")  # sections no screen-facing view carries at all


def _is_card(node: dict[str, Any]) -> bool:
    return "card" in node and "up" in node and isinstance(node["up"], bool)


def _mask(node: Any) -> Any:
    # Recurse only into containers: views are built for every journal record, so leaves are not visited.
    if type(node) is dict:
        if node.get("up") is False and "card" in node:
            return {k: (None if k == "card" else v) for k, v in node.items()}
        return {k: (_mask(v) if type(v) in (dict, list) else v) for k, v in node.items() if k not in _DROPPED}
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
    masked: dict[str, Any] = _mask(state)  # a dict masks to a dict
    if audience == "public":
        masked.pop("dealer_only", None)
    return masked


def screen_views(state: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Both screen views at once, masking once: {"public": ..., "dealer": ...}."""
    dealer = _mask(state)
    public = {k: v for k, v in dealer.items() if k != "dealer_only"}
    return {"public": public, "dealer": dealer}


class ScreenViews:
    """`screen_views` for a runtime that publishes after every journal record, with each view's JSON text.

    A picture is a few top-level sections (the game, the shoe, the history, the scoreboard, ...), and a
    record changes one or two of them: the history and the scoreboard change once a round, yet every update
    carries them. So each section's masked copy and text are kept and reused while the picture holds the
    very same object there (a list: the same parts in the same order); the reused object is held, so a new
    one can never be taken for it. A section is first encoded as it is: when its text shows no face-down
    card and no audit part, the view shares the section itself and that text (masking would copy it
    unchanged); only the others are masked and encoded again. A list section (the history, the scoreboard)
    gains an entry a round and keeps the others, so its entries are kept the same way and only a new one
    is encoded. Views are shared between publishes and with the picture: nobody may change them. The texts
    are exactly `json.dumps(view)`.
    """

    def __init__(self) -> None:
        self._sections: dict[str, tuple[Any, Any, str]] = {}  # key -> (section, its masked copy, '"key": text')
        self._entries: dict[str, dict[int, tuple[Any, Any, str]]] = {}  # list key -> id -> (entry, masked, text)

    def __call__(self, state: dict[str, Any]) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
        """({"public": view, "dealer": view}, {"public": text, "dealer": text}) for a runtime picture."""
        old, new = self._sections, {}
        old_entries, entries = self._entries, {}
        dealer: dict[str, Any] = {}
        texts: list[str] = []
        for key, value in state.items():
            if key == "audit":
                continue
            hit = old.get(key)
            if hit is None or not _same(hit[0], value):
                if type(value) is list:
                    masked, text, entries[key] = _list_text(value, old_entries.get(key, {}))
                else:
                    masked, text = _masked_text(value, hit is not None and hit[1] is not hit[0])
                hit = (value, masked, f"{json.dumps(key)}: {text}")
            elif key in old_entries:
                entries[key] = old_entries[key]
            new[key] = hit
            dealer[key] = hit[1]
            texts.append(hit[2])
        self._sections, self._entries = new, entries
        public = {k: v for k, v in dealer.items() if k != "dealer_only"}
        public_texts = [text for key, text in zip(dealer, texts) if key != "dealer_only"]
        return ({"public": public, "dealer": dealer},
                {"public": "{" + ", ".join(public_texts) + "}", "dealer": "{" + ", ".join(texts) + "}"})


def _same(old: Any, new: Any) -> bool:
    return old is new or (type(old) is list and type(new) is list and len(old) == len(new)
                          and all(map(operator.is_, old, new)))


def _list_text(value: list[Any], before: dict[int, tuple[Any, Any, str]]
               ) -> tuple[list[Any], str, dict[int, tuple[Any, Any, str]]]:
    """A list section masked and encoded entry by entry, reusing each entry `before` holds (by identity: the
    entry itself is held there, so its id cannot name another); also the entries for next time."""
    kept: dict[int, tuple[Any, Any, str]] = {}
    for entry in value:
        hit = before.get(id(entry))
        if hit is None:
            hit = (entry, *_masked_text(entry, False))
        kept[id(entry)] = hit
    parts = [kept[id(entry)] for entry in value]
    masked = value if all(m is e for e, m, _ in parts) else [m for _, m, _ in parts]
    # json.dumps writes a list as "[" + ", ".join(items) + "]" with its default separators
    return masked, "[" + ", ".join(t for _, _, t in parts) + "]", kept


def _masked_text(value: Any, mask: bool) -> tuple[Any, str]:
    """The masked section and its text. `mask`: it needed masking last time (the game does, for as long as
    a card lies face down), so mask it at once rather than encode it twice."""
    if type(value) not in (dict, list):
        return value, json.dumps(value)
    if not mask:
        text = json.dumps(value)
        # With json's separators a face-down card always shows as '"up": false', an audit part as
        # '"audit": ' and the burns as '"burns": ' (a quote inside a string is escaped), so a text without
        # any of them needs no masking.
        if '"up": false' not in text and '"audit": ' not in text and '"burns": ' not in text:
            return value, text
    value = _mask(value)
    return value, json.dumps(value)


def leaks(view: Any) -> list[str]:
    """Face-down card identities, audit sections and burns present in a view; a screen view must have none."""
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if _is_card(node) and not node["up"] and node["card"] is not None:
                found.append(str(node["card"]))
            if "audit" in node:
                found.append("an audit section")
            if "burns" in node:
                found.append("the burn cards")
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(view)
    return found
