"""The demo's simulated dealer and players: at a table they open bets, bet, draw from the simulated shoe, decide, settle and shuffle; at a cabinet the player feeds coins, bets, spins, picks and cashes out, and the attendant clears lockups.

It drives a running Table or Cabinet only through its own inputs (commands, the simulated shoe, the
simulated panel's buttons and coin lines), so a demo exercises exactly the code paths of a live one.
Table decisions use basic strategy at blackjack, the game's own
`autoplay_decision(state, expected, rng) -> (action, amount)` where it has one, and a random legal choice
elsewhere; bets are the game's own `legal_bets` where it has one.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import time
from typing import Any

from controller.bus import Role
from controller.cards import parse_card
from controller.games.base import CardDealt, IllegalEvent, PlaceBet, Settle, ShuffleDue, Waiting, parse_spot_actor
from controller.rng import Rng

__all__ = ["Autoplay", "CabinetAutoplay"]

log = logging.getLogger("croupier.autoplay")
DEALER = Role("dealer")
_DEAL_AHEAD = 64  # more than any deal before a decision (big two: 52 cards, pai gow: 49)
_IN_FLIGHT = 2.0  # seconds to wait for dealt cards to be journaled before dealing on (a card the link lost)


class Autoplay:
    def __init__(self, table: Any, rng: Rng, *, pace: float = 0.0, rounds: int | None = None,
                 wait: float = 10.0) -> None:
        self.table, self.rng, self.pace, self.rounds, self.wait = table, rng, pace, rounds, wait
        self.settled = 0
        self.stopped = False
        self._dealt_at = 0.0
        self._shuffle_before_next = True   # games dealt from a fresh deck every round
        module = importlib.import_module(type(table.state.game).__module__)
        self._legal_bets = getattr(module, "legal_bets", None)
        # A game's legal_bets reads the table's state when it needs to (e.g. the open hands), else its rules.
        self._bets_from_state = self._legal_bets is not None and \
            "state" in inspect.signature(self._legal_bets).parameters
        # A game whose decisions name cards (a pai gow setting, a big two play) says how its players decide.
        self._autoplay_decision = getattr(module, "autoplay_decision", None)
        self._strategy = None
        if table.game.name == "blackjack":
            from controller.analysis.blackjack_strategy import chart

            rules = table.config.rules
            self._strategy = chart(rules.dealer_hits_soft_17, rules.double_after_split)

    def stop(self) -> None:
        """Stop `run` after the step under way, rather than cancel it in the middle of one. (The table's waits
        used asyncio.wait_for, which on Python 3.11 can drop a cancellation that lands as the table moves.)"""
        self.stopped = True

    async def run(self) -> None:
        while not self.stopped and (self.rounds is None or self.settled < self.rounds):
            seq = self.table.state.seq
            await self.step()
            if self.table.state.seq == seq and not await self.table.wait_change(seq, self.wait):
                log.warning("autoplay: the table did not move for %.0f s", self.wait)
            if self.pace:
                await asyncio.sleep(self.pace)  # demo pacing, so a person can follow; not synchronisation

    async def command(self, command: str, role: Role = DEALER, **args: Any) -> dict[str, Any]:
        reply = await self.table.command(role, command, args)
        if not reply["ok"]:
            log.debug("autoplay %s refused: %s", command, reply["error"])
        return reply

    async def step(self) -> bool:
        """Do the one thing the table waits for; False when there was nothing to do."""
        table = self.table
        st = table.state
        exp = table.game.expected_next(st.game)
        if st.alerts:
            alert = st.alerts[0]
            await self.command("resolve", alert=alert.id, action=alert.options[0])
            return True
        if st.shoe.shuffling:
            return False  # the shuffler is at work: its deck check starts the new shoe
        per_round = not table._accepts_new_shoe
        if exp.phase == Waiting.SHUFFLING or (exp.phase == Waiting.IDLE and (st.shoe.shuffle_due or
                                                                 (per_round and self._shuffle_before_next))):
            self._shuffle_before_next = False
            await self.command("shuffle")
            return True
        if exp.phase == Waiting.IDLE:
            return (await self.command("open_bets"))["ok"]
        if exp.phase == Waiting.BETTING:
            # Every player bets at once and the dealer closes: the table journals them in one group commit.
            bets = [self.command("place_bet", Role("spot", b.spot), spot=b.spot, box=b.box, amount=b.amount)
                    for b in self._bets()]
            await asyncio.gather(*bets, self.command("close_bets"))
            return True
        if exp.card_to is not None:
            from drivers.shoe import SimError

            sim = table.sim
            if not self.drawn_journaled(st) and time.monotonic() - self._dealt_at < _IN_FLIGHT:
                return False  # cards are out of the shoe that the table has not journaled yet
            try:
                # A dealer draws card after card without waiting for the screens: every card the round
                # takes before the next decision comes out in one motion (one a step at a demo's pace,
                # so a person can follow).
                self._dealt_at = time.monotonic()
                for _ in range(1 if self.pace else max(1, self._cards_due())):
                    sim.deal()
            except SimError as exc:
                if self.drawn_journaled(st):  # none out: the shoe is empty or refuses, not just busy
                    log.info("autoplay: %s: shuffling", exc)
                    await self.command("shuffle")
            return True
        if exp.phase == Waiting.SETTLING:
            if not self.pace and self._opens_after_settling(per_round):
                # The dealer pays and opens the next round's bets in one go, one group commit for both (at a
                # demo's pace the result stays up for a step).
                settled, _ = await asyncio.gather(self.command("settle"), self.command("open_bets"))
            else:
                settled = await self.command("settle")
            if settled["ok"]:
                self.settled += 1
                self._shuffle_before_next = True
            return True
        if exp.actor is not None and exp.actions:
            action, amount = self._decide(exp)
            spot = parse_spot_actor(exp.actor)
            role = Role("spot", spot) if spot is not None else DEALER
            await self.command("decision", role, actor=exp.actor, action=action, amount=amount, hand=exp.hand)
            return True
        return False

    def drawn_journaled(self, state: Any) -> bool:
        """Whether the table's `state` has journaled every card drawn from the simulated shoe."""
        return state.shoe.draw_of(self.table.sim.shoe_id) >= self.table.sim.draws

    def _opens_after_settling(self, per_round: bool) -> bool:
        """Whether the next round's bets open right after this settlement: more rounds to play, a shoe game
        with no shuffle due, and the game idle once settled (its own rules, run ahead)."""
        if per_round or (self.rounds is not None and self.settled + 1 >= self.rounds):
            return False
        table = self.table
        if table.state.shoe.shuffle_due:
            return False
        try:
            after, effects = table.game.apply(table.state.game, Settle())
        except IllegalEvent:
            return False
        return (table.game.expected_next(after).phase == Waiting.IDLE
                and not any(isinstance(e, ShuffleDue) for e in effects))

    def _cards_due(self) -> int:
        """How many cards the round takes in a row from here, as the dealer sees them come out of the shoe
        (the game's own rules, run ahead on the simulated shoe's next cards)."""
        game, state = self.table.game, self.table.state.game
        due = 0
        for card in self.table.sim.upcoming(_DEAL_AHEAD):
            if game.expected_next(state).card_to is None:
                break
            try:
                state, _ = game.apply(state, CardDealt(card, "shoe"))
            except IllegalEvent:
                break
            due += 1
        return due

    def _bets(self) -> list[PlaceBet]:
        rules = self.table.config.rules
        if self._legal_bets is not None:
            arg = self.table.state.game if self._bets_from_state else rules
            return [b for b in self._legal_bets(arg, self.rng) if isinstance(b, PlaceBet)]
        box = self.table.game.boxes[0]
        limit = rules.limits[box]
        spots = [s for s in range(1, rules.spots + 1) if self.rng.randbelow(2)] or [1]
        return [PlaceBet(s, box, limit.min * (1 + self.rng.randbelow(5))) for s in spots]

    def _decide(self, exp: Any) -> tuple[str, int]:
        if self._autoplay_decision is not None:
            return self._autoplay_decision(self.table.state.game, exp, self.rng)
        amount = 0
        if exp.amount_range is not None:
            lo, hi = exp.amount_range
            amount = lo + self.rng.randbelow(hi - lo + 1)
        if self._strategy is not None and exp.actor.startswith("spot:"):
            from controller.analysis.blackjack_strategy import basic_strategy

            snap = self.table.game.snapshot(self.table.state.game)
            seat = next(s for s in snap["spots"] if f"spot:{s['spot']}" == exp.actor)
            hand = seat["hands"][exp.hand]
            cards = [parse_card(c["card"]) for c in hand["cards"]]
            up = parse_card(snap["dealer"]["cards"][0]["card"])
            if "decline" in exp.actions:
                return "decline", 0  # basic strategy never takes insurance
            return basic_strategy(self._strategy, cards, up, exp.actions), amount
        return self.rng.choice(exp.actions), amount


class CabinetAutoplay:
    """A player at a simulated cabinet, and the attendant who answers its lockups. Coins go in through the
    simulated coin acceptor when `coins` is set (slow: 80 ms a coin), else through the attendant's add-credits
    command; buttons are pressed on the simulated panel when `buttons` is set, else sent as commands."""

    def __init__(self, cabinet: Any, rng: Rng, *, pace: float = 0.0, spins: int | None = None, wait: float = 10.0,
                 coins: bool = False, buttons: bool = False, cash_out_every: int = 25, stake: int = 60) -> None:
        self.cabinet, self.rng, self.pace, self.spins, self.wait = cabinet, rng, pace, spins, wait
        self.coins, self.buttons, self.cash_out_every, self.stake = coins, buttons, cash_out_every, stake
        self.played = 0
        self._start_games = cabinet.state.games

    async def run(self) -> None:
        while self.spins is None or self.played < self.spins:
            seq = self.cabinet.state.seq
            acted = await self.step()
            self.played = self.cabinet.state.games - self._start_games
            if acted and self.cabinet.state.seq == seq and not await self.cabinet.wait_change(seq, self.wait):
                log.warning("autoplay: the cabinet did not move for %.0f s", self.wait)
            if self.pace:
                await asyncio.sleep(self.pace)  # demo pacing, so a person can follow; not synchronisation

    async def _press(self, button: str, command: str, **args: Any) -> None:
        cab = self.cabinet
        panel = cab.panel
        spec = next((b for b in panel.config.buttons if b.name == button), None) if panel is not None else None
        if self.buttons and spec is not None and panel.simulated:
            # A finger on the button: held past its debounce, then let go before the next press.
            panel.sim.press(button)
            await asyncio.sleep(spec.bounce * 1.5)
            panel.sim.release(button)
            await asyncio.sleep(spec.bounce * 1.5)
            return
        await cab.command(Role("player"), command, args)

    async def step(self) -> bool:
        """Do the one thing the cabinet waits for; False when there was nothing to do (reels turning, paying)."""
        from controller.cabinetstate import money_in_blocked

        cab = self.cabinet
        st = cab.state
        if cab.showing:
            await asyncio.wait_for(cab.shown.wait(), self.wait)
            return False
        if st.lockups:
            return await self._attend(st.lockups[0])
        if st.doors_open or st.payout is not None or st.progressive.pending_hit is not None:
            # the door shuts, the hopper pays, the link answers: nothing for the player to do but wait
            await cab.wait_change(st.seq, 1.0)
            return False
        if st.slot.pending is not None:
            feature = next(f for f in cab.title.features if f.kind == st.slot.pending)
            n = 1 + self.rng.randbelow(len(feature.choices))
            await self._press(f"pick{n}", "pick", choice=n)
            return True
        max_bet = cab.title.max_bet.total
        if st.slot.free is None and st.credits < max_bet and money_in_blocked(st) is None:
            if self.coins and cab.panel is not None and cab.panel.simulated:
                cab.panel.sim.coins("coin_in", 1)
                await cab.wait_for(lambda s: s.credits != st.credits, 2.0)
            else:
                await cab.command(Role("attendant"), "add_credits", {"credits": self.stake})
            return True
        if st.slot.free is None and self.played and self.cash_out_every and \
                self.rng.randbelow(self.cash_out_every) == 0 and st.credits:
            await self._press("cash_out", "cash_out")
            return True
        roll = self.rng.randbelow(10)
        meters = st.slot.meters
        if roll == 0 and meters.get("free_winning_spins") and st.slot.free is None:
            await self._press("cash_in", "cash_in")
        elif roll == 1 and len(cab.title.paytables) > 1 and st.slot.free is None:
            await self._press("next_paytable", "next_paytable")
        elif roll == 2 and st.slot.free is None:
            await self._press("bet_one", "bet_one")
        elif roll <= 4 and st.slot.free is None and st.credits >= st.bet.total:
            await self._press("spin", "spin")
        else:
            await self._press("max_bet", "max_bet")
        return True

    async def _attend(self, lockup: Any) -> bool:
        """The attendant (or the technician, for what only ops may clear) answers a lockup."""
        cab = self.cabinet
        hopper = getattr(cab, "hopper", None)
        action = lockup.options[0]
        if lockup.kind in ("hopper_empty", "hopper_jam") and hopper is not None:
            hopper.coins += 500  # refilled
        if lockup.kind == "hopper_runaway" and hopper is not None:
            hopper.runaway = False
        role = Role("attendant") if "attendant" in lockup.clear_by else Role("ops")
        reply = await cab.command(role, "clear", {"lockup": lockup.id, "action": action})
        return bool(reply["ok"])
