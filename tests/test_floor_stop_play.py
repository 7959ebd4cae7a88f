"""`[floor] stop_play_after`: a table or cabinet starts no round or spin once the floor has been away that long, journals why, and plays again when it is back (a manual clock; the replicator's floor contact set by hand)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from controller.bus import Role
from controller.cabinet import ATTENDANT, PLAYER
from controller.config import ConfigError, any_config_from_mapping
from controller.floor.config import FloorConfig
from controller.floor.replicator import FloorStatus, Replicator, stop_play_reason
from controller.journal import Journal
from controller.table import Table
from tests.cabinet_helpers import cabinet_config, run, started
from tests.table_helpers import table_config


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replicators that never talk to a floor: the test says when the floor answers (`_contact`)."""
    async def idle(self: Replicator) -> None:
        await asyncio.Event().wait()

    monkeypatch.setattr(Replicator, "run", idle)


def floor(minutes: float | None) -> FloorConfig:
    return FloorConfig(("nats://127.0.0.1:1",), "croupier.journal.x", stop_play_after=minutes)


def records(cfg: Any) -> list[dict[str, Any]]:
    with Journal(cfg.journal, cfg.table_id) as j:
        return [e.record for e in j.entries()]


def test_the_reason_counts_from_the_last_contact_and_only_while_the_floor_is_away() -> None:
    status = FloorStatus(last_contact=100.0)
    assert stop_play_reason(status, None, 10**9) is None           # no stop_play_after: never
    assert stop_play_reason(status, 30, 100.0 + 30 * 60 - 1) is None
    assert stop_play_reason(status, 30, 100.0 + 30 * 60) == \
        "no floor for 30 min (stop_play_after = 30): play stops until the floor is back"
    status.reachable = True
    assert stop_play_reason(status, 30, 10**9) is None


@pytest.mark.slow
def test_a_cabinet_locks_up_after_n_minutes_without_the_floor_and_resumes_when_it_is_back(
        tmp_path: Path, offline: None) -> None:
    clock = Clock()
    cfg = dataclasses.replace(cabinet_config(tmp_path, panel=None), floor=floor(30))

    async def main() -> None:
        cab = await started(cfg, clock=clock)
        try:
            assert (await cab.command(ATTENDANT, "add_credits", {"credits": 30}))["ok"]
            clock.now += 29 * 60  # the floor has not answered since the start: not long enough yet
            assert (await cab.command(PLAYER, "spin", {}))["ok"]
            clock.now += 60
            reply = await cab.command(PLAYER, "spin", {})
            assert reply == {"ok": False, "error": "no floor for 30 min (stop_play_after = 30): play stops until "
                                                   "the floor is back"}
            await cab.floor_check()
            assert [x.kind for x in cab.state.lockups] == ["floor_offline"]
            assert (await cab.command(PLAYER, "spin", {}))["error"] == cab.state.lockups[0].text
            clock.now += 3600
            await cab.floor_check()  # still away: one lockup, not one per check
            assert len(cab.state.lockups) == 1

            cab.replicator._contact()  # the floor answers again
            await cab.floor_check()
            assert cab.state.lockups == ()
            assert (await cab.command(PLAYER, "spin", {}))["ok"]
        finally:
            await cab.stop()

    run(main())
    kinds = [(r["kind"], r["lockup"]["kind"] if r["kind"] == "lockup" else r.get("by") or r.get("who")) for r in
             records(cfg) if r["kind"] in ("spin", "lockup", "clear", "refused")]
    assert kinds == [("spin", None), ("refused", "player"), ("lockup", "floor_offline"), ("refused", "player"),
                     ("clear", "ops:floor"), ("spin", None)]


@pytest.mark.slow
def test_without_stop_play_after_a_cabinet_plays_on_however_long_the_floor_is_away(tmp_path: Path,
                                                                                  offline: None) -> None:
    clock = Clock()
    cfg = dataclasses.replace(cabinet_config(tmp_path, panel=None), floor=floor(None))

    async def main() -> None:
        cab = await started(cfg, clock=clock)
        try:
            assert (await cab.command(ATTENDANT, "add_credits", {"credits": 30}))["ok"]
            clock.now += 10**7
            await cab.floor_check()
            assert (await cab.command(PLAYER, "spin", {}))["ok"] and cab.state.lockups == ()
        finally:
            await cab.stop()

    run(main())


@pytest.mark.slow
def test_a_table_refuses_the_next_round_with_a_dealer_alert_and_opens_again_when_the_floor_is_back(
        tmp_path: Path, offline: None) -> None:
    clock = Clock()
    cfg = dataclasses.replace(table_config(tmp_path, "blackjack"), floor=floor(5))
    dealer = Role("dealer")

    async def main() -> None:
        table = Table(cfg, clock=clock)
        await table.start()
        try:
            assert (await table.command(dealer, "shuffle", {}))["ok"]
            assert await table.wait_for(lambda state: not state.shoe.shuffling, 10)
            clock.now += 5 * 60
            reply = await table.command(dealer, "open_bets", {})
            assert reply == {"ok": False, "error": "no floor for 5 min (stop_play_after = 5): play stops until the "
                                                   "floor is back"}
            await table.floor_check()  # the refusal's alert was journaled first: no second one
            assert [(a.kind, a.options) for a in table.state.alerts] == [("floor", ("confirm",))]
            table.replicator._contact()
            await table.floor_check()
            assert table.state.alerts == ()
            reply = await table.command(dealer, "open_bets", {})
            assert reply["ok"], reply
        finally:
            await table.stop()

    asyncio.run(asyncio.wait_for(main(), 60))
    kinds = [r["kind"] for r in records(cfg) if r["kind"] in ("alert", "resolve", "refused")]
    assert kinds == ["refused", "alert", "resolve"]


@pytest.mark.parametrize("value", [0, -1, True, "30", [30]])
def test_a_bad_stop_play_after_is_refused_naming_the_key(tmp_path: Path, value: Any) -> None:
    data = {"progressive": {"id": "l1", "reset_cents": 100, "journal": str(tmp_path / "l.journal")},
            "bus": {"publish": "tcp://127.0.0.1:1", "snapshot": "tcp://127.0.0.1:2", "commands": "tcp://127.0.0.1:3"},
            "floor": {"servers": ["nats://127.0.0.1:4222"], "stop_play_after": value}}
    with pytest.raises((ConfigError, ValueError), match="stop_play_after"):
        any_config_from_mapping(data, tmp_path / "l.toml")
