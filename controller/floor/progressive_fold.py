"""A linked progressive's pool as a pure fold of its JetStream stream: the messages' wire form and the fold over them.

The stream `CROUPIER_LINK` holds every link's messages; a cabinet publishes on its own subject
`croupier.link.<link>.<cabinet>` (so a per-machine credential can let it write nothing else), with a
message id JetStream de-duplicates within its window:

    {"kind": "open", "link", "cabinet", "reset_cents"}                         id <link>:open:<reset_cents>
    {"kind": "contrib", "link", "cabinet", "game", "cents", "ts_ns"}           id <cabinet>:<game>:contrib
    {"kind": "hit", "link", "cabinet", "game", "denomination", "ts_ns"}        id <cabinet>:<game>:hit

The fold de-duplicates again by cabinet and game (a retry after the stream's duplicate window is a second
message, counted once), so the pool is exactly the fold of the stream from its first message, whoever folds it.

Rules, in stream order (the stream's one leader orders every message of a link):
- the first `open` gives the link its reset value and seeds the pool with it; a later open with another reset
  is refused (a cabinet configured with another reset sees this and keeps its link down);
- a contribution adds its cents to the pool, once per cabinet and game;
- a hit wins the pool as it stands: the award is the pool in whole credits of the hitting cabinet's
  denomination; the pool resets to the reset value plus the odd cents that made no whole credit. A hit is
  paid once per cabinet and game; a second copy changes nothing and its cabinet reads the first one's award.

Simultaneous hits. Two cabinets hitting in the same instant land in the stream one after the other: the
first in stream order wins the pool; the second wins the pool of the next cycle as it stands when its hit
lands (the reset value, plus whatever was contributed between the two hits and the odd cents), and resets
it again. This is the usual rule of a linked progressive ("the first player to trigger the jackpot wins the
whole amount, the second wins the reset value"); GLI-12 leaves the method to the rules of play, which must
state it. It is also the rule of the ZeroMQ link controller (controller/progressive.py), so a link keeps its
rules when it moves to the engine. Every hit is a cycle: no pool is paid twice, no hit is lost.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from controller.floor.wire import exact_fields, json_object, whole_field

__all__ = ["STREAM", "SUBJECT_PREFIX", "WINDOW", "ProgressiveWireError", "Open", "Contribution", "Hit", "Message",
           "Award", "PoolState", "link_subject", "link_filter", "message_id", "encode_message", "decode_message",
           "new_pool", "pool_step", "pool_refuse", "pool_fold", "pool_picture"]

STREAM = "CROUPIER_LINK"
SUBJECT_PREFIX = "croupier.link."
WINDOW = 256  # games per cabinet within which contributions may arrive out of order (as the ZeroMQ link)

_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")  # the config's id rule: also a valid single NATS subject token


class ProgressiveWireError(ValueError):
    """A message on a progressive subject that is not a well-formed contribution, hit or open."""


@dataclass(frozen=True, slots=True)
class Open:
    link: str
    cabinet: str
    reset_cents: int


@dataclass(frozen=True, slots=True)
class Contribution:
    link: str
    cabinet: str
    game: int
    cents: int
    ts_ns: int


@dataclass(frozen=True, slots=True)
class Hit:
    link: str
    cabinet: str
    game: int
    denomination: int  # cents per credit of the hitting cabinet: the award is whole credits of it
    ts_ns: int


Message = Open | Contribution | Hit


@dataclass(frozen=True, slots=True)
class Award:
    """One paid hit: the cycle it closed (1, 2, ...), who hit, when, and what it won."""

    hit: int
    cabinet: str
    game: int
    cents: int
    denomination: int
    seq: int     # the hit's stream sequence
    ts_ns: int   # the cabinet's clock when it sent the hit

    def json(self) -> dict[str, Any]:
        return {"hit": self.hit, "cabinet": self.cabinet, "game": self.game, "award": self.cents,
                "denomination": self.denomination, "seq": self.seq, "ts_ns": self.ts_ns}


def _empty() -> Mapping[Any, Any]:
    return MappingProxyType({})


@dataclass(frozen=True)
class PoolState:
    """A link's pool after folding its stream up to `seq`. All money in cents.

    Balance, always: pool == seeded + contributed - paid."""

    link: str
    seq: int = 0                         # the last stream sequence folded
    reset_cents: int | None = None       # from the first open; None: not opened yet (a reset of 0)
    pool: int = 0
    seeded: int = 0                      # reset values put in: the first open and each hit's reset
    contributions: int = 0
    contributed: int = 0
    hits: int = 0
    paid: int = 0
    duplicates: int = 0                  # second copies of a contribution or hit (counted once)
    refused: int = 0                     # malformed, foreign or conflicting messages (logged by the runtime)
    # cabinet -> (highest game counted, games counted within WINDOW of it)
    cabinets: Mapping[str, tuple[int, frozenset[int]]] = field(default_factory=_empty)
    awards: Mapping[tuple[str, int], Award] = field(default_factory=_empty)  # (cabinet, game) -> its award
    last_hit: Award | None = None

    def counted(self, cabinet: str, game: int) -> bool:
        high, recent = self.cabinets.get(cabinet, (0, frozenset()))
        return game in recent or game <= high - WINDOW

    def award_of(self, cabinet: str, game: int) -> Award | None:
        return self.awards.get((cabinet, game))


def link_subject(link: str, cabinet: str) -> str:
    """The subject a cabinet publishes its messages for a link on."""
    for what, ident in (("link", link), ("cabinet", cabinet)):
        if not _ID.fullmatch(ident):
            raise ProgressiveWireError(f"{what} id {ident!r}: 1 to 64 ASCII letters, digits, - and _")
    return f"{SUBJECT_PREFIX}{link}.{cabinet}"


def link_filter(link: str) -> str:
    """The subject filter of every message of a link."""
    if not _ID.fullmatch(link):
        raise ProgressiveWireError(f"link id {link!r}: 1 to 64 ASCII letters, digits, - and _")
    return f"{SUBJECT_PREFIX}{link}.*"


def message_id(msg: Message) -> str:
    """The de-duplication id: one per link's reset value, per cabinet and game for contributions and hits."""
    if isinstance(msg, Open):
        return f"{msg.link}:open:{msg.reset_cents}"
    return f"{msg.cabinet}:{msg.game}:{'contrib' if isinstance(msg, Contribution) else 'hit'}"


def encode_message(msg: Message) -> bytes:
    """A message's body (canonical JSON)."""
    if isinstance(msg, Open):
        body: dict[str, Any] = {"kind": "open", "link": msg.link, "cabinet": msg.cabinet,
                                "reset_cents": msg.reset_cents}
    elif isinstance(msg, Contribution):
        body = {"kind": "contrib", "link": msg.link, "cabinet": msg.cabinet, "game": msg.game, "cents": msg.cents,
                "ts_ns": msg.ts_ns}
    else:
        body = {"kind": "hit", "link": msg.link, "cabinet": msg.cabinet, "game": msg.game,
                "denomination": msg.denomination, "ts_ns": msg.ts_ns}
    return json.dumps(body, sort_keys=True, separators=(",", ":")).encode()


_FIELDS = {"open": {"kind", "link", "cabinet", "reset_cents"},
           "contrib": {"kind", "link", "cabinet", "game", "cents", "ts_ns"},
           "hit": {"kind", "link", "cabinet", "game", "denomination", "ts_ns"}}


def _int(body: Mapping[str, Any], key: str, low: int) -> int:
    return whole_field(body, key, low, "progressive message", ProgressiveWireError)


def decode_message(subject: str, data: bytes) -> Message:
    """Parse a message; anything malformed, or naming another link or cabinet than its subject, raises
    ProgressiveWireError naming the field."""
    body = json_object(data, "progressive message", ProgressiveWireError)
    kind = body.get("kind")
    if kind not in _FIELDS:
        raise ProgressiveWireError(f"progressive message field kind: {kind!r} is not open, contrib or hit")
    exact_fields(body, _FIELDS[kind], f"progressive {kind}", ProgressiveWireError)
    for key in ("link", "cabinet"):
        if not isinstance(body[key], str) or not _ID.fullmatch(body[key]):
            raise ProgressiveWireError(f"progressive message field {key}: not an id: {body[key]!r}")
    if subject != f"{SUBJECT_PREFIX}{body['link']}.{body['cabinet']}":
        raise ProgressiveWireError(f"progressive message field cabinet: {body['link']}/{body['cabinet']} published on "
                                   f"{subject!r} (another cabinet's or link's subject)")
    if kind == "open":
        return Open(body["link"], body["cabinet"], _int(body, "reset_cents", 0))
    if kind == "contrib":
        return Contribution(body["link"], body["cabinet"], _int(body, "game", 1), _int(body, "cents", 0),
                            _int(body, "ts_ns", 0))
    return Hit(body["link"], body["cabinet"], _int(body, "game", 1), _int(body, "denomination", 1),
               _int(body, "ts_ns", 0))


def new_pool(link: str) -> PoolState:
    return PoolState(link)


def pool_refuse(state: PoolState, seq: int) -> PoolState:
    """A message the fold cannot take (malformed, another link's): counted, and the cursor moves past it."""
    return state if seq <= state.seq else replace(state, seq=seq, refused=state.refused + 1)


def pool_step(state: PoolState, seq: int, msg: Message) -> PoolState:
    """The pool after the message at stream sequence `seq` (one already folded, seq <= state.seq, changes nothing)."""
    if seq <= state.seq:
        return state
    if msg.link != state.link:
        return pool_refuse(state, seq)
    if isinstance(msg, Open):
        if state.reset_cents is None:
            return replace(state, seq=seq, reset_cents=msg.reset_cents, pool=state.pool + msg.reset_cents,
                           seeded=state.seeded + msg.reset_cents)
        if msg.reset_cents == state.reset_cents:
            return replace(state, seq=seq, duplicates=state.duplicates + 1)
        return pool_refuse(state, seq)
    if isinstance(msg, Contribution):
        if state.counted(msg.cabinet, msg.game):
            return replace(state, seq=seq, duplicates=state.duplicates + 1)
        high, recent = state.cabinets.get(msg.cabinet, (0, frozenset()))
        high = max(high, msg.game)
        recent = frozenset(g for g in recent | {msg.game} if g > high - WINDOW)
        return replace(state, seq=seq, pool=state.pool + msg.cents, contributions=state.contributions + 1,
                       contributed=state.contributed + msg.cents,
                       cabinets=MappingProxyType({**state.cabinets, msg.cabinet: (high, recent)}))
    if (msg.cabinet, msg.game) in state.awards:
        return replace(state, seq=seq, duplicates=state.duplicates + 1)
    award = Award(state.hits + 1, msg.cabinet, msg.game, state.pool - state.pool % msg.denomination,
                  msg.denomination, seq, msg.ts_ns)
    reset = state.reset_cents or 0
    return replace(state, seq=seq, pool=reset + state.pool - award.cents, seeded=state.seeded + reset,
                   hits=award.hit, paid=state.paid + award.cents, last_hit=award,
                   awards=MappingProxyType({**state.awards, (msg.cabinet, msg.game): award}))


def pool_fold(state: PoolState, items: Iterable[tuple[int, Message | None]]) -> PoolState:
    """Fold (stream seq, message) pairs; None stands for a message that did not decode."""
    for seq, msg in items:
        state = pool_refuse(state, seq) if msg is None else pool_step(state, seq, msg)
    return state


def pool_picture(state: PoolState) -> dict[str, Any]:
    """What a reader publishes to the link's displays: the link controller's picture (controller/progressive.py)."""
    meters = {"pool": state.pool, "reset": state.reset_cents, "seeded": state.seeded,
              "contributions": state.contributions, "contributed": state.contributed, "hits": state.hits,
              "paid": state.paid, "duplicates": state.duplicates, "refused_messages": state.refused,
              "cabinets": {c: {"last_game": h} for c, (h, _) in sorted(state.cabinets.items())}}
    return {"link": state.link, "seq": state.seq, "pool": state.pool, "reset": state.reset_cents, "hits": state.hits,
            "last_hit": state.last_hit.json() if state.last_hit else None, "dealer_only": {"meters": meters}}
