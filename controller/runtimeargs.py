"""What a runtime takes from a command and keeps of it: typed arguments (`text_arg`, `int_arg`), what the journal can
hold of a value (`jsonable`, `bounded`, `clip`), and how many refusals a peer gets journaled (`RefusalLimiter`)."""

from __future__ import annotations

import hashlib
import json
import time
from collections import OrderedDict
from typing import Any, Callable

from controller.buswire import MAX_INT

MAX_TEXT = 500            # characters of a text argument (a reason, a box's name)
MAX_RECORDED = 512        # bytes of a refused command's args kept in its record; larger ones as a summary


class RefusalLimiter:
    """How many refusals of one peer (an IP address) are journaled: a burst of `burst`, then one every
    `every` seconds; the ones left out are counted and the count goes in the next record journaled for that
    peer (or `flush`'s). At most `peers` peers are tracked, so a flood from many addresses stays bounded."""

    def __init__(self, burst: int = 20, every: float = 1.0, peers: int = 1024,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.burst, self.every, self.peers, self.clock = burst, every, peers, clock
        self._buckets: OrderedDict[str, list[float]] = OrderedDict()  # peer -> [tokens, at, left out]
        self._orphans = 0   # left out by peers no longer tracked
        self.left_out = 0   # left out in all, since the start

    def allow(self, peer: str) -> tuple[bool, int]:
        """(journal this one?, refusals of this peer left out before it, when it is journaled)."""
        now = self.clock()
        bucket = self._buckets.pop(peer, None)
        if bucket is None:
            bucket = [float(self.burst), now, 0]
            while len(self._buckets) >= self.peers:
                _, dropped = self._buckets.popitem(last=False)
                self._orphans += int(dropped[2])
        self._buckets[peer] = bucket
        bucket[0] = min(float(self.burst), bucket[0] + (now - bucket[1]) / self.every)
        bucket[1] = now
        if bucket[0] >= 1:
            bucket[0] -= 1
            left, bucket[2] = int(bucket[2]), 0
            return True, left
        bucket[2] += 1
        self.left_out += 1
        return False, 0

    def flush(self) -> dict[str, int]:
        """The counts left out per peer since their last record (and forgets them): for a summary record."""
        out = {peer: int(b[2]) for peer, b in self._buckets.items() if b[2]}
        for b in self._buckets.values():
            b[2] = 0
        if self._orphans:
            out["(others)"] = self._orphans
            self._orphans = 0
        return out


_REQUIRED: Any = object()


def text_arg(args: dict[str, Any], key: str, default: Any = _REQUIRED) -> str:
    """A command's text argument (KeyError when missing and no default; TypeError for another type or a text
    over MAX_TEXT characters)."""
    value = args[key] if default is _REQUIRED else args.get(key, default)
    if not isinstance(value, str):
        raise TypeError(f"{key} must be text")
    if len(value) > MAX_TEXT:
        raise TypeError(f"{key} must be text of at most {MAX_TEXT} characters")
    return value


def int_arg(args: dict[str, Any], key: str, default: Any = _REQUIRED) -> int:
    """A command's whole-number argument: 25.9 (or 25.0) is refused, never truncated; so are NaN, Infinity and
    numbers beyond ±(2**53 - 1)."""
    value = args[key] if default is _REQUIRED else args.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{key} must be a whole number, not {clip(repr(value), 40)}")
    if abs(value) > MAX_INT:
        raise TypeError(f"{key} must be a whole number within ±{MAX_INT}")
    return value


def jsonable(value: Any) -> Any:
    """`value` when the journal can hold it as it is (strict JSON: finite numbers, UTF-8 text), else its repr."""
    try:
        json.dumps(value, allow_nan=False, ensure_ascii=False).encode()
        return value
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def bounded(value: Any) -> Any:
    """`value` as a refusal record keeps it: as it is when it is strict JSON of at most MAX_RECORDED bytes,
    else a summary (its size, SHA-256 and first bytes), so no refused request can make a record large or
    unwritable."""
    try:
        data = json.dumps(value, allow_nan=False, ensure_ascii=False, sort_keys=True).encode()
    except (TypeError, ValueError, RecursionError):
        data = repr(value).encode("utf-8", "backslashreplace")
    else:
        if len(data) <= MAX_RECORDED:
            return value
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
            "head": data[:64].decode("utf-8", "backslashreplace")}


def json_bytes(value: Any) -> bytes:
    try:
        return json.dumps(value, allow_nan=False, ensure_ascii=False).encode()
    except (TypeError, ValueError, RecursionError):
        return b"x" * (MAX_RECORDED + 1)


def clip(text: str, limit: int = 500) -> str:
    """At most `limit` characters, UTF-8 encodable (a lone surrogate, as a local caller may pass, becomes its
    escape): a refusal's reason and names go into the journal."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= limit else text[:limit - 1] + "…"
