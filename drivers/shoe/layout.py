"""Payload layouts of the shoe protocol, compiled from their declarations ("shoe_id:u8 draw:u32 card:u8", the words
of firmware/protocol/vectors.json): one codec packs and parses every message."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

__all__ = ["PayloadError", "Field", "Layout"]


class PayloadError(ValueError):
    """A frame whose type is unknown or whose payload does not match its type's layout."""

    def __init__(self, verdict: str, text: str) -> None:
        super().__init__(text)
        self.verdict = verdict


def _text(raw: bytes, what: str, lo: int, hi: int) -> str:
    if not lo <= len(raw) <= hi or any(b < 0x20 or b > 0x7E for b in raw):
        raise PayloadError("bad_payload", f"{what}: expected {lo}..{hi} printable ASCII bytes, got {raw!r}")
    return raw.decode("ascii")


_INTS = {"u8": 1, "u16": 2, "u32": 4, "u64": 8}
_ARRAY = re.compile(r"(card|ascii)\[(\w+)(?:\.\.(\d+))?\]$")


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a layout: `name:u8` (u16, u32, u64: big-endian), `name:card[count_field]` (that many card
    bytes, counted by an earlier field) or `name:ascii[lo..hi]` (printable ASCII, the rest of the payload)."""

    name: str
    kind: str            # "int", "cards" or "ascii"
    size: int = 0        # an int's bytes
    count: str = ""      # cards: the field that counts them
    lo: int = 0          # ascii: the length range
    hi: int = 0


class Layout:
    """A payload layout compiled from its declaration ("shoe_id:u8 draw:u32 card:u8"): decodes a payload into its
    wire fields and encodes them back, every length checked."""

    def __init__(self, what: str, text: str) -> None:
        self.what, self.text = what, text
        self.fields = tuple(self._field(spec) for spec in text.split())
        if any(f.kind == "ascii" for f in self.fields[:-1]):
            raise ValueError(f"{what}: an ascii field takes the rest of the payload, so it comes last")
        self.fixed = all(f.kind == "int" for f in self.fields)
        self.size = sum(f.size for f in self.fields)

    @staticmethod
    def _field(spec: str) -> Field:
        name, _, kind = spec.partition(":")
        if kind in _INTS:
            return Field(name, "int", size=_INTS[kind])
        array = _ARRAY.match(kind)
        if array is None:
            raise ValueError(f"field {spec!r}: unknown kind")
        if array[1] == "card":
            return Field(name, "cards", count=array[2])
        return Field(name, "ascii", lo=int(array[2]), hi=int(array[3]))

    def decode(self, payload: bytes) -> dict[str, Any]:
        if self.fixed and len(payload) != self.size:
            raise PayloadError("bad_payload", f"{self.what}: payload is {len(payload)} bytes, expected {self.size}")
        out: dict[str, Any] = {}
        at = 0
        for f in self.fields:
            if f.kind == "ascii":
                out[f.name] = _text(payload[at:], f"{self.what} {f.name}", f.lo, f.hi)
                return out
            size = f.size if f.kind == "int" else out[f.count]
            if at + size > len(payload):
                raise PayloadError("bad_payload", f"{self.what}: payload of {len(payload)} bytes ends in {f.name}")
            raw = payload[at:at + size]
            out[f.name] = int.from_bytes(raw, "big") if f.kind == "int" else list(raw)
            at += size
        if at != len(payload):
            raise PayloadError("bad_payload", f"{self.what}: {len(payload) - at} bytes after its last field")
        return out

    def encode(self, values: dict[str, Any]) -> bytes:
        out = bytearray()
        for f in self.fields:
            value = values[f.name]
            if f.kind == "int":
                out += value.to_bytes(f.size, "big")
            elif f.kind == "cards":
                if len(value) != values[f.count]:
                    raise ValueError(f"{self.what}: {f.name} holds {len(value)} cards, "
                                     f"{f.count} says {values[f.count]}")
                out += bytes(value)
            else:
                raw = value.encode("ascii", "replace")
                _text(raw, f"{self.what} {f.name}", f.lo, f.hi)
                out += raw
        return bytes(out)
