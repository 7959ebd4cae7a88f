"""The vectorised path equals spin(): every combination's line pays, and every spin of every title outcome by outcome, meters included."""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest

from controller.batch.slots import Policy, play, simulate, tables
from controller.rng import SeededRng
from controller.slots import Bet, all_titles, cash_in, draw_pick, draw_stops, get_title, new_state, pick, spin
from controller.slots.engine import line_wins

TITLES = sorted(t.id for t in all_titles())


@pytest.mark.exhaustive
@pytest.mark.parametrize("title_id", TITLES)
def test_tables_hold_what_spin_pays_on_every_stop_combination(title_id: str) -> None:
    t = get_title(title_id)
    tb = tables(t)
    expected = np.zeros((len(t.paytables), len(tb.weights)), dtype=np.int64)
    for i, phys in enumerate(product(*(range(r.size) for r in t.reels))):
        window = t.window(phys)
        for pt in range(len(t.paytables)):
            expected[pt, i] = sum(w.credits for w in line_wins(t, pt, window, t.max_bet))
    for pt in range(len(t.paytables)):
        assert np.array_equal(tb.spin_pay(pt, t.max_coins, t.lines), expected[pt])
    # the weights are the virtual stops behind each physical combination
    assert int(tb.weights.sum()) == tb.cycle == np.prod([r.virtual_size for r in t.reels])


def _scalar(title_id: str, spins: int, seed: int, bet: Bet, policy: Policy) -> dict[str, list]:
    """Play spin() the way the simulator's policy does, recording every input and result."""
    t = get_title(title_id)
    rng = SeededRng(seed)
    state = new_state(t, policy.paytable)
    rec: dict[str, list] = {"stops": [], "draws": [], "won": [], "paid": [], "progressive": [], "fed": [],
                            "free": [], **{m: [] for m in state.meters}}
    for _ in range(spins):
        banked = state.meters.get("free_winning_spins", 0)
        if state.free is None and policy.cash_in_at and banked >= policy.cash_in_at:
            state, _ = cash_in(state)
        stops = draw_stops(state, rng)
        state, out = spin(state, stops, state.free.bet if state.free else bet)
        won, draw = out.won, 0
        if state.pending:
            draw = draw_pick(state, rng)
            state, picked = pick(state, policy.pick, draw)
            won += picked.won
        for key, value in (("stops", stops), ("draws", draw), ("won", won), ("paid", out.cost > 0),
                           ("progressive", out.progressive_hit), ("fed", out.progressive_contribution),
                           ("free", state.free.remaining if state.free else 0)):
            rec[key].append(value)
        for meter, value in state.meters.items():
            rec[meter].append(value)
    return rec


CASES = [(t, None, Policy()) for t in TITLES] + [
    ("its-good-to-be-bad", None, Policy(cash_in_at=0)), ("its-good-to-be-bad", None, Policy(cash_in_at=3)),
    ("its-good-to-be-bad", Bet(1), Policy()), ("el-toro", None, Policy(pick="bull")), ("el-toro", Bet(2), Policy()),
    ("crazy-dragon", Bet(2), Policy()), ("frozen-assets", Bet(1), Policy()), ("light-speed", Bet(2), Policy()),
    ("bank-on-it", Bet(2), Policy()), ("the-big-heist", Bet(1), Policy()), ("bonkers", Bet(1), Policy()),
    ("high-rollers", Bet(1, 3), Policy()), ("pharaohs-gold", Bet(1, 2), Policy()),
    *[("operation-myow", None, Policy(paytable=k)) for k in range(1, 5)],
]


@pytest.mark.slow
@pytest.mark.parametrize("title_id,bet,policy", CASES)
def test_the_vectorised_step_gives_what_spin_gives(title_id: str, bet: Bet | None, policy: Policy) -> None:
    t = get_title(title_id)
    bet = bet or t.max_bet
    machines = [_scalar(title_id, 1500, seed, bet, policy) for seed in (1, 2, 3)]
    stops = np.stack([np.array(m["stops"]) for m in machines], axis=1)
    draws = np.stack([np.array(m["draws"]) for m in machines], axis=1)
    out = play(t, stops, bet.coins, bet.lines, policy, draws)
    for key in ("won", "paid", "progressive", "fed", "free", *new_state(t).meters):
        for j, m in enumerate(machines):
            assert np.array_equal(out[key][:, j], np.array(m[key])), f"{key} differs on machine {j}"
    if title_id in ("crazy-dragon", "light-speed", "its-good-to-be-bad") and bet == t.max_bet:
        assert out["fed"].sum() > 0


def test_simulate_counts_paid_spins_and_their_free_spins_once() -> None:
    t = get_title("bonkers")
    r = simulate(t, 50_000, seed=4, machines=50)
    assert r.spins >= 50_000 and r.machines == 50 and r.bet == 3 and (r.paid >= 1000).all()
    assert 0.5 < r.rtp < 1.5 and 0 < r.hits < r.spins and r.won.shape == (50,)
    again = simulate(t, 50_000, seed=4, machines=50)
    assert np.array_equal(r.won, again.won)  # seeded: the same draws, the same result


def _scripted(title_id: str, script: list[tuple[int, int, int]], bet: Bet, policy: Policy = Policy()) -> None:
    t = get_title(title_id)
    state = new_state(t)
    rows = []
    for stops in script:
        banked = state.meters.get("free_winning_spins", 0)
        if state.free is None and policy.cash_in_at and banked >= policy.cash_in_at:
            state, _ = cash_in(state)
        state, out = spin(state, stops, state.free.bet if state.free else bet)
        rows.append((out.won, out.progressive_hit, state.free.remaining if state.free else 0, dict(state.meters)))
    out = play(t, np.array(script)[:, None, :], bet.coins, bet.lines, policy)
    assert [int(x) for x in out["won"][:, 0]] == [r[0] for r in rows]
    assert [bool(x) for x in out["progressive"][:, 0]] == [r[1] for r in rows]
    assert [int(x) for x in out["free"][:, 0]] == [r[2] for r in rows]
    for meter in new_state(t).meters:
        assert [int(x) for x in out[meter][:, 0]] == [r[3][meter] for r in rows]
    assert any(r[1] for r in rows) or "snowman" in rows[0][3] or "safe_clicks" in rows[0][3]


def test_the_vectorised_step_wins_the_same_progressives_and_bonuses_as_spin() -> None:
    from tests.slot_helpers import losing_stops, stops_for

    ls = get_title("light-speed")
    _scripted("light-speed", [stops_for(ls, "LS", "LS", "LS")] * 2 + [stops_for(ls, "LG", "RB", "LG")], Bet(3))
    cd = get_title("crazy-dragon")
    _scripted("crazy-dragon", [stops_for(cd, "DH", "DB", "DT")] * 6 + [losing_stops(cd, avoid=("DH",))] * 3, Bet(3))
    bad = get_title("its-good-to-be-bad")
    _scripted("its-good-to-be-bad", [losing_stops(bad)] * 31, Bet(3), Policy(cash_in_at=0))
    fa = get_title("frozen-assets")
    _scripted("frozen-assets", [stops_for(fa, "SF", "SF", "SF")] * 70 + [stops_for(fa, "SN", "SN", "SF")] * 3, Bet(3))
    bh = get_title("the-big-heist")
    _scripted("the-big-heist", [stops_for(bh, "SD", "SD", "--")] * 26 + [stops_for(bh, "SD", "SD", "SD")], Bet(2))


@pytest.mark.slow
def test_bench_slots_writes_its_figures(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    import json

    from controller.cli import main

    path = tmp_path / "slots.json"
    assert main(["bench", "slots", "--scalar-spins", "300", "--spins", "20000", "--machines", "100",
                 "--titles", "diamond-mine", "bonkers", "--json", str(path)]) == 0
    assert "PAR sheets in" in capsys.readouterr().out
    report = json.loads(path.read_text())
    assert report["bench"] == "slots" and report["par_all_seconds"] > 0
    assert set(report["titles"]) == {"diamond-mine", "bonkers"}
    assert all(v > 0 for row in report["titles"].values() for k, v in row.items() if k != "features")
    assert main(["bench", "slots", "--spins", "0"]) == 2
