"""The table's shoe: its driver started (or simulated), and each of its events journaled as the table's records."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from controller.bus import Role
from controller.config import TableConfig
from controller.games.base import CardDealt, GameSpec, IllegalEvent, NewShoe
from controller.runtime import Batch, Runtime
from controller.tablerecords import (
    AlertRecord, CounterReset, DeckCheck, Game, ShoeFlags, ShoeLink, ShoeShuffle, SimOrder,
)
from controller.tablestate import TableState

if TYPE_CHECKING:
    from drivers.shoe import AsyncShoe, ShoeSim

__all__ = ["ShoeTable"]

log = logging.getLogger("croupier.table")


def _shoe_records_for_deck_check(ev: Any) -> DeckCheck:
    return DeckCheck(bool(ev.complete), ev.decks, tuple(str(c) for c in ev.missing), tuple(str(c) for c in ev.extra),
                     bool(ev.truncated))


class ShoeTable(Runtime):
    """The shoe's part of a table (controller/table.py's Table, which sets these attributes)."""

    config: TableConfig
    game: GameSpec[Any]
    state: TableState | None
    shoe: AsyncShoe | None
    sim: ShoeSim | None
    sim_link: str | None
    shoe_ready: asyncio.Event
    _accepts_new_shoe: bool
    _identified: bool
    _rebased: tuple[int, int] | None

    def _sim_order(self, shoe_seed: int, decks: int, out: tuple[str, ...] = ()) -> list[Any]:
        """The simulated shuffler's order: `decks` decks but the cards `out` (on the table while it shuffles)."""
        from controller.cards import Composition, parse_card
        from controller.rng import SeededRng

        return SeededRng(shoe_seed).shuffled(Composition.of(decks).remove_all(parse_card(c) for c in out).cards())

    def _on_table(self, state: TableState) -> list[Any]:
        """The cards a new shoe would leave out now: those lying on the table when the game reshuffles its
        discards in the middle of a round (pontoon's pack reaching its burned card); none between rounds."""
        from controller.cards import Composition

        try:
            probe, _ = self.game.apply(state.game, NewShoe(self._shoe_decks(), self._cut()))
        except IllegalEvent:
            return []
        left = getattr(getattr(probe, "shoe", None), "left", None)
        if not isinstance(left, Composition):
            return []
        full = Composition.of(self._shoe_decks())
        return [c for i, c in enumerate(Composition.of(1).cards()) for _ in range(full.counts[i] - left.counts[i])]

    async def _start_shoe(self) -> None:
        cfg = self.config.shoe
        if cfg.port == "none":
            self.shoe_ready.set()
            return
        from drivers.shoe import AsyncShoe

        assert self.state is not None
        url = cfg.port
        if cfg.simulated:
            from drivers.shoe import ShoeSim

            decks = self._shoe_decks()
            seed, base = self.state.shoe_sim
            order = self._sim_order(seed, decks, self.state.shoe_sim_out) if seed is not None else []
            drawn = self.state.shoe.draw_of(1) - base if seed is not None else 0
            self.sim = ShoeSim(decks=decks, cut=self._cut(), boot=self.state.meters.power_ups)
            self.sim.resume(order, max(0, min(drawn, len(order))), self.state.shoe.draw_of(1))
            url = self.sim.open_pty(self.sim_link)
            self.sim.start()
            if seed is not None and self.state.shoe.shuffling:
                # The power went while the simulated shuffler shuffled: its new order is journaled, its deck
                # check is not. It shuffles that order again, as a real shuffler restarts its cycle.
                self.sim.shuffle(order, decks=decks)
        self.shoe = AsyncShoe(url, last_draws=dict(self.state.shoe.last_draw), on_event=self._shoe_arrived)
        self.shoe.start()

    def _shoe_decks(self) -> int:
        return int(getattr(self.config.rules, "decks", self.config.shoe.decks))

    def _cut(self) -> int | None:
        decks = self._shoe_decks()
        return self.config.shoe.cut if self.config.shoe.cut is not None else (52 * decks * 3) // 4 if decks > 1 else None

    def _shoe_arrived(self, ev: Any) -> None:
        # Called on the loop for each event, in the order the shoe sent them, and queued for the writer without
        # waiting for its commit: cards drawn in quick succession go into one group commit. A bad event is
        # logged and does not stop the shoe.
        self._post(lambda batch: self._shoe_event(batch, ev))

    def _shoe_event(self, batch: Batch, ev: Any) -> None:
        from drivers.shoe import Anomaly, CardDrawn, CounterReset, DeckCheck, DeviceError, LinkDown, LinkUp, Shuffle
        from drivers.shoe import ShoeState as DeviceState

        rebased, self._rebased = self._rebased, None
        if isinstance(ev, CardDrawn):
            self._card_drawn(batch, ev)
        elif isinstance(ev, CounterReset):
            if rebased != (ev.shoe_id, ev.draws):   # else the link says again what the serial told at link-up
                self._counter_reset(batch, ev)
        elif isinstance(ev, LinkUp):
            self.shoe_ready.set()
            ident, known = ev.identity, batch.state.shoe.serial
            batch.add(ShoeLink(True, str(ident), ident.serial).to_json())
            if not self._identified and known is not None and ident.serial != known:
                # Another shoe since the table last ran: the link, new to both, cannot tell; the journal can.
                self._counter_reset(batch, CounterReset(ident.shoe_id, ident.draws, f"shoe {ident.shoe_id} is another "
                                                        f"device than when the table last ran: serial {known} -> "
                                                        f"{ident.serial}, draws {ident.draws}"))
                self._rebased = (ident.shoe_id, ident.draws)
            self._identified = True
        elif isinstance(ev, LinkDown):
            if batch.state.shoe.link or batch.state.shoe.down != ev.reason:
                batch.add(ShoeLink(False, reason=ev.reason).to_json())
        elif isinstance(ev, DeviceState):
            flags = sorted(f.name for f in type(ev.flags) if f in ev.flags and f.name)
            if tuple(flags) != batch.state.shoe.flags:
                was_empty = "EMPTY" in batch.state.shoe.flags
                batch.add(ShoeFlags(tuple(flags)).to_json())
                card_to = self.game.expected_next(batch.state.game).card_to
                if "EMPTY" in flags and not was_empty and card_to is not None:
                    self._alert(batch, "shoe", f"the shoe is empty and a card is due to {card_to}: load cards "
                                "and confirm, or void the round", None, ("confirm", "void"))
        elif isinstance(ev, Shuffle):
            batch.add(ShoeShuffle(ev.started).to_json())
        elif isinstance(ev, DeckCheck):
            self._deck_checked(batch, ev)
        elif isinstance(ev, (Anomaly, DeviceError)):
            text = f"shoe: {getattr(ev, 'kind', 'error')} {getattr(ev, 'detail', '') or getattr(ev, 'text', '')}"
            self._alert(batch, "shoe", text.strip(), None, ("confirm", "void"))

    def _alert(self, batch: Batch, kind: str, text: str, card: str | None, options: tuple[str, ...],
               draw: list[int] | None = None, zone: str | None = None) -> None:
        alert: dict[str, Any] = {"id": batch.state.next_alert, "kind": kind, "text": text, "card": card,
                                 "options": list(options), **({"zone": zone} if zone is not None else {})}
        log.warning("dealer alert: %s", text)
        batch.add(AlertRecord(alert, (draw[0], draw[1]) if draw else None).to_json())

    def _counter_reset(self, batch: Batch, ev: Any) -> None:
        """The shoe was swapped or reset: its cards are not the shoe the game counts. Its draws count afresh (so
        its cards are seen, not taken for draws already journaled), a dealer alert pauses the table, and no card of
        it is dealt before a deck check: void the round in play, or have the new shoe deck checked."""
        state = batch.state
        batch.add(CounterReset(ev.shoe_id, ev.draws, ev.detail).to_json())
        in_play = state.round_log is not None
        options = ("void", "deck_check") if in_play else ("deck_check",)
        self._alert(batch, "shoe_reset", f"the shoe was swapped or reset ({ev.detail}): its cards are not the "
                    "shoe counted so far. " + ("Void the round in play, or deck check" if in_play else "Deck check")
                    + " the new shoe (shuffle it) before any of its cards is dealt", None, options)

    def _card_drawn(self, batch: Batch, ev: Any) -> None:
        state = batch.state
        if ev.draw <= state.shoe.draw_of(ev.shoe_id):
            return  # journaled before a restart: the driver replays what it could not know we kept
        draw = [ev.shoe_id, ev.draw]
        if state.paused:
            self._alert(batch, "misdeal", f"{ev.card} drawn while the round is paused", str(ev.card),
                        ("discard", "void"), draw)
            return
        if state.shoe.check_due:
            self._alert(batch, "misdeal", f"{ev.card} drawn from a shoe not deck checked since it was swapped or "
                        "reset", str(ev.card), ("discard", "void"), draw)
            return
        try:
            batch.add(Game(CardDealt(ev.card, "shoe").to_json(), "shoe", (ev.shoe_id, ev.draw)).to_json())
        except IllegalEvent as exc:
            self._alert(batch, "misdeal", f"{ev.card} drawn: {exc.reason}", str(ev.card), ("discard", "void"), draw)

    def _deck_checked(self, batch: Batch, ev: Any) -> None:
        record = _shoe_records_for_deck_check(ev)
        on_table = sorted(str(c) for c in self._on_table(batch.state))
        missing_cards = sorted(str(c) for c in ev.missing)
        if on_table and not ev.complete and not ev.extra and not ev.truncated and missing_cards == on_table:
            record = replace(record, short_of_table=True)   # the discards reshuffled in mid-round: they stay out
        batch.add(record.to_json())
        if not ev.complete and not record.short_of_table:
            # Cards on the table are not counted as missing (and are not named: some lie face down).
            rest = list(missing_cards)
            for card in on_table:
                if card in rest:
                    rest.remove(card)
            missing = " ".join(rest)
            extra = " ".join(str(c) for c in ev.extra)
            text = "deck check failed:" + (f" missing {missing}" if missing else "") + (f" extra {extra}" if extra else "")
            if on_table:
                text += f" (besides the {len(on_table)} card(s) on the table)"
            self._alert(batch, "deck_check", text, None, ("confirm",))
        elif self._accepts_new_shoe:
            try:
                batch.add(Game(NewShoe(ev.decks, self._cut()).to_json(), "shuffler").to_json())
            except IllegalEvent as exc:
                self._alert(batch, "deck_check", f"new shoe refused: {exc.reason}", None, ("confirm",))

    def _shuffle(self, batch: Batch, role: Role) -> dict[str, Any]:
        """The dealer asks for a shuffle: the simulated shuffler shuffles (a real one reports by itself)."""
        if self.sim is None:
            return {"ok": True, "result": "shuffle on the shuffler; the deck check starts the new shoe"}
        from controller.rng import system_rng

        state = batch.state
        seed = self.config.shoe.seed
        shoe_seed = (seed * 1_000_003 + state.sim_shuffles + 1) if seed is not None else system_rng().randbits(63)
        decks = self._shoe_decks()
        # A reshuffle in mid-round (pontoon's discards) shuffles what is not on the table, as a dealer does: a
        # full shoe would deal again the cards lying there, each one "a card this shoe cannot hold".
        out = tuple(str(c) for c in self._on_table(state))
        batch.add(SimOrder(shoe_seed, (1, state.shoe.draw_of(1)), str(role), out or None).to_json())
        sim = self.sim

        def shuffle() -> None:  # after the order is journaled, so a restart deals the same shoe
            sim.cut = self._cut()
            sim.shuffle(self._sim_order(shoe_seed, decks, out), decks=decks)

        batch.after.append(shuffle)
        return {"ok": True, "result": "shuffling"}
