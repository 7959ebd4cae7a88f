"""A dealer's `reassign` of a camera alert: the round in play rebuilt with the card the camera saw, in the fold
(exact, refused when it cannot be), over random rounds of the games, and on a simulated table with its camera."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from controller.autoplay import Autoplay
from controller.bus import Role
from controller.camera import layout, reassignment
from controller.cards import parse_card
from controller.games import get_game
from controller.games.base import (
    CardDealt, CloseBets, Event, GameSpec, IllegalEvent, NewShoe, OpenBets, PlaceBet, Settle, VoidRound,
)
from controller.journal import Journal
from controller.rng import SeededRng
from controller.table import Table
from controller.tablestate import CardReassigned, TableState, new_state, picture, replay, step
from controller.views import leaks, project
from vision.tracker import CardAppeared
from tests.game_harness import play_game
from tests.table_helpers import recall_text, step_until, table_config

BACCARAT = get_game("baccarat")


def game_record(event: Event) -> dict[str, Any]:
    return {"kind": "game", "event": event.to_json(), "via": "dealer"}


def fold(records: list[dict[str, Any]], game: GameSpec = BACCARAT) -> TableState:
    return replay(new_state("t-1", game, game.rules({})), enumerate(records, 1))


def coup(*cards: str) -> list[dict[str, Any]]:
    """A baccarat shoe burned and a coup with a player bet, dealt `cards`."""
    events: list[Event] = [NewShoe(8, 300), *(CardDealt(parse_card(c)) for c in ("2S", "3S", "4S")), OpenBets(),
                           PlaceBet(1, "player", 100), CloseBets(), *(CardDealt(parse_card(c)) for c in cards)]
    return [game_record(e) for e in events]


def reassign(state: TableState, card: str, becomes: str, swap: bool = False) -> tuple[TableState, tuple[Any, ...]]:
    """A camera alert about `becomes`, resolved by reassigning `card` as it (and it as `card`, with `swap`)."""
    alert = {"kind": "alert", "alert": {"id": state.next_alert, "kind": "camera", "text": "", "card": becomes,
                                        "options": ["confirm", "reassign", "void"], "zone": "player"}}
    state, _ = step(state, alert)
    return step(state, {"kind": "resolve", "alert": state.next_alert - 1, "action": "reassign", "by": "dealer",
                        "reason": "", "reassign": [card, becomes], "swap": swap})


def test_reassign_corrects_a_misread_card_and_the_round_goes_on_from_the_true_cards() -> None:
    # Player 2H 4D (6), banker 3C 5S (8, a natural): the coup is over. The camera says the banker's first card
    # is the KC: banker 5, player 6 stands, so the banker draws; exactly as if the shoe had read the KC.
    state = fold(coup("2H", "3C", "4D", "5S"))
    assert BACCARAT.expected_next(state.game).phase == "settling"
    fixed, effects = reassign(state, "3C", "KC")
    dealt_right = fold(coup("2H", "KC", "4D", "5S"))
    assert fixed.game == dealt_right.game and fixed.round_log == dealt_right.round_log
    assert BACCARAT.expected_next(fixed.game).card_to == "banker"
    assert effects[-1] == CardReassigned("3C", "KC", False) and not fixed.alerts


def test_reassign_of_two_dealt_cards_trades_their_places() -> None:
    state = fold(coup("2H", "3C", "4D", "5S"))
    fixed, effects = reassign(state, "2H", "3C", swap=True)
    assert fixed.game == fold(coup("3C", "2H", "4D", "5S")).game
    assert effects[-1] == CardReassigned("2H", "3C", True)
    # Trading them back restores the very state the shoe's reading made.
    back, _ = reassign(fixed, "3C", "2H", swap=True)
    assert back.game == state.game and back.round_log == state.round_log


@pytest.mark.parametrize("records, card, becomes, swap, reason", [
    (coup("2H", "3C", "4D", "5S") + [game_record(Settle())], "3C", "KC", False, "no round in play"),
    (coup("2H", "3C", "4D", "5S"), "9D", "KC", False, "9D was not dealt in this round"),
    (coup("2H", "3C", "4D", "5S"), "3C", "KC", True, "KC was not dealt in this round"),
    (coup("2H", "3C", "4D", "5S"), "3C", "3C", False, "reassign 3C as itself"),
    (coup("2H", "3C", "2H", "5S"), "2H", "KC", False, "2H was dealt twice in this round"),
    (coup("2H", "3C", "2H", "5S"), "3C", "2H", True, "2H was dealt twice in this round"),
    # Player 2H 4D stands on 6, banker 3C 2S draws the 7S on 5: with a 4C for the 3C it stands on 6.
    (coup("2H", "3C", "4D", "2S", "7S"), "3C", "4C", False,
     "with 3C as 4C the round's events no longer fit: void the round$"),
])
def test_reassign_is_refused_when_the_round_cannot_be_rebuilt(records: list[dict[str, Any]], card: str, becomes: str,
                                                              swap: bool, reason: str) -> None:
    state = fold(records)
    with pytest.raises(IllegalEvent, match=reason):
        reassign(state, card, becomes, swap)


def test_reassignment_names_the_one_dealt_card_the_camera_does_not_see_there() -> None:
    game = BACCARAT.snapshot(fold(coup("2H", "3C", "4D", "5S")).game)
    # The camera sees the 4D and a KC in the player's box: the 2H it does not see is the KC.
    assert reassignment(game, [("4D", "player", True, False), ("KC", "player", True, False)], "KC", "player") \
        == ("2H", "KC")
    # The banker's 3C seen in the player box, the 2H in the banker's: they traded places.
    assert reassignment(game, [("3C", "player", True, False), ("4D", "player", True, False),
                               ("2H", "banker", True, False)], "3C", "player") == ("2H", "3C")
    with pytest.raises(ValueError, match=r"it could be 2H or 4D\): name it with card="):
        reassignment(game, [("KC", "player", True, False)], "KC", "player")
    # The camera sees every card dealt there: its card is one more (the shoe may have missed it).
    assert reassignment(game, [("2H", "player", True, False), ("4D", "player", True, False)], "KC", "player") is None
    # A face-down card is never the one: the camera cannot see its face, and naming it would tell it. The
    # blackjack dealer's hole card (9S) is not seen, yet the card the camera misses is the up card.
    from tests.test_table_camera import BLACKJACK

    assert reassignment(BLACKJACK, [], "KC", "dealer") == ("AH", "KC")
    # A reading the camera is unsure of does not count as seeing the card.
    assert reassignment(game, [("4D", "player", False, False), ("2H", "player", True, False)], "KC", "player") \
        == ("4D", "KC")


def test_the_dealer_view_lists_the_cards_a_camera_alert_may_reassign(capsys: pytest.CaptureFixture[str]) -> None:
    state = fold(coup("2H", "3C", "4D", "5S"))
    state, _ = step(state, {"kind": "alert", "alert": {"id": 1, "kind": "camera", "text": "camera sees KC on player: "
                                                       "the shoe dealt no such card face up", "card": "KC",
                                                       "options": ["confirm", "reassign", "void"], "zone": "player"}})
    pic = picture(state)
    assert pic["dealer_only"]["alerts"][0]["reassign"] == ["2H", "4D"]
    assert project(pic, "dealer")["dealer_only"]["alerts"] == pic["dealer_only"]["alerts"]
    assert "dealer_only" not in project(pic, "public")
    from controller.commands.table.printing import print_state as _print_state

    _print_state(project(pic, "dealer"))
    assert ("    ALERT 1: camera sees KC on player: the shoe dealt no such card face up (resolve: confirm, reassign, "
            "void; reassign card= one of 2H, 4D)\n") in capsys.readouterr().out
    # The dealer voids the round with the alert still open: no card is left to reassign, in a picture built
    # afresh or from the one before.
    voided, _ = step(state, game_record(VoidRound("misdeal")))
    assert voided.alerts == state.alerts
    for pic_after in (picture(voided), picture(voided, (state, pic))):
        assert "reassign" not in pic_after["dealer_only"]["alerts"][0]


REASSIGN_GAMES = ["baccarat", "blackjack", "chemin-de-fer", "three-card-poker", "let-it-ride", "caribbean-stud",
                  "pontoon", "texas-holdem", "pai-gow"]


@pytest.mark.slow
@pytest.mark.parametrize("name", REASSIGN_GAMES)
def test_a_reassigned_round_is_the_round_dealt_that_way(name: str) -> None:
    """Over random rounds: after cards dealt mid-round, two of them traded by `reassign` give the state a journal
    dealing them the other way round folds to (when the game takes that), no face-down card on a screen, and
    trading them back gives the state before, exactly."""
    game = get_game(name)
    events: list[Event] = []
    play_game(name, 5, 12, journal=events)
    rng = SeededRng(9)
    records: list[dict[str, Any]] = []
    state = new_state("t-1", game, game.rules({}))
    opened = tried = taken = 0
    for event in events:
        records.append(game_record(event))
        state, _ = step(state, records[-1])
        if isinstance(event, OpenBets):
            opened = len(records) - 1
        if not isinstance(event, CardDealt) or state.round_log is None or rng.randbelow(3):
            continue
        dealt = [str(e.card) for e in state.round_log if isinstance(e, CardDealt)]
        once = [c for c in dealt if dealt.count(c) == 1]
        if len(once) < 2:
            continue
        a, b = rng.shuffled(once)[:2]
        tried += 1
        trade = {a: b, b: a}
        other_way = records[:opened] + [
            game_record(dataclasses.replace(e, card=parse_card(trade[str(e.card)])))
            if isinstance(e, CardDealt) and str(e.card) in trade else game_record(e)
            for e in events[opened:len(records)]]
        try:
            expected = fold(other_way, game)
        except IllegalEvent:
            expected = None
        try:
            traded, _ = reassign(state, a, b, swap=True)
        except IllegalEvent:
            assert expected is None or expected.round_log is None, (name, a, b)
            continue
        taken += 1
        assert expected is not None and traded.game == expected.game, (name, a, b)
        view = project({"game": game.snapshot(traded.game)}, "public")
        assert leaks(view) == [], (name, leaks(view))
        back, _ = reassign(traded, b, a, swap=True)
        assert back.game == state.game and back.round_log == state.round_log
    assert taken >= 5 and tried >= taken, (name, tried, taken)


def sees(table: Table, card: str, zone: str) -> None:
    """The camera's tracker reports `card` lying still on `zone`, sure of it, as its thread hands reports in."""
    table._camera_arrived(CardAppeared(parse_card(card), zone, 0.99, True))


@pytest.mark.slow
def test_a_table_reassigns_two_cards_the_dealer_swapped(tmp_path: Path) -> None:
    """A baccarat coup dealt by the simulated shoe; the camera's tracker (its events handed in as the witness
    thread hands them) sees the banker's first card in the player's box and the player's first card in the
    banker's. `reassign` is refused while the camera cannot tell which player card the banker's is, then takes
    the swap: the table places the cards where they lie, the other alert, now agreeing, is confirmed with it, and
    the coup settles on them; the journal replays to the same state and the recall shows the correction."""
    cfg = table_config(tmp_path, "baccarat", seed=11)

    async def main() -> tuple[dict[str, str], list[str], Any]:
        table = Table(cfg)
        await table.start()

        def boxes() -> list[tuple[str | None, str]]:
            return [(z, c) for z, c, _ in layout(table.game.snapshot(table.state.game)) if z in ("player", "banker")]

        # The first four cards of a coup, four different ones (an eight-deck shoe can deal a card twice).
        await step_until(table, Autoplay(table, SeededRng(2)),
                         lambda: len({c for _, c in boxes()}) == len(boxes()) == 4)
        (_, p1), (_, p2), (_, b1), (_, b2) = sorted(boxes(), key=lambda zc: zc[0] != "player")

        sees(table, b1, "player")
        assert await table.wait_for(lambda s: len(s.alerts) == 1, 10)
        first = table.state.alerts[0]
        assert (first.card, first.zone, first.options) == (b1, "player", ("confirm", "reassign", "void"))
        refused = await table.command(Role("dealer"), "resolve", {"alert": first.id, "action": "reassign"})
        assert not refused["ok"] and f"it could be {' or '.join(sorted((p1, p2)))}" in refused["error"]
        stranger = next(c for c in ("2D", "3D", "4D", "5D", "6D") if c not in (p1, p2, b1, b2))
        refused = await table.command(Role("dealer"), "resolve", {"alert": first.id, "action": "reassign",
                                                                  "card": stranger})
        assert refused["error"] == f"reassign: card={stranger}: name a card dealt face up in this round"
        sees(table, p2, "player")
        sees(table, b2, "banker")
        sees(table, p1, "banker")
        assert await table.wait_for(lambda s: len(s.alerts) == 2, 10)
        done = await table.command(Role("dealer"), "resolve", {"alert": first.id, "action": "reassign"})
        assert done["ok"], done
        assert not table.state.alerts   # the player card's alert agrees now: confirmed with it
        placed = {c: z for z, c in boxes()}
        rounds = table.state.meters.rounds
        await Autoplay(table, SeededRng(3), rounds=1).run()   # this coup to its settlement
        assert table.state.meters.rounds == rounds + 1
        await table.stop()
        return placed, [b1, p1], table.state

    placed, (b1, p1), final = asyncio.run(asyncio.wait_for(main(), 120))
    assert placed[b1] == "player" and placed[p1] == "banker"
    with Journal(cfg.journal, cfg.table_id) as j:
        records = [e.record for e in j.entries()]
    resolves = [r for r in records if r["kind"] == "resolve"]
    assert [(r["action"], r.get("reassign"), r.get("swap")) for r in resolves] == [("reassign", [p1, b1], True),
                                                                                    ("confirm", None, None)]
    assert sum(r["kind"] == "refused" for r in records) == 2
    replayed = replay(new_state(cfg.table_id, cfg.game, cfg.rules), enumerate(records, 1))
    assert replayed.game == final.game and replayed.meters == final.meters and not replayed.alerts
    out = recall_text(cfg)
    assert (f"    alert camera: camera sees {b1} on player: the shoe dealt it to banker -> reassign by dealer: "
            f"{p1} and {b1} traded places\n") in out
    assert f"    alert camera: camera sees {p1} on banker: the shoe dealt it to player -> confirm by dealer (agrees " \
           f"with the cards after alert 1 was reassigned)\n" in out
    assert f"    card player: {b1}\n" in out and f"    card banker: {p1}\n" in out


def test_a_card_the_shoe_missed_is_dealt_as_the_camera_saw_it(tmp_path: Path) -> None:
    """The player's third card is due; the camera sees the player's two cards and a third the shoe never read.
    `reassign` deals it as the camera saw it (the shoe's read failed); the same card seen on the banker's side,
    where no card is due, is one too many and only confirm or void resolve it."""
    cfg = table_config(tmp_path, "baccarat", seed=11)

    async def main() -> tuple[list[str], str, Any]:
        table = Table(cfg)
        await table.start()
        await step_until(table, Autoplay(table, SeededRng(2)),
                         lambda: table.game.expected_next(table.state.game).card_to == "player")
        snap = table.game.snapshot(table.state.game)
        player = [c for z, c, _ in layout(snap) if z == "player"]
        missed = next(c for c in ("2D", "3D", "4D", "5D", "6D") if c not in {c for _, c, _ in layout(snap)})
        for card in player:
            sees(table, card, "player")
        sees(table, missed, "banker")
        assert await table.wait_for(lambda s: len(s.alerts) == 1, 10)
        refused = await table.command(Role("dealer"), "resolve", {"alert": table.state.alerts[0].id,
                                                                  "action": "reassign"})
        assert refused["error"].endswith(f"{missed} is one too many (confirm or void)"), refused
        assert (await table.command(Role("dealer"), "resolve", {"alert": table.state.alerts[0].id,
                                                                "action": "confirm"}))["ok"]
        sees(table, missed, "player")
        assert await table.wait_for(lambda s: len(s.alerts) == 1, 10)
        done = await table.command(Role("dealer"), "resolve", {"alert": table.state.alerts[0].id, "action": "reassign"})
        assert done["ok"], done
        now = [c for z, c, _ in layout(table.game.snapshot(table.state.game)) if z == "player"]
        await table.stop()
        return player, missed, now

    player, missed, now = asyncio.run(asyncio.wait_for(main(), 120))
    assert now == player + [missed]
    with Journal(cfg.journal, cfg.table_id) as j:
        records = [e.record for e in j.entries()]
    assert records[-1]["kind"] == "game" and records[-1]["via"] == "camera"
    assert records[-1]["event"]["card"] == missed and records[-1]["event"]["source"] == "camera"
    out = recall_text(cfg, "--last", "1")
    assert f"-> reassign by dealer: {missed} dealt as the camera saw it (the shoe did not read it)\n" in out
    assert f"    card player: {missed}\n" in out
