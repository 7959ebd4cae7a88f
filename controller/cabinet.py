"""The slot cabinet runtime: buttons, coins, hopper, doors and reels become journal records, each journaled before it takes effect, then published and shown.

One asyncio loop, one writer (controller/runtime.py, shared with the table). The fold is
controller/cabinetstate.py; the title's math is controller/slots. A spin draws its stops from
controller/rng.py, journals them, and only then turns the reels (mechanical, over the panel's stepper
drivers, or on a screen) and rolls the win onto the credit meter's display. A restart replays the journal:
a payout in progress pays on, the reels show the last game's stops, a progressive hit waiting for its
award asks the link controller again (idempotent), contributions not yet acknowledged are sent again.

Doors: an open door (main, logic, cash box) disables play, money in and payouts until it shuts, lights the
tower and is metered. Errors lock the game with a message until the right role clears them (LOCKUPS in
controller/cabinetstate.py): coin-in jam and reverse coin, hopper empty, jam and runaway, reel mis-index;
a hand pay (a cash out over the limit, or without a hopper) and a jackpot over the jackpot limit wait for
an attendant. A broken journal refuses to start, as a table's does: ops keeps the file for the regulator.
A progressive link that falls silent disables max-bet (progressive-qualifying) play until it is back.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from typing import Any, Callable

from controller import __version__
from controller.bus import Role
from controller.cabinetrecords import (
    BetRecord, CabinetDoor, CabinetRefused, CabinetStart, CashIn, Cashout, Clear, CoinOut, CoinRefused, Credit, Fault,
    Link, NextPaytable, PickRecord, ProgressiveAck, ProgressiveWin, SpinRecord,
)
from controller.cabinetshow import CabinetShow, feature_meter
from controller.cabinettito import CabinetTito
from controller.cabinetstate import (
    CabinetState, CoinPaid, money_in_blocked, new_state, picture, play_blocked, qualifies, replay, step,
)
from controller.config import CabinetConfig
from controller.games.base import IllegalEvent
from controller.runtime import Batch, CommandRefused, command, int_arg
from controller.slots import SlotError, draw_pick, draw_stops

__all__ = ["Cabinet", "PLAYER", "ATTENDANT", "OPS", "feature_meter"]

log = logging.getLogger("croupier.cabinet")

PLAYER, ATTENDANT, OPS = Role("player"), Role("attendant"), Role("ops")
PLAYER_ONLY = ("player",)   # the cabinet's own buttons
STAFF = ("attendant", "ops")


class Cabinet(CabinetTito, CabinetShow):
    """A running slot cabinet. Construct, `await start()`, then `await run()` (or drive it from tests)."""

    log = log
    GRANTS = {"status": ("player", "attendant", "ops"), "meters": STAFF, "audit": ("ops",)}
    REFUSED = CabinetRefused
    LOCAL_ROLE = OPS
    ILLEGAL = (IllegalEvent, SlotError)

    def __init__(self, config: CabinetConfig, *, context: Any = None,
                 clock: Callable[[], float] = time.time, rng: Any = None) -> None:
        super().__init__(config.cabinet_id, config.journal, config.bus, context=context, clock=clock)
        self.config = config
        self.title = config.title
        self.state: CabinetState | None = None
        self.rng = rng
        self.panel: Any = None
        self.hopper: Any = None                # the simulated hopper, in simulation
        self.link: Any = None                  # controller.progressive.LinkClient
        self.link_pool: int | None = None      # cents, as the link controller last published it
        self.showing = False                   # the reels are turning (no new game until they rest)
        self.shown = asyncio.Event()           # set whenever the reels rest
        self.shown.set()
        self._displayed_credits: int | None = None  # what the credit display holds back while the reels turn
        self._buttons = dict(config.buttons)
        self._displays = dict(config.displays)
        self._hopper_timer: asyncio.TimerHandle | None = None
        self._motor = False
        self._coins_in_flight = 0              # coins past the sensor, not yet journaled
        self._attract_timer: asyncio.TimerHandle | None = None
        self.attracting = asyncio.Event()      # set while the attract mode plays
        self._link_kick = asyncio.Event()
        self.sas: Any = None                   # controller.sas.SasEgm: the floor's SAS line ([sas])
        self._tito_init()                      # the bill validator and ticket printer (controller/cabinettito.py)

    # ------------------------------------------------------------------------------------------ life cycle

    async def start(self) -> None:
        cfg = self.config
        entries = self._open_journal()  # verifies the chain: a broken one refuses to run
        first = next((r for _, r in entries if r.get("kind") == "start"), None)
        if first is not None and (first["title"], first["denomination"]) != (self.title.id, cfg.denomination):
            raise RuntimeError(f"{cfg.journal} is the journal of {first['title']} at {first['denomination']} cents; "
                               f"this config runs {self.title.id} at {cfg.denomination} cents (start a new journal)")
        state = replay(new_state(cfg.cabinet_id, self.title, cfg.denomination, cfg.settings, cfg.paytable), entries)
        if getattr(cfg, "sas", None) is not None and self.sas is None:
            from controller.sas import SasEgm

            self.sas = SasEgm(self, cfg.sas)
        if self.sas is not None:  # the exceptions not yet acknowledged come back from the journal
            self.sas.rebuild(new_state(cfg.cabinet_id, self.title, cfg.denomination, cfg.settings, cfg.paytable),
                             entries)
        if self.rng is None:
            from controller.rng import SeededRng, system_rng

            # simulation only: a seeded cabinet draws on from where its journal ends, not from the seed again
            self.rng = SeededRng(cfg.seed * 1_000_003 + len(entries)) if cfg.seed is not None else system_rng()
        self._begin(state, CabinetStart(self.title.id, cfg.denomination, cfg.settings.json(), __version__,
                                        self.title.digest).to_json())
        await self._start_bus()
        self._start_panel()
        self._start_link()
        if self.sas is not None:
            self.sas.start(asyncio.get_running_loop())
        self._start_tito()
        self._resume()

    async def _close_drivers(self) -> None:
        for timer in (self._hopper_timer, self._attract_timer):
            if timer is not None:
                timer.cancel()
        if self.link is not None:
            await self.link.close()
        await self._close_tito()
        if self.sas is not None:
            self.sas.close()
        if self.panel is not None:
            self.panel.close()

    async def _ready(self) -> str:
        return f"cabinet {self.config.cabinet_id}: {self.title.name}"

    def _resume(self) -> None:
        """After a restart: pay on, show the last game's stops, tell the panel what is true now."""
        self._sync_outputs()
        last = next((e for e in reversed(self._live.recall) if e.get("kind") == "spin"), None)
        if self.panel is not None and self.panel.reels:
            stops = tuple(last["physical"]) if last else (0, 0, 0)
            self._turn_reels(stops)
        self._show_meters()
        self._restart_attract()

    # ------------------------------------------------------------------------------------------ the fold

    def _step(self, state: CabinetState, record: dict[str, Any]) -> tuple[CabinetState, tuple[Any, ...]]:
        after, effects = step(state, record)
        if self.sas is not None:  # SAS folds the same record once it is journaled (its exceptions)
            effects += self.sas.note(state, record, after, effects)
        return after, effects

    def _picture(self, state: CabinetState) -> dict[str, Any]:
        # A linked pool is not in the cabinet's state: its screens follow the link controller's topic for it.
        return picture(state)

    def _written(self) -> None:
        self._tito_written()
        self._sync_outputs()
        self._restart_attract()
        if self.link is not None:
            self._link_kick.set()

    # ------------------------------------------------------------------------------------------ commands

    def _status_view(self, role: Role) -> str:
        return "public" if role.kind == "player" else "dealer"

    def _command(self, batch: Batch, role: Role | None, command: str, args: dict[str, Any]) -> dict[str, Any]:
        if role is None and self.bus_config.keys is None and self.ALLOWED.get(command) == PLAYER_ONLY:
            role = PLAYER  # unauthenticated (demo, tests): the buttons' commands count as the player's
        elif role is None and self.bus_config.keys is None and command == "clear":
            # ... and a clear as the role its lockup names (the demo's attendant page clears a hand pay)
            state: CabinetState = batch.state
            wanted = args.get("lockup")
            lockup = next((x for x in state.lockups if wanted is None or x.id == wanted), None)
            role = ATTENDANT if lockup is not None and "attendant" in lockup.clear_by else OPS
        return super()._command(batch, role, command, args)

    @command("recall", roles=STAFF, help="the last 10 games (stops, bet, wins, feature steps, meter changes)",
             read_only=True)
    def _recall(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        state: CabinetState = batch.state
        return {"ok": True, "result": list(state.recall)}

    @command("add_credits", roles=STAFF, help="credit the meter by hand (credits)")
    def _add_credits(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        credits = int_arg(args, "credits")
        batch.add(Credit("operator", credits, str(role)).to_json())
        return {"ok": True, "result": {"credits": batch.state.credits}}

    @command("spin", roles=PLAYER_ONLY, help="play a game at the bet showing (or the next free spin)")
    def _spin_button(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        return self._spin(batch, max_bet=False)

    @command("max_bet", roles=PLAYER_ONLY, help="play a game at the title's maximum bet")
    def _max_bet_button(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        return self._spin(batch, max_bet=True)

    @command("bet_one", roles=PLAYER_ONLY, help="the next bet (one coin more, round to one)")
    def _bet_one_button(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        return self._bet_one(batch)

    @command("cash_out", roles=PLAYER_ONLY, help="the credits paid out: by the hopper, or a hand pay over its limit")
    def _cash_out_button(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        return self._cash_out(batch)

    @command("pick", roles=PLAYER_ONLY, help="the pick bonus's choice (choice: its name or number)")
    def _pick_button(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        return self._pick(batch, args)

    @command("cash_in", roles=PLAYER_ONLY, help="take the feature's banked win now (cash in)")
    def _cash_in_button(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        return self._between_games(batch, CashIn())

    @command("next_paytable", roles=PLAYER_ONLY, help="the next of the title's paytables")
    def _next_paytable_button(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        return self._between_games(batch, NextPaytable())

    def _between_games(self, batch: Batch, record: CashIn | NextPaytable) -> dict[str, Any]:
        self._not_turning(batch)
        batch.add(record.to_json())
        return {"ok": True, "result": {"free_spins": batch.state.slot.free.remaining if batch.state.slot.free
                                       else 0, "paytable": batch.state.slot.paytable}}

    def _not_turning(self, batch: Batch) -> None:
        if self.showing or batch.state.games != self._live.games:
            raise CommandRefused("the reels are turning")

    def _spin(self, batch: Batch, max_bet: bool) -> dict[str, Any]:
        self._not_turning(batch)
        state: CabinetState = batch.state
        if state.slot.pending is not None:
            raise CommandRefused(f"pick first: the {state.slot.pending.replace('_', ' ')} bonus is waiting")
        blocked = play_blocked(state) or self._floor_refusal()
        if blocked:
            raise CommandRefused(blocked)
        bet = state.slot.free.bet if state.slot.free else (self.title.max_bet if max_bet else state.bet)
        if not state.slot.free and state.credits < bet.total:
            raise CommandRefused(f"insert coins: a {bet.total}-credit bet, {state.credits} credits")
        if qualifies(state, bet) and state.progressive.mode == "link" and not state.progressive.up:
            raise CommandRefused("progressive link down: max-bet play is disabled until the link is back")
        if bet != state.bet and not state.slot.free:
            batch.add(BetRecord(bet.coins, bet.lines).to_json())
        stops = draw_stops(batch.state.slot, self.rng)
        game = state.games + 1
        batch.add(SpinRecord(game, tuple(stops), bet.to_json()).to_json())
        return {"ok": True, "result": {"game": game, "stops": list(stops)}}

    def _bet_one(self, batch: Batch) -> dict[str, Any]:
        self._not_turning(batch)
        state: CabinetState = batch.state
        bets = self.title.bets()
        bet = bets[(bets.index(state.bet) + 1) % len(bets)] if state.bet in bets else bets[0]
        batch.add(BetRecord(bet.coins, bet.lines).to_json())
        return {"ok": True, "result": bet.to_json()}

    def _pick(self, batch: Batch, args: dict[str, Any]) -> dict[str, Any]:
        self._not_turning(batch)
        state: CabinetState = batch.state
        if state.slot.pending is None:
            raise CommandRefused("no pick bonus is waiting")
        feature = next(f for f in self.title.features if f.kind == state.slot.pending)
        choice = args.get("choice")
        if isinstance(choice, int) and not isinstance(choice, bool):
            if not 1 <= choice <= len(feature.choices):
                raise CommandRefused(f"pick 1..{len(feature.choices)}: {', '.join(feature.choices)}")
            choice = feature.choices[choice - 1]
        if choice not in feature.choices:
            raise CommandRefused(f"pick {' or '.join(feature.choices)}")
        draw = draw_pick(state.slot, self.rng)
        batch.add(PickRecord(state.games, str(choice), draw).to_json())
        return {"ok": True, "result": {"choice": choice, "won": batch.state.last_win}}

    def _cash_out(self, batch: Batch) -> dict[str, Any]:
        self._not_turning(batch)
        state: CabinetState = batch.state
        if state.credits <= 0:
            raise CommandRefused("no credits to cash out")
        by_ticket = self._ticket_cash_out(batch)
        if by_ticket is not None:
            return by_ticket
        if state.cashable <= 0:
            raise CommandRefused("restricted credits are played, not cashed (no ticket can be printed now)")
        s = state.settings
        coins = state.cashable // s.coin_credits
        if self._has_hopper() and state.cashable <= s.hand_pay_limit and coins > 0:
            record = Cashout(coins * s.coin_credits, "hopper", coins)
        else:
            record = Cashout(state.cashable, "hand_pay")
        batch.add(record.to_json())
        return {"ok": True, "result": {"via": record.via, "credits": record.credits}}

    @command("clear", roles=STAFF, help="clear a lockup (lockup: default the oldest the role may clear; action)")
    def _clear(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        state: CabinetState = batch.state
        lockup_id = args.get("lockup")
        if lockup_id is None:  # the oldest lockup this role may clear
            mine = [x for x in state.lockups if role.kind in x.clear_by]
            if not mine:
                raise CommandRefused("no lockup for " + str(role) + " to clear" if state.lockups else "no lockup")
            lockup_id = mine[0].id
        lockup = next((x for x in state.lockups if x.id == lockup_id), None)
        if lockup is None:
            raise CommandRefused(f"no open lockup {lockup_id}")
        if lockup.kind.endswith("_in_doubt") and "action" not in args:
            raise CommandRefused(f"count the stacker first: clear lockup {lockup.id} with action \"credit\" or "
                                 "\"no_credit\"")
        action = args.get("action", lockup.options[0])
        batch.add(Clear(lockup.id, action, str(role)).to_json())
        return {"ok": True, "result": {"cleared": lockup.kind, "action": action}}

    def _has_hopper(self) -> bool:
        if not self.config.settings.hopper or self.panel is None:
            return False
        names = {o.name for o in self.panel.config.outputs} | {p.name for p in self.panel.config.pulses}
        return {"hopper_motor", "coin_out"} <= names

    # ------------------------------------------------------------------------------------------ panel

    def _start_panel(self) -> None:
        self.panel = self._open_panel(self.config.panel, self.config.panel_sim, self._panel_event)
        if self.panel is None:
            return
        open_now = {d.name for d in self.panel.config.doors if self.panel.door_open(d.name)}
        for name in self._live.doors_open:
            if name not in open_now:  # shut while the cabinet was off
                self._post(functools.partial(Batch.add, record=CabinetDoor(name, False).to_json()))

    def _panel_ready(self, panel: Any) -> None:
        self.panel = panel  # _has_hopper reads the pin map
        if panel.simulated and self._has_hopper():
            self.hopper = panel.sim.hopper()

    def _panel_event(self, ev: Any) -> None:
        from drivers.panel import (ButtonPressed, DoorClosed, DoorOpened, InputStuck, PulseCounted, PulseRejected,
                                   SwitchOn)

        if isinstance(ev, (DoorOpened, DoorClosed)):
            record = CabinetDoor(ev.name, isinstance(ev, DoorOpened)).to_json()
            self._post(lambda batch: batch.add(record))
        elif isinstance(ev, PulseCounted) and ev.name == "coin_in":
            self._post(self._coin_in)
        elif isinstance(ev, PulseCounted) and ev.name == "coin_out":
            self._coins_in_flight += 1
            payout = self._live.payout
            if self._motor and payout is not None and payout.paid + self._coins_in_flight >= payout.coins:
                self.panel.set_output("hopper_motor", False)  # the last coin is out: stop now, journal after
            self._post(self._coin_out)
        elif isinstance(ev, PulseRejected) and ev.name == "coin_in":
            self._post(lambda batch: self._coin_fault(batch, ev.reason))
        elif isinstance(ev, InputStuck) and ev.name in ("coin_in", "coin_out"):
            kind = "coin_in_jam" if ev.name == "coin_in" else "hopper_jam"
            self._post(lambda batch: self._lock(batch, kind, f"{ev.name.replace('_', ' ')} line stuck: "
                                                             f"{'coin jam' if kind == 'coin_in_jam' else 'hopper jam'}"))
        elif isinstance(ev, SwitchOn) and ev.name == "reset_key":
            self._post(lambda batch: self._quiet(batch, lambda: self._clear(batch, ATTENDANT, {})))
        elif isinstance(ev, ButtonPressed):
            self._button(ev.name)

    def _button(self, name: str) -> None:
        action = self._buttons.get(name, "none")
        if action == "none":
            return
        if self.attracting.is_set():
            self._attract_off()
        command, args = (("pick", {"choice": int(action[5:])}) if action.startswith("pick:") else (action, {}))
        self._post(lambda batch: self._quiet(batch, lambda: self._handle(batch, PLAYER, command, args)))

    def _quiet(self, batch: Batch, act: Callable[[], Any]) -> Any:
        """A button press or key turn that cannot act now: said on the display and logged, not journaled (a
        player mashing a button must not fill the journal)."""
        mark = batch.mark()
        try:
            return act()
        except (CommandRefused, IllegalEvent, SlotError) as exc:
            batch.undo(mark)
            reason = getattr(exc, "reason", None) or str(exc)
            log.info("panel: %s", reason)
            return {"ok": False, "error": reason}

    def _coin_in(self, batch: Batch) -> None:
        credits = self.config.settings.coin_credits
        blocked = money_in_blocked(batch.state)
        if blocked:
            log.warning("coin in while money in is disabled (%s): not credited", blocked)
            batch.add(CoinRefused(credits, blocked).to_json())
        else:
            batch.add(Credit("coin", credits, "coin_in").to_json())

    def _coin_out(self, batch: Batch) -> None:
        self._coins_in_flight -= 1
        effects = batch.add(CoinOut().to_json())
        if any(isinstance(e, CoinPaid) and e.extra for e in effects):
            self._lock(batch, "hopper_runaway", "hopper runaway: a coin paid with no payout due")
        elif self._hopper_timer is not None:
            self._arm_hopper_watch()

    def _coin_fault(self, batch: Batch, reason: str) -> None:
        batch.add(Fault("coin_in", reason).to_json())
        if "longer" in reason:
            self._lock(batch, "coin_in_jam", f"coin in jam: {reason}")
        elif "after the last pulse" in reason:
            self._lock(batch, "reverse_coin", f"reverse coin: {reason}")

    def _floor_lost(self, batch: Batch, reason: str, refused: bool) -> None:
        self._lock(batch, "floor_offline", reason)

    def _floor_back(self, batch: Batch) -> None:
        for lockup in batch.state.lockups:
            if lockup.kind == "floor_offline":
                log.warning("the floor is back: play resumes")
                batch.add(Clear(lockup.id, "clear", "ops:floor").to_json())

    # ------------------------------------------------------------------------------------------ hopper, tower

    def _sync_outputs(self) -> None:
        """Make the hopper motor and tower light say what the state says (after every commit, and at start)."""
        state = self.state
        if self.panel is None or state is None:
            return
        from drivers.panel import PanelError

        run = (state.payout is not None and state.payout.via == "hopper" and not state.lockups
               and not state.doors_open)
        if run != self._motor and self._has_hopper():
            self._motor = run
            self.panel.set_output("hopper_motor", run)
            if run:
                self._arm_hopper_watch()
            elif self._hopper_timer is not None:
                self._hopper_timer.cancel()
                self._hopper_timer = None
        kinds = {x.kind for x in state.lockups}
        try:
            self.panel.tower_light("door_open", bool(state.doors_open))
            self.panel.tower_light("hand_pay", bool(kinds & {"hand_pay", "jackpot"}))
            self.panel.tower_light("tilt", bool(kinds - {"hand_pay", "jackpot"}))
        except PanelError:
            pass  # a cabinet without a tower light

    def _arm_hopper_watch(self) -> None:
        if self._hopper_timer is not None:
            self._hopper_timer.cancel()
        loop = asyncio.get_running_loop()
        self._hopper_timer = loop.call_later(self.config.hopper_timeout, self._hopper_silent)

    def _hopper_silent(self) -> None:
        self._hopper_timer = None
        if self._motor:  # the motor ran and no coin came: the hopper is empty
            self._post(lambda batch: self._lock(batch, "hopper_empty", "hopper empty: refill it, or pay the rest "
                                                                       "by hand"))

    # ------------------------------------------------------------------------------------------ progressive link

    def _start_link(self) -> None:
        if self.config.link is None:
            return
        if self.config.link.engine == "floor":  # no link controller: the floor's JetStream carries the link
            from controller.floor.progressive import FloorLinkClient

            self.link = FloorLinkClient(self.ident, self.config.link, self.config.floor,
                                        self.title.progressive.reset_cents, self._link_changed, self._link_pool)
        else:
            from controller.progressive import LinkClient

            self.link = LinkClient(self.ident, self.config.link, self._link_changed, self._link_pool,
                                   context=self.context)
        self.link.start()
        self._tasks.append(asyncio.create_task(self._link_loop()))

    def _link_changed(self, up: bool) -> None:
        log.warning("progressive link %s", "up" if up else "DOWN: max-bet play disabled")

        def record(batch: Batch) -> None:
            if batch.state.progressive.up != up:
                batch.add(Link(up).to_json())

        self._post(record)

    def _link_pool(self, cents: int) -> None:
        self.link_pool = cents
        if not self.showing:
            self._show_meters()

    async def _link_loop(self) -> None:
        """Send what the link controller has not acknowledged: contributions first, in game order, then a hit."""
        from controller.bus import CommandError

        while True:
            await self._link_kick.wait()
            self._link_kick.clear()
            prog = self._live.progressive
            if not prog.up or not (prog.unacked or prog.pending_hit is not None) or self.link is None:
                continue
            try:
                if prog.unacked:
                    games = await self.link.contribute(list(prog.unacked))
                    if games:
                        await self._submit(lambda batch: batch.add(ProgressiveAck(tuple(games)).to_json()))
                if prog.pending_hit is not None and not self.showing:
                    game = prog.pending_hit
                    award = await self.link.hit(game, self.config.denomination)
                    await self._submit(lambda batch: self._award(batch, game, award))
            except (CommandError, OSError) as exc:
                log.warning("progressive link: %s; retrying", exc)
                await asyncio.sleep(self.config.link.heartbeat if self.config.link else 1.0)
                self._link_kick.set()

    def _award(self, batch: Batch, game: int, award: dict[str, Any]) -> None:
        if batch.state.progressive.pending_hit == game:
            batch.add(ProgressiveWin(game, int(award["award"]), award["hit"]).to_json())
