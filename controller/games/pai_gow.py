"""Pai gow poker: seven cards set into a five-card back and a two-card front hand against the banker's, 53 cards with the joker as a bug (seed 000_*).

Round (000_*): bets -> the hand order (three dice, or the shuffler's number) -> seven hands of seven
cards, face down -> every playing spot sets its hand -> the dealer's hand is turned up and set by the
house way, the players' hands are turned up -> settle.

- The hand order. Seven positions: the dealer is position 1 and the spots follow in the dice's count,
  counter-clockwise from the dealer's right (spot N is position N + 1; the table's spot numbers follow
  the count). Three dice totalling 1, 8 or 15 give the first hand to the dealer, 2, 9 or 16 to spot 1,
  and so on: position = (total - 1) mod 7 + 1; the hands go on round the positions in count order.
  With `hand_order = "shuffler"` the shuffler's random number (1-7, same odds as the dice) names the
  position instead. A position without a bet still gets its hand, which goes to the discards face down.
- Dealing. Seven hands of seven cards in a line (`deal = "rounds"`: one card to each hand in turn as the
  seed's dealer does; `"hands"`: hand by hand, as a hand-forming shuffler delivers them); 49 of the 53
  cards are dealt, the last four are never read.
- Setting. A decision `set:<two front cards>` (e.g. "set:AS KD"; the other five are the back) or
  `house_way` (the player asks the dealer to set it, which 000_* allows). The back must outrank the front
  (`controller.hands.paigow`: the joker a bug, A-2-3-4-5 the second straight); a fouled hand loses
  (`foul = "loses"`, the seed) or is set the house way (`foul = "house_way"`, some casinos).
- The dealer sets by the house way (`controller/games/_house_way.py`, configurable under `house_way`).
- Settlement: each hand against the banker's like hand; copies (exact ties) go to the banker. Both won:
  1:1 less the commission (5%, rounded per `commission_rounding`); one each: push; both lost: the bet is
  lost.
- Player banking (`player_banking`): a spot may put up a bank (box "bank") instead of a bet. It must cover
  every bet against it. The other spots play against the banker's hand, which the banker sets freely; the
  dealer's hand then plays as a player against the bank for the banker's last bet as a player (000_*:
  "betting the last amount that the player-banker bet on the previous hand"), none if it has none. The
  banker's wins and losses are netted; the commission is taken on a net win. The bank's row names the
  result against every hand; the house's gain or loss against the bank is in the settlement's house win.
"""

from __future__ import annotations

from collections.abc import Mapping
import enum
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Sequence

from controller.cards import ACE, Card, parse_cards, rank_key
from controller.games._house_poker import Deal, Phases, betting_steps, deal_plan, deal_then, reveal
from controller.games._house_way import HouseWay, house_way, setting_kind
from controller.games._round import Round
from controller.games.base import (
    BoxResult, CloseBets, Decision, Effects, Event, Expected, GameSpec, IllegalEvent, PlaceBet, Placed,
    RemoveBet, RoundSettled, Rounding, RulesBase, RulesError, Settlement, Waiting, parse_spot_actor, spot_actor,
)
from controller.games.bets import Bets, Limit, check_limits
from controller.hands import poker
from controller.hands.paigow import back_value, front_value

__all__ = ["GAME", "Rules", "State", "Phase", "Setting", "HandOrder", "Foul", "Deal", "HouseWay", "BOXES",
           "POSITIONS", "new_table", "apply", "expected_next", "snapshot", "legal_bets", "first_position", "compare",
           "front_text", "autoplay_decision"]

NAME = "pai-gow"
BOXES = ("main", "bank")
POSITIONS = 7            # the dealer and six spots: the dice count all seven, seated or not
HAND_SIZE = 7


class HandOrder(enum.Enum):
    DICE = "dice"           # three dice thrown by a player (000_*)
    SHUFFLER = "shuffler"   # the shuffler's random number 1..7


class Foul(enum.Enum):
    LOSES = "loses"          # 000_*: "the player's hands are fouled, and the bet is automatically lost"
    HOUSE_WAY = "house_way"  # the dealer resets a fouled hand by the house way


@dataclass(frozen=True)
class Rules(RulesBase):
    """Pai gow poker as dealt in Nevada casinos; every default is the seed's or the usual casino rule."""

    spots: int = 6
    hand_order: HandOrder = HandOrder.DICE
    deal: Deal = Deal.ROUNDS
    commission_percent: int = 5
    commission_rounding: Rounding = Rounding.UP   # a fraction of a credit of commission goes to the house
    foul: Foul = Foul.LOSES
    house_way: HouseWay = HouseWay()
    player_banking: bool = False
    house_bets_against_banker: bool = True
    limits: Mapping[str, Limit] = field(default_factory=lambda: MappingProxyType(
        {"main": Limit(20, 5_000), "bank": Limit(20, 100_000)}))

    def validate(self) -> None:
        if not 1 <= self.spots <= POSITIONS - 1:
            raise RulesError(f"rules.spots: 1 to {POSITIONS - 1} spots (seven positions with the dealer), "
                             f"got {self.spots}")
        if not 0 <= self.commission_percent <= 25:
            raise RulesError(f"rules.commission_percent: 0 to 25, got {self.commission_percent}")
        check_limits(self.limits, BOXES)


@dataclass(frozen=True)
class Setting:
    """A set hand: its front cards (the back is the rest), who set it, and its values (counted once)."""

    where: str
    front: tuple[Card, Card]
    how: str                # "player", "house way", "house way (foul reset)"
    back_value: int
    front_value: int
    kind: str = ""          # the house way's reading of the dealer's hand ("two pair", "flush", ...)

    @property
    def foul(self) -> bool:
        return self.back_value <= self.front_value

    @property
    def words(self) -> str:
        return f"{poker.describe(self.back_value)} / {front_text(self.front)}"


class Phase(enum.StrEnum):
    """Where the round stands (the values are those of the journal, the snapshots and the views)."""

    IDLE = "idle"
    BETTING = "betting"
    ORDERING = "ordering"
    DEALING = "dealing"
    SETTING = "setting"
    SETTLING = "settling"


@dataclass(frozen=True)
class State:
    rules: Rules
    round: int = 0
    phase: Phase = Phase.IDLE
    bets: Bets = Bets()
    roll: int = 0              # the dice total or the shuffler's number
    first: int = 0             # the position that receives the first hand
    cards: tuple[tuple[str, Placed], ...] = ()
    settings: tuple[Setting, ...] = ()
    last_bets: tuple[tuple[int, int], ...] = ()   # each spot's last bet as a player (the house's stake vs a banker)

    def hand(self, to: str) -> tuple[Card, ...]:
        return tuple(p.card for where, p in self.cards if where == to)

    def placed(self, to: str) -> tuple[Placed, ...]:
        return tuple(p for where, p in self.cards if where == to)

    def set_hand(self, to: str) -> Setting | None:
        return next((s for s in self.settings if s.where == to), None)

    def setting(self, to: str) -> tuple[tuple[Card, ...], tuple[Card, Card], str] | None:
        """(back, front, set by) of a set hand, the back highest first."""
        found = self.set_hand(to)
        if found is None:
            return None
        back = sorted((c for c in self.hand(to) if c not in found.front), reverse=True, key=rank_key)
        return tuple(back), found.front, found.how

    @property
    def banker(self) -> int:
        """The spot banking this round, 0 when the house banks."""
        return next((s for s, b, _ in self.bets if b == "bank"), 0)

    def last_bet(self, spot: int) -> int:
        return next((a for s, a in self.last_bets if s == spot), 0)


def new_table(rules: Rules) -> State:
    return State(rules)


def first_position(order: HandOrder, roll: int) -> int:
    """The position (1 = dealer) that receives the first hand for a dice total or a shuffler number."""
    return roll if order is HandOrder.SHUFFLER else (roll - 1) % POSITIONS + 1


def _target(state: State, position: int) -> str:
    if position == 1:
        return "dealer"
    spot = position - 1
    return spot_actor(spot) if spot in state.bets.spots() else "discard"


def _plan(state: State) -> tuple[tuple[str, bool], ...]:
    hands = [(_target(state, (state.first - 1 + h) % POSITIONS + 1), (False,) * HAND_SIZE) for h in range(POSITIONS)]
    return deal_plan(hands, state.rules.deal)


def _players(state: State) -> tuple[int, ...]:
    """Spots that set a hand this round: every spot with a bet or the bank."""
    return state.bets.spots()


def _house_stake(state: State) -> int:
    banker = state.banker
    if not banker or not state.rules.house_bets_against_banker:
        return 0
    return state.last_bet(banker)


# ---------------------------------------------------------------------------------------------------
# What the table waits for


def expected_next(state: State) -> Expected:
    r = state.rules
    if state.phase is Phase.IDLE:
        return Expected(Waiting.IDLE, "open bets", actions=("open_bets",))
    if state.phase is Phase.BETTING:
        bank = "; a spot may bank" if r.player_banking else ""
        return Expected(Waiting.BETTING, f"bets are open{bank}", actions=("place_bet", "remove_bet", "close_bets"))
    if state.phase is Phase.ORDERING:
        if r.hand_order is HandOrder.DICE:
            return Expected(Waiting.DECIDING, "throw the three dice: enter their total (3 to 18)", actor="dealer",
                            actions=("dice",), amount_range=(3, 18))
        return Expected(Waiting.DECIDING, "enter the shuffler's number (1 to 7)", actor="dealer", actions=("shuffler",),
                        amount_range=(1, POSITIONS))
    if state.phase is Phase.DEALING:
        plan = _plan(state)
        n = len(state.cards)
        to, up = plan[n]
        if r.deal is Deal.ROUNDS:
            hand, card = n % POSITIONS + 1, n // POSITIONS + 1
        else:
            hand, card = n // HAND_SIZE + 1, n % HAND_SIZE + 1
        who = "the discards (no bet there)" if to == "discard" else to.replace(":", " ")
        return Expected(Waiting.DEALING, f"hand {hand} of {POSITIONS} to {who}: card {card} of {HAND_SIZE}, face down",
                        card_to=to, face_up=up)
    if state.phase is Phase.SETTING:
        waiting = [s for s in _players(state) if state.set_hand(spot_actor(s)) is None]
        more = f"; {len(waiting) - 1} more to set" if len(waiting) > 1 else ""
        return Expected(
            Waiting.DECIDING, f"spot {waiting[0]}: set the hand (set: and the two front cards, e.g. set:AS KD) "
            f"or ask for the house way{more}", actor=spot_actor(waiting[0]), actions=("set", "house_way"))
    return Expected(Waiting.SETTLING, "settle the round", actions=("settle",))


# ---------------------------------------------------------------------------------------------------
# Events


def apply(state: State, event: Event) -> tuple[State, Effects]:
    return _ROUND.apply(state, event)


def _check(state: State, event: Event) -> None:
    if isinstance(event, CloseBets) and state.phase is Phase.BETTING:
        _check_cover(state)


def _decide(state: State, event: Decision) -> tuple[State, Effects]:
    if state.phase is Phase.ORDERING:
        return _order(state, event)
    return _set(state, event)


def _settle(state: State) -> tuple[State, Effects]:
    settlement = settle(state)
    last = dict(state.last_bets)
    last.update({s: a for s, b, a in state.bets if b == "main"})
    return (State(state.rules, state.round, last_bets=tuple(sorted(last.items()))),
            (RoundSettled(state.round, settlement),))


def _place(rules: Rules, bets: Bets, event: PlaceBet | RemoveBet) -> tuple[Bets, Effects]:
    """A bet or a bank: one bank a round, and a spot either bets or banks."""
    banker = next((s for s, b, _ in bets if b == "bank"), 0)
    if isinstance(event, PlaceBet) and event.box == "bank":
        if not rules.player_banking:
            raise IllegalEvent("this table does not allow a player to bank")
        if banker not in (0, event.spot):
            raise IllegalEvent(f"spot {banker} is already banking this round")
        if bets.get(event.spot, "main"):
            raise IllegalEvent(f"spot {event.spot} has a bet and cannot also bank")
    if isinstance(event, PlaceBet) and event.box == "main" and banker == event.spot:
        raise IllegalEvent(f"spot {event.spot} is banking and cannot also bet")
    op = bets.place if isinstance(event, PlaceBet) else bets.remove
    new, changed = op(event, rules.spots, rules.limits)  # type: ignore[arg-type]
    return new, (changed,)


def _check_cover(state: State) -> None:
    """At the close of betting: someone plays, and a player's bank covers every bet against it."""
    players = [s for s, b, _ in state.bets if b == "main"]
    if state.banker and not players and not _house_stake(state):
        raise IllegalEvent("nobody plays against the bank")
    if state.banker:
        covered = sum(a for _, b, a in state.bets if b == "main") + _house_stake(state)
        bank = state.bets.get(state.banker, "bank")
        if bank < covered:
            raise IllegalEvent(f"spot {state.banker}'s bank of {bank} does not cover the {covered} bet against it")


def _order(state: State, event: Decision) -> tuple[State, Effects]:
    r = state.rules
    action = "dice" if r.hand_order is HandOrder.DICE else "shuffler"
    low, high = (3, 18) if action == "dice" else (1, POSITIONS)
    if event.actor != "dealer" or event.action != action:
        raise IllegalEvent(f"the dealer enters the {'dice total' if action == 'dice' else 'shuffler number'} now "
                           f"(decision 'dealer' '{action}'), not {event.actor!r} {event.action!r}")
    if isinstance(event.amount, bool) or not low <= event.amount <= high or event.hand != 0:
        raise IllegalEvent(f"the {action} gives {low} to {high}, not {event.amount!r}")
    return replace(state, phase=Phase.DEALING, roll=event.amount, first=first_position(r.hand_order, event.amount)), ()


def _set(state: State, event: Decision) -> tuple[State, Effects]:
    if state.phase is not Phase.SETTING:
        raise IllegalEvent(f"no decision expected now: {expected_next(state).text}")
    spot = parse_spot_actor(event.actor)
    if spot is None or spot not in _players(state):
        raise IllegalEvent(f"{event.actor!r} has no hand to set")
    to = spot_actor(spot)
    if state.set_hand(to) is not None:
        raise IllegalEvent(f"spot {spot} has already set the hand")
    if event.amount != 0 or event.hand != 0:
        raise IllegalEvent("setting a hand takes no amount")
    hand = state.hand(to)
    if event.action == "house_way":
        front, how = house_way(hand, state.rules.house_way)[1], "house way"
    elif event.action.startswith("set:"):
        try:
            front_cards = parse_cards(event.action[4:])
        except ValueError as exc:
            raise IllegalEvent(f"spot {spot}: {exc}") from None
        if len(front_cards) != 2 or front_cards[0] == front_cards[1]:
            raise IllegalEvent(f"spot {spot}: the front hand is two different cards, e.g. set:AS KD")
        if any(c not in hand for c in front_cards):
            raise IllegalEvent(f"spot {spot}: the front hand must come from the spot's own seven cards")
        front, how = (front_cards[0], front_cards[1]), "player"
        back = [c for c in hand if c not in front]
        if back_value(back) <= front_value(front) and state.rules.foul is Foul.HOUSE_WAY:
            front, how = house_way(hand, state.rules.house_way)[1], "house way (foul reset)"
    else:
        raise IllegalEvent(f"spot {spot} may set the hand (set:<front cards>) or ask for the house way, "
                           f"not {event.action!r}")
    state = replace(state, settings=state.settings + (_setting(to, hand, front, how),))
    if any(state.set_hand(spot_actor(s)) is None for s in _players(state)):
        return state, ()
    # Every hand is set: the dealer's hand is turned up and set the house way, then the players' hands.
    dealer = state.hand("dealer")
    way = state.rules.house_way
    setting = replace(_setting("dealer", dealer, house_way(dealer, way)[1], "house way"),
                      kind=setting_kind(dealer, way))
    state = replace(state, settings=state.settings + (setting,))
    state, shown = reveal(state, ["dealer"] + [spot_actor(s) for s in _players(state)])
    return replace(state, phase=Phase.SETTLING), shown


def _setting(to: str, hand: Sequence[Card], front: tuple[Card, Card], how: str) -> Setting:
    back = [c for c in hand if c not in front]
    return Setting(to, front, how, back_value(back), front_value(front))


# ---------------------------------------------------------------------------------------------------
# Settlement


def front_text(front: Sequence[Card]) -> str:
    """A front hand in a dealer's words: 'pair of kings', 'A-Q' (the joker plays as an ace)."""
    hi, lo = sorted((ACE if c.joker else c.rank for c in front), reverse=True)
    if hi == lo:
        return poker.describe(poker.pack(poker.PAIR, [hi]))
    return f"{'23456789TJQKA'[hi - 2]}-{'23456789TJQKA'[lo - 2]}"


def compare(bettor: Setting, banker: Setting) -> int:
    """How many of the two hands the bettor wins; copies go to the banker. A fouled hand loses both; when
    both foul the bettor's foul counts first."""
    if bettor.foul:
        return 0
    if banker.foul:
        return 2
    return (bettor.back_value > banker.back_value) + (bettor.front_value > banker.front_value)


def _commission(rules: Rules, amount: int) -> int:
    return rules.commission_rounding.divide(amount * rules.commission_percent, 100)


def _outcome(won: int) -> str:
    return {2: "win", 1: "push", 0: "lose"}[won]


def settle(state: State) -> Settlement:
    """Every bet against the banker's hand (the dealer's, or the banking spot's), and the bank's net."""
    r = state.rules
    banker = state.banker
    bank_to = spot_actor(banker) if banker else "dealer"
    bank = state.set_hand(bank_to)
    assert bank is not None
    who = f"spot {banker}" if banker else "dealer"
    results: list[BoxResult] = []
    net = 0
    against: list[str] = []
    for spot, box, stake in state.bets:
        if box != "main":
            continue
        mine = state.set_hand(spot_actor(spot))
        assert mine is not None
        won = compare(mine, bank)
        detail = f"{'foul' if mine.foul else mine.words} against {who}'s {'foul' if bank.foul else bank.words}"
        if won == 2:
            fee = _commission(r, stake)
            results.append(BoxResult(spot, box, stake, "win", stake, fee, 2 * stake - fee,
                                     f"wins both hands ({detail}): 1:1 less {r.commission_percent}% commission"))
            net -= stake
        elif won == 1:
            results.append(BoxResult(spot, box, stake, "push", 0, 0, stake, f"one hand each ({detail}): push"))
        else:
            line = "foul: the back hand must outrank the front" if mine.foul else f"banker wins both hands ({detail})"
            results.append(BoxResult(spot, box, stake, "lose", 0, 0, 0, line))
            net += stake
        against.append(f"spot {spot} {_outcome(won)}")
    if banker:
        house = _house_stake(state)
        if house:
            won = compare(state.set_hand("dealer"), bank)  # type: ignore[arg-type]
            net += {2: -house, 1: 0, 0: house}[won]
            against.append(f"the house ({house} on the dealer's hand) {_outcome(won)}")
        stake = state.bets.get(banker, "bank")
        summary = "; ".join(against) or "no bets against the bank"
        if net > 0:
            fee = _commission(r, net)
            results.append(BoxResult(banker, "bank", stake, "win", net, fee, stake + net - fee,
                                     f"bank wins {net} net ({summary}) less {r.commission_percent}% commission"))
        elif net == 0:
            results.append(BoxResult(banker, "bank", stake, "push", 0, 0, stake, f"bank breaks even ({summary})"))
        else:
            results.append(BoxResult(banker, "bank", stake, "lose", 0, 0, stake + net,
                                     f"bank loses {-net} net ({summary})"))
    return Settlement(tuple(results))


# ---------------------------------------------------------------------------------------------------
# View


def snapshot(state: State) -> dict[str, Any]:
    """Hands face down until the rules turn them up; a hand's name and foul only once all its cards are up
    (before that under "audit")."""
    hands = []
    audit: dict[str, Any] = {}
    for to in ["dealer"] + [spot_actor(s) for s in _players(state)]:
        placed = state.placed(to)
        if not placed:
            continue
        entry: dict[str, Any] = {"to": to, "cards": [p.json() for p in placed]}
        setting = state.set_hand(to)
        if setting is not None:
            back, front, how = state.setting(to)  # type: ignore[misc]
            up = {p.card: p.up for p in placed}
            entry |= {"back": [Placed(c, up[c]).json() for c in back],
                      "front": [Placed(c, up[c]).json() for c in front], "set_by": how}
            words: dict[str, Any] = {"back_hand": poker.describe(setting.back_value), "front_hand": front_text(front),
                                     "foul": setting.foul}
            if setting.kind:
                words["house_way"] = setting.kind
            if all(p.up for p in placed):
                entry |= words
            else:
                audit[to] = words
        hands.append(entry)
    order = None
    if state.first:
        first = "dealer" if state.first == 1 else f"spot {state.first - 1}"
        order = {"by": state.rules.hand_order.value, "roll": state.roll, "first": first}
    return {"game": NAME, "round": state.round, "phase": expected_next(state).phase.value,
            "stage": state.phase.value, "bets": state.bets.json(), "banker": state.banker or None,
            "house_stake": _house_stake(state) or None,
            "hand_order": order, "hands": hands,
            "discards": [p.json() for where, p in state.cards if where == "discard"],
            "settings_done": [setting.where for setting in state.settings], "audit": {"hands": audit}}


_PHASES = Phases(Phase.IDLE, Phase.BETTING, Phase.DEALING)
# Bets close into the order of the deal (the dealer's dice), not straight into the deal.
_BETTING = betting_steps(Phases(Phase.IDLE, Phase.BETTING, Phase.ORDERING),
                         lambda s: State(s.rules, s.round, last_bets=s.last_bets), _check,
                         lambda s: lambda bets, ev: _place(s.rules, bets, ev))
_ROUND: Round[State] = Round("pai gow poker", expected_next, _settle, Phase.SETTLING, void=_BETTING,
                             open_bets=_BETTING, bets=_BETTING,
                             card=deal_then(_plan, Phase.SETTING, joker=True, phases=_PHASES), decision=_decide)
GAME = GameSpec(NAME, "Pai Gow Poker", Rules, new_table, apply, expected_next, snapshot, BOXES)


def legal_bets(rules: Rules, rng: Any) -> list[Event]:
    """Bets a table might see in one round (for the property-test harness and the demo)."""
    limit = rules.limits["main"]
    spots = [s for s in range(1, rules.spots + 1) if rng.randbelow(2)] or [1 + rng.randbelow(rules.spots)]
    bets: list[Event] = [PlaceBet(s, "main", limit.min + rng.randbelow(4) * limit.min) for s in spots]
    if rules.player_banking and len(spots) < rules.spots and rng.randbelow(3) == 0:
        banker = next(s for s in range(1, rules.spots + 1) if s not in spots)
        need = sum(e.amount for e in bets if isinstance(e, PlaceBet)) + 4 * limit.min * rules.spots
        bets.append(PlaceBet(banker, "bank", min(rules.limits["bank"].max, max(rules.limits["bank"].min, need))))
    return bets


def autoplay_decision(state: State, exp: Expected, rng: Any) -> tuple[str, int]:
    """The demo's dealer throws three dice (or reads the shuffler's number); its players ask for the house way."""
    if exp.actor == "dealer":
        return ("dice", sum(rng.dice(3, 6))) if "dice" in exp.actions else ("shuffler", 1 + rng.randbelow(POSITIONS))
    return "house_way", 0
