"""The shape every table game shares: events in, effects out, what is expected next, payout ratios, settlement records, rules loading.

A game module is pure (ARCHITECTURE.md): `apply(state, event) -> (state, effects)` over frozen
dataclasses, no I/O, no clock, no randomness. An event that is not legal now raises `IllegalEvent`
with a reason a dealer can read; because states are immutable, the caller's state is untouched.

Events and effects are JSON-serialisable (`to_json`/`event_from_json`) so the runtime can journal
every event before applying it and replay the journal into the same state.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import enum
import functools
import types
import typing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Generic, Mapping, TypeVar, Union

from controller.cards import Card, parse_card
from controller.games._money import Payout, Rounding

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

__all__ = [
    "SCHEMA_VERSION", "IllegalEvent", "RulesError", "Rounding", "Payout", "Event", "Effect",
    "OpenBets", "PlaceBet", "RemoveBet", "CloseBets", "CardDealt", "Decision", "Settle", "VoidRound",
    "NewShoe", "BetsOpened", "BetsClosed", "StakeChanged", "CardPlaced", "CardsRevealed", "RoundSettled",
    "RoundVoided", "ShuffleDue", "event_from_json", "effect_from_json", "Expected", "Waiting", "BoxResult",
    "Settlement", "Placed", "RulesBase", "rules_from_mapping", "GameSpec", "spot_actor", "parse_spot_actor", "Effects",
]

SCHEMA_VERSION = 1


class IllegalEvent(ValueError):
    """The event is not legal in this state; `reason` says why in words for the dealer screen."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RulesError(ValueError):
    """A rules configuration is invalid; the message names the key and the problem."""


# ---------------------------------------------------------------------------------------------------
# JSON for events and effects: flat frozen dataclasses whose fields are ints, strs, bools, Cards,
# None, tuples of those, or nested dataclasses of the same kind.

_EVENTS: dict[str, type[Event]] = {}
_EFFECTS: dict[str, type[Effect]] = {}
D = TypeVar("D", bound="DataclassInstance")


def _encode(value: Any) -> Any:
    if isinstance(value, Card):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (tuple, list)):
        return [_encode(v) for v in value]
    if isinstance(value, Payout):
        return str(value)
    if dataclasses.is_dataclass(value):
        return {f.name: _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _encode(v) for k, v in value.items()}
    return value


def _decode(hint: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        args = typing.get_args(hint)
        if value is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return _decode(arg, value, where)
            except (TypeError, ValueError) as exc:
                errors.append(str(exc))
        raise ValueError(f"{where}: {value!r} fits none of {hint}: {'; '.join(errors)}")
    if origin is tuple:
        args = typing.get_args(hint)
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"{where}: expected a list, got {value!r}")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_decode(args[0], v, where) for v in value)
        if len(args) != len(value):
            raise ValueError(f"{where}: expected {len(args)} items, got {len(value)}")
        return tuple(_decode(a, v, where) for a, v in zip(args, value))
    if origin is typing.Literal:
        if value not in typing.get_args(hint):
            raise ValueError(f"{where}: expected one of {typing.get_args(hint)}, got {value!r}")
        return value
    if hint is Card:
        return parse_card(value)
    if hint is Payout:
        try:
            return Payout.parse(value)
        except ValueError as exc:
            raise ValueError(f"{where}: {exc}") from None
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        try:
            return hint(value)
        except ValueError:
            choices = ", ".join(repr(m.value) for m in hint)
            raise ValueError(f"{where}: expected one of {choices}, got {value!r}") from None
    if hint is bool:
        if not isinstance(value, bool):
            raise ValueError(f"{where}: expected true or false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{where}: expected a whole number, got {value!r}")
        return value
    if hint is str:
        if not isinstance(value, str):
            raise ValueError(f"{where}: expected text, got {value!r}")
        return value
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _from_fields(hint, value, where)
    if hint is Any:
        return value
    raise TypeError(f"{where}: cannot decode a field of type {hint!r}")


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    # Resolving string annotations costs more than decoding the event itself; a class's hints never change.
    return typing.get_type_hints(cls)


def _from_fields(cls: type[D], data: Any, where: str) -> D:
    if not isinstance(data, Mapping):
        raise ValueError(f"{where}: expected an object, got {data!r}")
    hints = _hints(cls)
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    unknown = set(data) - names - {"kind"}
    if unknown:
        raise ValueError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
    kwargs = {name: _decode(hints[name], data[name], f"{where}.{name}") for name in names if name in data}
    try:
        return cls(**kwargs)
    except (TypeError, ValueError) as exc:  # a check in __post_init__ names its key too
        raise ValueError(f"{where}: {exc}") from None


class _Serial:
    KIND: ClassVar[str] = ""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.KIND, **{f.name: _encode(getattr(self, f.name))
                                      for f in dataclasses.fields(self)}}  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Event(_Serial):
    """An input to a game. Subclasses set KIND (unique across all games) and are registered by it."""

    def __init_subclass__(cls) -> None:
        # No super() call: slotted dataclasses are rebuilt as new classes, which breaks zero-argument
        # super here, and object.__init_subclass__ does nothing we need.
        if "KIND" in cls.__dict__:
            if cls.KIND in _EVENTS and _EVENTS[cls.KIND].__qualname__ != cls.__qualname__:
                raise TypeError(f"event kind {cls.KIND!r} is already taken by {_EVENTS[cls.KIND].__qualname__}")
            _EVENTS[cls.KIND] = cls


@dataclass(frozen=True, slots=True)
class Effect(_Serial):
    """An output of a game for the runtime to act on (lamps, bus, alerts). Subclasses set KIND."""

    def __init_subclass__(cls) -> None:
        if "KIND" in cls.__dict__:
            _EFFECTS[cls.KIND] = cls


Effects = tuple[Effect, ...]


def event_from_json(data: Mapping[str, Any]) -> Event:
    """Rebuild an event from its JSON form; a malformed one raises ValueError naming the problem."""
    if not isinstance(data, Mapping) or not isinstance(data.get("kind"), str):
        raise ValueError(f"an event is an object with a 'kind', got {data!r}")
    cls = _EVENTS.get(data["kind"])
    if cls is None:
        raise ValueError(f"unknown event kind {data['kind']!r}")
    return _from_fields(cls, data, data["kind"])


def effect_from_json(data: Mapping[str, Any]) -> Effect:
    cls = _EFFECTS.get(data.get("kind", "")) if isinstance(data, Mapping) else None
    if cls is None:
        raise ValueError(f"unknown effect {data!r}")
    return _from_fields(cls, data, data["kind"])


# Events common to the table games. A game may define more (its own KIND names, prefixed by the game).

@dataclass(frozen=True, slots=True)
class OpenBets(Event):
    """Start a round: bets may be placed."""
    KIND: ClassVar[str] = "open_bets"


@dataclass(frozen=True, slots=True)
class PlaceBet(Event):
    """Add `amount` credits to box `box` of spot `spot` (spots are 1..N)."""
    KIND: ClassVar[str] = "place_bet"
    spot: int
    box: str
    amount: int


@dataclass(frozen=True, slots=True)
class RemoveBet(Event):
    """Take `amount` credits back from a box while bets are open."""
    KIND: ClassVar[str] = "remove_bet"
    spot: int
    box: str
    amount: int


@dataclass(frozen=True, slots=True)
class CloseBets(Event):
    """No more bets: dealing starts."""
    KIND: ClassVar[str] = "close_bets"


@dataclass(frozen=True, slots=True)
class CardDealt(Event):
    """A card was dealt. It goes where `expected_next()` says; `target`, when given, must agree."""
    KIND: ClassVar[str] = "card_dealt"
    card: Card
    source: str = "shoe"        # "shoe", "camera" or "manual"
    target: str | None = None


@dataclass(frozen=True, slots=True)
class Decision(Event):
    """A player's or the dealer's decision: `actor` is 'spot:3', 'dealer', 'banker', ...; `hand` picks a split hand."""
    KIND: ClassVar[str] = "decision"
    actor: str
    action: str
    amount: int = 0
    hand: int = 0


@dataclass(frozen=True, slots=True)
class Settle(Event):
    """Settle the round: every box is paid or collected."""
    KIND: ClassVar[str] = "settle"


@dataclass(frozen=True, slots=True)
class VoidRound(Event):
    """Cancel the round in progress: every stake goes back; the reason is kept."""
    KIND: ClassVar[str] = "void_round"
    reason: str


@dataclass(frozen=True, slots=True)
class NewShoe(Event):
    """A freshly shuffled shoe is in play (after the shuffler's deck check); `cut` is the cut card's depth."""
    KIND: ClassVar[str] = "new_shoe"
    decks: int
    cut: int | None = None


# Effects common to the table games. Every change of credits on the layout is a StakeChanged, so the
# sum of its deltas over a round equals the settlement's stakes (the conservation tests check it).

@dataclass(frozen=True, slots=True)
class BetsOpened(Effect):
    KIND: ClassVar[str] = "bets_opened"
    round: int


@dataclass(frozen=True, slots=True)
class BetsClosed(Effect):
    KIND: ClassVar[str] = "bets_closed"
    round: int


@dataclass(frozen=True, slots=True)
class StakeChanged(Effect):
    """Credits on a box changed by `delta` (a bet, a removal, a double, a split, insurance, a play bet)."""
    KIND: ClassVar[str] = "stake_changed"
    spot: int
    box: str
    stake: int
    delta: int


@dataclass(frozen=True, slots=True)
class CardPlaced(Effect):
    """A card went to `to` ("spot:3", "dealer", "burn", ...). A face-down card's identity is in the
    effect for the journal and audit only: screen-facing outputs must use `snapshot` through the views."""
    KIND: ClassVar[str] = "card_placed"
    card: Card
    to: str
    up: bool


@dataclass(frozen=True, slots=True)
class CardsRevealed(Effect):
    KIND: ClassVar[str] = "cards_revealed"
    to: str
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class RoundSettled(Effect):
    KIND: ClassVar[str] = "round_settled"
    round: int
    settlement: Settlement


@dataclass(frozen=True, slots=True)
class RoundVoided(Effect):
    """The round was cancelled: every stake in `returned` goes back to its box."""
    KIND: ClassVar[str] = "round_voided"
    round: int
    reason: str
    returned: int


@dataclass(frozen=True, slots=True)
class ShuffleDue(Effect):
    """The shoe must be changed after this round (cut card reached) or now (shoe empty)."""
    KIND: ClassVar[str] = "shuffle_due"
    reason: str


def spot_actor(spot: int) -> str:
    return f"spot:{spot}"


def parse_spot_actor(actor: str) -> int | None:
    """The spot number of 'spot:N', or None for other actors."""
    if actor.startswith("spot:") and actor[5:].isdigit():
        return int(actor[5:])
    return None


# ---------------------------------------------------------------------------------------------------
# What the table waits for


class Waiting(enum.StrEnum):
    """What a table waits for, across every game (`Expected.phase`, a snapshot's "phase"): the runtime's
    vocabulary; each game's own `Phase` says where its round stands."""

    IDLE = "idle"
    BETTING = "betting"
    DEALING = "dealing"
    DECIDING = "deciding"
    SETTLING = "settling"
    SHUFFLING = "shuffling"
    OVER = "over"


@dataclass(frozen=True, slots=True)
class Expected:
    """What the game waits for next, in data (for the runtime) and words (for the dealer screen)."""

    phase: Waiting
    text: str                   # e.g. "card to spot 3, face up"
    card_to: str | None = None  # where the next card goes: "spot:3", "spot:3/hand:2", "dealer", "burn", ...
    face_up: bool | None = None
    actor: str | None = None    # whose decision: "spot:3", "dealer", "banker", ...
    hand: int = 0               # which of the actor's hands the decision is for (split hands: 0, 1, ...)
    actions: tuple[str, ...] = ()  # the decisions (or event kinds) that are legal now
    amount_range: tuple[int, int] | None = None  # (min, max) credits when the decision takes an amount


# ---------------------------------------------------------------------------------------------------
# Cards on the table and settlement


@dataclass(frozen=True, slots=True)
class Placed:
    """A card on the table and whether it is face up. Views hide every face-down card from screens."""

    card: Card
    up: bool

    def json(self) -> dict[str, Any]:
        return {"card": str(self.card), "up": self.up}


@dataclass(frozen=True, slots=True)
class BoxResult:
    """How one box of one spot settled. Every credit traces to `line`, a paytable entry.

    returned = (stake if the stake comes back) + paid - commission; the house wins stake - returned.
    """

    spot: int
    box: str
    stake: int
    outcome: str        # "win", "lose", "push", "surrender", "blackjack", ...
    paid: int           # winnings on top of the stake, before commission
    commission: int     # taken from the winnings by the house
    returned: int       # credits handed back to the player for this box
    line: str           # the paytable line that decided it, e.g. "blackjack 3:2", "banker 1:1 less 5%"

    def __post_init__(self) -> None:
        for name in ("stake", "paid", "commission", "returned"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative whole number of credits, got {value!r}")

    @property
    def net(self) -> int:
        """The player's gain (negative for a loss)."""
        return self.returned - self.stake


@dataclass(frozen=True, slots=True)
class Settlement:
    """The boxes decided in one round, and the credits that stay on the table between rounds.

    Most games decide every box every round and leave the carry fields at 0. Where credits outlive a
    round the settlement says how many, so every credit stays traced:

    - open bets (faro's bets that stay until their rank shows, trente et quarante's bets en prison) are listed
      in `results` only in the round that decides them; `carried_in`/`carried_out` are the open bets on the
      layout when the round opened / after it settled. Each round: credits committed (StakeChanged deltas)
      + carried_in = stakes + carried_out.
    - a pot (in-between, the high-card pool) belongs to no player and no house: `pot_in`/`pot_out` are the pot
      when the round opened and the pot carried on. Each round: stakes = returned + (pot_out - pot_in) + house_win.
    - `banker` is the spot banking the round in a changing-bank game (pontoon), 0 when the house banks: the
      house_win of such a round is that player's win, not the house's.
    """

    results: tuple[BoxResult, ...]
    carried_in: int = 0
    carried_out: int = 0
    pot_in: int = 0
    pot_out: int = 0
    banker: int = 0

    def __post_init__(self) -> None:
        for name in ("carried_in", "carried_out", "pot_in", "pot_out", "banker"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative whole number, got {value!r}")

    @property
    def stakes(self) -> int:
        return sum(r.stake for r in self.results)

    @property
    def returned(self) -> int:
        return sum(r.returned for r in self.results)

    @property
    def commission(self) -> int:
        return sum(r.commission for r in self.results)

    @property
    def house_win(self) -> int:
        """What the bank (the house, or the banking spot) won: what the pot did not take or pay."""
        return self.stakes - self.returned - (self.pot_out - self.pot_in)

    def for_spot(self, spot: int) -> tuple[BoxResult, ...]:
        return tuple(r for r in self.results if r.spot == spot)

    def json(self) -> dict[str, Any]:
        out = {"results": [_encode(r) for r in self.results], "stakes": self.stakes, "returned": self.returned,
               "commission": self.commission, "house_win": self.house_win}
        # Carry fields only where a game uses them, so the settlements of every other game read as before.
        for name in ("carried_in", "carried_out", "pot_in", "pot_out", "banker"):
            if getattr(self, name):
                out[name] = getattr(self, name)
        return out


# ---------------------------------------------------------------------------------------------------
# Rules as configuration


@dataclass(frozen=True)
class RulesBase:
    """Base of every game's rules dataclass. Subclasses add fields with defaults (the standard casino
    rules) and may override `validate()` for constraints between fields (raise RulesError)."""

    def validate(self) -> None:
        """Cross-field checks; raise RulesError naming the key."""

    def to_json(self) -> dict[str, Any]:
        return {f.name: _encode(getattr(self, f.name)) for f in dataclasses.fields(self)}


R = TypeVar("R", bound=RulesBase)


def _coerce_rule(hint: Any, value: Any, key: str) -> Any:
    origin = typing.get_origin(hint)
    if origin is dict or origin is collections.abc.Mapping:  # a table of rules (limits, paytables) is read-only
        key_t, val_t = typing.get_args(hint)
        if not isinstance(value, Mapping):
            raise RulesError(f"{key}: expected a table, got {value!r}")
        return types.MappingProxyType({_coerce_rule(key_t, k, f"{key}.{k}"): _coerce_rule(val_t, v, f"{key}.{k}")
                                       for k, v in value.items()})
    if isinstance(hint, type) and issubclass(hint, float):
        raise RulesError(f"{key}: floats are not allowed in rules (money is whole credits)")
    try:
        return _decode(hint, value, key)
    except (TypeError, ValueError) as exc:
        raise RulesError(str(exc)) from None


def rules_from_mapping(cls: type[R], data: Mapping[str, Any] | None = None, where: str = "rules") -> R:
    """Build and validate a rules dataclass from a TOML table: unknown keys and wrong types are errors
    that name the key; absent keys take the standard default."""
    data = dict(data or {})
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise RulesError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(sorted(fields))})")
    kwargs = {name: _coerce_rule(hints[name], value, f"{where}.{name}") for name, value in data.items()}
    try:
        rules = cls(**kwargs)
    except (TypeError, ValueError) as exc:
        raise RulesError(f"{where}: {exc}") from None
    rules.validate()
    return rules


def load_rules_file(cls: type[R], path: str, table: str | None = None) -> R:
    """Rules from a TOML file, optionally from one table of it (e.g. 'rules')."""
    import tomllib

    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise RulesError(f"{path}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"{path}: not valid TOML: {exc}") from None
    if table is not None:
        data = data.get(table, {})
    return rules_from_mapping(cls, data, where=f"{path}:{table or ''}".rstrip(":"))


# ---------------------------------------------------------------------------------------------------
# The registry entry of a game

S = TypeVar("S")


@dataclass(frozen=True)
class GameSpec(Generic[S]):
    """Everything the runtime, views and tools need to run one game."""

    name: str                                       # registry name, e.g. "blackjack"
    title: str                                      # e.g. "Blackjack"
    rules_type: type[RulesBase]
    new_table: Callable[[Any], S]                   # rules -> the state of a table before its first round
    apply: Callable[[S, Event], tuple[S, Effects]]  # raises IllegalEvent
    expected_next: Callable[[S], Expected]
    snapshot: Callable[[S], dict[str, Any]]         # JSON-ready table picture; see the contract below
    boxes: tuple[str, ...] = field(default=())      # the bet boxes of a spot, e.g. ("ante", "play", "pair_plus")

    def rules(self, data: Mapping[str, Any] | None = None) -> RulesBase:
        return rules_from_mapping(self.rules_type, data, where=f"{self.name} rules")


# The snapshot contract (what views.py relies on to keep hidden cards off screens):
# - a JSON-ready dict with at least "game" (name), "round" (number), "phase" (Expected.phase's value) and
#   "bets" (a list of {"spot", "box", "amount"});
# - every card anywhere in it is a Placed.json() object {"card": "AS", "up": bool}; views replace the
#   card of every face-down one with null for the public and dealer audiences;
# - anything derived from a face-down card (a dealer total counting the hole card, "dealer has
#   blackjack", a hand name) goes only under the top-level key "audit", which screen views drop.
