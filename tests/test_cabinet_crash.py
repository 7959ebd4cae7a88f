"""Crash test: a simulated Frozen Assets cabinet SIGKILLed at 200 seeded points (mid-spin, mid-payout, mid-credit) and
restarted each time loses no credit and duplicates none, its meters balance after every record, and its feature
meters are exactly what the journaled games make them. With notes and tickets (tests/tito_fakes.py's devices, whose
physical world outlives each kill), no note or ticket is lost or paid twice across 200 kills at insert, escrow,
stack, ticket print and ticket redeem."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.cabinetstate import balance, new_state, step
from controller.journal import Journal
from controller.slots import Bet, new_state as new_slot_state, pick, spin
from tests import crash_driver
from tests.cabinet_helpers import cabinet_config

pytestmark = pytest.mark.slow

SHM = Path("/dev/shm")


def run_driver(tmp: Path, kills: int, panel: str, span: int, with_tito: bool = False, aims: tuple[str, ...] = (),
               **cabinet: object) -> tuple[object, list[dict]]:
    cfg = cabinet_config(tmp, "frozen-assets", panel=panel, **{"hopper_timeout": 1.0, "coin_cents": 50, **cabinet})
    kill_lines = crash_driver.run(cfg, tmp, kills, span, tito=with_tito, aims=aims)
    return cfg, kill_lines


def audit(cfg: object, kills: int) -> tuple[Counter, object]:
    """Replay the journal independently and check every money and game rule after every record."""
    with Journal(cfg.journal, cfg.table_id) as j:  # type: ignore[attr-defined]  # the chain verifies after every crash
        records = [e.record for e in j.entries()]
    state = new_state(cfg.cabinet_id, cfg.title, cfg.denomination, cfg.settings)  # type: ignore[attr-defined]
    slot = new_slot_state(cfg.title)  # type: ignore[attr-defined]
    kinds: Counter = Counter()
    cashed = awards = 0
    games = []
    for r in records:
        state, _ = step(state, r)  # every record replays: no game twice, no coin beyond its payout, no overdraft
        held, owed = balance(state)
        assert held == owed, f"meters do not balance after {r}"
        assert state.credits >= 0
        kinds[r["kind"]] += 1
        if r["kind"] == "spin":
            games.append(r["game"])
            slot, outcome = spin(slot, tuple(r["stops"]), Bet.from_json(r["bet"]))
            awards += sum(a.credits for a in outcome.awards)
        elif r["kind"] == "pick":
            slot, outcome = pick(slot, r["choice"], r["draw"])
            awards += outcome.won
        elif r["kind"] == "cashout":
            cashed += r["credits"]
    m = state.meters
    assert games == list(range(1, len(games) + 1)), "a game was lost or played twice"
    assert m.games_played == len(games) and m.games_won + m.games_lost == len(games)
    assert state.payout is None and not state.lockups, "the last life left a payout or a lockup"
    assert m.hopper_extra == 0 and cashed == m.hopper_out + m.cancelled_handpaid, "a payout was lost or paid twice"
    assert dict(state.slot.meters) == dict(slot.meters), "the feature meters drifted from the journaled games"
    assert sum(c for _, (_, c) in m.features) == awards
    assert m.power_resets == kinds["start"] == kills + 1
    return kinds, state


@pytest.fixture()
def fast_tmp(tmp_path: Path) -> Iterator[Path]:
    # A SIGKILL leaves the kernel's page cache alone, so a journal in RAM tests the same recovery as one on disk
    # (power-loss durability is SQLite's synchronous=FULL, which no test can pull the plug on), in a third of the time.
    # A folder of its own (two test runs at once, or one a kill left behind, must never share a journal).
    if SHM.is_dir():
        folder = Path(tempfile.mkdtemp(prefix=f"croupier-crash-{tmp_path.name}-", dir=SHM))
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    else:
        yield tmp_path


def test_kill_and_restart_200_times(fast_tmp: Path) -> None:
    panel = crash_driver.ROOT / "tests" / "panel-cabinet-crash.toml"
    cfg, kill_lines = run_driver(fast_tmp, 200, str(panel), 16, aims=("spin", "cashout", "coin_out", "credit"),
                                 spin_seconds=0.0, coin_cents=100)
    landed = Counter((x["record"] or {}).get("kind") for x in kill_lines if x["record"])
    # kills landed right after a spin, a cash out, a coin paid mid-payout and money in
    assert landed["spin"] and landed["cashout"] and landed["coin_out"] and landed["credit"], landed
    kinds, state = audit(cfg, 200)
    assert kinds["spin"] > 300 and kinds["coin_out"] and state.meters.drop and state.meters.credits_added
    assert state.slot.meters["snowman"] or state.meters.features  # the snowman was fed along the way


def test_kill_and_restart_with_mechanical_reels(fast_tmp: Path) -> None:
    cfg, kill_lines = run_driver(fast_tmp, 20, "mechanical", 16)
    assert Counter((x["record"] or {}).get("kind") for x in kill_lines if x["record"])["spin"]
    audit(cfg, 20)


def test_tail_loss_after_a_kill_refuses_to_start(fast_tmp: Path) -> None:
    """The crash test's tail-loss case at a cabinet: killed mid-play, then its journal's tail taken each way."""
    killed = fast_tmp / "killed"
    killed.mkdir()
    cfg = cabinet_config(killed, "frozen-assets", hopper_timeout=1.0, coin_cents=50)
    crash_driver.run(cfg, killed, 3, 16, end_killed=True)
    crash_driver.check_tail_loss(
        killed, lambda folder: cabinet_config(folder, "frozen-assets", hopper_timeout=1.0, coin_cents=50), fast_tmp)


def audit_tito(cfg: object, folder: Path) -> Counter:
    """Every note and ticket against the devices' physical world: what is in the stacker was credited once, what
    the printer gave out was paid once (a copy reprinted after a kill carries the same number), nothing else."""
    with Journal(cfg.journal, cfg.table_id) as j:  # type: ignore[attr-defined]
        records = [e.record for e in j.entries()]
    state = new_state(cfg.cabinet_id, cfg.title, cfg.denomination, cfg.settings)  # type: ignore[attr-defined]
    for r in records:
        state, _ = step(state, r)
    m = state.meters
    world = json.loads((folder / "validator.json").read_text())
    printed = json.loads((folder / "printer.json").read_text())["printed"]
    assert state.escrow is None and world["escrow"] is None
    notes = [i["cents"] for i in world["stacker"] if i["cents"]]
    assert sum(notes) == m.notes_in_cents and len(notes) == sum(n for _, n in m.notes_in), "a note lost or doubled"
    cents_of = {t["validation"]: t["cents"] for t in printed}
    assert all(cents_of[t["validation"]] == t["cents"] for t in printed), "two tickets with one number and two values"
    validations = {}
    for r in records:
        if r["kind"] == "ticket_out" and r["what"] == "validation":
            validations[r["number"]] = r["validation"]
    paid = [validations[r["number"]] for r in records if r["kind"] == "ticket_out" and r["what"] == "printed"]
    assert len(paid) == len(set(paid)) and set(paid) <= set(cents_of), "a ticket paid twice, or paid unprinted"
    failed_after_print = set(cents_of) - set(paid)  # printed, then failed on a reprint: never known to the host
    assert sum(cents_of[v] for v in paid) == m.tickets_out_cashable_cents + m.tickets_out_restricted_cents
    stacked = [i["barcode"] for i in world["stacker"] if i["barcode"]]
    assert len(stacked) == len(set(stacked)), "a ticket redeemed twice"
    assert set(stacked) <= set(paid) and not set(stacked) & failed_after_print
    assert sum(cents_of[v] for v in stacked) == m.tickets_in_cashable_cents + m.tickets_in_restricted_cents
    return Counter(f"{r['kind']}:{r.get('what')}" for r in records if r["kind"] in ("note", "ticket_in", "ticket_out"))


def _tito_run(folder: Path, kills: int) -> tuple[Counter, Counter]:
    panel = crash_driver.ROOT / "tests" / "panel-cabinet-crash.toml"
    aims = ("note:stacked", "ticket_out:printed", "ticket_in:stacked", "note:escrow", "ticket_out:requested",
            "ticket_in:inserted")
    cfg, kill_lines = run_driver(folder, kills, str(panel), 16, with_tito=True, aims=aims, spin_seconds=0.0,
                                 coin_cents=100, tito={"validation_id": 0x654321})
    landed = Counter(f"{x['record']['kind']}:{x['record'].get('what')}" for x in kill_lines if x["record"])
    audit(cfg, kills)
    return landed, audit_tito(cfg, folder)


@pytest.mark.long  # minutes on a loaded 2-core machine: `pytest --long`; CI runs the short one below
def test_kill_and_restart_with_notes_and_tickets_200_times(fast_tmp: Path) -> None:
    landed, kinds = _tito_run(fast_tmp, 200)
    landed["note:escrow"] += landed["note:stacking"]  # escrow and stacking are journaled in one transaction
    for kind in ("note:escrow", "note:stacked", "ticket_out:requested", "ticket_out:printed", "ticket_in:inserted",
                 "ticket_in:stacked"):  # kills landed right after each step of a note and of a ticket out and in
        assert landed[kind], (kind, landed)
    assert kinds["note:stacked"] > 20 and kinds["ticket_out:printed"] > 10 and kinds["ticket_in:stacked"] > 5, kinds


def test_kill_and_restart_with_notes_and_tickets_briefly(fast_tmp: Path) -> None:
    landed, kinds = _tito_run(fast_tmp, 30)
    assert kinds["note:stacked"] and kinds["ticket_out:printed"] and kinds["ticket_in:stacked"], kinds
    assert landed["ticket_out:printed"] + landed["ticket_in:stacked"] + landed["note:stacked"], landed
