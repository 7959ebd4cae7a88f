"""A slot title as data: symbols, reel strips with virtual-reel weights, the window, paylines, paytables and wild rules, and how one payline is evaluated.

Everything here is frozen and pure. A payline shows three symbols (one per reel); `Title.line_eval`
evaluates such a triple once against a paytable and caches the answer, so a spin, the batch tables
and the PAR sheet all read the same evaluation.

Evaluation rules (shared by every title; a title file only chooses values):
- A paytable row is either positional (`line = "7R 7R 7R"`: one matcher per reel, where a matcher is
  a symbol code, a group name such as `AB` = any bar, or `*` = anything) or counted (`anywhere = "CH",
  count = 2`: at least two cherries anywhere on the payline).
- A wild stands in for any matcher that names at least one symbol it may substitute for (never a
  blank, never one of its `excludes`). A wild that stands in multiplies the row by its multiplier
  (2x, and two of them 4x), unless the row says `unmultiplied_with_wilds = N` for N substituting wilds.
- A combination needs at least one real symbol of its own: three wilds pay only a row that names the
  wild itself (so a line of wilds never "becomes" some other combination).
- Each payline pays only its highest combination at the coins bet (ties go to the earlier row).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:
    from controller.slots.features import Feature

__all__ = [
    "TitleError", "SlotError", "LINES", "LINE_NAMES", "ROWS", "Symbol", "Reel", "Matcher", "Pattern", "PayRow",
    "Paytable", "Wild", "LinePay", "LineEval", "Bet", "Progressive", "Title", "ANY",
]

ANY = "*"

# Window rows: 0 is the row above the payline, 1 the centre (the payline of a one-line game), 2 below.
ROWS = 3
# Paylines as the window row read on each reel; a title with N lines uses the first N.
LINES: tuple[tuple[int, int, int], ...] = ((1, 1, 1), (0, 0, 0), (2, 2, 2), (0, 1, 2), (2, 1, 0))
LINE_NAMES = ("centre", "top", "bottom", "diagonal down", "diagonal up")


class TitleError(ValueError):
    """A title file is invalid; the message names the file and key."""


class SlotError(ValueError):
    """A spin, pick, bet or command is not legal now (bad stops, wrong bet, a pick pending, ...)."""


@dataclass(frozen=True, slots=True)
class Symbol:
    code: str
    name: str
    blank: bool = False


@dataclass(frozen=True)
class Reel:
    """A physical reel strip and its virtual reel: stop i of the strip owns weights[i] virtual stops.

    The RNG draws a virtual stop uniformly; the reel then rests on its physical stop, which the window
    shows with its neighbours above and below (the strip is circular)."""

    stops: tuple[str, ...]
    weights: tuple[int, ...]
    physical: tuple[int, ...] = field(init=False, repr=False)  # virtual stop -> physical stop

    def __post_init__(self) -> None:
        if len(self.stops) != len(self.weights) or len(self.stops) < 3:
            raise ValueError("a reel needs at least three stops, each with a weight")
        if any(not isinstance(w, int) or isinstance(w, bool) or w < 1 for w in self.weights):
            raise ValueError("every physical stop needs a whole-number weight of at least 1 virtual stop")
        object.__setattr__(self, "physical", tuple(i for i, w in enumerate(self.weights) for _ in range(w)))

    @property
    def size(self) -> int:
        """Physical stops."""
        return len(self.stops)

    @property
    def virtual_size(self) -> int:
        return len(self.physical)

    def shown(self, physical: int, row: int) -> str:
        """The symbol in window row `row` (0 above, 1 on, 2 below the centre) when resting on `physical`."""
        return self.stops[(physical + row - 1) % len(self.stops)]


@dataclass(frozen=True, slots=True)
class Matcher:
    """One position of a combination: the symbols it accepts and whether a wild may stand in."""

    text: str
    symbols: frozenset[str]
    is_any: bool
    substitutable: bool
    first: str  # the symbol a morphing wild shows when nothing on the line says better


@dataclass(frozen=True, slots=True)
class Pattern:
    """A combination on one payline: positional matchers, or `count` of a matcher anywhere."""

    text: str
    positions: tuple[Matcher, Matcher, Matcher] | None = None
    anywhere: Matcher | None = None
    count: int = 0


@dataclass(frozen=True, slots=True)
class PayRow:
    pattern: Pattern
    pays: tuple[int, ...]               # credits per coin level on the line: pays[k-1] for k coins
    unmultiplied_with_wilds: int = 0    # 0: wild multipliers always apply

    @property
    def text(self) -> str:
        return self.pattern.text


@dataclass(frozen=True, slots=True)
class Paytable:
    name: str
    rows: tuple[PayRow, ...]
    color: str = ""


@dataclass(frozen=True, slots=True)
class Wild:
    symbol: str
    excludes: frozenset[str] = frozenset()
    multiplier: int = 1
    morph: str | tuple[str, ...] = "never"  # "never", "always", or the rows whose wins morph the wild


@dataclass(frozen=True, slots=True)
class LinePay:
    """The paying combination of one payline at one coin level."""

    row: int                     # index in the paytable
    multiplier: int              # from substituting wilds
    credits: int                 # row pay at these coins times the multiplier
    wilds: tuple[int, ...] = ()  # reels where a wild stood in
    morph: str | None = None     # what those wilds show once morphed (cosmetic), or None


@dataclass(frozen=True, slots=True)
class LineEval:
    by_coins: tuple[LinePay | None, ...]  # by_coins[k-1]: the best combination at k coins on the line

    def at(self, coins: int) -> LinePay | None:
        return self.by_coins[coins - 1]


@dataclass(frozen=True, slots=True)
class Bet:
    """Coins per payline and the number of paylines played (the first `lines` of the title)."""

    coins: int = 1
    lines: int = 1

    @property
    def total(self) -> int:
        return self.coins * self.lines

    def to_json(self) -> dict[str, int]:
        return {"coins": self.coins, "lines": self.lines}

    @classmethod
    def from_json(cls, data: Mapping[str, int]) -> Bet:
        return cls(int(data["coins"]), int(data.get("lines", 1)))


@dataclass(frozen=True, slots=True)
class Progressive:
    """A system-wide progressive: the runtime keeps the jackpot meter; the title fixes its reset value and
    the share of each qualifying bet that feeds it."""

    reset_cents: int
    contribution_bp: int  # basis points (1/100 of a percent) of each qualifying bet

    def reset_credits(self, denomination_cents: int) -> int:
        return self.reset_cents // denomination_cents


@dataclass(frozen=True, eq=False)
class Title:
    """One slot title. Identity is the file: two loads of the same file compare equal by digest."""

    id: str
    name: str
    denominations: tuple[int, ...]      # cents per credit
    lines: int
    max_coins: int                      # per payline
    target_rtp: tuple[float, float]     # the designed return at max bet, low and high
    symbols: Mapping[str, Symbol]
    reels: tuple[Reel, Reel, Reel]
    paytables: tuple[Paytable, ...]
    wild: Wild | None
    features: tuple[Feature, ...] = ()  # applied in order
    progressive: Progressive | None = None
    digest: str = ""                    # sha256 of the title file, written into every journaled state
    notes: str = ""
    codes: tuple[str, ...] = field(init=False, repr=False)
    index: Mapping[str, int] = field(init=False, repr=False)
    _evals: tuple[dict[tuple[str, str, str], LineEval], ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "codes", tuple(self.symbols))
        object.__setattr__(self, "index", {c: i for i, c in enumerate(self.codes)})
        object.__setattr__(self, "_evals", tuple({} for _ in self.paytables))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Title) and (self.id, self.digest) == (other.id, other.digest)

    def __hash__(self) -> int:
        return hash((self.id, self.digest))

    def __repr__(self) -> str:
        return f"Title({self.id!r})"

    # -- bets ----------------------------------------------------------------------------------------
    @property
    def max_bet(self) -> Bet:
        return Bet(self.max_coins, self.lines)

    def bets(self) -> tuple[Bet, ...]:
        """Every legal bet, smallest first: coins 1..max on one line, then more lines."""
        return tuple(Bet(c, n) for n in range(1, self.lines + 1) for c in range(1, self.max_coins + 1))

    def check_bet(self, bet: Bet) -> None:
        if not isinstance(bet, Bet):
            raise SlotError(f"a bet is a Bet(coins, lines), got {bet!r}")
        if not 1 <= bet.coins <= self.max_coins or not 1 <= bet.lines <= self.lines:
            raise SlotError(f"{self.name} takes 1..{self.max_coins} coins on 1..{self.lines} line(s), "
                            f"not {bet.coins} coin(s) on {bet.lines}")

    # -- reels and window ----------------------------------------------------------------------------
    def physical(self, stops: tuple[int, ...]) -> tuple[int, int, int]:
        """Validate virtual stops and map them to physical stops."""
        if not isinstance(stops, (tuple, list)) or len(stops) != 3:
            raise SlotError(f"a spin needs three reel stops, got {stops!r}")
        out = []
        for reel, stop in zip(self.reels, stops):
            if not isinstance(stop, int) or isinstance(stop, bool) or not 0 <= stop < reel.virtual_size:
                raise SlotError(f"reel stop {stop!r} is not one of the virtual stops 0..{reel.virtual_size - 1}")
            out.append(reel.physical[stop])
        return out[0], out[1], out[2]

    def window(self, physical: tuple[int, int, int]) -> tuple[tuple[str, str, str], ...]:
        """The visible symbols, rows top to bottom, reels left to right."""
        return tuple((self.reels[0].shown(physical[0], r), self.reels[1].shown(physical[1], r),
                      self.reels[2].shown(physical[2], r)) for r in range(ROWS))

    @staticmethod
    def line_symbols(window: tuple[tuple[str, str, str], ...], line: int) -> tuple[str, str, str]:
        """The symbols on payline `line` (1-based)."""
        rows = LINES[line - 1]
        return window[rows[0]][0], window[rows[1]][1], window[rows[2]][2]

    # -- evaluation ----------------------------------------------------------------------------------
    def line_eval(self, triple: tuple[str, str, str], paytable: int = 0) -> LineEval:
        """The best combination on a payline showing `triple`, at every coin level (cached)."""
        cache = self._evals[paytable]
        found = cache.get(triple)
        if found is None:
            found = cache[triple] = _evaluate(self.paytables[paytable], self.wild, triple, self.max_coins)
        return found

    def match(self, pattern: Pattern, triple: tuple[str, str, str]) -> tuple[int, ...] | None:
        """Whether `triple` shows `pattern` (wilds standing in as the title allows): the reels where a wild
        stood in, or None."""
        return _match(pattern, self.wild, triple)


def _match(pattern: Pattern, wild: Wild | None, triple: tuple[str, str, str]) -> tuple[int, ...] | None:
    wild_code = wild.symbol if wild else None
    used: list[int] = []
    literal = 0
    if pattern.positions is not None:
        for reel, (matcher, symbol) in enumerate(zip(pattern.positions, triple)):
            if matcher.is_any:
                continue
            if symbol in matcher.symbols:
                literal += 1
            elif symbol == wild_code and matcher.substitutable:
                used.append(reel)
            else:
                return None
        return tuple(used) if literal else None
    anywhere = pattern.anywhere
    assert anywhere is not None
    for reel, symbol in enumerate(triple):
        if symbol in anywhere.symbols:
            literal += 1
        elif symbol == wild_code and anywhere.substitutable:
            used.append(reel)
    return tuple(used) if literal and literal + len(used) >= pattern.count else None


def _morph(row: PayRow, wilds: tuple[int, ...], wild: Wild, triple: tuple[str, str, str]) -> str | None:
    if not wilds or wild.morph == "never" or (wild.morph != "always" and row.text not in wild.morph):
        return None
    pattern = row.pattern
    matcher = pattern.anywhere if pattern.positions is None else pattern.positions[wilds[0]]
    assert matcher is not None
    # A group (any bar) morphs into the member already showing on the line, so the line reads as a set.
    for symbol in triple:
        if symbol in matcher.symbols and symbol != wild.symbol:
            return symbol
    return matcher.first


def _evaluate(paytable: Paytable, wild: Wild | None, triple: tuple[str, str, str], max_coins: int) -> LineEval:
    matches = []
    for i, row in enumerate(paytable.rows):
        used = _match(row.pattern, wild, triple)
        if used is None:
            continue
        multiplier = 1
        if wild is not None and used and wild.multiplier > 1 and len(used) != row.unmultiplied_with_wilds:
            multiplier = wild.multiplier ** len(used)
        morph = _morph(row, used, wild, triple) if wild is not None else None
        matches.append((i, row, multiplier, used, morph))
    best: list[LinePay | None] = []
    for coins in range(1, max_coins + 1):
        top: LinePay | None = None
        for i, row, multiplier, used, morph in matches:
            credits = row.pays[coins - 1] * multiplier
            if credits > 0 and (top is None or credits > top.credits):
                top = LinePay(i, multiplier, credits, used, morph)
        best.append(top)
    return LineEval(tuple(best))
