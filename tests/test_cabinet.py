"""The slot cabinet runtime over the simulated panel and reels: spins journaled before they show, money in and out,
doors, lockups and who clears them, power loss, recall, features, attract mode and config."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from controller.bus import CommandClient, Role, create_keys, load_public_key, load_secret_keys
from controller.cabinet import ATTENDANT, OPS, PLAYER, Cabinet
from controller.cabinetstate import balance
from controller.config import ConfigError, cabinet_config_from_mapping, load_config
from drivers.panel.max7219 import canonical
from tests.cabinet_helpers import ROOT, Script, cabinet_config, journal, replayed, run, started, stops_for


async def rest(cab: Cabinet) -> None:
    await asyncio.wait_for(cab.shown.wait(), 10)


async def until(cab: Cabinet, predicate: Any, timeout: float = 10) -> None:
    assert await cab.wait_for(predicate, timeout), f"timed out: {cab.state}"


def test_a_spin_is_journaled_before_the_reels_turn_and_they_rest_on_its_stops(tmp_path: Path) -> None:
    cfg = cabinet_config(tmp_path)
    seen: list[tuple[int, str]] = []

    async def main() -> Cabinet:
        cab = await started(cfg)
        turn = cab.panel.spin_reels

        def watched(stops: Any, on_done: Any) -> None:
            last = cab.journal.last_seq
            seen.append((last, next(cab.journal.entries(last - 1)).record["kind"]))
            turn(stops, on_done)

        cab.panel.spin_reels = watched
        assert (await cab.command(ATTENDANT, "add_credits", {"credits": 30}))["ok"]
        for _ in range(6):
            reply = await cab.command(PLAYER, "max_bet", {})
            assert reply["ok"], reply
            assert cab.showing and cab.panel.shown("credit").strip() == str(cab.state.recall[-1]["credits_before"] - 3)
            await rest(cab)
            last = cab.state.recall[-1]
            assert [cab.panel.sim.reel(i).stop for i in range(3)] == last["physical"]
            assert all(cab.panel.sim.reel(i).centred for i in range(3))
            assert cab.panel.shown("credit").strip() == str(cab.state.credits)
            assert cab.panel.shown("win").strip() == (str(last["won"]) if last["won"] else "")
        await cab.stop()
        return cab

    cab = run(main())
    assert [kind for _, kind in seen] == ["spin"] * 6  # the stops were in the journal when the reels set off
    state = replayed(cfg)
    assert state.slot == cab.state.slot and state.meters == cab.state.meters and state.credits == cab.state.credits
    held, owed = balance(state)
    assert held == owed == 30 - state.meters.coin_in + state.meters.coin_out
    assert state.meters.games_played == 6 and len(state.recall) == 6


def test_a_tampered_journal_keeps_the_cabinet_from_playing(tmp_path: Path) -> None:
    import sqlite3

    from controller.journal import JournalIntegrityError

    cfg = cabinet_config(tmp_path)

    async def once() -> None:
        cab = await started(cfg)
        assert (await cab.command(ATTENDANT, "add_credits", {"credits": 30}))["ok"]
        await cab.stop()

    run(once())
    db = sqlite3.connect(cfg.journal)  # someone gives themselves credits behind the journal's back
    db.execute("""UPDATE journal SET record = replace(record, '"credits":30', '"credits":3000') WHERE seq = 2""")
    assert db.total_changes == 1
    db.commit()
    db.close()
    with pytest.raises(JournalIntegrityError, match="altered"):
        run(Cabinet(cfg).start())


def test_coins_and_the_operator_add_credits_the_player_cannot(tmp_path: Path) -> None:
    cfg = cabinet_config(tmp_path, coin_cents=25)  # a 25-cent coin is 5 credits at 5 cents

    async def main() -> list[dict]:
        cab = await started(cfg)
        seconds = cab.panel.sim.coins("coin_in", 3)
        await until(cab, lambda s: s.credits == 15, seconds + 5)
        replies = [await cab.command(PLAYER, "add_credits", {"credits": 100}),
                   await cab.command(ATTENDANT, "add_credits", {"credits": 7}),
                   await cab.command(ATTENDANT, "add_credits", {"credits": -7}),
                   await cab.command(OPS, "add_credits", {"credits": "lots"})]
        assert cab.panel.shown("credit").strip() == "22"
        await cab.stop()
        return replies

    player, attendant, negative, malformed = run(main())
    assert not player["ok"] and "player may not add credits" in player["error"]
    assert attendant["ok"] and not negative["ok"] and "positive" in negative["error"]
    assert not malformed["ok"] and "malformed" in malformed["error"]
    state = replayed(cfg)
    assert (state.credits, state.meters.drop, state.meters.coins_in, state.meters.credits_added) == (22, 15, 3, 7)
    assert state.meters.refused == 3


@pytest.mark.slow
def test_a_door_opened_mid_spin_keeps_the_outcome_and_disables_play_money_and_payouts(tmp_path: Path) -> None:
    cfg = cabinet_config(tmp_path)

    async def main() -> dict:
        cab = await started(cfg)
        await cab.command(ATTENDANT, "add_credits", {"credits": 60})
        assert (await cab.command(PLAYER, "max_bet", {}))["ok"]
        journaled = cab.state.recall[-1]
        cab.panel.sim.open_door("main")  # mid-spin: the reels are turning
        await until(cab, lambda s: s.doors_open == ("main",))
        await rest(cab)
        assert [cab.panel.sim.reel(i).stop for i in range(3)] == journaled["physical"]  # the outcome stands
        assert cab.state.credits == journaled["credits_after"]
        out = {"tower": cab.panel.tower_conditions, "win": cab.panel.shown("win").strip()}
        out["spin"] = await cab.command(PLAYER, "spin", {})
        out["cash_out"] = await cab.command(PLAYER, "cash_out", {})
        out["add"] = await cab.command(ATTENDANT, "add_credits", {"credits": 5})
        credits = cab.state.credits
        cab.panel.sim.coins("coin_in", 1)
        await until(cab, lambda s: s.meters.coins_refused > 0)
        assert cab.state.credits == credits  # not credited while the door is open
        cab.panel.sim.close_door("main")
        await until(cab, lambda s: not s.doors_open)
        out["tower_after"] = cab.panel.tower_conditions
        out["again"] = await cab.command(PLAYER, "spin", {})
        await rest(cab)
        # and a payout stops while the door is open, then pays on
        assert (await cab.command(PLAYER, "cash_out", {}))["ok"]
        await until(cab, lambda s: s.payout is not None and s.payout.paid >= 1)
        cab.panel.sim.open_door("cash_box")
        await until(cab, lambda s: s.doors_open == ("cash_box",))
        paid = cab.state.payout.paid
        assert cab.panel.sim.lamp("hopper_motor") == 0.0  # the motor is off while the door is open
        assert cab.state.payout.paid <= paid + 1  # at most the coin already past the sensor
        cab.panel.sim.close_door("cash_box")
        await until(cab, lambda s: s.payout is None)
        await cab.stop()
        return out

    out = run(main())
    assert out["tower"] == {"door_open"} and out["win"] == canonical("dOOr")
    for key in ("spin", "cash_out", "add"):
        assert not out[key]["ok"] and "main door open" in out[key]["error"], out[key]
    assert out["tower_after"] == frozenset() and out["again"]["ok"]
    state = replayed(cfg)
    assert dict(state.meters.door_opens) == {"main": 1, "cash_box": 1} and state.meters.coins_refused == 1
    assert state.credits == 0 and state.meters.hopper_out > 0 and balance(state)[0] == balance(state)[1]
    kinds = [(r["kind"], r.get("name"), r.get("open")) for r in journal(cfg) if r["kind"] == "door"]
    assert kinds == [("door", "main", True), ("door", "main", False), ("door", "cash_box", True),
                     ("door", "cash_box", False)]


def test_a_cash_out_over_the_limit_is_a_hand_pay_cleared_by_the_attendant(tmp_path: Path) -> None:
    cfg = cabinet_config(tmp_path, hand_pay_limit_cents=100)  # 20 credits at 5 cents

    async def main() -> dict:
        cab = await started(cfg)
        await cab.command(ATTENDANT, "add_credits", {"credits": 60})
        out = {"cash_out": await cab.command(PLAYER, "cash_out", {})}
        out["tower"] = cab.panel.tower_conditions
        out["shown"] = (cab.panel.shown("win").strip(), cab.panel.shown("credit").strip())
        out["spin"] = await cab.command(PLAYER, "spin", {})
        out["player_clear"] = await cab.command(PLAYER, "clear", {})
        cab.panel.sim.press("reset_key")  # the attendant's key
        await until(cab, lambda s: not s.lockups)
        out["tower_after"] = cab.panel.tower_conditions
        await cab.stop()
        return out

    out = run(main())
    assert out["cash_out"] == {"ok": True, "result": {"via": "hand_pay", "credits": 60}}
    assert out["tower"] == {"hand_pay"} and out["shown"] == (canonical("HAnd PAY"), "60")
    assert not out["spin"]["ok"] and "hand pay 60 credits" in out["spin"]["error"]
    assert not out["player_clear"]["ok"] and "player may not clear" in out["player_clear"]["error"]
    assert out["tower_after"] == frozenset()
    state = replayed(cfg)
    assert (state.credits, state.meters.cancelled_handpaid, state.payout) == (0, 60, None)
    assert journal(cfg)[-1] == {"kind": "clear", "lockup": 1, "action": "paid", "by": "attendant"}


def test_a_win_at_the_jackpot_limit_locks_up_for_a_hand_pay(tmp_path: Path) -> None:
    cfg = cabinet_config(tmp_path, jackpot_limit_cents=100)  # 20 credits at 5 cents
    title = cfg.title

    async def main() -> dict:
        cab = await started(cfg, rng=Script(stops_for(title, "B1", "B1", "B1")))  # 30 credits at max bet
        await cab.command(ATTENDANT, "add_credits", {"credits": 3})
        await cab.command(PLAYER, "max_bet", {})
        await rest(cab)
        out = {"credits": cab.state.credits, "lockups": [x.kind for x in cab.state.lockups],
               "play": await cab.command(PLAYER, "spin", {}), "shown": cab.panel.shown("credit").strip()}
        out["clear"] = await cab.command(ATTENDANT, "clear", {})
        await cab.stop()
        return out

    out = run(main())
    assert out["credits"] == 0 and out["lockups"] == ["jackpot"] and out["shown"] == "30"
    assert not out["play"]["ok"] and "jackpot 30 credits" in out["play"]["error"]
    assert out["clear"]["ok"]
    state = replayed(cfg)
    assert (state.meters.jackpot_handpaid, state.meters.coin_out, state.meters.games_won) == (30, 0, 1)
    assert state.recall[-1]["jackpot"] == 30 and balance(state)[0] == balance(state)[1]


@pytest.mark.slow
def test_hopper_empty_refill_hand_pay_and_runaway(tmp_path: Path) -> None:
    cfg = cabinet_config(tmp_path, coin_cents=25)  # 5 credits a coin

    async def main() -> dict:
        cab = await started(cfg)
        cab.hopper.coins = 2
        await cab.command(ATTENDANT, "add_credits", {"credits": 27})
        assert (await cab.command(PLAYER, "cash_out", {}))["result"] == {"via": "hopper", "credits": 25}
        await until(cab, lambda s: bool(s.lockups))  # two coins, then silence: empty
        out: dict[str, Any] = {"empty": (cab.state.lockups[0].kind, cab.state.payout.paid, cab.state.credits)}
        out["tower"] = cab.panel.tower_conditions
        cab.hopper.coins = 10  # refilled
        assert (await cab.command(ATTENDANT, "clear", {"action": "refill"}))["ok"]
        await until(cab, lambda s: s.payout is None)
        out["after_refill"] = (cab.hopper.paid, cab.state.meters.hopper_out)
        # empty again, and this time the attendant pays the rest by hand
        await cab.command(ATTENDANT, "add_credits", {"credits": 18})
        cab.hopper.coins = 1
        await cab.command(PLAYER, "cash_out", {})
        await until(cab, lambda s: bool(s.lockups))
        assert (await cab.command(ATTENDANT, "clear", {"action": "hand_pay"}))["ok"]
        out["hand"] = (cab.state.payout, cab.state.meters.cancelled_handpaid, cab.state.credits)
        # a coin with no payout due: runaway, which only ops (a technician) may clear
        cab.hopper.coins = 5
        cab.hopper.runaway = True
        await until(cab, lambda s: bool(s.lockups))
        cab.hopper.runaway = False
        out["runaway"] = cab.state.lockups[0].kind
        out["attendant"] = await cab.command(ATTENDANT, "clear", {})
        out["ops"] = await cab.command(OPS, "clear", {})
        await cab.stop()
        return out

    out = run(main())
    assert out["empty"] == ("hopper_empty", 2, 2) and out["tower"] == {"tilt"}
    assert out["after_refill"] == (5, 25)
    assert out["hand"] == (None, 15, 0)  # 20 credits out: 1 coin (5) by the hopper, 15 by hand; 0 left
    assert out["runaway"] == "hopper_runaway"
    assert not out["attendant"]["ok"] and "no lockup for attendant" in out["attendant"]["error"]
    assert out["ops"]["ok"]
    state = replayed(cfg)
    assert state.meters.hopper_extra >= 5 and state.meters.hopper_out == 30
    assert dict(state.meters.lockups) == {"hopper_empty": 2, "hopper_runaway": 1}
    assert balance(state)[0] == balance(state)[1]


def test_coin_line_faults_lock_the_game_noise_does_not(tmp_path: Path) -> None:
    cfg = cabinet_config(tmp_path)

    async def main() -> list[Any]:
        cab = await started(cfg)
        sim = cab.panel.sim
        sim.coins("coin_in", 1, width=0.005)  # a spike: logged as a fault, nothing else
        await until(cab, lambda s: s.meters.faults == 1)
        kinds = [[x.kind for x in cab.state.lockups]]
        sim.coins("coin_in", 2, width=0.05, gap=0.005)  # a coin pulled back through the acceptor
        await until(cab, lambda s: bool(s.lockups))
        kinds.append([x.kind for x in cab.state.lockups])
        await cab.command(ATTENDANT, "clear", {})
        sim.press("coin_in")  # jammed: the line stays active
        await until(cab, lambda s: bool(s.lockups))
        kinds.append([x.kind for x in cab.state.lockups])
        sim.release("coin_in")
        kinds.append(await cab.command(ATTENDANT, "add_credits", {"credits": 5}))
        await cab.stop()
        return kinds

    noise, reverse, jam, refused = run(main())
    assert noise == [] and reverse == ["reverse_coin"] and jam[0] == "coin_in_jam"
    assert not refused["ok"] and "money in is disabled" in refused["error"]


def test_a_reel_that_slips_is_a_mis_index_cleared_by_ops_then_rehomed(tmp_path: Path) -> None:
    cfg = cabinet_config(tmp_path)

    async def main() -> dict:
        cab = await started(cfg)
        await cab.command(ATTENDANT, "add_credits", {"credits": 30})
        await cab.command(PLAYER, "max_bet", {})
        await rest(cab)
        cab.panel.sim.reel(1).slip(9)  # a belt slipped by more than half a symbol (400 steps, 26 stops)
        await cab.command(PLAYER, "max_bet", {})
        await rest(cab)
        await until(cab, lambda s: bool(s.lockups))
        out: dict[str, Any] = {"lockup": cab.state.lockups[0], "tower": cab.panel.tower_conditions}
        out["attendant"] = await cab.command(ATTENDANT, "clear", {})
        out["ops"] = await cab.command(OPS, "clear", {})
        await rest(cab)
        out["reels"] = [cab.panel.sim.reel(i).stop for i in range(3)]
        out["journaled"] = cab.state.recall[-1]["physical"]
        await cab.stop()
        return out

    out = run(main())
    assert out["lockup"].kind == "reel_misindex" and "reel 2: mis-index" in out["lockup"].text
    assert out["tower"] == {"tilt"} and not out["attendant"]["ok"] and out["ops"]["ok"]
    assert out["reels"] == out["journaled"]


def test_power_loss_mid_spin_and_mid_payout_resumes_exactly(tmp_path: Path) -> None:
    cfg = cabinet_config(tmp_path, coin_cents=25)

    async def first() -> Any:
        cab = await started(cfg)
        await cab.command(ATTENDANT, "add_credits", {"credits": 40})
        await cab.command(PLAYER, "max_bet", {})
        assert cab.showing
        await cab.stop()  # the power goes while the reels turn
        return cab.state

    async def second(before: Any) -> Any:
        cab = await started(cfg)  # the reels turn to the journaled stops
        assert cab.state.credits == before.credits and cab.state.slot == before.slot
        assert [cab.panel.sim.reel(i).stop for i in range(3)] == before.recall[-1]["physical"]
        await cab.command(PLAYER, "cash_out", {})
        await until(cab, lambda s: s.payout is not None and s.payout.paid >= 2)
        await cab.stop()  # and again, mid-payout
        return cab.state

    async def third(before: Any) -> tuple[Any, int]:
        assert replayed(cfg).payout == before.payout  # what the journal holds when the power comes back
        cab = await started(cfg)
        await until(cab, lambda s: s.payout is None)  # the hopper pays on from where it was
        paid = cab.hopper.paid
        await cab.stop()
        return cab.state, paid

    mid_spin = run(first())
    mid_payout = run(second(mid_spin))
    end, paid_after = run(third(mid_payout))
    payout = mid_payout.payout
    assert paid_after == payout.coins - payout.paid  # exactly the coins still owed
    assert end.meters.hopper_out == payout.credits and end.meters.hopper_extra == 0
    assert end.meters.power_resets == 3 and balance(end)[0] == balance(end)[1]


def test_recall_keeps_the_last_ten_games_with_stops_bets_wins_and_meter_changes(tmp_path: Path) -> None:
    cfg = cabinet_config(tmp_path, panel=None)
    title = cfg.title

    async def main() -> dict:
        flakes = stops_for(title, "SF", "--", "--")  # a snowflake on the payline feeds the snowman at max bet
        cab = await started(cfg, rng=Script(flakes * 12))
        await cab.command(ATTENDANT, "add_credits", {"credits": 100})
        for _ in range(12):
            assert (await cab.command(PLAYER, "max_bet", {}))["ok"]
            await rest(cab)
        reply = await cab.command(ATTENDANT, "recall", {})
        refused = await cab.command(PLAYER, "recall", {})
        await cab.stop()
        return {"recall": reply["result"], "refused": refused}

    out = run(main())
    games = out["recall"]
    assert [g["game"] for g in games] == list(range(3, 13))
    last = games[-1]
    assert last["stops"] == stops_for(title, "SF", "--", "--") and last["bet"] == {"coins": 3, "lines": 1}
    assert last["window"][1] == ["SF", "--", "--"] and last["won"] == 0 and last["complete"]
    assert last["meters"] == [{"meter": "snowman", "before": 11, "after": 12, "why": "1 snowflake(s)"}] or \
        last["meters"][0]["meter"] == "snowman" and last["meters"][0]["after"] == 12
    assert last["credits_before"] - last["credits_after"] == 3
    assert not out["refused"]["ok"]


def test_pick_cash_in_and_next_paytable(tmp_path: Path) -> None:
    for name in ("toro", "bad", "myow"):
        (tmp_path / name).mkdir()
    toro = cabinet_config(tmp_path / "toro", "el-toro", panel="screen")
    bad = cabinet_config(tmp_path / "bad", "its-good-to-be-bad", panel=None, progressive={"mode": "standalone"})
    myow = cabinet_config(tmp_path / "myow", "operation-myow", panel="screen")

    async def el_toro() -> dict:
        cab = await started(toro, rng=Script(stops_for(toro.title, "MT", "--", "BL") + [0]))  # the matador wins
        await cab.command(ATTENDANT, "add_credits", {"credits": 10})
        await cab.command(PLAYER, "max_bet", {})
        await rest(cab)
        out = {"pending": cab.state.slot.pending, "feature": cab.panel.shown("feature").strip(),
               "spin": await cab.command(PLAYER, "spin", {}), "cash_out": await cab.command(PLAYER, "cash_out", {})}
        cab.panel.sim.tap("pick1", 0.05)  # the matador
        await until(cab, lambda s: s.slot.pending is None)
        out["credits"] = cab.state.credits
        out["recall"] = cab.state.recall[-1]
        await cab.stop()
        return out

    async def good_to_be_bad() -> dict:
        losers = stops_for(bad.title, "--", "--", "--")
        cab = await started(bad, rng=Script(losers * 4))
        await cab.command(ATTENDANT, "add_credits", {"credits": 30})
        for _ in range(4):  # four losses in a row at max bet bank a free winning spin
            await cab.command(PLAYER, "max_bet", {})
            await rest(cab)
        out = {"banked": cab.state.slot.meters["free_winning_spins"],
               "cash_in": await cab.command(PLAYER, "cash_in", {})}
        out["free"] = cab.state.slot.free.remaining
        credits = cab.state.credits
        await cab.command(PLAYER, "spin", {})  # the free winning spin: it costs nothing and wins
        await rest(cab)
        out["won"] = (cab.state.credits - credits, cab.state.recall[-1]["free_spin"])
        await cab.stop()
        return out

    async def myow_paytable() -> dict:
        cab = await started(myow)
        cab.panel.sim.tap("next_paytable", 0.05)
        await until(cab, lambda s: s.slot.paytable == 1)
        out = {"paytable": cab.state.slot.paytable, "recall": cab.state.recall[-1]}
        await cab.stop()
        return out

    t = run(el_toro())
    assert t["pending"] == "bullfight" and t["feature"] == "PIC"
    assert not t["spin"]["ok"] and "pick first" in t["spin"]["error"]
    assert not t["cash_out"]["ok"] and "bonus" in t["cash_out"]["error"]
    assert t["credits"] == 7 + 200 and t["recall"]["pick"]["choice"] == "matador" and t["recall"]["complete"]
    b = run(good_to_be_bad())
    assert b["banked"] == 1 and b["cash_in"]["ok"] and b["free"] == 1
    assert b["won"][0] > 0 and b["won"][1] is True
    m = run(myow_paytable())
    assert m["paytable"] == 1 and m["recall"]["kind"] == "paytable"


def test_title_lamps_and_attract_mode(tmp_path: Path) -> None:
    cfg = cabinet_config(tmp_path, "light-speed", panel="screen", progressive={"mode": "standalone"},
                         attract_seconds=0.2)
    icons = stops_for(cfg.title, "LS", "--", "--")  # a Light Speed icon: the meter goes up a level

    async def main() -> dict:
        cab = await started(cfg, rng=Script(icons * 3))
        out = {}
        await asyncio.wait_for(cab.attracting.wait(), 5)
        out["attract"] = cab.panel._lamp("spin").overlay is not None  # the attract chase borrows the play lamps
        await cab.command(ATTENDANT, "add_credits", {"credits": 30})
        out["attract_after_credit"] = cab.attracting.is_set()
        for _ in range(3):
            await cab.command(PLAYER, "max_bet", {})
            await rest(cab)
        out["level"] = cab.state.slot.meters["light_speed"]
        out["feature"] = cab.panel.shown("feature").strip()
        out["lamps"] = bin(int.from_bytes(bytes(cab.panel.sim.display("feature_lamps").cells), "big")).count("1")
        out["pool"] = cab.panel.shown("progressive").strip()
        await cab.stop()
        return out

    out = run(main())
    assert out["attract"] is True and out["attract_after_credit"] is False
    assert out["level"] == 4 and out["feature"] == "4" and out["lamps"] == 4
    assert out["pool"] == "700.00"  # $700 reset: the contributions are still below a credit


def test_commands_over_the_bus_by_role(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    for name in ("server", "attendant", "ops", "stranger"):
        create_keys(keys, name)
    cfg = cabinet_config(tmp_path, panel=None)
    cfg = dataclasses.replace(cfg, bus=dataclasses.replace(
        cfg.bus, keys=keys, clients=((keys / "attendant.key", "attendant"), (keys / "ops.key", "ops"))))

    async def main() -> list[dict]:
        cab = await started(cfg)
        server = load_public_key(keys / "server.key")

        def client(name: str) -> CommandClient:
            return CommandClient(cfg.bus.endpoints.commands, load_secret_keys(keys / f"{name}.key_secret"), server)

        attendant, ops, stranger = client("attendant"), client("ops"), client("stranger")
        out = [await attendant.send("add_credits", credits=12), await attendant.send("spin"),
               await attendant.send("audit"), await ops.send("meters"), await stranger.send("add_credits", credits=1),
               await attendant.send("status")]
        for c in (attendant, ops, stranger):
            c.close()
        await cab.stop()
        return out

    added, spin, audit, meters, stranger, status = run(main())
    assert added["ok"] and added["result"] == {"credits": 12}
    assert not spin["ok"] and "attendant may not spin" in spin["error"]
    assert not audit["ok"] and meters["ok"] and meters["result"]["credits_added"] == 12
    assert not stranger["ok"] and "unknown key" in stranger["error"]
    assert status["ok"] and status["result"]["credits"] == 12 and "dealer_only" in status["result"]
    assert Role("attendant") == ATTENDANT


@pytest.mark.parametrize("cabinet, message", [
    ({"id": "c 1", "title": "frozen-assets"}, "letters, digits"),
    ({"id": "c1", "title": "nope"}, "unknown title 'nope'"),
    ({"id": "c1", "title": "frozen-assets", "denomination": 7}, "denomination: Frozen Assets is played at"),
    ({"id": "c1", "title": "frozen-assets", "coin_cents": 7}, "coin_cents: a coin must be whole credits"),
    ({"id": "c1", "title": "light-speed"}, "give \\[cabinet.progressive\\]"),
    ({"id": "c1", "title": "light-speed", "progressive": {"mode": "link"}}, "missing link, publish"),
    ({"id": "c1", "title": "frozen-assets", "progressive": {"mode": "standalone"}}, "has no progressive"),
    ({"id": "c1", "title": "frozen-assets", "reels": "mechanical"}, "mechanical reels need"),
    ({"id": "c1", "title": "frozen-assets", "buttons": {"help": "dance"}}, "buttons.help: 'dance' is not one of"),
    ({"id": "c1", "title": "frozen-assets", "colour": "red"}, "unknown key"),
])
def test_cabinet_config_errors_name_the_key(tmp_path: Path, cabinet: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        cabinet_config_from_mapping({"cabinet": cabinet}, tmp_path / "c.toml")


def test_mechanical_reels_must_carry_the_titles_strips(tmp_path: Path) -> None:
    data = {"cabinet": {"id": "c1", "title": "light-speed", "reels": "mechanical", "progressive": {"mode": "standalone"}},
            "panel": {"file": str(ROOT / "deploy/config/panel-cabinet-3reel-mechanical.toml")}}
    with pytest.raises(ConfigError, match="reels of 26 stops do not carry Light Speed's strips"):
        cabinet_config_from_mapping(data, tmp_path / "c.toml")


def test_example_cabinet_and_link_configs() -> None:
    root = ROOT / "deploy" / "config"
    cab = load_config(root / "cabinet-frozen-assets.toml")
    assert cab.cabinet_id == "cab-1" and cab.title.id == "frozen-assets" and cab.reels == "mechanical"
    link = load_config(root / "progressive-light-speed.toml")
    assert link.link_id == "ls-link" and link.reset_cents == 70_000
    # The linked cabinet names keys that only an installed Pi has.
    with pytest.raises(ConfigError, match="no such key file /etc/croupier/keys/"):
        load_config(root / "cabinet-light-speed.toml")
