"""Rated play, pure: a player's sessions at a spot (time, rounds, average bet, actual and theoretical win, blackjack decision costs) folded from the table's journal.

A session opens with `rating_start` (a player card number at a spot), may move spots, and ends with
`rating_stop`: journal records of controller/tablerecords.py, folded here beside every game record
(`observe`), so a restart's replay rebuilds every rating exactly.

- Rounds and average bet: a round counts for a session when its spot placed an initial wager (the bets placed
  while bets were open) and the round settled; the average bet is those wagers over the rounds.
- Actual win: the house's side of every box the spot settled (stake - returned: doubles, splits, insurance,
  play and side bets all in).
- Theoretical win: each initial wager x that bet's exact house edge for the rules in force (`edge`): blackjack's
  from controller/analysis/blackjack_ev.py (the game's edge against the best play of the first two cards, full
  shoe), insurance's exactly, the other games' from their exact analysis reports (controller/analysis). The fold
  keeps the wagers per (rules, box); the edge is computed when a rating is viewed, once per rules (cached), so
  dealing never waits on it. A box with no exact edge is reported as unrated handle, never guessed.
- Blackjack decision cost: for each decision a rated spot takes, the EV of the best legal action minus the EV of
  the action taken, times the hand's bet, from blackjack_ev's exact EVs for the rules, the hand's cards and the
  dealer's up card, with the composition of the full shoe less those cards (not the cards left in this shoe:
  the cost then measures the strategy, not the count, and the same hand always costs the same). Summed per
  session, it separates a weak player from a good one: basic strategy costs about nothing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Mapping

from controller.games.base import Effect, IllegalEvent, RoundSettled, RoundVoided, StakeChanged, parse_spot_actor
from controller.tablerecords import Game, RatingMove, RatingStart, RatingStop, TableRecord

__all__ = ["Session", "Ratings", "pit_view", "observe", "started", "stopped", "moved", "edge", "warm_edges", "session_view", "ratings_view",
           "rating_records", "COMMANDS", "PLAYER_DIGITS"]

COMMANDS = ("rating_start", "rating_stop", "rating_move")
PLAYER_DIGITS = (4, 20)   # a player card number: digits only, this many
_MISTAKE = 1e-9           # a decision costing more than this (per unit) is a mistake


@dataclass(frozen=True, slots=True)
class Session:
    player: str
    spot: int
    started: int
    stopped: int | None = None
    rounds: int = 0
    handle: int = 0                                  # initial wagers of the rounds counted
    actual_win: int = 0                              # the house's: stakes - returned, every box
    wagers: tuple[tuple[str, str, int], ...] = ()    # (rules as canonical JSON, box, credits) for the theoretical win
    decisions: int = 0                               # blackjack decisions rated
    mistakes: int = 0                                # ... that gave up some EV
    cost: float = 0.0                                # EV given up by those decisions, in credits
    spots: tuple[int, ...] = ()                      # every spot the session sat at, in order


@dataclass(frozen=True, slots=True)
class Ratings:
    sessions: tuple[Session, ...] = ()
    open: tuple[tuple[int, int], ...] = ()           # (spot, index in sessions) of the sessions in play
    round_bets: tuple[tuple[int, str, int], ...] = ()  # this round's initial wagers of rated spots: (spot, box, credits)

    def at(self, spot: int) -> int | None:
        return dict(self.open).get(spot)


def _with(r: Ratings, index: int, session: Session) -> Ratings:
    sessions = list(r.sessions)
    sessions[index] = session
    return replace(r, sessions=tuple(sessions))


def started(r: Ratings, rec: RatingStart) -> Ratings:
    if r.at(rec.spot) is not None:
        raise IllegalEvent(f"spot {rec.spot} has a rated player already: stop or move that rating first")
    if any(r.sessions[i].player == rec.player for _, i in r.open):
        raise IllegalEvent(f"player {rec.player} is rated at another spot: move that rating instead")
    index = len(r.sessions)
    return replace(r, sessions=r.sessions + (Session(rec.player, rec.spot, rec.at, spots=(rec.spot,)),),
                   open=tuple(sorted(r.open + ((rec.spot, index),))),
                   round_bets=tuple(b for b in r.round_bets if b[0] != rec.spot))


def stopped(r: Ratings, rec: RatingStop) -> Ratings:
    index = r.at(rec.spot)
    if index is None:
        raise IllegalEvent(f"spot {rec.spot} has no rated player")
    r = _with(r, index, replace(r.sessions[index], stopped=rec.at))
    # A round in play when the session ends is not counted: its wagers are forgotten.
    return replace(r, open=tuple(o for o in r.open if o[0] != rec.spot),
                   round_bets=tuple(b for b in r.round_bets if b[0] != rec.spot))


def moved(r: Ratings, rec: RatingMove) -> Ratings:
    index = r.at(rec.spot)
    if index is None:
        raise IllegalEvent(f"spot {rec.spot} has no rated player")
    if r.at(rec.to) is not None:
        raise IllegalEvent(f"spot {rec.to} has a rated player already")
    session = r.sessions[index]
    r = _with(r, index, replace(session, spot=rec.to, spots=session.spots + (rec.to,)))
    return replace(r, open=tuple(sorted([o for o in r.open if o[0] != rec.spot] + [(rec.to, index)])),
                   round_bets=tuple(b for b in r.round_bets if b[0] != rec.spot))


def observe(r: Ratings, rec: TableRecord, before: Any, after: Any, effects: tuple[Effect, ...]) -> Ratings:
    """The ratings after a journal record the table folded: `before`/`after` the table states around it (their
    game, game_spec and rules), `effects` what the record did. Records of no rated spot change nothing."""
    if not r.open or not isinstance(rec, Game):
        return r
    kind = rec.event.get("kind") if isinstance(rec.event, Mapping) else None
    if kind in ("place_bet", "remove_bet"):
        bets = dict(((s, b), a) for s, b, a in r.round_bets)
        for eff in effects:
            if isinstance(eff, StakeChanged) and r.at(eff.spot) is not None:
                bets[(eff.spot, eff.box)] = bets.get((eff.spot, eff.box), 0) + eff.delta
        return replace(r, round_bets=tuple(sorted((s, b, a) for (s, b), a in bets.items() if a)))
    if kind == "decision" and before.game_spec.name == "blackjack":
        r = _decision(r, rec.event, before)
    for eff in effects:
        if isinstance(eff, RoundSettled):
            r = _settled(r, eff, json.dumps(before.rules, sort_keys=True, separators=(",", ":")))
        elif isinstance(eff, RoundVoided):
            r = replace(r, round_bets=())
    return r


def _settled(r: Ratings, eff: RoundSettled, rules: str) -> Ratings:
    wagers: dict[int, list[tuple[str, int]]] = {}
    for spot, box, amount in r.round_bets:
        wagers.setdefault(spot, []).append((box, amount))
    for spot, index in r.open:
        rows = eff.settlement.for_spot(spot)
        placed = wagers.get(spot, [])
        if not rows:
            continue
        s = r.sessions[index]
        # Insurance is offered after the bets close: its stake is a wager of its own with its own edge.
        bets = placed + [(row.box, row.stake) for row in rows if row.box == "insurance"]
        theo = dict(((k, b), a) for k, b, a in s.wagers)
        for box, amount in bets:
            theo[(rules, box)] = theo.get((rules, box), 0) + amount
        r = _with(r, index, replace(
            s, rounds=s.rounds + (1 if placed else 0), handle=s.handle + sum(a for _, a in placed),
            actual_win=s.actual_win + sum(row.stake - row.returned for row in rows),
            wagers=tuple((k, b, a) for (k, b), a in sorted(theo.items()))))
    return replace(r, round_bets=())


def _decision(r: Ratings, event: Mapping[str, Any], before: Any) -> Ratings:
    spot = parse_spot_actor(str(event.get("actor", "")))
    index = None if spot is None else r.at(spot)
    action = event.get("action")
    if index is None or action in ("insure", "decline"):
        return r
    from controller.analysis.blackjack_ev import EvRules, action_evs
    from controller.games import blackjack as bj
    from controller.hands.points import blackjack_value

    game = before.game
    where = bj.current_hand(game)
    if where is None or not game.dealer:
        return r
    seat = game.seats[where[0]]
    hand = seat.hands[where[1]]
    if seat.spot != spot:
        return r
    legal = bj.legal_actions(game.rules, seat, hand)
    values = tuple(blackjack_value(c) for c in hand.cards)
    evs = action_evs(EvRules.of(game.rules), values, blackjack_value(game.dealer[0]), tuple(legal))
    if action not in evs:
        return r
    lost = max(evs.values()) - evs[action]
    s = r.sessions[index]
    return _with(r, index, replace(s, decisions=s.decisions + 1, mistakes=s.mistakes + (lost > _MISTAKE),
                                   cost=s.cost + lost * hand.stake))


@lru_cache(maxsize=256)
def _edge(game: str, rules: str, box: str) -> float | None:
    from controller.games import get_game
    from controller.games.base import rules_from_mapping

    spec = get_game(game)
    parsed = rules_from_mapping(spec.rules_type, json.loads(rules))
    if game == "blackjack":
        from controller.analysis.blackjack_ev import EvRules, house_edge, insurance_edge

        if box == "main":
            return house_edge(EvRules.of(parsed))  # type: ignore[arg-type]
        return insurance_edge(parsed.decks) if box == "insurance" else None  # type: ignore[attr-defined]
    if game not in _EXACT:
        return None
    import importlib

    module = importlib.import_module(f"controller.analysis.{_EXACT[game]}")
    report = module.analyse(parsed, None, 0, lambda _: None)
    if report["method"] != "exact" or box not in report["house_edge"]:
        return None
    return -float(report["house_edge"][box])   # the report's is the player's expectation


# games whose analysis report is exact, with a house edge per box named as the game's boxes
_EXACT = {"baccarat": "baccarat", "trente-et-quarante": "trente_et_quarante", "red-dog": "red_dog"}


_PENDING = object()
_known: dict[tuple[str, str, str], float | None] = {}   # edges computed so far (what `edge(compute=False)` knows)


def edge(game: str, rules: Mapping[str, Any] | str, box: str, compute: bool = True) -> float | None | object:
    """The house's exact edge per unit of an initial wager on `box` under these rules (positive: the house wins);
    None when no exact figure exists for it. Cached per rules. Blackjack's first takes seconds (tens on a Pi):
    with `compute` False an edge not computed yet is `_PENDING` instead (the runtime computes it in a thread)."""
    text = rules if isinstance(rules, str) else json.dumps(dict(rules), sort_keys=True, separators=(",", ":"))
    key = (game, text, box)
    if key not in _known:
        if not compute:
            return _PENDING
        _known[key] = _edge(game, text, box)
    return _known[key]


def session_view(s: Session, game: str, compute: bool = True) -> dict[str, Any]:
    theo: float | None = 0.0
    unrated = 0
    for rules, box, amount in s.wagers:
        e = edge(game, rules, box, compute)
        if e is _PENDING:
            theo = None   # the edge is being computed: the pit sees "theo_win": null until it is known
        elif e is None:
            unrated += amount
        elif theo is not None and isinstance(e, float):
            theo += amount * e
    return {"player": s.player, "spot": s.spot, "spots": list(s.spots), "started": s.started, "stopped": s.stopped,
            "minutes": None if s.stopped is None else round((s.stopped - s.started) / 60, 1),
            "rounds": s.rounds, "handle": s.handle, "average_bet": round(s.handle / s.rounds, 2) if s.rounds else None,
            "actual_win": s.actual_win, "theo_win": None if theo is None else round(theo, 2), "unrated_handle": unrated,
            "decisions": s.decisions, "mistakes": s.mistakes, "decision_cost": round(s.cost, 2)}


def ratings_view(r: Ratings, game: str, compute: bool = True) -> dict[str, Any]:
    """For the pit: the sessions in play (by spot) and every session (the ended ones with their stop time)."""
    return {"open": {str(spot): r.sessions[i].player for spot, i in r.open},
            "sessions": [session_view(s, game, compute) for s in r.sessions]}


def warm_edges(game: str, rules: Mapping[str, Any], boxes: tuple[str, ...]) -> None:
    """Compute the edges of these boxes (and insurance) under these rules, for a runtime's thread at its start."""
    for box in boxes + (("insurance",) if game == "blackjack" else ()):
        edge(game, rules, box)


def _spot(args: Mapping[str, Any], key: str, spots: int) -> int:
    value = args[key]
    if isinstance(value, str) and value.isdigit() and len(value) <= 3:
        value = int(value)   # `croupier command` sends text
    if type(value) is not int or not 1 <= value <= spots:
        raise ValueError(f"{key} must be a spot from 1 to {spots}")
    return value


def rating_records(r: Ratings, by: str, command: str, args: Mapping[str, Any], now: int,
                   spots: int) -> list[dict[str, Any]]:
    """The journal record a rating command asks for; ValueError/KeyError naming the bad argument."""
    if command == "rating_start":
        player = args["player"]
        if type(player) is int and player >= 0:
            player = str(player)   # `croupier command` sends digits as a number (a leading 0 is lost: send text)
        low, high = PLAYER_DIGITS
        if not isinstance(player, str) or not player.isascii() or not player.isdigit() or not low <= len(player) <= high:
            raise ValueError(f"player must be a player card number: {low} to {high} digits")
        return [RatingStart(_spot(args, "spot", spots), player, now, by).to_json()]
    if command == "rating_stop":
        return [RatingStop(_spot(args, "spot", spots), now, by).to_json()]
    if command == "rating_move":
        return [RatingMove(_spot(args, "from", spots), _spot(args, "to", spots), now, by).to_json()]
    raise ValueError(f"{command} is no rating command")


def pit_view(state: Any, compute: bool = True) -> dict[str, Any]:
    """What the pit (a supervisor) sees of a table (a tablestate.TableState): its ratings and its paperwork. Never
    for a screen: only the `pit` command answers it, to the pit role. `compute` False: a theoretical win whose
    edge is not computed yet is null (the runtime, which must not wait, computes the edges in a thread)."""
    from controller.paperwork import paperwork_view

    return {"table": state.table_id, "game": state.game_spec.name, "seq": state.seq,
            "ratings": ratings_view(state.ratings, state.game_spec.name, compute),
            "paperwork": paperwork_view(state.paperwork), "meters_house_win": state.meters.house_win}
