"""The table runtime over simulated drivers: journal-then-apply, recovery, dealer alerts, commands and views."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from controller.autoplay import Autoplay
from controller.bus import BusClient, BusServer, CommandClient, Role, create_keys, load_public_key, load_secret_keys
from controller.config import ConfigError, config_from_mapping
from controller.games.baccarat import Phase as BaccaratPhase
from controller.games.base import RoundSettled, event_from_json
from controller.journal import Journal
from controller.rng import SeededRng
from controller.table import Table
from controller.tablestate import new_state, picture, step
from controller.views import leaks, screen_views
from tests.table_helpers import step_until, table_config


def run(coro: Any, timeout: float = 120) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))


async def started(cfg: Any, **kw: Any) -> Table:
    table = Table(cfg, **kw)
    await table.start()
    return table


def journal_settlements(path: Path, cfg: Any) -> tuple[Any, list[Any], list[dict]]:
    """Replay a journal independently: the final state, every settlement, every record."""
    with Journal(path, cfg.table_id) as j:
        records = [e.record for e in j.entries()]
    state = new_state(cfg.table_id, cfg.game, cfg.rules)
    settlements = []
    for r in records:
        state, effects = step(state, r)
        settlements += [e.settlement for e in effects if isinstance(e, RoundSettled)]
    return state, settlements, records


@pytest.mark.parametrize("game", ["baccarat", "blackjack", "three-card-poker", "pai-gow", "pusoy", "texas-holdem",
                                  "big-two"])
@pytest.mark.slow
def test_autoplayed_rounds_replay_to_the_same_state_and_meters(tmp_path: Path, game: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = table_config(tmp_path, game)
    published: list[tuple[int, dict]] = []
    texts_sent: list[str] = []
    texts_differ: list[str] = []
    publish = BusServer.publish

    def on_publish(table: Table, views: tuple[int, dict]) -> None:
        # The runtime reuses the sections of a picture and their JSON between records: both must equal a fresh build.
        assert views[1] == screen_views(picture(table.state))
        published.append(views)

    def sent(bus: BusServer, seq: int, views: dict, kind: str = "update", texts: dict | None = None) -> None:
        if texts is not None:
            texts_sent.extend(views)
            texts_differ.extend(v for v in views if texts[v] != json.dumps(views[v]))
        publish(bus, seq, views, kind, texts)

    monkeypatch.setattr(BusServer, "publish", sent)

    async def main() -> Any:
        table = await started(cfg)
        table.on_publish = lambda views: on_publish(table, views)
        await Autoplay(table, SeededRng(2), rounds=12).run()
        await table.stop()
        return table.state

    live = run(main())
    replayed, settlements, records = journal_settlements(cfg.journal, cfg)
    assert replayed.game == live.game and replayed.meters == live.meters
    assert len(settlements) == live.meters.rounds >= 12
    assert live.meters.handle == sum(s.stakes for s in settlements)
    assert live.meters.returned == sum(s.returned for s in settlements)
    assert [r["kind"] for r in records].count("start") == 1
    # the dealer drew each round's known cards in one motion and opened bets as it settled: never a card or a
    # command too many (a misdeal alert, a refusal)
    assert [r for r in records if r["kind"] in ("alert", "refused")] == []
    # one update per group commit, with its last record's seq, and no screen view ever held a face-down card
    seqs = [seq for seq, _ in published]
    with Journal(cfg.journal, cfg.table_id) as journal:
        entries = list(journal.entries())
    commit_ends = [e.seq for e, after in zip(entries, entries[1:] + [None]) if after is None or after.ts_ns != e.ts_ns]
    assert seqs == commit_ends[commit_ends.index(seqs[0]):]
    assert len(entries) > len(commit_ends)  # some commits did hold several records
    assert len(texts_sent) >= 2 * len(published) and texts_differ == []
    # an unchanged history is the very same object from one publish to the next (what the texts reuse)
    assert any(a[1]["public"]["history"] is b[1]["public"]["history"] for a, b in zip(published, published[1:]))
    for _, views in published:
        assert leaks(views["public"]) == [] and leaks(views["dealer"]) == []
        assert "dealer_only" not in views["public"]


@pytest.mark.parametrize("pace", [0.0, 0.01])
def test_autoplay_draws_a_baccarat_coup_in_one_motion(tmp_path: Path, pace: float) -> None:
    """At full speed the dealer draws every card the coup takes (the first four, and the third-card rule's
    draws as it sees the cards) in one step; at a demo's pace one a step, so a person can follow."""
    cfg = table_config(tmp_path, "baccarat", seed=4)

    async def main() -> tuple[int, int, str]:
        table = await started(cfg)
        ap = Autoplay(table, SeededRng(1), pace=pace)
        while not (table.state.game.phase is BaccaratPhase.DEALING and not table.state.game.player):
            seq = table.state.seq
            await ap.step()
            if table.state.seq == seq:
                await table.wait_change(seq, 10)
        before = table.sim.draws
        await ap.step()
        assert await table.wait_for(lambda state: state.shoe.draw_of(1) == table.sim.draws, 10)
        await table.stop()
        game = table.state.game
        return table.sim.draws - before, len(game.player) + len(game.banker), game.phase

    drawn, on_table, stage = run(main())
    assert drawn == on_table
    assert (4 <= drawn <= 6 and stage is BaccaratPhase.SETTLING) if not pace else (drawn == 1 and stage is BaccaratPhase.DEALING)


def test_restart_mid_round_resumes_the_same_round(tmp_path: Path) -> None:
    cfg = table_config(tmp_path, "blackjack", seed=5)

    async def first() -> Any:
        table = await started(cfg)
        ap = Autoplay(table, SeededRng(3))
        # play until cards are on the table in round 2, then stop as a power cut would (no settle)
        while not (table.state.meters.rounds >= 1 and table.game.expected_next(table.state.game).phase == "deciding"):
            seq = table.state.seq
            await ap.step()
            await table.wait_change(seq, 10)
        snapshot = table.audit_view()["game"]
        await table.stop()
        return table.state, snapshot

    before, snap_before = run(first())

    async def second() -> Any:
        table = await started(cfg)
        restored = table.state
        snap = table.audit_view()["game"]
        await Autoplay(table, SeededRng(4), rounds=2).run()
        await table.stop()
        return restored, snap, table.state

    restored, snap_after, after = run(second())
    assert restored.game == before.game and snap_after == snap_before  # the round in progress, exactly
    assert after.meters.rounds == before.meters.rounds + 2
    assert after.meters.power_ups == 2 and after.meters.voids == 0


def test_the_shoes_own_cut_card_makes_the_shuffle_due(tmp_path: Path) -> None:
    """A dealer places the physical cut card by hand: once the shoe reports it, the shuffle is due after the
    round in play, wherever the game's count of the cut stands, and the table shuffles before the next."""
    cfg = table_config(tmp_path, "baccarat", seed=9)

    async def main() -> None:
        table = await started(cfg)
        await Autoplay(table, SeededRng(1), rounds=1).run()
        assert not table.state.shoe.shuffle_due
        table.sim.cut = 52 * cfg.rules.decks - table.sim.remaining + 3  # the cut card three cards on
        await Autoplay(table, SeededRng(2), rounds=3).run()
        await table.stop()

    run(main())
    _, _, records = journal_settlements(cfg.journal, cfg)
    state = new_state(cfg.table_id, cfg.game, cfg.rules)
    cut_at = None
    for i, r in enumerate(records):
        state, _ = step(state, r)
        if cut_at is None and "CUT_CARD" in r.get("flags", ()):
            cut_at = i
            assert state.shoe.shuffle_due  # the shoe said so ...
            assert not cfg.game.snapshot(state.game)["shoe"]["cut_reached"]  # ... long before the game's count
    assert cut_at is not None
    kinds = [r["event"]["kind"] for r in records[cut_at:] if r["kind"] == "game"]
    assert kinds.index("new_shoe") < kinds.index("open_bets")  # shuffled before the next round opened
    # A flag makes the shuffle due when it comes up, not while it stays up (a new shoe has cleared the due).
    fresh = dataclasses.replace(state, shoe=dataclasses.replace(state.shoe, flags=(), shuffle_due=False))
    for flag in ("CUT_CARD", "EMPTY"):
        up = step(fresh, {"kind": "shoe", "what": "flags", "flags": [flag]})[0]
        assert up.shoe.shuffle_due
        cleared = dataclasses.replace(up, shoe=dataclasses.replace(up.shoe, shuffle_due=False))
        assert not step(cleared, {"kind": "shoe", "what": "flags", "flags": [flag, "CARDS_LOW"]})[0].shoe.shuffle_due


def test_a_shoe_running_empty_mid_round_raises_a_dealer_alert(tmp_path: Path) -> None:
    cfg = table_config(tmp_path, "baccarat", seed=9)

    async def main() -> Any:
        from controller.cards import parse_card

        table = await started(cfg)
        await step_until(table, Autoplay(table, SeededRng(1)), lambda: table.state.meters.rounds >= 1 and
                         table.game.expected_next(table.state.game).card_to is not None)
        table.sim.load([parse_card("9C"), parse_card("2D")])  # the last two cards of the shoe
        for _ in range(2):
            seq = table.state.seq
            table.sim.deal()
            assert await table.wait_change(seq, 10)
        assert await table.wait_for(lambda s: s.paused, 10)
        alert = table.state.alerts[0]
        await table.stop()
        return alert, table.state

    alert, state = run(main())
    assert alert.kind == "shoe" and alert.text.startswith("the shoe is empty and a card is due to ")
    assert alert.options == ("confirm", "void") and state.shoe.shuffle_due


def test_restart_during_a_simulated_shuffle_shuffles_again(tmp_path: Path) -> None:
    """Power lost after the shuffle's order was journaled but before the shuffler's deck check: the restarted
    simulated shuffler shuffles that order again, and play goes on (it used to wait for a deck check forever)."""
    cfg = table_config(tmp_path, "baccarat", seed=11)

    async def first() -> Any:
        table = await started(cfg)
        assert table.sim is not None
        table.sim.shuffle = lambda *args, **kwargs: None  # the power goes before the shuffler starts
        reply = await table.command(Role("dealer"), "shuffle", {})
        assert reply["ok"], reply
        await table.stop()
        return table.state

    before = run(first())
    assert before.shoe.shuffling

    async def second() -> Any:
        table = await started(cfg)
        shuffled = await table.wait_for(lambda state: not state.shoe.shuffling, 10)
        if shuffled:
            await Autoplay(table, SeededRng(2), rounds=1).run()
        await table.stop()
        return shuffled, table.state

    shuffled, after = run(second())
    assert shuffled and after.meters.rounds == 1 and after.sim_shuffles == before.sim_shuffles
    with Journal(cfg.journal, cfg.table_id) as journal:
        checks = [e.record for e in journal.entries() if e.record.get("what") == "deck_check"]
    assert len(checks) == 1 and checks[0]["complete"]


async def shuffled_with_panel(tmp_path: Path) -> Table:
    """A blackjack table with the 7-spot panel's simulated pins, its shoe shuffled and checked."""
    pins = Path(__file__).resolve().parents[1] / "deploy" / "config" / "panel-blackjack-7spot.toml"
    table = await started(table_config(tmp_path, "blackjack", panel=str(pins)))
    assert (await table.command(Role("dealer"), "shuffle", {}))["ok"]
    assert await table.wait_for(lambda state: not state.shoe.shuffling, 10)
    return table


def test_a_spots_display_shows_its_bets_as_each_is_journaled(tmp_path: Path) -> None:
    """The panel showed a spot's total from the views, which are published after a group's effects are shown:
    each display was one bet behind (blank after the first bet, 10 after a second of 15)."""
    dealer = Role("dealer")

    async def main() -> list[str]:
        table = await shuffled_with_panel(tmp_path)
        assert (await table.command(dealer, "open_bets", {}))["ok"]
        shown = []
        for spot, amount in ((1, 10), (1, 15), (3, 10)):   # blackjack's minimum is 10
            reply = await table.command(dealer, "place_bet", {"spot": spot, "box": "main", "amount": amount})
            assert reply["ok"], reply
            shown.append(" ".join(table.panel.shown(f"spot{s}_bet").strip() or "-" for s in (1, 3)))
        await table.stop()
        return shown

    assert run(main()) == ["10 -", "25 -", "25 10"]


def test_the_next_button_steps_the_round_by_what_the_table_waits_for(tmp_path: Path) -> None:
    """The dealer's `next` button opens the bets while the table is idle and closes them while it takes bets (the
    step is looked up by the Waiting member the game expects)."""
    from drivers.panel import ButtonHeld, ButtonPressed, DoorClosed, DoorOpened

    dealer = Role("dealer")

    async def main() -> list[str]:
        table = await shuffled_with_panel(tmp_path)
        phases = [str(table.game.expected_next(table.state.game).phase)]
        for _ in range(2):
            if phases[-1] == "betting":
                reply = await table.command(dealer, "place_bet", {"spot": 1, "box": "main", "amount": 10})
                assert reply["ok"], reply
            # the press as the panel reports it (a simulated tap's timing is the panel tests' business)
            await table._panel_action(ButtonPressed("next", 0.0, None, "next"), ButtonPressed, ButtonHeld,
                                      DoorOpened, DoorClosed)
            phases.append(str(table.game.expected_next(table.state.game).phase))
        await table.stop()
        return phases

    assert run(main()) == ["idle", "betting", "dealing"]


def test_unexpected_card_raises_a_dealer_alert_and_pauses(tmp_path: Path) -> None:
    cfg = table_config(tmp_path, "baccarat", seed=9)

    async def main() -> None:
        table = await started(cfg)
        ap = Autoplay(table, SeededRng(1))
        while table.game.expected_next(table.state.game).phase != "betting":
            seq = table.state.seq
            await ap.step()
            await table.wait_change(seq, 10)
        seq = table.state.seq
        table.sim.deal()  # the dealer draws a card while bets are still open
        assert await table.wait_change(seq, 10)
        assert table.state.paused
        alert = table.state.alerts[0]
        assert alert.kind == "misdeal" and "drawn" in alert.text and alert.card
        refused = await table.command(Role("dealer"), "close_bets", {})
        assert not refused["ok"] and "paused" in refused["error"]
        assert (await table.command(Role("spot", 2), "resolve", {"alert": alert.id, "action": "discard"}))["ok"] is False
        done = await table.command(Role("dealer"), "resolve", {"alert": alert.id, "action": "discard"})
        assert done["ok"] and not table.state.paused
        await Autoplay(table, SeededRng(5), rounds=1).run()
        await table.stop()

    run(main())
    _, _, records = journal_settlements(cfg.journal, cfg)
    kinds = [r["kind"] for r in records]
    assert "alert" in kinds and "resolve" in kinds and kinds.count("refused") == 2


def test_commands_refused_by_role_and_shape_are_journaled(tmp_path: Path) -> None:
    cfg = table_config(tmp_path, "blackjack")

    async def main() -> list[dict]:
        table = await started(cfg)
        spot3 = Role("spot", 3)
        replies = [
            await table.command(spot3, "open_bets", {}),                                        # dealer only
            await table.command(spot3, "place_bet", {"spot": 4, "box": "main", "amount": 10}),  # not its spot
            await table.command(Role("ops"), "void", {"reason": "x"}),                          # ops cannot void
            await table.command(Role("dealer"), "teleport", {}),                                # unknown
            await table.command(Role("dealer"), "place_bet", {"spot": "3"}),                    # malformed
            await table.command(Role("dealer"), "settle", {}),                                  # not legal now
        ]
        await table.stop()
        return replies

    replies = run(main())
    assert [r["ok"] for r in replies] == [False] * 6
    assert "spot:3 may not open bets" in replies[0]["error"]
    assert "only for spot 3" in replies[1]["error"]
    assert "unknown command" in replies[3]["error"]
    assert "malformed" in replies[4]["error"]
    _, _, records = journal_settlements(cfg.journal, cfg)
    assert [r["kind"] for r in records].count("refused") == 6


@pytest.mark.slow
def test_authenticated_bus_commands_end_to_end(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    for name in ("server", "dealer", "spot3", "stranger"):
        create_keys(keys, name)
    cfg = table_config(tmp_path, "baccarat")
    cfg = dataclasses.replace(cfg, bus=dataclasses.replace(
        cfg.bus, keys=keys, clients=((keys / "dealer.key", "dealer"), (keys / "spot3.key", "spot:3"))))

    async def main() -> list[dict]:
        table = await started(cfg)
        server = load_public_key(keys / "server.key")

        def client(name: str, **kw: Any) -> CommandClient:
            return CommandClient(cfg.bus.endpoints.commands, load_secret_keys(keys / f"{name}.key_secret"), server, **kw)

        dealer, spot3, stranger = client("dealer"), client("spot3"), client("stranger")
        out = [await dealer.send("status"), await spot3.send("open_bets"), await stranger.send("open_bets"),
               await dealer.send_raw(b"\xff\xfe not json")]
        plain = CommandClient(cfg.bus.endpoints.commands, timeout_s=0.5)
        with pytest.raises(Exception, match="no answer"):
            await plain.send("open_bets")
        for c in (dealer, spot3, stranger, plain):
            c.close()
        seq = table.state.seq
        await table.wait_change(seq, 5)  # the failed handshake is journaled by the bus monitor
        await table.stop()
        return out

    status, wrong_role, unknown, malformed = run(main())
    assert status["ok"] and "expected" in status["result"]
    assert not wrong_role["ok"] and "may not open bets" in wrong_role["error"]
    assert not unknown["ok"] and "unknown key" in unknown["error"]
    assert not malformed["ok"] and "malformed" in malformed["error"]
    _, _, records = journal_settlements(cfg.journal, cfg)
    refused = [r for r in records if r["kind"] == "refused"]
    assert {r["who"] for r in refused} >= {"spot:3", "unauthenticated"}
    assert any("unknown key" in r["reason"] for r in refused)
    assert any("handshake" in r["reason"] or "authentic" in r["reason"] for r in refused)


def test_late_subscriber_follows_a_live_table_without_gaps(tmp_path: Path) -> None:
    cfg = table_config(tmp_path, "baccarat")

    published: list[int] = []

    async def main() -> tuple[list[int], BusClient]:
        table = await started(cfg)
        table.on_publish = lambda views: published.append(views[0])
        await Autoplay(table, SeededRng(8), rounds=3).run()
        seen: list[int] = []
        target = {"seq": 0}
        caught_up = asyncio.Event()

        def on_state(seq: int, state: dict) -> None:
            seen.append(seq)
            if seq >= target["seq"]:
                caught_up.set()

        client = BusClient(cfg.table_id, "public", cfg.bus.endpoints, on_state, heartbeat_s=0.2)
        task = asyncio.create_task(client.run())
        target["seq"] = table.state.seq
        await asyncio.wait_for(caught_up.wait(), 10)   # the snapshot arrived
        await Autoplay(table, SeededRng(9), rounds=3).run()
        caught_up.clear()
        target["seq"] = table.state.seq
        await asyncio.wait_for(caught_up.wait(), 10)   # and every update after it
        task.cancel()
        await table.stop()
        return seen, client

    seen, client = run(main())
    # the snapshot, then every update the table published after it (one per group commit), in order
    assert seen == published[published.index(seen[0]):] and client.gaps == 0 and client.snapshots == 1
    assert len(seen) > 10  # three rounds: a dozen updates or more


@pytest.mark.parametrize("table, message", [
    ({"id": "t 1", "game": "baccarat"}, "letters, digits"),
    ({"id": "t1", "game": "roulette"}, "unknown game 'roulette'"),
    ({"id": "t1"}, "which game"),
    ({"id": "t1", "game": "baccarat", "betting_seconds": -1}, "betting_seconds"),
    ({"id": "t1", "game": "baccarat", "colour": "red"}, "unknown key"),
])
def test_config_errors_name_the_key(tmp_path: Path, table: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        config_from_mapping({"table": table}, tmp_path / "t.toml")


def test_config_errors_in_rules_shoe_and_bus(tmp_path: Path) -> None:
    base = {"table": {"id": "t1", "game": "baccarat"}}
    cases = [({"rules": {"decks": 9}}, r"\[rules\]: rules.decks: 1 to 8"), ({"shoe": {"decks": 0}}, r"\[shoe\].decks"),
             ({"bus": {"keys": "nowhere"}}, "server.key_secret"), ({"bus": {"client": [{"key": "x.key", "role": "dealer"}]}},
                                                                   "no such key file"),
             ({"panel": {"file": "missing.toml"}}, "no such file"), ({"extra": {}}, "unknown key"),
             ({"bus": {"curve_screens": True}}, r"\[bus\].curve_screens: CURVE needs the keys folder")]
    for extra, message in cases:
        with pytest.raises(ConfigError, match=message):
            config_from_mapping({**base, **extra}, tmp_path / "t.toml")


def test_a_broken_journal_refuses_to_start(tmp_path: Path) -> None:
    import sqlite3

    from controller.journal import JournalIntegrityError

    cfg = table_config(tmp_path, "baccarat")

    async def once() -> None:
        table = await started(cfg)
        await Autoplay(table, SeededRng(1), rounds=1).run()
        await table.stop()

    run(once())
    db = sqlite3.connect(cfg.journal)
    db.execute("UPDATE journal SET record = replace(record, '\"amount\":', '\"amount\":1') WHERE seq = "
               "(SELECT min(seq) FROM journal WHERE record LIKE '%place_bet%')")
    db.commit()
    db.close()
    with pytest.raises(JournalIntegrityError, match="altered"):
        run(Table(cfg).start())
    assert event_from_json  # imported for the journal's event shapes


def test_example_configs() -> None:
    from controller.config import load_config

    root = Path(__file__).resolve().parent.parent / "deploy" / "config"
    cfg = load_config(root / "table-baccarat.toml")
    assert cfg.table_id == "bac-1" and cfg.game.name == "baccarat" and cfg.shoe.simulated
    # The live example parses down to its keys folder, which only an installed Pi has.
    with pytest.raises(ConfigError, match="no such key file /etc/croupier/keys/dealer.key"):
        load_config(root / "table-blackjack.toml")
