"""The table runtime: drivers' inputs become journal records, each journaled before it takes effect, then published and shown.

One asyncio loop, one writer (controller/runtime.py, shared with the cabinet). Every input (a card read
by the shoe, a panel button, a dealer or player command from the bus, the betting timer) becomes a record;
`tablestate.step` checks it against the game (a refused game event never reaches the journal: it becomes
a dealer alert or a refusal), the record is appended to the journal (fsynced), and only then is the new
state adopted, published on the bus and shown on the panel. A restart replays the journal into the same
state and resumes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from controller import __version__
from controller.bus import Role
from controller.config import TableConfig
from controller.games.base import (
    Waiting,
    BetsClosed, BetsOpened, CardDealt, CloseBets, Decision, Effect, Effects, IllegalEvent, NewShoe, OpenBets,
    PlaceBet, RemoveBet, RoundSettled, Settle, StakeChanged, VoidRound, parse_spot_actor, rules_from_mapping,
)
from controller.runtime import Batch, CommandRefused, command
from controller.runtime import int_arg as _int
from controller.runtime import text_arg as _text
from controller.runtimecommands import Command
from controller.sdnotify import notify
from controller.tablepit import TablePit
from controller.tableshoe import ShoeTable
from controller.tablerecords import (
    CameraDown, CameraStarted, CameraUp, Door, Game, ManualEntry, Refused, Resolve, Seen, Start,
)
from controller.pitwatch import PitWatch
from controller.pitwatch import replay as replay_watched
from controller.tablestate import AlertRaised, AlertResolved, TableState, new_state, picture, step

if TYPE_CHECKING:  # the drivers are imported where a table starts them: a table without a camera never loads vision
    from controller.camera import CameraWitness
    from drivers.camera.capture import OpenCVCamera
    from drivers.camera.sim import SimulatedCamera
    from drivers.panel import ButtonHeld, ButtonPressed, DoorClosed, DoorOpened, Panel
    from drivers.shoe import AsyncShoe, ShoeSim
    from vision.enrol import PlayCollector

__all__ = ["Table", "CommandRefused"]

log = logging.getLogger("croupier.table")

DEALER = Role("dealer")
DEALER_ONLY = ("dealer",)
BY_SPOT = ("dealer", "spot")   # "spot": a player terminal, for its own spot only


class Table(TablePit, ShoeTable):
    """A running table. Construct, `await start()`, then `await run()` (or drive it from tests)."""

    log = log
    # a supervisor (pit) sees what the dealer's screen shows and the meters
    GRANTS = {"status": ("dealer", "spot", "ops", "pit"), "meters": ("dealer", "ops", "pit"), "audit": ("ops",)}
    REFUSED = Refused
    LOCAL_ROLE = DEALER
    ILLEGAL = (IllegalEvent,)

    def __init__(self, config: TableConfig, *, context: Any = None, sim_link: str | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__(config.table_id, config.journal, config.bus, context=context, clock=clock)
        self.config = config
        self.game = config.game
        self.sim_link = sim_link
        self.state: TableState | None = None
        self.shoe: AsyncShoe | None = None
        self.sim: ShoeSim | None = None                  # in simulation
        self.panel: Panel | None = None
        self.camera: CameraWitness | None = None         # when a camera is configured
        self.sim_camera: SimulatedCamera | None = None   # in simulation
        self.play_corners: PlayCollector | None = None  # the camera's corners of dealt cards, labelled by the shoe
        self.sim_misplaced: dict[str, str] = {}  # simulation: card -> zone where the dealer put it instead
        self.shoe_ready = asyncio.Event()
        self._timer: asyncio.TimerHandle | None = None
        self._accepts_new_shoe = True
        self._identified = False   # the shoe has identified itself to this process
        self._rebased: tuple[int, int] | None = None  # a swap this process saw by serial: the link's own report follows
        self._pictured: tuple[TableState, dict[str, Any]] | None = None  # the last state pictured and its picture
        self._warming: dict[str, Any] | None = None  # the rules whose exact edges a thread computes (the pit's)
        self.watch = PitWatch()   # the pit's live folds: advantage-play alerts, the shift's analytics

    # ------------------------------------------------------------------------------------------ life cycle

    async def start(self) -> None:
        cfg = self.config
        entries = self._open_journal()  # verifies the chain: a broken one refuses to run
        rules = cfg.rules
        first = next((r for _, r in entries if r.get("kind") == "start"), None)
        if first is not None:
            if first["game"] != self.game.name:
                raise RuntimeError(f"{cfg.journal} is the journal of a {first['game']} table; this config runs "
                                   f"{self.game.name}")
            rules = rules_from_mapping(self.game.rules_type, first["rules"])
        # one pass rebuilds the state and the pit's watch (its analytics need each row's time)
        assert self.journal is not None
        state = replay_watched(new_state(cfg.table_id, self.game, rules),
                               ((e.seq, e.time, e.record) for e in self.journal.entries()), self.watch)
        probe = self.game.new_table(rules)
        try:
            self.game.apply(probe, NewShoe(getattr(rules, "decks", 1)))
        except IllegalEvent:
            self._accepts_new_shoe = False  # a fresh deck every round (single-deck poker games)
        self._begin(state, Start(self.game.name, cfg.rules.to_json(), __version__).to_json())
        await self._start_bus()
        await self._start_shoe()
        self._start_panel()
        await self._start_camera()
        self._restart_timer()

    async def _close_drivers(self) -> None:
        if self._timer:
            self._timer.cancel()
        if self.shoe is not None:
            await self.shoe.stop()
        if self.sim is not None:
            self.sim.stop()
        if self.panel is not None:
            self.panel.close()
        if self.camera is not None:
            await asyncio.to_thread(self.camera.stop)

    # ------------------------------------------------------------------------------------------ the fold

    def _step(self, state: TableState, record: dict[str, Any]) -> tuple[TableState, Effects]:
        return step(state, record)

    def _picture(self, state: TableState) -> dict[str, Any]:
        pic = picture(state, self._pictured)
        self._pictured = (state, pic)
        return pic

    def _written(self) -> None:
        self._restart_timer()

    def _write(self, batch: Batch) -> None:
        # The pit's watch folds each record once it is journaled, as a replay of the journal would.
        before, staged, t = batch.base, list(batch.staged), self.clock()
        super()._write(batch)
        for record, state, effects in staged:   # (a failing watch logs and stops itself: never the table)
            self.watch.add(t, record, before, state, effects)
            before = state

    # ------------------------------------------------------------------------------------------ commands

    def _check_role(self, role: Role, command: str, args: dict[str, Any]) -> Command:
        spec = super()._check_role(role, command, args)
        if role.kind == "spot":
            spot = parse_spot_actor(str(args.get("actor", ""))) if command == "decision" else \
                args.get("spot", role.spot)  # a command naming no spot (status) is for the key's own spot
            if command == "decision" and "actor" not in args:
                spot = role.spot
            if spot != role.spot:
                raise CommandRefused(f"{role} may act only for spot {role.spot}")
        return spec

    def _journal(self, batch: Batch, records: list[dict[str, Any]]) -> dict[str, Any]:
        for record in records:
            batch.add(record)
        return {"ok": True, "result": {"records": len(batch.staged)}}

    def _game(self, batch: Batch, role: Role, event: Any, **extra: Any) -> dict[str, Any]:
        return self._journal(batch, [Game(event.to_json(), str(role), **extra).to_json()])

    @staticmethod
    def _unpaused(batch: Batch) -> TableState:
        """The state, unless a dealer alert pauses the round (then only resolve, void, shuffle and manual_entry)."""
        state: TableState = batch.state
        if state.paused:
            raise CommandRefused(f"the round is paused by a dealer alert: resolve alert {state.alerts[0].id} first")
        return state

    @command("open_bets", roles=DEALER_ONLY, help="open the next round's betting (closing by itself after "
                                                  "betting_seconds, when set)")
    def _open_bets(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        state = self._unpaused(batch)
        stopped = self._floor_refusal()
        if stopped:
            raise CommandRefused(stopped)
        if state.shoe.check_due:
            raise CommandRefused("the shoe was swapped or reset: deck check it (shuffle) before the next round")
        closes = self.clock() + self.config.betting_seconds if self.config.betting_seconds else None
        return self._game(batch, role, OpenBets(), closes_at=closes)

    @command("close_bets", roles=DEALER_ONLY, help="close the betting")
    def _close_bets(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        self._unpaused(batch)
        return self._game(batch, role, CloseBets())

    @command("settle", roles=DEALER_ONLY, help="settle the round: every bet paid or taken")
    def _settle(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        self._unpaused(batch)
        return self._game(batch, role, Settle())

    @command("void", roles=DEALER_ONLY, help="void the round, every bet returned (reason)")
    def _void(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        return self._game(batch, role, VoidRound(_text(args, "reason")))

    @command("place_bet", roles=BY_SPOT, help="set a box's stake at a spot (spot, box, amount)")
    def _place_bet(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        self._unpaused(batch)
        return self._game(batch, role, PlaceBet(_int(args, "spot"), _text(args, "box"), _int(args, "amount")))

    @command("remove_bet", roles=BY_SPOT, help="take a box's stake down (spot, box, amount)")
    def _remove_bet(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        self._unpaused(batch)
        return self._game(batch, role, RemoveBet(_int(args, "spot"), _text(args, "box"), _int(args, "amount")))

    @command("decision", roles=BY_SPOT, help="a hand's decision (actor, action, amount, hand)")
    def _decision(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        self._unpaused(batch)
        actor = str(args.get("actor") or (f"spot:{role.spot}" if role.kind == "spot" else ""))
        if not actor:
            raise CommandRefused("a decision names its actor (spot:N or dealer)")
        return self._game(batch, role, Decision(actor, _text(args, "action"), _int(args, "amount", 0),
                                                _int(args, "hand", 0)))

    @command("card", roles=DEALER_ONLY, help="a card entered by hand (card, target): at a table with no shoe, or "
                                             "while manual entry is on")
    def _card(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        from controller.cards import parse_card

        state = self._unpaused(batch)
        if self.config.shoe.port != "none" and not state.shoe.manual:
            raise CommandRefused("this table reads its cards from the shoe: manual card entry needs "
                                 "manual_entry on=true, which the dealer may switch on while the shoe is down")
        try:
            card = parse_card(args["card"])
        except ValueError as exc:
            raise CommandRefused(str(exc)) from None
        return self._game(batch, role, CardDealt(card, "manual", args.get("target")))

    @command("manual_entry", roles=DEALER_ONLY, help="switch manual card entry on (while the shoe is down) or off "
                                                     "(once it is up again)")
    def _manual_entry_command(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        return self._journal(batch, [self._manual_entry(batch.state, args, str(role))])

    @command("resolve", roles=DEALER_ONLY, help="resolve a dealer alert by one of its options (alert, action, "
                                                "reason; card for reassign)")
    def _resolve(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        return self._journal(batch, self._resolution(batch.state, role, args))

    @command("shuffle", roles=DEALER_ONLY, help="shuffle (the simulated shuffler; a real one reports by itself)")
    def _shuffle_command(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        return self._shuffle(batch, role)

    def _manual_entry(self, state: TableState, args: dict[str, Any], via: str) -> dict[str, Any]:
        """Switch manual card entry on (only while the shoe is down: a reading shoe is the only source of cards)
        or off (only once the shoe is up again: the table is not left with no way to take a card)."""
        value = args.get("on")   # JSON's true/false, or the words (`croupier command manual_entry on=true` sends text)
        if value is True or value == "true":
            on = True
        elif value is False or value == "false":
            on = False
        else:
            raise TypeError("on must be true or false")
        if self.config.shoe.port == "none":
            raise CommandRefused("this table has no shoe: its cards are always entered by hand")
        if on == state.shoe.manual:
            raise CommandRefused(f"manual card entry is already {'on' if on else 'off'}")
        if on and state.shoe.link:
            raise CommandRefused("the shoe is up and reads the cards: manual card entry is only for while it is down")
        if not on and not state.shoe.link:
            raise CommandRefused("the shoe is still down: manual card entry stays on until it is up again")
        return ManualEntry(on, via).to_json()

    def _resolution(self, state: TableState, role: Role, args: dict[str, Any]) -> list[dict[str, Any]]:
        alert_id = _int(args, "alert")
        alert = next((a for a in state.alerts if a.id == alert_id), None)
        if alert is None:
            raise CommandRefused(f"no open alert {alert_id}")
        action = _text(args, "action")
        if action not in alert.options:
            raise CommandRefused(f"alert {alert_id} is resolved by {', '.join(alert.options)}, not {action!r}")
        resolve = Resolve(alert_id, action, str(role), str(args.get("reason", "")))
        more: list[dict[str, Any]] = []
        if action == "reassign":
            resolve, more = self._reassign(state, role, alert, resolve, args.get("card"))
        records = [resolve.to_json(), *more]
        if action == "void":
            records.append(Game(VoidRound(str(args.get("reason") or alert.text)).to_json(), str(role)).to_json())
        return records

    def _reassign(self, state: TableState, role: Role, alert: Any, record: Resolve, dealt: Any
                  ) -> tuple[Resolve, list[dict[str, Any]]]:
        """Complete a camera alert's `reassign` record with the correction (the dealt card the dealer names, or
        the one the camera tells; a swap when the camera's card was dealt face up elsewhere), and confirm the
        other camera alerts the corrected round now agrees with: the card that traded places with this one is
        the usual one. When the camera sees every card dealt to the zone there and the game's next card is due
        face up to it, the shoe missed a card the camera saw: it is dealt as the camera saw it. Raises
        CommandRefused when it cannot be done. Only face-up cards take part, so neither a refusal nor its
        reason can tell a face-down card."""
        from controller.camera import cross_check, layout, reassignment
        from controller.cards import parse_card

        snapshot = self.game.snapshot(state.game)
        face_up = {c for _, c, up in layout(snapshot) if up}
        try:
            pair: tuple[str, str] | None
            if dealt is not None:
                named = (str(parse_card(str(dealt))), str(alert.card))
                if named[0] not in face_up:
                    raise ValueError(f"card={named[0]}: name a card dealt face up in this round")
                pair = named
            else:
                pair = reassignment(snapshot, state.camera, str(alert.card), str(alert.zone))
            if pair is None:
                return self._deal_seen(state, alert, record, face_up)
            record = replace(record, reassign=pair, swap=pair[1] in face_up)
            after, _ = step(state, record)
        except (ValueError, IllegalEvent) as exc:
            raise CommandRefused(f"reassign: {getattr(exc, 'reason', exc)}") from None
        game = self.game.snapshot(after.game)
        return record, [Resolve(a.id, "confirm", str(role), f"agrees with the cards after alert {alert.id} was "
                                "reassigned").to_json()
                        for a in after.alerts if a.kind == "camera" and a.zone is not None
                        and cross_check(game, after.last_round, {"kind": "card_appeared", "card": a.card,
                                                                  "zone": a.zone, "certain": True}) is None]

    def _deal_seen(self, state: TableState, alert: Any, record: Resolve, face_up: set[str]
                   ) -> tuple[Resolve, list[dict[str, Any]]]:
        """The camera's card, which the shoe did not read, dealt where the game's next card is due face up."""
        from controller.camera import zone_of
        from controller.cards import parse_card

        exp = self.game.expected_next(state.game)
        if exp.card_to is None or zone_of(exp.card_to) != alert.zone or exp.face_up is False or alert.card in face_up:
            raise ValueError(f"the camera sees every card dealt to {alert.zone} there, and no card is due there "
                             f"face up: {alert.card} is one too many (confirm or void)")
        record = replace(record, dealt=alert.card)   # for recall: the camera's card, dealt
        deal = Game(CardDealt(parse_card(str(alert.card)), "camera").to_json(), "camera")
        try:
            step(step(state, record)[0], deal)
        except IllegalEvent:  # the game's reason is left out: it may speak of a face-down card
            raise ValueError(f"{alert.card} cannot be dealt to {alert.zone} now") from None
        return record, [deal.to_json()]

    def _status_view(self, role: Role) -> str:
        return "dealer" if role.kind != "spot" else "public"

    # ------------------------------------------------------------------------------------------ the floor

    def _floor_lost(self, batch: Batch, reason: str, refused: bool) -> None:
        # between rounds, or as the next round is refused: an alert would pause a round in play, which must finish
        between = batch.state.game_spec.expected_next(batch.state.game).phase in (Waiting.IDLE, Waiting.OVER)
        if not any(a.kind == "floor" for a in batch.state.alerts) and (refused or between):
            self._alert(batch, "floor", reason, None, ("confirm",))

    def _floor_back(self, batch: Batch) -> None:
        for alert in batch.state.alerts:
            if alert.kind == "floor":
                log.warning("the floor is back: play resumes")
                batch.add(Resolve(alert.id, "confirm", "ops:floor", "the floor is back").to_json())

    # ------------------------------------------------------------------------------------------ camera

    async def _start_camera(self) -> None:
        """The camera witness (controller/camera.py): frames read in a thread of their own, each card the
        tracker makes sure of journaled as `seen` and checked against the cards the shoe dealt."""
        cfg = self.config.camera
        if not cfg.on:
            return
        from controller.camera import CameraWitness, zones_for
        from vision.recognise import Recogniser
        from vision.tracker import TableWatcher, Tracker

        on_frame = None
        if cfg.source == "sim":
            from controller.rng import SeededRng
            from drivers.camera.sim import SimulatedCamera
            from vision.geometry import TableGeometry

            spots = int(getattr(self.config.rules, "spots", 5))
            seed = self.config.shoe.seed
            camera: SimulatedCamera | OpenCVCamera
            camera = self.sim_camera = SimulatedCamera(
                zones=zones_for(self.game.snapshot(self.game.new_table(self.config.rules)), spots),
                rng=SeededRng(seed if seed is not None else 0).numpy())  # sensor noise: simulation only
            # The simulated camera's homography is known: no calibration step, the zones are the table's.
            geometry = TableGeometry(camera.calibration(), camera.zones)
            on_frame = self._lay_out_sim_table
        else:
            from drivers.camera.capture import OpenCVCamera
            from vision.geometry import geometry_from_config, load_config

            assert cfg.config is not None  # the config refuses a real camera without its calibration
            geometry = geometry_from_config(load_config(cfg.config))
            camera = OpenCVCamera(cfg.source)
        from controller.camera import ReadingWatcher
        from vision.enrol import PlayCollector, deck_dir, load_enrolled

        # The house's enrolled deck, when `croupier vision enrol` wrote one beside the journal (and it was not
        # refused); the cards the shoe deals and the camera sees are kept there to enrol from play.
        deck = deck_dir(self.config)
        # The reader flags a card seen more often than the shoe holds it (never dealt twice); pai gow's 53rd card,
        # the joker, is the only joker any game here deals.
        recogniser = Recogniser(enrolled=await asyncio.to_thread(load_enrolled, deck), decks=self._shoe_decks(),
                                jokers=self.game.name == "pai_gow")
        self.play_corners = PlayCollector(deck)
        watcher = ReadingWatcher(TableWatcher(recogniser, geometry, Tracker(stable_frames=cfg.stable_frames,
                                                                            min_confidence=cfg.min_confidence)))
        await self._submit(lambda batch: batch.add(CameraStarted(cfg.source, recogniser.model_id).to_json()))
        loop = asyncio.get_running_loop()
        self.camera = CameraWitness(camera, watcher, lambda ev: loop.call_soon_threadsafe(self._camera_arrived, ev),
                                    cfg.fps, on_frame,
                                    lambda reason: loop.call_soon_threadsafe(self._camera_status, reason))
        self.camera.start()

    def _lay_out_sim_table(self) -> None:
        """Before each simulated frame: the cards lie where the game dealt them, but for the ones in
        `sim_misplaced` (a misdeal drill)."""
        from controller.camera import sim_layout

        state = self.state
        if state is not None and self.sim_camera is not None:
            self.sim_camera.show(sim_layout(self.game.snapshot(state.game), self.sim_camera.zones,
                                            dict(self.sim_misplaced)))

    def _camera_status(self, reason: str | None) -> None:
        record = CameraDown(reason) if reason else CameraUp()
        self._post(lambda batch: batch.add(record.to_json()))

    def _camera_arrived(self, ev: Any) -> None:
        self._post(lambda batch: self._camera_event(batch, ev))

    def _camera_event(self, batch: Batch, ev: Any) -> None:
        from controller.camera import cross_check, layout, shoe_label

        seen = ev.to_json()
        # model: which reader named the card, the base readers' digest or the enrolled deck's
        batch.add(Seen(seen, getattr(ev, "model", None) or None).to_json())
        state = batch.state
        game = self.game.snapshot(state.game)
        text = cross_check(game, state.last_round, seen)
        if text is None and getattr(ev, "crops", None) is not None and self.play_corners is not None:
            label = shoe_label(game, state.last_round, seen, state.camera)
            if label is not None:
                self._keep_corners(label, ev.crops)
        card, zone = seen.get("card"), seen.get("zone")
        if text is not None and not any(a.kind == "camera" and a.card == card for a in state.alerts):
            # A card lying face up where it was dealt face down is no misread: only confirm or void.
            misread = state.round_log is not None and not any(z == zone and c == card for z, c, _ in layout(game))
            options = ("confirm", "reassign", "void") if misread else ("confirm", "void")
            self._alert(batch, "camera", text, card, options, zone=zone)

    def _keep_corners(self, card: str, crops: Any) -> None:
        """A card the shoe dealt and the camera saw, kept as an example of the house's deck (enrolment from play);
        a full disk must not stop the table."""
        from controller.cards import parse_card

        if self.play_corners is None:
            return
        try:
            self.play_corners.add(parse_card(card), crops)
        except (OSError, ValueError) as exc:
            log.warning("enrolment from play: could not keep the corners of %s: %s", card, exc)

    # ------------------------------------------------------------------------------------------ panel

    def _start_panel(self) -> None:
        self.panel = self._open_panel(self.config.panel, self.config.panel_sim, self._panel_event)

    def _panel_event(self, ev: Any) -> None:
        from drivers.panel import ButtonHeld, ButtonPressed, DoorClosed, DoorOpened

        asyncio.get_running_loop().create_task(self._panel_action(ev, ButtonPressed, ButtonHeld, DoorOpened,
                                                                   DoorClosed))

    async def _panel_action(self, ev: Any, pressed: type[ButtonPressed], held: type[ButtonHeld],
                            opened: type[DoorOpened], closed: type[DoorClosed]) -> None:
        assert self.state is not None
        if isinstance(ev, (opened, closed)):
            record = Door(ev.name, isinstance(ev, opened)).to_json()
            await self._submit(lambda batch: batch.add(record))
            return
        exp = self.game.expected_next(self.state.game)
        if isinstance(ev, held) and ev.name == "void":
            await self.command(DEALER, "void", {"reason": "void button held"})
        elif not isinstance(ev, pressed):
            return
        elif ev.spot is not None and exp.phase == Waiting.BETTING:
            box = self.game.boxes[0] if self.game.boxes else "main"
            limit = getattr(self.config.rules, "limits", {}).get(box)
            await self.command(DEALER, "place_bet", {"spot": ev.spot, "box": box, "amount": limit.min if limit else 1})
        elif ev.name == "confirm" and self.state.alerts:
            alert = self.state.alerts[0]
            await self.command(DEALER, "resolve", {"alert": alert.id, "action": alert.options[0]})
        elif ev.name == "next":
            step_for = {Waiting.IDLE: "open_bets", Waiting.BETTING: "close_bets",
                        Waiting.SETTLING: "settle"}.get(exp.phase)
            if step_for:
                await self.command(DEALER, step_for, {})
        elif ev.name == "shuffle":
            await self.command(DEALER, "shuffle", {})
        elif ev.name == "deal" and self.sim is not None:
            self.sim.deal()

    def _show(self, effects: Effects) -> None:
        panel = self.panel
        if panel is None or self.state is None:
            return
        from drivers.panel import PanelError

        try:
            for eff in effects:
                self._show_one(panel, eff)
            exp = self.game.expected_next(self.state.game)
            spot = parse_spot_actor(exp.actor or "")
            if spot is not None:
                panel.light_spot(spot, "to_act")
        except PanelError as exc:  # a lamp or display the pin map lacks: note it, never stop the table
            log.info("panel: %s", exc)

    def _bets(self) -> list[dict[str, Any]]:
        assert self.state is not None
        return self.game.snapshot(self.state.game)["bets"]

    def _show_one(self, panel: Panel, eff: Effect) -> None:
        spots = getattr(self.config.rules, "spots", 0)
        if isinstance(eff, BetsOpened):
            for s in range(1, spots + 1):
                panel.light_spot(s, "betting_open")
                panel.show_spot(s, None)
        elif isinstance(eff, StakeChanged):
            # the state's own bets: the views are published once per group commit, after its effects are shown
            total = sum(b["amount"] for b in self._bets() if b["spot"] == eff.spot)
            panel.show_spot(eff.spot, total or None)
            panel.light_spot(eff.spot, "bet_placed" if total else "betting_open")
        elif isinstance(eff, BetsClosed):
            betting = {b["spot"] for b in self._bets()}
            for s in range(1, spots + 1):
                panel.light_spot(s, "bet_placed" if s in betting else "off")
        elif isinstance(eff, RoundSettled):
            for s in sorted({r.spot for r in eff.settlement.results}):
                net = sum(r.net for r in eff.settlement.for_spot(s))
                panel.light_spot(s, "win" if net > 0 else "push" if net == 0 else "lose")
            if any(r.net > 0 for r in eff.settlement.results):
                panel.flash_win()
        elif isinstance(eff, AlertRaised):
            panel.flash_tilt(True)
        elif isinstance(eff, AlertResolved) and self.state is not None and not self.state.alerts:
            panel.flash_tilt(False)

    # ------------------------------------------------------------------------------------------ timers

    def _restart_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self.state is None or self.state.bets_close_at is None:
            return
        delay = max(0.0, self.state.bets_close_at - self.clock())
        loop = asyncio.get_running_loop()
        self._timer = loop.call_later(delay, lambda: loop.create_task(self._close_by_timer()))

    async def _close_by_timer(self) -> None:
        def close(batch: Batch) -> None:
            if self.game.expected_next(batch.state.game).phase != Waiting.BETTING or batch.state.paused:
                return
            try:
                batch.add(Game(CloseBets().to_json(), "timer").to_json())
            except IllegalEvent as exc:  # e.g. no bets: bets stay open until the dealer decides
                log.info("bets stay open: %s", exc.reason)

        await self._submit(close)

    async def _ready(self) -> str:
        try:
            await asyncio.wait_for(self.shoe_ready.wait(), 15)
        except asyncio.TimeoutError:
            notify("STATUS=waiting for the card shoe")
            await self.shoe_ready.wait()
        return f"table {self.config.table_id}: {self.game.title}"
