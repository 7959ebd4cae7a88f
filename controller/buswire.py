"""What travels on the bus (controller/bus.md): its version and endpoints, the bounds on what a peer may send, and
its parsing into a bounded JSON value of finite numbers (`parse_message`) or a journaled summary of a refusal."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Mapping

BUS_VERSION = 2  # 2: an update covers a group commit (`prev` links it to the one before); 1: one per record

# What a peer may send. libzmq checks the sizes (ZMQ_MAXMSGSIZE) before it allocates a message and drops the
# connection of a peer that goes over; the rest is checked before and after parsing.
MAX_MESSAGE = 65_536          # bytes of a command (the largest real one is a few hundred)
MAX_SNAPSHOT_REQUEST = 4_096  # bytes of a snapshot request ({"view": ..., "table": ...})
MAX_SUBSCRIPTION = 512        # bytes of a subscription (a topic prefix); a CURVE handshake needs about 300
MAX_DEPTH = 16                # nesting of arrays and objects (a command needs 2)
MAX_INT = 2 ** 53 - 1         # the largest whole number a JavaScript screen holds exactly
HEAD_BYTES = 64               # the first bytes of a refused message kept in its summary


@dataclass(frozen=True)
class BusEndpoints:
    publish: str = "tcp://127.0.0.1:5550"
    snapshot: str = "tcp://127.0.0.1:5551"
    commands: str = "tcp://127.0.0.1:5552"


class Malformed(ValueError):
    """A message that is not a bounded JSON value of finite numbers; the text says what is wrong, naming the
    field where there is one."""


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))


def _nesting(body: bytes) -> int:
    """How deep arrays and objects nest in JSON text, counted without parsing (so without recursion); brackets
    in strings do not count (an unterminated string's do: the text is not JSON anyway). Below MAX_DEPTH it may
    answer more than the depth: a text that opens at most MAX_DEPTH brackets cannot nest deeper, so the usual
    message is not scanned."""
    opening = body.count(b"[") + body.count(b"{")
    if opening <= MAX_DEPTH:
        return opening
    skeleton = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    return max(itertools.accumulate(1 if c in b"[{" else -1 for c in skeleton), default=0)


def _field(path: str) -> str:
    return path or "the message"


def _check(value: Any, path: str) -> None:
    """Every number finite and within ±MAX_INT when whole, every text encodable as UTF-8 (a lone surrogate
    from a `\\ud800` escape is not): what the journal and the screens can hold."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Malformed(f"{_field(path)} is {value!r}: only finite numbers are taken (no NaN or Infinity)")
    elif isinstance(value, int) and not isinstance(value, bool):
        if abs(value) > MAX_INT:
            raise Malformed(f"{_field(path)} is beyond \u00b1{MAX_INT} (2**53 - 1)")
    elif isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise Malformed(f"{_field(path)} holds a lone UTF-16 surrogate: not text") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _check(key, path)
            _check(item, f"{path}.{key[:40]}" if path else key[:40])
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check(item, f"{path}[{i}]")


def parse_message(body: bytes, limit: int = MAX_MESSAGE) -> Any:
    """The JSON value of a peer's message, or Malformed: at most `limit` bytes, nested at most MAX_DEPTH deep,
    numbers finite (JSON has no NaN or Infinity; Python's parser takes them, and 1e400 overflows to inf)."""
    if len(body) > limit:
        raise Malformed(f"{len(body)} bytes: a message here is at most {limit}")
    depth = _nesting(body)
    if depth > MAX_DEPTH:
        raise Malformed(f"nested {depth} deep: at most {MAX_DEPTH}")
    try:
        value = json.loads(body)
    except RecursionError:  # not reached after the count above; kept so no parse can take a task down
        raise Malformed(f"nested too deep: at most {MAX_DEPTH}") from None
    except ValueError as exc:  # UnicodeDecodeError is one
        raise Malformed(f"not JSON ({str(exc)[:80]})") from None
    _check(value, "")
    return value


def summary(body: bytes, peer: str | None) -> dict[str, Any]:
    """A refused message as journaled: its size, SHA-256, first bytes (undecodable ones as \\x escapes) and the
    peer's address; never the message itself, so its size does not matter."""
    return {"bytes": len(body), "sha256": hashlib.sha256(body).hexdigest(),
            "head": body[:HEAD_BYTES].decode("utf-8", "backslashreplace"), "peer": peer}


def digest(command: str, args: Mapping[str, Any]) -> str:
    """What a command asks, as a short hash: a resend with the same id must ask the same."""
    text = json.dumps([command, args], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a bus command came from: the client's key (z85 text; None without CURVE), its IP address, the
    request's id (None: the request named none) and `digest(command, args)`."""

    key: str | None
    peer: str | None
    id: str | int | None
    digest: str
