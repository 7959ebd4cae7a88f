"""A cabinet's whole replayable state and the pure fold over its journal records: credits, the title's slot state, payouts, lockups, doors, meters, game recall and the progressive.

The cabinet runtime (controller/cabinet.py) turns every input into a record, computes
`step(state, record)`, journals the record, and only then adopts the new state. Recovery, recall and
meters are the same fold over the journal. Money is integer credits of the cabinet's denomination.

The record kinds are the typed records of controller/cabinetrecords.py (`python -m controller.records cabinet`
lists them); `step` folds each by its class, the notes and tickets through controller/cabinetmoney.py. The
state's types live in controller/cabinetmodel.py.

The balance every state keeps (the crash tests check it after every kill):
credits + still owed (a payout, a ticket not yet printed) = credits in - credits out - bets + wins, where
credits in = drop + credits added + notes + tickets in, credits out = paid by the hopper + cancelled credits paid
by hand + tickets out, bets = coin in, wins = coin out (wins credited to the credit meter; jackpots paid by hand
are apart).
"""

from __future__ import annotations

from dataclasses import replace
from collections.abc import Mapping
from typing import Any, Callable, Iterable

from controller.cabinetmodel import (
    DEVICE_LOCKUPS, LOCKUPS, RECALL, CabinetMeters, CabinetState, CoinPaid, Credited, DoorChanged, LinkChanged, Lockup,
    LockupCleared, LockupRaised, Payout, PayoutDone, PayoutStarted, Picked, Progressive, ProgressiveHit, ProgressiveWon,
    Settings, SlotChanged, Spun, _bump,
)
from controller.cabinetrecords import (
    BetRecord, CabinetDoor, CabinetRecord, CabinetRefused, CabinetStart, CashIn, Cashout, Clear, CoinOut, CoinRefused,
    Credit, Fault, Link, LockupRecord, NextPaytable, PickRecord, ProgressiveAck, ProgressiveWin, SasAck, SasDisable,
    SasEnable, SasRte, SasSignature, SasSound, SasTime, SpinRecord, cabinet_record,
)
from controller.cabinetmoney import (
    MONEY_FOLDS, devices as _devices, game_lockup as _game_lockup, in_doubt_cleared as _in_doubt_cleared,
    money_in_blocked, notes_enabled, play_blocked, ticket_out_blocked,
)
from controller.games.base import IllegalEvent
from controller.journal import fold
from controller.records import RecordError
from controller.cabinetrecords import SasTicketing  # SAS's own (7B, 7C, 7D): controller/sasfold.py folds it
from controller.slots import Bet, Outcome, SlotError, Title, cash_in, new_state as new_slot_state
from controller.slots import next_paytable, pick, spin

__all__ = [
    "RECALL", "LOCKUPS", "Settings", "Payout", "Lockup", "Progressive", "CabinetMeters", "CabinetState",
    "Spun", "Picked", "Credited", "PayoutStarted", "CoinPaid", "PayoutDone", "LockupRaised", "LockupCleared",
    "DoorChanged", "LinkChanged", "ProgressiveHit", "ProgressiveWon", "SlotChanged",
    "new_state", "step", "replay", "picture", "play_blocked", "money_in_blocked", "qualifies", "balance",
    "ticket_out_blocked", "notes_enabled",
]

# --------------------------------------------------------------------------------------------------- rules

def new_state(cabinet_id: str, title: Title, denomination: int, settings: Settings = Settings(),
              paytable: int = 0, recall: int = RECALL) -> CabinetState:
    if denomination not in title.denominations:
        raise ValueError(f"{title.name} is played at {', '.join(map(str, title.denominations))} cents per credit, "
                         f"not {denomination}")
    mode = settings.progressive if title.progressive is not None else "none"
    pool = title.progressive.reset_credits(denomination) if mode == "standalone" and title.progressive else 0
    return CabinetState(cabinet_id, title, denomination, new_slot_state(title, paytable),
                        replace(settings, progressive=mode), progressive=Progressive(mode, pool),
                        recall_size=recall)


def qualifies(state: CabinetState, bet: Bet) -> bool:
    """Whether a spin at `bet` plays for the progressive (the title's max bet)."""
    return state.title.progressive is not None and bet == state.title.max_bet


def balance(state: CabinetState) -> tuple[int, int]:
    """(credits on the meter + still owed, credits in - credits out - bets + wins): always equal. Still owed: a
    payout in progress and a ticket not yet printed; credits in and out count notes and tickets."""
    m = state.meters
    return state.credits + state.pending, m.credits_in - m.credits_out - m.coin_in + m.coin_out


def _illegal(reason: str) -> IllegalEvent:
    return IllegalEvent(reason)


def _win(state: CabinetState, credits: int, game: int, what: str) -> tuple[CabinetState, list[Any]]:
    """Credit a win, or lock up for a hand-paid jackpot when it reaches the jackpot limit."""
    if credits <= 0:
        return state, []
    if credits >= state.settings.jackpot_limit:
        lockup = Lockup(state.next_lockup, "jackpot", f"jackpot {credits} credits ({what}, game {game}): "
                                                      f"call an attendant", credits)
        meters = replace(state.meters, lockups=_bump(state.meters.lockups, "jackpot", 1))
        return replace(state, lockups=state.lockups + (lockup,), next_lockup=lockup.id + 1, meters=meters,
                       last_win=credits), [LockupRaised(lockup)]
    meters = replace(state.meters, coin_out=state.meters.coin_out + credits)
    return replace(state, credits=state.credits + credits, meters=meters, last_win=credits), []


def _features(feats: tuple[tuple[str, tuple[int, int]], ...], outcome: Outcome
              ) -> tuple[tuple[str, tuple[int, int]], ...]:
    for award in outcome.awards:
        feats = _bump(feats, award.feature, (1, award.credits))
    return feats


def _recall_update(state: CabinetState, game: int, **changes: Any) -> tuple[dict[str, Any], ...]:
    out = list(state.recall)
    for i in range(len(out) - 1, -1, -1):
        if out[i].get("game") == game:
            entry = dict(out[i])
            for key, value in changes.items():
                entry[key] = entry.get(key, 0) + value if key in ("won", "credited", "jackpot") else value
            entry["credits_after"] = state.credits
            out[i] = entry
            break
    return tuple(out)


def _complete(state: CabinetState, game: int) -> CabinetState:
    """Count a game won or lost once nothing of it is pending (a pick, a progressive award)."""
    if state.slot.pending is not None or state.progressive.pending_hit is not None:
        return state
    entry = next((e for e in reversed(state.recall) if e.get("game") == game), None)
    won = entry is not None and (entry.get("won", 0) > 0 or entry.get("jackpot", 0) > 0)
    meters = replace(state.meters, games_won=state.meters.games_won + won, games_lost=state.meters.games_lost + (not won))
    recall = _recall_update(state, game, complete=True)
    return replace(state, meters=meters, recall=recall)


def _spin(state: CabinetState, record: SpinRecord) -> tuple[CabinetState, list[Any]]:
    # One replace of the state and one of the meters: replay speed is restart speed.
    game = int(record.game)
    if game != state.games + 1:
        raise _illegal(f"game {game} is not the next game ({state.games + 1})")
    blocked = play_blocked(state)
    if blocked:
        raise _illegal(blocked)
    bet = Bet.from_json(record.bet)
    if qualifies(state, bet) and state.progressive.mode == "link" and not state.progressive.up:
        raise _illegal("progressive link down: max-bet play is disabled until the link is back")
    try:
        slot, outcome = spin(state.slot, tuple(record.stops), bet)
    except SlotError as exc:
        raise _illegal(str(exc)) from None
    if outcome.cost > state.credits:
        raise _illegal(f"not enough credits: {outcome.cost} to bet, {state.credits} on the meter")
    m = state.meters
    mk: dict[str, Any] = {"coin_in": m.coin_in + outcome.cost, "games_played": m.games_played + 1,
                          "free_games": m.free_games + outcome.free_spin}
    if outcome.awards:
        mk["features"] = _features(m.features, outcome)
    prog = state.progressive
    effects: list[Any] = [Spun(game, outcome)]
    contribution = outcome.progressive_contribution
    if contribution:
        mk["progressive_contributed"] = m.progressive_contributed + contribution
        if prog.mode == "standalone":
            prog = replace(prog, pool=prog.pool + contribution)
        elif prog.mode == "link":
            prog = replace(prog, unacked=prog.unacked + ((game, contribution * state.denomination),))
    progressive_won = 0
    if outcome.progressive_hit:
        effects.append(ProgressiveHit(game))
        if prog.mode == "standalone":
            assert state.title.progressive is not None
            progressive_won = prog.pool
            prog = replace(prog, pool=state.title.progressive.reset_credits(state.denomination))
            mk["progressive_hits"] = m.progressive_hits + 1
            mk["progressive_won"] = m.progressive_won + progressive_won
            effects.append(ProgressiveWon(game, progressive_won))
        elif prog.mode == "link":
            prog = replace(prog, pending_hit=game)
    total = outcome.won + progressive_won
    credits = state.credits - outcome.cost
    lockups, next_lockup = state.lockups, state.next_lockup
    jackpot = 0 < total and total >= state.settings.jackpot_limit
    if jackpot:
        what = "line wins and awards" + (" with the progressive" if progressive_won else "")
        lockup = Lockup(next_lockup, "jackpot", f"jackpot {total} credits ({what}, game {game}): call an attendant",
                        total)
        lockups, next_lockup = lockups + (lockup,), next_lockup + 1
        mk["lockups"] = _bump(m.lockups, "jackpot", 1)
        effects.append(LockupRaised(lockup))
    elif total:
        credits += total
        mk["coin_out"] = m.coin_out + total
    complete = slot.pending is None and prog.pending_hit is None
    if complete:
        key = "games_won" if total else "games_lost"
        mk[key] = getattr(m, key) + 1
    entry = {"game": game, "kind": "spin", **{k: v for k, v in outcome.to_json().items() if k not in ("v", "kind")},
             "credits_before": state.credits, "won": total, "credited": 0 if jackpot else total,
             "jackpot": total if jackpot else 0, "progressive": {"contribution": contribution,
                                                                  "hit": outcome.progressive_hit,
                                                                  "won": progressive_won},
             "credits_after": credits, "complete": complete}
    changes: dict[str, Any] = {}
    if state.restricted:  # restricted credits are bet first (as SAS EGMs do): they can only be played
        changes["restricted"] = max(0, state.restricted - outcome.cost)
    if state.money_since:  # the notes and tickets since the last game, recalled with this one
        entry["money"] = list(state.money_since)
        changes["money_since"] = ()
    state = replace(state, slot=slot, credits=credits, games=game, meters=replace(m, **mk), progressive=prog,
                    last_win=total, lockups=lockups, next_lockup=next_lockup,
                    recall=(state.recall + (entry,))[-state.recall_size:], **changes)
    return state, effects


def _pick(state: CabinetState, record: PickRecord) -> tuple[CabinetState, list[Any]]:
    game = int(record.game)
    if game != state.games:
        raise _illegal(f"the pick belongs to game {state.games}, not {game}")
    if state.doors_open or state.lockups:
        raise _illegal(play_blocked(state) or "")
    try:
        slot, outcome = pick(state.slot, str(record.choice), int(record.draw))
    except SlotError as exc:
        raise _illegal(str(exc)) from None
    state = replace(state, slot=slot, meters=replace(state.meters, features=_features(state.meters.features, outcome)))
    state, effects = _win(state, outcome.won, game, "pick bonus")
    jackpot = bool(effects)
    state = replace(state, recall=_recall_update(state, game, won=outcome.won,
                                                 credited=0 if jackpot else outcome.won,
                                                 jackpot=outcome.won if jackpot else 0,
                                                 pick={"choice": record.choice, "draw": record.draw,
                                                       "awards": [a.to_json() for a in outcome.awards]}))
    state = replace(state, last_win=outcome.won)
    return _complete(state, game), [Picked(game, outcome), *effects]


def _slot_command(state: CabinetState, record: CashIn | NextPaytable) -> tuple[CabinetState, list[Any]]:
    blocked = play_blocked(state)
    if blocked:
        raise _illegal(blocked)
    try:
        slot, outcome = (cash_in if record.KIND == "cash_in" else next_paytable)(state.slot)
    except SlotError as exc:
        raise _illegal(str(exc)) from None
    entry = {"kind": record.KIND, "after_game": state.games,
             "meters": [c.to_json() for c in outcome.meters], "free_spins": outcome.free_spins_left,
             "paytable": outcome.paytable}
    return replace(state, slot=slot, recall=(state.recall + (entry,))[-state.recall_size:]), [SlotChanged(outcome)]


def _credit(state: CabinetState, record: Credit) -> tuple[CabinetState, list[Any]]:
    credits = int(record.credits)
    if credits <= 0:
        raise _illegal("credits to add must be a positive whole number")
    blocked = money_in_blocked(state)
    if blocked:
        raise _illegal(f"money in is disabled: {blocked}")
    m = state.meters
    if record.source == "coin":
        m = replace(m, drop=m.drop + credits, coins_in=m.coins_in + 1)
    elif record.source == "operator":
        m = replace(m, credits_added=m.credits_added + credits)
    else:
        raise ValueError(f"unknown credit source {record.source!r}")
    return replace(state, credits=state.credits + credits, meters=m), [Credited(credits, record.source)]


def _cashout(state: CabinetState, record: Cashout) -> tuple[CabinetState, list[Any]]:
    credits, via = int(record.credits), record.via
    blocked = play_blocked(state)
    if blocked:
        raise _illegal(f"no cash out now: {blocked}")
    if state.slot.free is not None or state.slot.pending is not None:
        raise _illegal("finish the bonus (free spins or pick) before cashing out")
    if not 0 < credits <= state.cashable:
        raise _illegal(f"cannot cash out {credits} credits with {state.cashable} cashable on the meter")
    if via == "hopper":
        if record.coins is None:
            raise _illegal("a hopper payout names its coins")
        coins = int(record.coins)
        if not state.settings.hopper or coins < 1 or coins * state.settings.coin_credits != credits:
            raise _illegal(f"a hopper payout of {credits} credits is not {coins} whole coins")
        payout = Payout("hopper", credits, coins)
        state = replace(state, credits=state.credits - credits, payout=payout)
        return state, [PayoutStarted(payout)]
    if via != "hand_pay":
        raise ValueError(f"unknown payout {via!r}")
    payout = Payout("hand_pay", credits)
    lockup = Lockup(state.next_lockup, "hand_pay", f"hand pay {credits} credits: call an attendant", credits)
    meters = replace(state.meters, lockups=_bump(state.meters.lockups, "hand_pay", 1))
    state = replace(state, credits=state.credits - credits, payout=payout, lockups=state.lockups + (lockup,),
                    next_lockup=lockup.id + 1, meters=meters)
    return state, [PayoutStarted(payout), LockupRaised(lockup)]


def _coin_out(state: CabinetState) -> tuple[CabinetState, list[Any]]:
    k = state.settings.coin_credits
    m = replace(state.meters, coins_out=state.meters.coins_out + 1)
    p = state.payout
    if p is None or p.via != "hopper" or p.paid >= p.coins:
        return replace(state, meters=replace(m, hopper_extra=m.hopper_extra + k)), [CoinPaid(True)]
    p = replace(p, paid=p.paid + 1)
    m = replace(m, hopper_out=m.hopper_out + k)
    if p.paid == p.coins:
        return replace(state, payout=None, meters=m), [CoinPaid(False), PayoutDone(p)]
    return replace(state, payout=p, meters=m), [CoinPaid(False)]


def _lockup(state: CabinetState, record: LockupRecord) -> tuple[CabinetState, list[Any]]:
    a = record.lockup
    if a["kind"] not in LOCKUPS or a["kind"] in ("hand_pay", "jackpot", "note_in_doubt") or \
            a["kind"] in DEVICE_LOCKUPS:
        raise ValueError(f"no lockup kind {a['kind']!r} by record")
    lockup = Lockup(int(a["id"]), a["kind"], a["text"])
    if lockup.id != state.next_lockup:
        raise _illegal(f"lockup {lockup.id} is not the next one ({state.next_lockup})")
    if lockup.kind == "ticket_in_doubt":  # power lost while an authorised ticket was stacking
        e = state.escrow
        if e is None or not e.ticket or e.stage != "authorised":
            raise _illegal("no authorised ticket is in the validator")
        state = replace(state, escrow=replace(e, stage="in_doubt"))
        lockup = replace(lockup, credits=e.cents // state.denomination)
    meters = replace(state.meters, lockups=_bump(state.meters.lockups, lockup.kind, 1))
    return (replace(state, lockups=state.lockups + (lockup,), next_lockup=lockup.id + 1, meters=meters),
            [LockupRaised(lockup)])


def _clear(state: CabinetState, record: Clear) -> tuple[CabinetState, list[Any]]:
    lockup = next((x for x in state.lockups if x.id == record.lockup), None)
    if lockup is None:
        raise _illegal(f"no open lockup {record.lockup}")
    by, action = str(record.by), record.action
    if by.split(":")[0] not in lockup.clear_by:
        raise _illegal(f"{lockup.kind.replace('_', ' ')} is cleared by {' or '.join(lockup.clear_by)}, not {by}")
    if action not in lockup.options:
        raise _illegal(f"{lockup.kind.replace('_', ' ')} is cleared with {', '.join(lockup.options)}, not {action!r}")
    if lockup.kind in DEVICE_LOCKUPS and tuple(lockup.kind.split("_", 1)) in state.device_faults:
        raise _illegal(f"the {lockup.kind.replace('_', ' ')} is still reported by the device")
    state = replace(state, lockups=tuple(x for x in state.lockups if x.id != lockup.id))
    if lockup.kind in ("note_in_doubt", "ticket_in_doubt"):  # the attendant counted the stacker
        return _in_doubt_cleared(state, lockup, action)
    m = state.meters
    if lockup.kind == "hand_pay":
        state = replace(state, payout=None, meters=replace(m, cancelled_handpaid=m.cancelled_handpaid + lockup.credits))
    elif lockup.kind == "jackpot":
        state = replace(state, meters=replace(m, jackpot_handpaid=m.jackpot_handpaid + lockup.credits))
    elif action == "hand_pay" and state.payout is not None:  # the attendant pays what the hopper could not
        owed = state.owed
        state = replace(state, payout=None, meters=replace(m, cancelled_handpaid=m.cancelled_handpaid + owed))
    return state, [LockupCleared(lockup, action)]


def _progressive(state: CabinetState, record: Link | ProgressiveAck | ProgressiveWin) -> tuple[CabinetState, list[Any]]:
    prog = state.progressive
    if prog.mode != "link":
        raise _illegal("this cabinet is not on a progressive link")
    if isinstance(record, Link):
        up = bool(record.up)
        return replace(state, progressive=replace(prog, up=up)), [LinkChanged(up)]
    if isinstance(record, ProgressiveAck):
        games = set(record.games)
        return replace(state, progressive=replace(prog, unacked=tuple(u for u in prog.unacked if u[0] not in games))), []
    game = int(record.game)
    if prog.pending_hit != game:
        raise _illegal(f"no progressive hit of game {game} is waiting")
    cents = int(record.cents)
    if cents < 0 or cents % state.denomination:
        raise _illegal(f"a progressive award of {cents} cents is not whole credits of {state.denomination} cents")
    credits = cents // state.denomination
    m = state.meters
    state = replace(state, progressive=replace(prog, pending_hit=None),
                    meters=replace(m, progressive_hits=m.progressive_hits + 1, progressive_won=m.progressive_won + credits))
    state, effects = _win(state, credits, game, "progressive jackpot")
    jackpot = bool(effects)
    recall_prog = {"contribution": 0, "hit": True, "won": credits, "award": record.hit}
    for e in state.recall:
        if e.get("game") == game:
            recall_prog = {**e.get("progressive", {}), "won": credits, "award": record.hit}
    state = replace(state, recall=_recall_update(state, game, won=credits, credited=0 if jackpot else credits,
                                                 jackpot=credits if jackpot else 0, progressive=recall_prog))
    return _complete(state, game), [ProgressiveWon(game, credits), *effects]


def step(state: CabinetState, record: CabinetRecord | Mapping[str, Any]) -> tuple[CabinetState, tuple[Any, ...]]:
    """The state after one journal record (typed, or its row's object), and the effects to act on. Raises
    IllegalEvent for a record the state refuses (the runtime then journals a refusal, or a coin_refused, instead),
    and RecordError for a row that is no cabinet record."""
    rec = record if isinstance(record, CabinetRecord) else cabinet_record(record)
    fold_one = _FOLDS.get(type(rec))
    if fold_one is None:
        raise RecordError(f"no fold for cabinet record {type(rec).__name__}")
    state, effects = fold_one(state, rec)
    return state, tuple(effects)


def _bet(state: CabinetState, record: BetRecord) -> tuple[CabinetState, list[Any]]:
    bet = Bet(int(record.coins), int(1 if record.lines is None else record.lines))
    try:
        state.title.check_bet(bet)
    except SlotError as exc:
        raise _illegal(str(exc)) from None
    if state.slot.free is not None:
        raise _illegal("free spins are played at the bet that won them")
    return replace(state, bet=bet), []


def _door(state: CabinetState, record: CabinetDoor) -> tuple[CabinetState, list[Any]]:
    doors = set(state.doors_open)
    opened = bool(record.open)
    if opened == (record.name in doors):
        return state, []  # a repeat of what is known (e.g. a door found open again at start)
    (doors.add if opened else doors.discard)(record.name)
    meters = state.meters
    if opened:
        meters = replace(meters, door_opens=_bump(meters.door_opens, record.name, 1))
    return replace(state, doors_open=tuple(sorted(doors)), meters=meters), [DoorChanged(record.name, opened)]


def _start(state: CabinetState, record: CabinetStart) -> tuple[CabinetState, list[Any]]:
    if record.title != state.title.id or record.denomination != state.denomination:
        raise _illegal(f"this journal belongs to {record.title} at {record.denomination} cents, not "
                       f"{state.title.id} at {state.denomination} cents")
    settings = Settings.from_json(record.settings)
    settings = replace(settings, progressive=state.progressive.mode)
    if state.payout is not None and state.payout.via == "hopper" and \
            settings.coin_credits != state.settings.coin_credits:
        raise _illegal(f"a hopper payout of {state.payout.coins - state.payout.paid} coins of "
                       f"{state.settings.coin_credits} credits is unfinished: keep the coin value until it is paid")
    prog = replace(state.progressive, up=False)  # the link is down until the controller is heard again
    return replace(state, settings=settings, progressive=prog,
                   meters=replace(state.meters, power_resets=state.meters.power_resets + 1)), []


def _count(name: str) -> Callable[[CabinetState, Any], tuple[CabinetState, list[Any]]]:
    """A record that only counts on one meter (by one, or by its credits)."""
    def fold_one(state: CabinetState, record: Any) -> tuple[CabinetState, list[Any]]:
        add = int(record.credits) if isinstance(record, CoinRefused) else 1
        return replace(state, meters=replace(state.meters, **{name: getattr(state.meters, name) + add})), []
    return fold_one


def _unchanged(state: CabinetState, record: Any) -> tuple[CabinetState, list[Any]]:
    return state, []  # SAS's own records: controller/sas.py folds them


_FOLDS: dict[type, Callable[[CabinetState, Any], tuple[CabinetState, list[Any]]]] = {
    **MONEY_FOLDS,  # notes and tickets: controller/cabinetmoney.py
    SpinRecord: _spin, Credit: _credit, CoinOut: lambda state, record: _coin_out(state), BetRecord: _bet,
    PickRecord: _pick, CashIn: _slot_command, NextPaytable: _slot_command, Cashout: _cashout, LockupRecord: _lockup,
    Clear: _clear, CabinetDoor: _door, Link: _progressive, ProgressiveAck: _progressive, ProgressiveWin: _progressive,
    CoinRefused: _count("coins_refused"), CabinetStart: _start, CabinetRefused: _count("refused"),
    Fault: _count("faults"),
    SasDisable: lambda state, record: (replace(state, host_disabled=True), []),
    SasEnable: lambda state, record: (replace(state, host_disabled=False), []),
    SasSound: _unchanged, SasRte: _unchanged, SasTime: _unchanged, SasSignature: _unchanged, SasAck: _unchanged,
    SasTicketing: _unchanged,
}


def replay(state: CabinetState, records: Iterable[tuple[int, Mapping[str, Any]]]) -> CabinetState:
    """Fold (seq, record) pairs into the state (recovery, recall and meters all start here); a row that is no
    cabinet record (an unknown kind or version) raises RecordError naming the row."""
    return fold(step, state, ((seq, cabinet_record(r, f"journal row {seq}")) for seq, r in records))  # type: ignore[misc]


def status(state: CabinetState) -> tuple[str, str]:
    """(status, message) for the screens: what the cabinet is doing and what the player or attendant sees."""
    if state.doors_open:
        return "door_open", play_blocked(state) or ""
    lockup = _game_lockup(state)
    if lockup is not None:
        return "locked", lockup.text
    if state.payout is not None:
        return "paying", f"paying {state.owed} credits"
    if state.ticket_out is not None:
        return "printing", f"printing a ticket of {state.ticket_out.credits} credits"
    if state.host_disabled:
        return "disabled", "disabled by the floor system"
    if state.progressive.pending_hit is not None:
        return "progressive", "progressive jackpot!"
    if state.slot.pending is not None:
        return "pick", f"pick: {state.slot.pending}"
    if state.slot.free is not None:
        return "free_spins", f"{state.slot.free.remaining} free spins"
    if state.progressive.mode == "link" and not state.progressive.up:
        return "link_down", "progressive link down: max bet disabled"
    return ("play", "") if state.credits else ("idle", "insert coins")


def picture(state: CabinetState) -> dict[str, Any]:
    """The whole cabinet for the views. The attendant's parts (lockups, meters, recall, payout) sit under
    "dealer_only", which the public view drops."""
    title = state.title
    last = next((e for e in reversed(state.recall) if e.get("kind") == "spin"), None)
    what, message = status(state)
    pending = state.slot.pending
    choices = None
    if pending is not None:
        feature = next((f for f in title.features if f.kind == pending), None)
        choices = list(getattr(feature, "choices", ()))
    return {
        "cabinet": state.cabinet_id,
        "seq": state.seq,
        "title": {"id": title.id, "name": title.name},
        "denomination": state.denomination,
        "credits": state.credits,
        "restricted": state.restricted,
        "bet": state.bet.to_json(),
        "bet_credits": state.bet.total,
        "win": state.last_win,
        "game": state.games,
        # The last game as its screen shows it: the window, and which lines paid on which paytable row.
        "reels": {"stops": last["stops"], "physical": last["physical"], "window": last["window"], "game": last["game"],
                  "paytable": last["paytable"], "line_wins": last["line_wins"]} if last else None,
        "free_spins": state.slot.free.remaining if state.slot.free else 0,
        "pick": {"feature": pending, "choices": choices} if pending else None,
        "paytable": {"index": state.slot.paytable, "name": title.paytables[state.slot.paytable].name},
        "feature_meters": dict(state.slot.meters),
        "progressive": {"mode": state.progressive.mode, "pool": state.progressive.pool if
                        state.progressive.mode == "standalone" else None, "link_up": state.progressive.up,
                        "pending": state.progressive.pending_hit is not None},
        "status": what,
        "message": message,
        "history": [{"game": e["game"], "won": e["won"]} for e in state.recall if e.get("kind") == "spin"][-5:],
        "dealer_only": {"lockups": [x.json() for x in state.lockups], "meters": state.meters.json(),
                        "doors_open": list(state.doors_open), "recall": list(state.recall),
                        "payout": state.payout.json() if state.payout else None,
                        "progressive": state.progressive.json(), "settings": state.settings.json(),
                        "escrow": state.escrow.json() if state.escrow else None,
                        "ticket_out": state.ticket_out.json() if state.ticket_out else None,
                        "devices": _devices(state), "money": list(state.money),
                        "validation": "enhanced" if state.validation_id else "system",
                        "balance": dict(zip(("credits_and_owed", "in_out_bets_wins"), balance(state)))},
    }
