"""Issue 43 at the table: a swapped or reset shoe, manual card entry, face-down cards in alert texts, the pontoon
simulation's reshuffle, bets under the minimum, and a shoe port that does not exist."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from controller.autoplay import Autoplay
from controller.bus import Role
from controller.cards import parse_card, shoe
from controller.games import game_names, get_game
from controller.games.base import CardDealt, CloseBets, IllegalEvent, NewShoe, OpenBets, PlaceBet, RulesError
from controller.journal import Journal
from controller.rng import SeededRng
from controller.table import Table
from controller.tablestate import new_state, picture, step
from controller.views import screen_views
from tests.table_helpers import step_until, table_config

DEALER = Role("dealer")


def run(coro: Any, timeout: float = 120) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))


def records_of(cfg: Any) -> list[dict[str, Any]]:
    with Journal(cfg.journal, cfg.table_id) as j:
        return [e.record for e in j.entries()]


# ------------------------------------------------------------------------------------------ point 10


def _game(state: Any, *events: Any) -> Any:
    for event in events:
        state, _ = step(state, {"kind": "game", "event": event.to_json(), "via": "test"})
    return state


def _pontoon_with_8c_face_down() -> Any:
    game = get_game("pontoon")
    state = new_state("pontoon-1", game, game.rules({}))
    return _game(state, NewShoe(1), CardDealt(parse_card("2D")), OpenBets(), PlaceBet(2, "main", 1), CloseBets(),
                 CardDealt(parse_card("8C")))   # spot 2's first card: face down


def test_an_alert_naming_a_face_down_card_is_withheld_from_the_screens() -> None:
    """Point 10: pontoon's "8C drawn: 8C cannot come from this shoe" while the 8C lay face down told the dealer
    screen (which faces the table) the hidden card. No screen view names it; the journal keeps the full text."""
    state = _pontoon_with_8c_face_down()
    snapshot = state.game_spec.snapshot(state.game)
    assert {"card": "8C", "up": False} in snapshot["spots"][0]["hands"][0]["cards"]
    text = "8C drawn: 8C cannot come from this shoe: every 8C of its 1 deck(s) is already out (a foreign card, or a misread)"
    state, _ = step(state, {"kind": "alert", "alert": {"id": 1, "kind": "misdeal", "text": text, "card": "8C",
                                                       "options": ["discard", "void"]}, "draw": [1, 3]})
    assert state.alerts[0].text == text   # the journal and the audit keep it
    views = screen_views(picture(state))
    alert = views["dealer"]["dealer_only"]["alerts"][0]
    assert alert == {"id": 1, "kind": "misdeal", "card": None, "options": ["discard", "void"],
                     "text": "the card just drawn cannot be dealt now (it is not named here: its name would tell a "
                             "card lying face down): set it aside, then discard it or void the round"}
    for view in views.values():
        assert "8C" not in json.dumps(view)
    # A card the table does not hide is still named.
    state, _ = step(state, {"kind": "alert", "alert": {"id": 2, "kind": "misdeal", "text": "KD drawn: no card "
                                                       "expected", "card": "KD", "options": ["discard", "void"]}})
    assert screen_views(picture(state))["dealer"]["dealer_only"]["alerts"][1]["text"] == "KD drawn: no card expected"


def test_a_withheld_alert_is_told_again_once_its_card_is_faced() -> None:
    """The screens' picture reuses what a record did not change: a withheld text is rebuilt whenever the cards
    lying face down may have changed, so the reused picture is always the fresh one, and a card turned up is
    named again."""
    from controller.games.base import Decision, Settle

    state = _pontoon_with_8c_face_down()
    state, _ = step(state, {"kind": "alert", "alert": {"id": 1, "kind": "misdeal", "text": "8C drawn: 8C cannot "
                                                       "come from this shoe", "card": "8C", "options": ["discard"]}})
    before = (state, picture(state))
    assert before[1]["dealer_only"]["alerts"][0]["card"] is None
    cards = iter(["3H", "4S", "5D"])
    while True:
        exp = state.game_spec.expected_next(state.game)
        if exp.card_to is not None:
            event: Any = CardDealt(parse_card(next(cards)))
        elif exp.phase == "deciding":
            event = Decision(exp.actor, "stand")
        elif exp.phase == "settling":
            event = Settle()
        else:
            break
        state = _game(state, event)
        pic = picture(state, before)
        assert pic == picture(state)
        before = (state, pic)
    assert picture(state)["dealer_only"]["alerts"][0] == {"id": 1, "kind": "misdeal", "card": "8C",
                                                          "options": ["discard"],
                                                          "text": "8C drawn: 8C cannot come from this shoe"}


def test_the_camera_list_does_not_name_a_face_down_card() -> None:
    state = _pontoon_with_8c_face_down()
    state, _ = step(state, {"kind": "seen", "event": {"kind": "card_appeared", "card": "8C", "zone": "spot 4",
                                                       "certain": True, "face_down": False}})
    dealer = screen_views(picture(state))["dealer"]
    assert dealer["dealer_only"]["camera"] == [{"card": None, "zone": "spot 4", "certain": True, "face_down": False}]
    assert "8C" not in json.dumps(dealer)


@pytest.mark.slow
def test_the_simulated_pontoon_shoe_deals_no_card_it_cannot_hold(tmp_path: Path) -> None:
    """Point 10: the pontoon demo raised 59 "cannot come from this shoe" alerts in 30 rounds. Its pack reaches the
    burned card in mid-round, the game reshuffles the discards (the cards on the table stay out), but the
    simulated shuffler shuffled a full pack and dealt the table's cards again. Now the order leaves them out, the
    deck check short of exactly those cards starts the new pack, and 30 rounds raise no alert at all."""
    cfg = table_config(tmp_path, "pontoon", seed=1)

    async def main() -> Table:
        table = Table(cfg)
        await table.start()
        await Autoplay(table, SeededRng(1), rounds=30, wait=5).run()
        await table.stop()
        return table

    table = run(main())
    assert table.state.meters.rounds == 30
    records = records_of(cfg)
    assert [r["alert"]["text"] for r in records if r["kind"] == "alert"] == []
    mid_round = [r for r in records if r["kind"] == "shoe" and r["what"] == "sim_order" and r.get("out")]
    assert mid_round, "no reshuffle in mid-round in 30 rounds: the test no longer tests it"
    checks = [r for r in records if r["kind"] == "shoe" and r["what"] == "deck_check" and r.get("short_of_table")]
    assert len(checks) == len(mid_round)
    assert all(sorted(c["missing"]) == sorted(o["out"]) for c, o in zip(checks, mid_round))


@pytest.mark.slow
def test_a_restarted_pontoon_table_deals_on_from_the_reshuffled_discards(tmp_path: Path) -> None:
    """The simulated order of a mid-round reshuffle is journaled with the cards it left out, so a table restarted
    in that pack deals on from the same cards, and raises no alert either."""
    cfg = table_config(tmp_path, "pontoon", seed=1)

    def reshuffled(table: Table) -> bool:
        return bool(table.state.shoe_sim_out) and not table.state.shoe.shuffling and \
            table.game.expected_next(table.state.game).phase == "deciding"

    async def first() -> None:
        table = Table(cfg)
        await table.start()
        await step_until(table, Autoplay(table, SeededRng(1)), lambda: reshuffled(table))
        await table.stop()

    async def second() -> int:
        table = Table(cfg)
        await table.start()
        rounds = table.state.meters.rounds
        await Autoplay(table, SeededRng(2), rounds=5, wait=5).run()
        await table.stop()
        return table.state.meters.rounds - rounds

    run(first())
    assert run(second()) == 5
    assert [r["alert"]["text"] for r in records_of(cfg) if r["kind"] == "alert"] == []


# ------------------------------------------------------------------------------------------ point 20


MINIMUM = 5


def _betting(name: str) -> tuple[Any, Any]:
    """A game's table with every box's minimum at MINIMUM and bets open (a shoe game gets its shoe and burn first)."""
    game = get_game(name)
    limits = getattr(game.rules({}), "limits", {})
    raised = {k: {"min": MINIMUM, "max": max(v.max, 100)} for k, v in limits.items()}
    try:
        rules = game.rules({"limits": raised} if limits else {})
    except RulesError:   # one limit for every box (let it ride's three circles)
        rules = game.rules({"limit": next(iter(raised.values()))})
    state = game.new_table(rules)
    decks = getattr(state.rules, "decks", 1)
    try:
        state, _ = game.apply(state, NewShoe(decks))
    except IllegalEvent:
        pass   # a fresh deck every round
    cards = iter(shoe(decks))
    while game.expected_next(state).card_to is not None:   # the burn
        state, _ = game.apply(state, CardDealt(next(cards)))
    try:
        state, _ = game.apply(state, OpenBets())
    except IllegalEvent:
        pass
    return game, state


@pytest.mark.parametrize("name", game_names())
def test_place_bet_refuses_a_stake_under_the_table_minimum_in_every_game(name: str) -> None:
    """Point 20: a bet under the table minimum was accepted by place_bet and refused only at close_bets. In every
    game with box limits a bet under the minimum is refused when placed, with the reason, on every box that takes
    the same bet at the minimum."""
    game, state = _betting(name)
    if not getattr(state.rules, "limits", None):
        pytest.skip(f"{name} takes no bets against box limits (its stakes are the rules' ante and pot)")
    assert game.expected_next(state).phase in ("betting", "seating")
    tried = []
    for box in game.boxes:
        for spot in range(1, getattr(state.rules, "spots", 1) + 1):
            try:
                game.apply(state, PlaceBet(spot, box, MINIMUM))
            except IllegalEvent:
                continue   # not a bet this spot may open with (the bank's spot, a play bet, a cover before a bank)
            with pytest.raises(IllegalEvent, match=rf"^spot {spot}(: the minimum buy-in is| \S+: {MINIMUM - 1} is "
                                                   rf"under the table minimum of) {MINIMUM}$"):
                game.apply(state, PlaceBet(spot, box, MINIMUM - 1))
            tried.append(box)
            break
    assert tried, f"{name}: no box takes a bet at the minimum on an empty layout"


def test_a_table_refuses_place_bet_under_the_minimum_with_the_reason(tmp_path: Path) -> None:
    cfg = table_config(tmp_path, "baccarat")   # the player box's minimum is 10

    async def main() -> tuple[dict[str, Any], dict[str, Any]]:
        table = Table(cfg)
        await table.start()
        await step_until(table, Autoplay(table, SeededRng(1)),
                         lambda: table.game.expected_next(table.state.game).phase == "idle")
        assert (await table.command(DEALER, "open_bets", {}))["ok"]
        low = await table.command(Role("spot", 3), "place_bet", {"spot": 3, "box": "player", "amount": 9})
        ok = await table.command(Role("spot", 3), "place_bet", {"spot": 3, "box": "player", "amount": 10})
        await table.stop()
        return low, ok

    low, ok = run(main())
    assert low == {"ok": False, "error": "spot 3 player: 9 is under the table minimum of 10"}
    assert ok["ok"]


# ------------------------------------------------------------------------------------------ point 3


async def _dealing(cfg: Any) -> Table:
    """A started table, a round settled, and the next round in play with its first cards due."""
    table = Table(cfg)
    await table.start()
    await step_until(table, Autoplay(table, SeededRng(1)),
                     lambda: table.state.meters.rounds >= 1 and table.state.round_log is not None and
                     table.game.expected_next(table.state.game).phase == "dealing")
    return table


def test_a_swapped_shoe_raises_a_journaled_alert_and_its_cards_are_not_lost(tmp_path: Path) -> None:
    """Point 3: another shoe on the line (IDENTIFY with a new serial, draws 0) and four cards drawn from it: the
    four vanished (taken for draws 1..4, long journaled), nothing was journaled and the table waited for ever.
    Now the swap is a journaled dealer alert, its cards are each journaled (as misdeals: the new shoe is not
    checked), the dealer voids the round, and no round opens before a deck check of the new shoe."""
    cfg = table_config(tmp_path, "baccarat", seed=3)

    async def main() -> tuple[Any, list[dict[str, Any]], dict[str, Any], dict[str, Any], Any]:
        table = await _dealing(cfg)
        drawn_before = table.state.shoe.draw_of(1)
        assert drawn_before > 4
        table.sim.swap("SIM-0002")
        cards = [str(table.sim.deal().card) for _ in range(4)]
        assert await table.wait_for(lambda s: s.shoe.draw_of(1) == 4, 10), "the new shoe's cards vanished"
        alerts = [a.json() for a in table.state.alerts]
        for alert in table.state.alerts[1:]:
            assert (await table.command(DEALER, "resolve", {"alert": alert.id, "action": "discard"}))["ok"]
        reset = table.state.alerts[0]
        assert (await table.command(DEALER, "resolve", {"alert": reset.id, "action": "void"}))["ok"]
        refused = await table.command(DEALER, "open_bets", {})
        status = (await table.command(DEALER, "status", {}))["result"]["shoe"]
        assert (await table.command(DEALER, "shuffle", {}))["ok"]
        assert await table.wait_for(lambda s: not s.shoe.check_due and not s.shoe.shuffling, 10)
        await step_until(table, Autoplay(table, SeededRng(5)),
                         lambda: table.game.expected_next(table.state.game).phase == "idle")   # the burn
        opened = await table.command(DEALER, "open_bets", {})
        await table.stop()
        return cards, alerts, refused, status, opened

    cards, alerts, refused, status, opened = run(main())
    reset, *misdeals = alerts
    assert reset == {"id": reset["id"], "kind": "shoe_reset", "card": None, "options": ["void", "deck_check"],
                     "text": "the shoe was swapped or reset (shoe 1 is another device: serial SIM-0001 -> SIM-0002, "
                             "draws 0): its cards are not the shoe counted so far. Void the round in play, or deck "
                             "check the new shoe (shuffle it) before any of its cards is dealt"}
    assert [(a["kind"], a["card"]) for a in misdeals] == [("misdeal", c) for c in cards]
    assert refused == {"ok": False, "error": "the shoe was swapped or reset: deck check it (shuffle) before the next "
                                             "round"}
    assert status["check_due"] is True and status["link"] is True
    assert opened["ok"], opened
    records = records_of(cfg)
    resets = [r for r in records if r["kind"] == "shoe" and r["what"] == "counter_reset"]
    assert [(r["shoe_id"], r["draws"]) for r in resets] == [(1, 0)]
    assert [r["draw"] for r in records if r["kind"] == "alert" and r["alert"]["kind"] == "misdeal"] == \
        [[1, 1], [1, 2], [1, 3], [1, 4]]
    voids = [r for r in records if r["kind"] == "game" and r["event"]["kind"] == "void_round"]
    assert len(voids) == 1


@pytest.mark.slow
def test_a_shoe_reset_to_draw_0_between_rounds_asks_for_a_deck_check(tmp_path: Path) -> None:
    """Point 3, the other way in: the same shoe, rebooted with its counter back at 0, between rounds."""
    cfg = table_config(tmp_path, "baccarat", seed=4)

    async def main() -> tuple[dict[str, Any], Any]:
        table = Table(cfg)
        await table.start()
        await step_until(table, Autoplay(table, SeededRng(2)), lambda: table.state.meters.rounds >= 1 and
                         table.game.expected_next(table.state.game).phase == "idle")
        table.sim.reset(keep_counter=False)
        assert await table.wait_for(lambda s: s.paused, 10), "no alert for the reset shoe"
        alert = table.state.alerts[0].json()
        seq = table.state.seq
        await table.stop()
        return alert, seq

    alert, _ = run(main())
    assert alert["kind"] == "shoe_reset" and alert["options"] == ["deck_check"]
    assert alert["text"].startswith("the shoe was swapped or reset (shoe 1 draw counter went from ")
    assert alert["text"].endswith("to 0): its cards are not the shoe counted so far. Deck check the new shoe (shuffle "
                                  "it) before any of its cards is dealt")


# ------------------------------------------------------------------------------------------ point 8


@pytest.mark.slow
def test_manual_card_entry_needs_the_shoe_down_and_the_dealer_switching_it_on(tmp_path: Path) -> None:
    """Point 8: the dealer's `card` was taken at a table with a reading shoe. Now it is refused until the dealer
    switches manual entry on, which is journaled, shown in the dealer view, and allowed only while the shoe is
    down; switching back only once the shoe is up."""
    cfg = table_config(tmp_path, "baccarat", seed=5)

    async def main() -> dict[str, Any]:
        table = await _dealing(cfg)
        out: dict[str, Any] = {}
        card = str(table.sim.upcoming(1)[0])
        out["card_shoe_up"] = await table.command(DEALER, "card", {"card": card})
        out["on_shoe_up"] = await table.command(DEALER, "manual_entry", {"on": True})
        table.sim.unplug(None)
        assert await table.wait_for(lambda s: not s.shoe.link, 10)
        out["on"] = await table.command(DEALER, "manual_entry", {"on": "true"})   # as `croupier command` sends it
        out["view"] = table.views()[1]["dealer"]["shoe"]
        out["card"] = await table.command(DEALER, "card", {"card": card})
        out["off_shoe_down"] = await table.command(DEALER, "manual_entry", {"on": False})
        table.sim.replug()
        assert await table.wait_for(lambda s: s.shoe.link, 10)
        out["off"] = await table.command(DEALER, "manual_entry", {"on": False})
        out["card_after"] = await table.command(DEALER, "card", {"card": card})
        out["bad"] = [(await table.command(DEALER, "manual_entry", {"on": v}))["error"] for v in ("yes", 1, [True])]
        await table.stop()
        return out

    out = run(main())
    gate = ("this table reads its cards from the shoe: manual card entry needs manual_entry on=true, which the "
            "dealer may switch on while the shoe is down")
    assert out["card_shoe_up"] == {"ok": False, "error": gate}
    assert out["on_shoe_up"] == {"ok": False, "error": "the shoe is up and reads the cards: manual card entry is "
                                                       "only for while it is down"}
    assert out["on"]["ok"] and out["view"]["manual"] is True and out["view"]["link"] is False
    assert out["card"]["ok"], out["card"]
    assert out["off_shoe_down"] == {"ok": False, "error": "the shoe is still down: manual card entry stays on until "
                                                          "it is up again"}
    assert out["off"]["ok"]
    assert out["card_after"] == {"ok": False, "error": gate}
    assert out["bad"] == ["malformed manual_entry: on must be true or false"] * 3
    records = records_of(cfg)
    assert [(r["on"], r["by"]) for r in records if r["kind"] == "shoe" and r["what"] == "manual"] == \
        [(True, "dealer"), (False, "dealer")]
    manual = [r for r in records if r["kind"] == "game" and r["event"]["kind"] == "card_dealt" and r["via"] == "dealer"]
    assert len(manual) == 1 and manual[0]["event"]["source"] == "manual"


# ------------------------------------------------------------------------------------------ point 23


def test_a_shoe_port_that_does_not_exist_shows_the_shoe_down_with_why(tmp_path: Path) -> None:
    """Point 23: a shoe port that does not exist gave one warning, then silent retries, and a table restarted
    on a journal whose shoe was up showed it up. Now the shoe is down in the dealer view and in `status`, with the
    reason, journaled once however many times the driver retries."""
    cfg = table_config(tmp_path, "baccarat", seed=6)
    port = str(tmp_path / "no-such-shoe")

    async def first() -> None:   # a run with the shoe up, so the journal's last word on the link is "up"
        table = Table(cfg)
        await table.start()
        assert await table.wait_for(lambda s: s.shoe.link, 10)
        await table.stop()

    async def second() -> dict[str, Any]:
        table = Table(dataclasses.replace(cfg, shoe=dataclasses.replace(cfg.shoe, port=port)))
        await table.start()
        assert await asyncio.to_thread(table.shoe.driver.wait_counters, lambda c: c["open_failures"] >= 5, 10)
        assert await table.wait_for(lambda s: not s.shoe.link and getattr(s.shoe, "down", None), 10), \
            "the shoe shows up, or down with no reason"
        status = (await table.command(DEALER, "status", {}))["result"]
        await table.stop()
        return status

    run(first())
    status = run(second())
    assert status["shoe"]["link"] is False
    assert status["shoe"]["down"].startswith(f"cannot open the port {port}: ")
    links = [r for r in records_of(cfg) if r["kind"] == "shoe" and r["what"] == "link"]
    assert [r["up"] for r in links][-1:] == [False] and links[-1]["reason"] == status["shoe"]["down"]
    assert sum(1 for r in links if r.get("reason", "").startswith("cannot open")) == 1


def test_a_shoe_swapped_while_the_table_was_off_is_seen_by_its_serial(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Point 3 across a restart: the link is new to both shoes, but the journal knows the serial of the last."""
    from drivers.shoe import ShoeSim

    cfg = table_config(tmp_path, "baccarat", seed=8)

    async def first() -> None:
        table = Table(cfg)
        await table.start()
        await step_until(table, Autoplay(table, SeededRng(1)), lambda: table.state.meters.rounds >= 1)
        await table.stop()

    async def second() -> list[dict[str, Any]]:
        table = Table(cfg)
        await table.start()
        assert await table.wait_for(lambda s: s.paused, 10), "no alert for the other shoe"
        alerts = [a.json() for a in table.state.alerts]
        await table.stop()
        return alerts

    run(first())
    init = ShoeSim.__init__
    monkeypatch.setattr(ShoeSim, "__init__", lambda self, *a, **kw: init(self, *a, **{**kw, "serial": "SIM-0042"}))
    alerts = run(second())
    assert [a["kind"] for a in alerts] == ["shoe_reset"] and alerts[0]["options"][-1] == "deck_check"
    assert alerts[0]["text"].startswith("the shoe was swapped or reset (shoe 1 is another device than when the table "
                                        "last ran: serial SIM-0001 -> SIM-0042, draws ")
    assert len([r for r in records_of(cfg) if r["kind"] == "shoe" and r["what"] == "counter_reset"]) == 1
