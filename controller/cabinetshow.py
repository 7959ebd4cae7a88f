"""What a cabinet shows: reels, win, meters, lamps and its attract mode, from the effects of its records (controller/cabinet.py)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from controller.cabinetrecords import LockupRecord
from controller.cabinetstate import (
    CabinetState, Credited, DoorChanged, LinkChanged, LockupCleared, LockupRaised, PayoutDone, PayoutStarted,
    Picked, ProgressiveWon, Spun, play_blocked,
)
from controller.config import CabinetConfig
from controller.runtime import Batch, Runtime

__all__ = ["CabinetShow", "feature_meter"]

log = logging.getLogger("croupier.cabinet")


def feature_meter(state: CabinetState) -> tuple[int | str | None, int]:
    """What the feature display and the title's meter lamps show: (a number or text, lamps lit).

    The loss meter lights one lamp per loss in a row; the light-speed lamps (wired in pairs, one up each side
    of the cabinet) light to the level reached; the snowman fills one lamp per 25 snowflakes; otherwise the
    free spins (or re-spins) left light one lamp each."""
    slot = state.slot
    if slot.pending is not None:
        return "PIC", 0  # a pick waits (seven segments have no K)
    meters = slot.meters
    free = slot.free.remaining if slot.free else 0
    if "loss_meter" in meters:
        return (free or meters["loss_meter"]), meters["loss_meter"]
    if "light_speed" in meters:
        return meters["light_speed"], meters["light_speed"]
    if "snowman" in meters:
        return meters["snowman"], meters["snowman"] // 25
    if "piggy_bank" in meters:
        return meters["piggy_bank"], 0
    if "safe_clicks" in meters:
        return meters["safe_clicks"], meters["safe_clicks"]
    return (free or None), free


class CabinetShow(Runtime):
    """The showing part of a cabinet (controller/cabinet.py's Cabinet, which sets these attributes)."""

    config: CabinetConfig
    title: Any
    state: CabinetState | None
    panel: Any
    link: Any
    link_pool: int | None
    showing: bool
    shown: asyncio.Event
    attracting: asyncio.Event
    sas: Any
    _displayed_credits: int | None
    _displays: dict[str, Any]
    _attract_timer: asyncio.TimerHandle | None
    _link_kick: asyncio.Event

    def _tito_show(self, effects: tuple[Any, ...]) -> None:
        raise NotImplementedError  # controller/cabinettito.py

    @property
    def _live(self) -> CabinetState:
        """The state the cabinet runs on (there from start() on: nothing is shown before)."""
        assert self.state is not None
        return self.state

    def _lock(self, batch: Batch, kind: str, text: str) -> None:
        state: CabinetState = batch.state
        if any(x.kind == kind for x in state.lockups):
            return
        log.warning("lockup: %s", text)
        batch.add(LockupRecord({"id": state.next_lockup, "kind": kind, "text": text}).to_json())

    # ------------------------------------------------------------------------------------------ showing

    def _show(self, effects: tuple[Any, ...]) -> None:
        if self.sas is not None:
            self.sas.show(effects, self._live.seq)
        self._tito_show(effects)
        for eff in effects:
            if isinstance(eff, Spun):
                self._spun(eff)
            elif isinstance(eff, LockupCleared) and eff.lockup.kind == "reel_misindex" and self.panel is not None \
                    and self.panel.reels:
                last = next((e for e in reversed(self._live.recall) if e.get("kind") == "spin"), None)
                self._turn_reels(tuple(last["physical"]) if last else (0, 0, 0))
            elif isinstance(eff, LockupRaised):
                log.warning("cabinet %s locked: %s", self.ident, eff.lockup.text)
            elif isinstance(eff, (Picked, ProgressiveWon)) and self.panel is not None and self._live.last_win:
                self._flash_win()
            elif isinstance(eff, (Credited, PayoutStarted, PayoutDone, DoorChanged, LinkChanged)):
                pass  # the meters and outputs below say it
        if not self.showing:
            self._show_meters()

    def _spun(self, eff: Spun) -> None:
        if self.panel is not None:
            from drivers.panel import PanelError

            try:
                if eff.outcome.cost and any(o.name == "meter_coin_in" for o in self.panel.config.outputs):
                    self.panel.pulse_output("meter_coin_in", eff.outcome.cost)
            except PanelError as exc:
                log.info("panel: %s", exc)
        entry = next(e for e in reversed(self._live.recall) if e.get("game") == eff.game)
        self._displayed_credits = entry["credits_before"] - eff.outcome.cost
        self._turn_reels(eff.outcome.physical or (0, 0, 0))

    def _turn_reels(self, stops: tuple[int, ...]) -> None:
        self.showing = True
        self.shown.clear()
        self._show_meters()
        if self.panel is not None and self.panel.reels:
            self.panel.spin_reels(tuple(stops), self._reels_rest)
        else:
            rested: list[str | None] = [None, None, None]
            asyncio.get_running_loop().call_later(self.config.spin_seconds, self._reels_rest, rested)

    def _reels_rest(self, errors: list[str | None]) -> None:
        self.showing = False
        self._displayed_credits = None
        self.shown.set()
        bad = [e for e in errors if e]
        if bad:
            self._post(lambda batch: self._lock(batch, "reel_misindex", "; ".join(bad)))
        elif self._live.last_win and self.panel is not None:
            self._flash_win()
        self._show_meters()
        self._link_kick.set()

    def _flash_win(self) -> None:
        from drivers.panel import PanelError

        try:
            self.panel.flash_win()
        except PanelError:
            pass

    def _show_meters(self) -> None:
        if self.panel is None or self.state is None:
            return
        from drivers.panel import PanelError

        state = self._live
        d = self._displays
        credits = self._displayed_credits if self._displayed_credits is not None else state.credits
        win: int | str | None = None if self.showing else state.last_win or None
        if state.doors_open:
            win = "dOOr"
        elif state.lockups:
            win = state.lockups[0].display
            if state.lockups[0].credits:
                credits = state.lockups[0].credits
        elif state.payout is not None:
            win = state.owed
        elif state.progressive.pending_hit is not None:
            win = "JACPOt"
        elif state.progressive.mode == "link" and not state.progressive.up and not self.showing:
            win = "PrOG OFF"
        bet = "FrEE" if state.slot.free else state.bet.total
        shown, lamps = feature_meter(state)
        pool: int | str | None = None
        if state.progressive.mode == "standalone":
            pool = _dollars(state.progressive.pool * state.denomination)
        elif state.progressive.mode == "link" and self.link_pool is not None:
            pool = _dollars(self.link_pool)
        for meter, value in (("credit", credits), ("bet", bet), ("win", win), ("progressive", pool),
                             ("feature", shown)):
            try:
                self.panel.show(d[meter], value)
            except PanelError as exc:
                if "no display" not in str(exc):
                    self._show_overflow(d[meter], exc)
        try:
            self.panel.show_lamps(d["lamps"], lamps)
        except PanelError:
            pass
        self._button_lamps()

    def _show_overflow(self, display: str, exc: Exception) -> None:
        from drivers.panel import PanelError

        log.info("panel: %s", exc)  # a number too long for the display: dashes, never a wrong number
        chain = self.panel.config.displays
        digits = next((d.digits for d in chain.displays if d.name == display), 8) if chain else 8
        try:
            self.panel.show(display, "-" * digits)
        except PanelError:
            pass

    def _button_lamps(self) -> None:
        from drivers.panel import PanelError

        state = self._live
        playable = play_blocked(state) is None and not self.showing and state.slot.pending is None
        can_spin = playable and (state.slot.free is not None or state.credits >= state.bet.total)
        for lamp, on in (("spin", can_spin), ("max_bet", playable and state.credits >= self.title.max_bet.total),
                         ("bet_one", playable and state.slot.free is None), ("cash_out", playable and state.credits > 0)):
            try:
                self.panel.light(lamp, "on" if on else "off")
            except PanelError:
                pass

    # ------------------------------------------------------------------------------------------ attract mode

    def _restart_attract(self) -> None:
        if self.panel is None or not self.config.attract_seconds:
            return
        if self._attract_timer is not None:
            self._attract_timer.cancel()
        if self.attracting.is_set() and (self._live.credits or self._live.lockups or self._live.doors_open):
            self._attract_off()
        self._attract_timer = asyncio.get_running_loop().call_later(self.config.attract_seconds, self._attract_on)

    def _attract_on(self) -> None:
        state = self._live
        if state.credits or state.lockups or state.doors_open or state.payout or self.showing:
            return
        self.attracting.set()
        try:
            self.panel.attract(True)
        except Exception:  # noqa: BLE001 - a panel without lamps has nothing to attract with
            pass

    def _attract_off(self) -> None:
        self.attracting.clear()
        try:
            self.panel.attract(False)
        except Exception:  # noqa: BLE001
            pass
        self._button_lamps()


def _dollars(cents: int) -> str:
    return f"{cents // 100}.{cents % 100:02d}"
