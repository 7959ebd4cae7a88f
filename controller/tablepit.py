"""The pit's commands at a table: rated play, paperwork slips, dealers signing in, and the pit's view (controller/table.py's Table takes them).

Ratings and slips are journaled like every command (controller/rating.py and controller/paperwork.py fold them);
the `pit` answer is the pit's live watch (controller/pitwatch.py). None of it reaches a screen-facing view.
"""

from __future__ import annotations

from typing import Any, Callable

from controller.bus import Role
from controller.runtime import Batch, CommandRefused, command
from controller.tablerecords import DealerSignIn

__all__ = ["TablePit"]

PIT = ("dealer", "pit")        # rated play, dealers signing in
BOOKS = ("dealer", "pit", "ops")  # paperwork slips


class TablePit:
    """The pit's part of controller/table.py's Table (which sets the attributes it reads)."""

    config: Any
    game: Any
    watch: Any
    clock: Callable[[], float]
    _warming: dict[str, Any] | None
    _journal: Callable[[Batch, list[dict[str, Any]]], dict[str, Any]]

    @command("dealer_sign_in", roles=PIT, help="a dealer signs in at the table (dealer: the id the pit knows them "
                                               "by): the analytics count the rounds dealt to them")
    def _dealer_sign_in(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        dealer = args.get("dealer")
        if type(dealer) is int and dealer >= 0:
            dealer = str(dealer)   # `croupier command` sends digits as a number
        if not isinstance(dealer, str) or not 1 <= len(dealer) <= 32 or not dealer.isprintable() or \
                dealer != dealer.strip() or dealer.startswith("("):
            raise ValueError("dealer must be the dealer's id: 1 to 32 printable characters")
        return self._journal(batch, [DealerSignIn(dealer).to_json()])

    @command("dealer_sign_out", roles=PIT, help="the dealer signed in at the table signs out")
    def _dealer_sign_out(self, batch: Batch, role: Role, args: dict[str, Any]) -> dict[str, Any]:
        signed = self.watch.tally.dealer != "(not signed in)"
        for record, _, _ in batch.staged:   # a sign-in or out earlier in this group commit
            if record.get("kind") == DealerSignIn.KIND:
                signed = record.get("dealer") is not None
        if not signed:
            raise CommandRefused("no dealer is signed in")
        return self._journal(batch, [DealerSignIn(None).to_json()])

    @command("rating_start", roles=PIT, named=True, help="rate a player at a spot (spot, player: the player card "
                                                         "number)")
    @command("rating_stop", roles=PIT, named=True, help="end the rated session at a spot (spot)")
    @command("rating_move", roles=PIT, named=True, help="the rated player moved (from, to): the same session goes "
                                                        "on there")
    @command("slip_enter", roles=BOOKS, named=True, help="enter a paperwork slip (form: opener, closer, fill, credit, "
                                                         "drop; chips or amount; day)")
    @command("slip_confirm", roles=BOOKS, named=True, help="confirm a slip another role entered (slip)")
    @command("pit", roles=("pit",), named=True, read_only=True,
             help="the pit's view: ratings, paperwork, advantage-play alerts with their evidence, the shift's figures")
    def _book(self, batch: Batch, role: Role, command: str, args: dict[str, Any]) -> dict[str, Any]:
        """The pit's commands: rated play, paperwork, and the pit's view of both (also while an alert pauses play)."""
        from controller import paperwork, rating

        state, now = batch.state, int(self.clock())
        if command in ("pit", "rating_start") and self._warming != state.rules:
            # The exact edges the theoretical win needs (seconds for blackjack's, more on a Pi): computed in a
            # thread of their own once someone is rated or the pit looks, never in the writer; a daemon, so a
            # stopping table does not wait for it.
            import threading

            self._warming = state.rules
            threading.Thread(target=rating.warm_edges, args=(self.game.name, state.rules, self.game.boxes),
                             name="croupier edges", daemon=True).start()
        if command == "pit":
            return {"ok": True, "result": self.watch.view(state, self.clock())}
        if command in rating.COMMANDS:
            spots = int(getattr(self.config.rules, "spots", 0) or 0)
            records = rating.rating_records(state.ratings, str(role), command, args, now, spots)
        else:
            # The gaming day when the slip names none: the pit's (from its day_start), not the calendar's, which
            # between midnight and the day's start is already the next day (the pit page showed no slips then).
            today = self.watch.tally.periods.at(now)[0]
            records = paperwork.slip_records(state.paperwork, str(role), command, args, now, today)
        for record in records:
            batch.add(record)
        return {"ok": True, "result": {"records": len(batch.staged), **({"slip": records[0]["slip"]}
                                                                         if "slip" in records[0] else {})}}
