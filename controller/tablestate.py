"""A table's whole replayable state and the pure fold over journal records that builds it: game, alerts, shoe status, meters, history.

The runtime (controller/table.py) turns every input into a record, computes `step(state, record)`,
journals the record, and only then adopts the new state. Recovery, recall and meters are the same fold
over the journal, so what a table did and what it shows after a restart cannot disagree.

The record kinds are the typed records of controller/tablerecords.py (`croupier journal kinds table` lists them);
`step` folds each by its class.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from collections.abc import Mapping
from typing import Any, Callable, ClassVar, Iterable

from controller.games.base import (
    Waiting,
    CardDealt, Effect, Effects, GameSpec, IllegalEvent, NewShoe, RoundSettled, RoundVoided, RulesBase, ShuffleDue,
    event_from_json, rules_from_mapping,
)
from controller.journal import fold
from controller.records import ABSENT, RecordError
from controller.tablerecords import (
    AlertRecord, CameraDown, CameraStarted, CameraUp, CounterReset, DealerSignIn, DeckCheck, Door, Game, ManualEntry,
    Refused,
    Resolve, Seen, ShoeFlags, ShoeLink, ShoeShuffle, SimOrder, Start, TableRecord, table_record,
)
from controller import paperwork, rating
from controller.tablerecords import RatingMove, RatingStart, RatingStop, SlipConfirmed, SlipEntered

__all__ = ["Alert", "SpotMeters", "Meters", "ShoeStatus", "TableState", "AlertRaised", "AlertResolved",
           "CardReassigned", "new_state", "step", "replay", "picture", "scoreboard_entry", "face_down_cards",
           "withhold_face_down", "HISTORY", "SCOREBOARD"]

HISTORY = 10  # settled rounds kept for the dealer screen (recall reads the journal for more)
SCOREBOARD = 120  # coups of the shoe in play kept for the baccarat roads (an 8-deck shoe deals about 80)


@dataclass(frozen=True, slots=True)
class Alert:
    id: int
    kind: str                  # "misdeal", "deck_check", "draw_gap", "door", "shoe", "shoe_reset", "camera"
    text: str
    card: str | None = None
    options: tuple[str, ...] = ("confirm", "void")
    zone: str | None = None    # a camera alert: where the camera saw the card

    def json(self) -> dict[str, Any]:
        out = {"id": self.id, "kind": self.kind, "text": self.text, "card": self.card, "options": list(self.options)}
        if self.zone is not None:
            out["zone"] = self.zone
        return out


@dataclass(frozen=True, slots=True)
class AlertRaised(Effect):
    KIND: ClassVar[str] = "alert_raised"
    alert: Alert


@dataclass(frozen=True, slots=True)
class AlertResolved(Effect):
    KIND: ClassVar[str] = "alert_resolved"
    id: int
    action: str


@dataclass(frozen=True, slots=True)
class CardReassigned(Effect):
    """The dealer corrected the round in play: `card`, as the shoe read it, is `becomes` (and, `swapped`,
    `becomes` is `card`: the two traded places)."""
    KIND: ClassVar[str] = "card_reassigned"
    card: str
    becomes: str
    swapped: bool


@dataclass(frozen=True, slots=True)
class SpotMeters:
    rounds: int = 0
    handle: int = 0
    returned: int = 0
    commission: int = 0

    @property
    def house_win(self) -> int:
        return self.handle - self.returned


@dataclass(frozen=True, slots=True)
class Meters:
    """Table meters derived from settlements: never cleared, only grown by the journal."""

    rounds: int = 0
    voids: int = 0
    handle: int = 0
    returned: int = 0
    commission: int = 0
    refused: int = 0
    power_ups: int = 0
    spots: tuple[tuple[int, SpotMeters], ...] = ()
    pot: int = 0          # net credits the pot games' pots took (pot_out - pot_in): players' money, not the house's
    banked: int = 0       # net won by players banking a round (pontoon's bank): not the house's either

    @property
    def house_win(self) -> int:
        return self.handle - self.returned - self.pot - self.banked

    def json(self) -> dict[str, Any]:
        return {"rounds": self.rounds, "voids": self.voids, "handle": self.handle, "paid": self.returned,
                "house_win": self.house_win, "commission": self.commission, "refused_commands": self.refused,
                "power_ups": self.power_ups, "pot": self.pot, "banked_by_players": self.banked,
                "spots": {str(s): {"rounds": m.rounds, "handle": m.handle, "paid": m.returned,
                                   "house_win": m.house_win, "commission": m.commission} for s, m in self.spots}}


@dataclass(frozen=True, slots=True)
class ShoeStatus:
    link: bool = False
    flags: tuple[str, ...] = ()
    last_draw: tuple[tuple[int, int], ...] = ()   # (shoe id, last journaled draw) per shoe
    dealt: int = 0                                # cards dealt from the shoe in play
    shuffle_due: bool = False
    shuffling: bool = False
    down: str | None = None     # why the link is down, when the driver said (e.g. the port cannot be opened)
    check_due: bool = False     # the shoe was swapped or reset: no card of it is dealt before a deck check
    manual: bool = False        # the dealer enters the cards by hand (switched on while the shoe was down)
    serial: str | None = None   # the serial of the shoe last identified (a new one is another shoe)

    def draw_of(self, shoe_id: int) -> int:
        return dict(self.last_draw).get(shoe_id, 0)


@dataclass(frozen=True)
class TableState:
    table_id: str
    game_spec: GameSpec = field(repr=False, compare=False)
    game: Any
    seq: int = 0
    alerts: tuple[Alert, ...] = ()
    next_alert: int = 1
    shoe: ShoeStatus = ShoeStatus()
    meters: Meters = Meters()
    history: tuple[dict[str, Any], ...] = ()
    # The game's snapshot as the last round stood when it settled (its final cards, for the screens, which
    # show it beside the payouts until the next round's cards come out; views mask it like the live game),
    # and one scoreboard entry per coup settled since the shoe was loaded (the baccarat roads).
    last_round: dict[str, Any] | None = None
    scoreboard: tuple[dict[str, Any], ...] = ()
    bets_close_at: float | None = None
    doors_open: tuple[str, ...] = ()
    rules: dict[str, Any] = field(default_factory=dict, compare=False)  # the rules in force, as journaled
    # Simulation only: the seed of the simulated shoe in play and the draw counter when it was shuffled,
    # so a restarted simulated table deals on from the same card; and how many simulated shuffles so far.
    shoe_sim: tuple[int | None, int] = (None, 0)
    shoe_sim_out: tuple[str, ...] = ()   # cards left out of that shoe: on the table when it was shuffled
    sim_shuffles: int = 0
    # What the camera sees lying on the table: (card or None when face down, zone, certain, face down).
    camera: tuple[tuple[str | None, str | None, bool, bool], ...] = ()
    camera_down: str | None = None   # why the camera gives no frames, while it does not
    # The round in play as its events, for a dealer's `reassign`: the game before its open bets and every game
    # event since (None between rounds).
    round_base: Any = field(default=None, repr=False)
    round_log: tuple[Any, ...] | None = field(default=None, repr=False)
    # The pit's: rated play and the table's paperwork (controller/rating.py, controller/paperwork.py); no view
    # for a screen carries them (`picture` leaves them out; the pit command answers them).
    ratings: rating.Ratings = rating.Ratings()
    paperwork: paperwork.Paperwork = paperwork.Paperwork()

    @property
    def paused(self) -> bool:
        return bool(self.alerts)


def new_state(table_id: str, game: GameSpec, rules: RulesBase) -> TableState:
    return TableState(table_id, game, game.new_table(rules), rules=rules.to_json())


def _add_settlement(meters: Meters, eff: RoundSettled) -> Meters:
    spots = dict(meters.spots)
    for spot in sorted({r.spot for r in eff.settlement.results}):
        rows = eff.settlement.for_spot(spot)
        m = spots.get(spot, SpotMeters())
        spots[spot] = SpotMeters(m.rounds + 1, m.handle + sum(r.stake for r in rows),
                                 m.returned + sum(r.returned for r in rows), m.commission + sum(r.commission for r in rows))
    s = eff.settlement
    return replace(meters, rounds=meters.rounds + 1, handle=meters.handle + s.stakes,
                   returned=meters.returned + s.returned, commission=meters.commission + s.commission,
                   spots=tuple(sorted(spots.items())), pot=meters.pot + s.pot_out - s.pot_in,
                   banked=meters.banked + (s.house_win if s.banker else 0))


def scoreboard_entry(snapshot: dict[str, Any]) -> dict[str, Any] | None:
    """A settled coup for the scoreboard roads: who won, the points, the pairs, a natural. Only for games
    with two point-scored sides (baccarat, chemin de fer); None otherwise. Read from the public projection
    of the snapshot, so nothing derived from a face-down card can get in."""
    from controller.views import project

    game = project({"game": snapshot}, "public")["game"]
    sides = {"baccarat": ("player", "banker"), "chemin-de-fer": ("punter_hand", "banker_hand")}.get(game.get("game"))
    if sides is None:
        return None
    hands = [game.get(side) or {} for side in sides]
    p, b = (h.get("points") for h in hands)
    if p is None or b is None:
        return None
    first_two = [[c["card"] for c in h.get("cards", [])[:2]] for h in hands]
    pairs = [name for name, cards in zip(("player", "banker"), first_two)
             if len(cards) == 2 and None not in cards and cards[0][:-1] == cards[1][:-1]]
    natural = any(len(h.get("cards", [])) == 2 and pts >= 8 for h, pts in zip(hands, (p, b)))
    return {"round": game.get("round"), "winner": "player" if p > b else "banker" if b > p else "tie",
            "player": p, "banker": b, "pairs": pairs, "natural": natural}


def _game_step(state: TableState, record: Game) -> tuple[TableState, Effects]:
    event = event_from_json(record.event)
    before = state.game
    game, effects = state.game_spec.apply(state.game, event)
    meters, shoe, history = state.meters, state.shoe, state.history
    last_round, scoreboard = state.last_round, state.scoreboard
    if isinstance(event, CardDealt):
        shoe = replace(shoe, dealt=shoe.dealt + 1)
    if isinstance(event, NewShoe):
        shoe = replace(shoe, dealt=0, shuffle_due=False, shuffling=False)
        scoreboard = ()
    closes_at = state.bets_close_at
    round_base, round_log = state.round_base, state.round_log
    if event.KIND == "open_bets":
        closes_at = None if record.closes_at is ABSENT else record.closes_at
        round_base, round_log = before, (event,)
    elif event.KIND in ("close_bets", "void_round"):
        closes_at = None
    if round_log is not None and event.KIND != "open_bets":
        round_log = round_log + (event,)
    for eff in effects:
        if isinstance(eff, RoundSettled):
            meters = _add_settlement(meters, eff)
            history = (history + ({"round": eff.round, **eff.settlement.json()},))[-HISTORY:]
            # A round settles on the Settle event, which clears the layout: the table as it stood is `before`.
            last_round = state.game_spec.snapshot(before)
            round_base, round_log = None, None
            entry = scoreboard_entry(last_round)
            if entry is not None:
                scoreboard = (scoreboard + (entry,))[-SCOREBOARD:]
        elif isinstance(eff, RoundVoided):
            meters = replace(meters, voids=meters.voids + 1)
            history = (history + ({"round": eff.round, "voided": eff.reason, "returned": eff.returned},))[-HISTORY:]
            last_round = round_base = round_log = None
        elif isinstance(eff, ShuffleDue):
            shoe = replace(shoe, shuffle_due=True)
    return replace(state, game=game, meters=meters, shoe=shoe, history=history, last_round=last_round,
                   scoreboard=scoreboard, bets_close_at=closes_at, round_base=round_base, round_log=round_log), effects


def _reassign(state: TableState, card: str, becomes: str, swap: bool) -> tuple[TableState, Effects]:
    """The round in play rebuilt from its events with `card` dealt as `becomes` (and, with `swap`, `becomes` as
    `card`). Raises IllegalEvent when there is no round in play, a card to change was not dealt in it or was
    dealt twice, or the round's later events do not fit the corrected cards (the dealer voids the round
    instead). The reasons name only the two cards: the runtime checks they are face up before it asks."""
    from controller.cards import parse_card

    if state.round_log is None:
        raise IllegalEvent("no round in play: reassign corrects the cards of a round before it settles")
    if becomes == card:
        raise IllegalEvent(f"reassign {card} as itself changes nothing")
    dealt = [str(e.card) for e in state.round_log if isinstance(e, CardDealt)]
    for changed in (card, becomes) if swap else (card,):
        if changed not in dealt:
            raise IllegalEvent(f"{changed} was not dealt in this round")
        if dealt.count(changed) > 1:  # a shoe of several decks
            raise IllegalEvent(f"{changed} was dealt twice in this round: which deal is meant cannot be told; "
                               "void the round")
    change = {card: parse_card(becomes), **({becomes: parse_card(card)} if swap else {})}
    events = tuple(replace(e, card=change[str(e.card)]) if isinstance(e, CardDealt) and str(e.card) in change else e
                   for e in state.round_log)
    game = state.round_base
    for event in events:
        try:
            game, effects = state.game_spec.apply(game, event)
        except IllegalEvent:
            # The game's own reason is left out: it may speak of a card lying face down.
            raise IllegalEvent(f"with {card} as {becomes} the round's events no longer fit: void the round") from None
        if any(isinstance(eff, (RoundSettled, RoundVoided)) for eff in effects):
            raise IllegalEvent(f"with {card} as {becomes} the round would have ended earlier: void the round")
    return replace(state, game=game, round_log=events), (CardReassigned(card, becomes, swap),)


def step(state: TableState, record: TableRecord | Mapping[str, Any]) -> tuple[TableState, Effects]:
    """The state after one journal record (typed, or its row's object), and the effects to act on. Raises
    IllegalEvent for a game event the game refuses (the runtime then journals a refusal or an alert instead), and
    RecordError for a row that is no table record."""
    rec = record if isinstance(record, TableRecord) else table_record(record)
    fold_one = _FOLDS.get(type(rec))
    if fold_one is None:
        raise RecordError(f"no fold for table record {type(rec).__name__}")
    before = state
    state, effects = fold_one(state, rec)
    if state.ratings.open:
        state = replace(state, ratings=rating.observe(state.ratings, rec, before, state, effects))
    draw = getattr(rec, "draw", None)
    if draw:
        # Cards read by the shoe (dealt, or held in an alert) advance its draw counter, so a restart can
        # tell the shoe driver which draws are already journaled.
        shoe_id, n = draw
        shoe = state.shoe
        state = replace(state, shoe=replace(shoe, last_draw=tuple(sorted({**dict(shoe.last_draw), shoe_id: n}.items()))))
    return state, effects


def _start(state: TableState, rec: Start) -> tuple[TableState, Effects]:
    if rec.game != state.game_spec.name:
        raise IllegalEvent(f"this journal belongs to a {rec.game} table, not {state.game_spec.name}")
    if rec.rules != state.rules:
        # New rules (limits, paytables) start a fresh table, with a new shoe: only between rounds.
        if state.game_spec.expected_next(state.game).phase not in (Waiting.IDLE, Waiting.SHUFFLING):
            raise IllegalEvent("the rules changed while a round is in progress: finish it first")
        rules = rules_from_mapping(state.game_spec.rules_type, rec.rules)
        state = replace(state, game=state.game_spec.new_table(rules), rules=rec.rules,
                        shoe=replace(state.shoe, dealt=0, shuffle_due=False))
    # A new process: the shoe is not up until its driver says so (the last run's link is no news of this one).
    return replace(state, meters=replace(state.meters, power_ups=state.meters.power_ups + 1),
                   shoe=replace(state.shoe, link=False, down=None)), ()


def _alert(state: TableState, rec: AlertRecord) -> tuple[TableState, Effects]:
    a = rec.alert
    alert = Alert(a["id"], a["kind"], a["text"], a.get("card"), tuple(a.get("options", ("confirm", "void"))),
                  a.get("zone"))
    return (replace(state, alerts=state.alerts + (alert,), next_alert=max(state.next_alert, alert.id + 1)),
            (AlertRaised(alert),))


def _resolve(state: TableState, rec: Resolve) -> tuple[TableState, Effects]:
    if not any(a.id == rec.alert for a in state.alerts):
        raise IllegalEvent(f"no open alert {rec.alert}")
    state = replace(state, alerts=tuple(a for a in state.alerts if a.id != rec.alert))
    effects: Effects = (AlertResolved(rec.alert, rec.action),)
    if rec.reassign:
        card, becomes = rec.reassign
        state, more = _reassign(state, card, becomes, bool(rec.swap))
        effects += more
    return state, effects


def _refused(state: TableState, rec: Refused) -> tuple[TableState, Effects]:
    return replace(state, meters=replace(state.meters, refused=state.meters.refused + 1)), ()


def _shoe(state: TableState, shoe: ShoeStatus) -> tuple[TableState, Effects]:
    return replace(state, shoe=shoe), ()


def _sim_order(state: TableState, rec: SimOrder) -> tuple[TableState, Effects]:
    state = replace(state, shoe_sim=(rec.seed, rec.draw[1]), sim_shuffles=state.sim_shuffles + 1,
                    shoe_sim_out=tuple(rec.out or ()))
    return _shoe(state, replace(state.shoe, shuffling=True))


def _link(state: TableState, rec: ShoeLink) -> tuple[TableState, Effects]:
    up = bool(rec.up)
    return _shoe(state, replace(state.shoe, link=up, down=None if up else str(rec.reason or "link down"),
                                serial=state.shoe.serial if rec.serial is None else rec.serial))


def _flags(state: TableState, rec: ShoeFlags) -> tuple[TableState, Effects]:
    shoe, flags = state.shoe, tuple(rec.flags)
    # The shoe's own cut card coming out (or the shoe running out) makes the shuffle due, wherever the
    # game's count of the cut stands: a dealer places the physical cut card by hand.
    due = shoe.shuffle_due or any(f in flags and f not in shoe.flags for f in ("CUT_CARD", "EMPTY"))
    return _shoe(state, replace(shoe, flags=flags, shuffle_due=due))


def _deck_check(state: TableState, rec: DeckCheck) -> tuple[TableState, Effects]:
    # A complete deck check is a freshly shuffled shoe (or deck): whatever made the shuffle due is past.
    # So is one short of exactly the cards lying on the table (the discards reshuffled in mid-round).
    shoe, complete = state.shoe, rec.complete or rec.short_of_table
    return _shoe(state, replace(shoe, shuffling=False, shuffle_due=shoe.shuffle_due and not complete,
                                check_due=shoe.check_due and not complete))


def _counter_reset(state: TableState, rec: CounterReset) -> tuple[TableState, Effects]:
    # The shoe was swapped or reset: its draws count afresh from here, and it is deck checked before use.
    draws = dict(state.shoe.last_draw)
    draws[int(rec.shoe_id)] = int(rec.draws)
    return _shoe(state, replace(state.shoe, last_draw=tuple(sorted(draws.items())), check_due=True, shuffle_due=True))


def _door(state: TableState, rec: Door) -> tuple[TableState, Effects]:
    doors = set(state.doors_open)
    (doors.add if rec.open else doors.discard)(rec.name)
    return replace(state, doors_open=tuple(sorted(doors))), ()


_FOLDS: dict[type, Callable[[TableState, Any], tuple[TableState, Effects]]] = {
    Game: _game_step,
    Start: _start,
    AlertRecord: _alert,
    Resolve: _resolve,
    Refused: _refused,
    SimOrder: _sim_order,
    ShoeLink: _link,
    ShoeFlags: _flags,
    ShoeShuffle: lambda state, rec: _shoe(state, replace(state.shoe, shuffling=bool(rec.started))),
    DeckCheck: _deck_check,
    CounterReset: _counter_reset,
    ManualEntry: lambda state, rec: _shoe(state, replace(state.shoe, manual=bool(rec.on))),
    Seen: lambda state, rec: (replace(state, camera=_camera_step(state.camera, rec.event)), ()),
    CameraStarted: lambda state, rec: (replace(state, camera=(), camera_down=None), ()),
    CameraDown: lambda state, rec: (replace(state, camera_down=str(rec.reason or "no frames")), ()),
    CameraUp: lambda state, rec: (replace(state, camera_down=None), ()),
    Door: _door,
    DealerSignIn: lambda state, rec: (state, ()),   # read by controller/tableanalytics.py
    RatingStart: lambda state, rec: (replace(state, ratings=rating.started(state.ratings, rec)), ()),
    RatingStop: lambda state, rec: (replace(state, ratings=rating.stopped(state.ratings, rec)), ()),
    RatingMove: lambda state, rec: (replace(state, ratings=rating.moved(state.ratings, rec)), ()),
    SlipEntered: lambda state, rec: (replace(state, paperwork=paperwork.entered(state.paperwork, rec,
                                                                                state.meters.house_win)), ()),
    SlipConfirmed: lambda state, rec: (replace(state, paperwork=paperwork.confirmed(state.paperwork, rec)), ()),
}


def _camera_step(seen: tuple[tuple[str | None, str | None, bool, bool], ...], ev: dict[str, Any]
                 ) -> tuple[tuple[str | None, str | None, bool, bool], ...]:
    """What the camera sees after one of its tracker's events."""
    kind, card, down = ev["kind"], ev.get("card"), bool(ev.get("face_down", False))
    if kind in ("card_moved", "card_removed"):
        was = ev.get("from_zone") if kind == "card_moved" else ev.get("zone")
        i = next((i for i, (c, z, _, d) in enumerate(seen) if c == card and z == was and d == down), None)
        if i is not None:
            seen = seen[:i] + seen[i + 1:]
    if kind in ("card_appeared", "card_moved"):
        seen = seen + ((card, ev.get("zone"), bool(ev.get("certain")), down),)
    elif kind != "card_removed":
        raise ValueError(f"unknown camera event {kind!r}")
    return seen


def replay(state: TableState, records: Iterable[tuple[int, Mapping[str, Any]]]) -> TableState:
    """Fold (seq, record) pairs into the state (recovery, recall and meters all start here); a row that is no
    table record (an unknown kind or version) raises RecordError naming the row."""
    return fold(step, state, ((seq, table_record(r, f"journal row {seq}")) for seq, r in records))  # type: ignore[misc]


def picture(state: TableState, before: tuple[TableState, dict[str, Any]] | None = None) -> dict[str, Any]:
    """The whole table for the views: the game snapshot plus the runtime's status. The dealer-only
    parts (alerts' options, meters) sit under "dealer_only", which the public view drops.

    `before`: an earlier state and its picture. A section whose sources are the very same objects in both
    states is taken from that picture as it is (the history and the meters change once a round), so the
    views and the bus, which reuse what they had for the same object, redo only what a record changed."""
    exp = state.game_spec.expected_next(state.game)
    pic: dict[str, Any] = {
        "table": state.table_id,
        "seq": state.seq,
        "game": state.game_spec.snapshot(state.game),
        "expected": {"phase": exp.phase, "text": "paused: dealer alert" if state.paused else exp.text,
                     "card_to": exp.card_to, "actor": exp.actor, "actions": list(exp.actions)},
        "paused": state.paused,
        "bets_close_at": state.bets_close_at,
    }
    for key, (sources, build) in _SECTIONS.items():
        if key == "dealer_only" and (state.alerts or state.camera):
            # What it may name depends on the cards lying face down: built again whenever they may have changed.
            sources = sources + ("game", "last_round")
        if before is not None and all(getattr(before[0], name) is getattr(state, name) for name in sources):
            pic[key] = before[1][key]
        else:
            pic[key] = build(state)
            if key == "dealer_only" and (state.alerts or state.camera):
                down = face_down_cards(pic["game"]) | face_down_cards(pic["last_round"])
                if down:
                    pic[key] = withhold_face_down(pic[key], down)
    return pic


def face_down_cards(snapshot: Any) -> frozenset[str]:
    """The names of the cards lying face down in a game snapshot (as the audit view holds them)."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if type(node) is dict:
            if node.get("up") is False and node.get("card") is not None:
                found.add(str(node["card"]))
                return
            for value in node.values():
                if type(value) in (dict, list):
                    walk(value)
        elif type(node) is list:
            for value in node:
                if type(value) in (dict, list):
                    walk(value)

    walk(snapshot)
    return frozenset(found)


def _names_any(text: str, cards: frozenset[str]) -> bool:
    return any(re.search(rf"(?<![A-Za-z0-9]){re.escape(card)}(?![A-Za-z0-9])", text) for card in cards)


def _withheld_text(alert: dict[str, Any]) -> str:
    """What the screens say instead of an alert text that names a card of the name of one lying face down."""
    kind = alert.get("kind")
    if kind == "misdeal":
        return ("the card just drawn cannot be dealt now (it is not named here: its name would tell a card lying "
                "face down): set it aside, then discard it or void the round")
    if kind == "camera":
        return (f"the camera sees a card on {alert.get('zone') or 'the table'} that disagrees with the deal (not named "
                "here: its name would tell a card lying face down): put it right and confirm, or void the round")
    return (f"{kind} alert: its text names a card of the name of one lying face down, so the screens do not show it "
            "(croupier recall does)")


def withhold_face_down(only: dict[str, Any], down: frozenset[str]) -> dict[str, Any]:
    """The dealer-only section with every alert text and card, and every card the camera reports, that names a
    card lying face down (`down`) withheld: the dealer's screen faces the table, so it may no more tell a
    face-down card than the players' screens may. The journal keeps the full text (`croupier recall`, audit).
    Returns `only` itself when nothing in it names one."""
    alerts, changed = [], False
    for alert in only["alerts"]:
        text, card = alert.get("text") or "", alert.get("card")
        if card in down or _names_any(text, down):
            alert = dict(alert, card=None if card in down else card)
            if _names_any(text, down):
                alert["text"] = _withheld_text(alert)
            changed = True
        alerts.append(alert)
    camera = []
    for seen in only["camera"]:
        if seen.get("card") in down:
            seen = dict(seen, card=None)
            changed = True
        camera.append(seen)
    return dict(only, alerts=alerts, camera=camera) if changed else only


def _alert_json(state: TableState, alert: Alert) -> dict[str, Any]:
    """An alert for the dealer's screen; a camera alert the dealer may `reassign` lists, while its round is in
    play, the face-up cards dealt to its zone, one of which the camera's card may be."""
    out = alert.json()
    if "reassign" in alert.options and alert.zone is not None and state.round_log is not None:
        from controller.camera import dealt_face_up

        out["reassign"] = dealt_face_up(state.game_spec.snapshot(state.game), alert.zone, alert.card)
    return out


# picture sections built from a few parts of the state: key -> (those parts, the builder)
_SECTIONS: dict[str, tuple[tuple[str, ...], Callable[[TableState], Any]]] = {
    "shoe": (("shoe",), lambda s: {"link": s.shoe.link, "flags": list(s.shoe.flags), "dealt": s.shoe.dealt,
                                   "shuffle_due": s.shoe.shuffle_due, "shuffling": s.shoe.shuffling,
                                   "down": None if s.shoe.link else s.shoe.down, "check_due": s.shoe.check_due,
                                   "manual": s.shoe.manual}),
    "history": (("history",), lambda s: list(s.history)),
    "last_round": (("last_round",), lambda s: s.last_round),
    "scoreboard": (("scoreboard",), lambda s: list(s.scoreboard)),
    # The alerts' reassign lists read the game as well: under an open alert it changes only by a reassign (which
    # resolves one: the alerts change) or the round's void (the meters count it).
    "dealer_only": (("alerts", "meters", "doors_open", "camera", "camera_down"),
                    lambda s: {"alerts": [_alert_json(s, a) for a in s.alerts], "meters": s.meters.json(),
                               "doors_open": list(s.doors_open),
                               "camera": [{"card": c, "zone": z, "certain": sure, "face_down": d}
                                          for c, z, sure, d in s.camera],
                               "camera_down": s.camera_down}),
}
