"""PAR sheets: every title within its target, the JSON shape, and each feature's analysis against the exact chain built by playing the real spin() on every stop combination from every reachable state."""

from __future__ import annotations

import json
from itertools import product
from math import prod
from typing import Any

import numpy as np
import pytest

from controller.analysis.par import moments, par_sheet
from controller.cli import main
from controller.slots import Bet, State, cash_in, new_state, pick, spin
from controller.slots.catalog import parse_title
from controller.slots.engine import wins


def test_par_all_json_covers_every_title_within_its_target(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["par", "--all", "--json"]) == 0
    sheets = json.loads(capsys.readouterr().out)
    assert len(sheets) == 16
    for s in sheets:
        low, high = s["target_rtp"]
        assert low <= s["rtp"] <= high, s["id"]
        assert s["method"] in ("exact", "markov") and s["ci95"] is None
        assert set(s) >= {"title", "method", "max_coins", "lines", "rtp", "rtp_by_bet", "hit_frequency", "volatility",
                          "ci95", "lines_table", "features"}
        assert list(s["rtp_by_bet"])[-1] == str(s["max_coins"]) and s["rtp_by_bet"][str(s["max_coins"])] == s["rtp"]
        assert 0 < s["hit_frequency"] < 1 and s["volatility"] > 0
        assert abs(sum(r["rtp"] for r in s["lines_table"]) - s["base_rtp"]) < 0.5  # lines are the bulk
        assert s["top_award"]["credits"] == max(r["credits"] for r in s["lines_table"])
    by_id = {s["id"]: s for s in sheets}
    assert by_id["diamond-mine"]["method"] == "exact" and by_id["diamond-mine"]["rtp_exact"]
    for tid in ("crazy-dragon", "its-good-to-be-bad", "light-speed"):
        p = by_id[tid]["progressive"]
        assert p["contribution_rate"] == 0.01 and p["reset_cents"] > 0 and p["by_denomination"]
    assert len(by_id["operation-myow"]["paytables"]) == 5
    for p in by_id["operation-myow"]["paytables"].values():
        assert 0.94 <= p["rtp"] <= 0.96


def test_an_exact_sheet_sums_its_lines(capsys: pytest.CaptureFixture[str]) -> None:
    from fractions import Fraction

    assert main(["par", "diamond-mine-deluxe", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert float(Fraction(s["rtp_exact"])) == pytest.approx(s["rtp"], abs=1e-15)
    assert sum(r["rtp"] for r in s["lines_table"]) == pytest.approx(s["rtp"], abs=1e-12)
    assert sum(r["hits_per_cycle"] for r in s["lines_table"]) / s["cycle"] == pytest.approx(s["hit_frequency"])


@pytest.mark.slow
def test_par_command_prints_and_refuses(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["par", "el-toro"]) == 0
    out = capsys.readouterr().out
    assert "El Toro" in out and "bullfight" in out and "RTP at max bet" in out
    assert main(["par", "--all"]) == 0
    assert "its-good-to-be-bad" in capsys.readouterr().out
    assert main(["par"]) == 2 and "one title, or give --all" in capsys.readouterr().err
    assert main(["par", "nope"]) == 2 and "unknown title" in capsys.readouterr().err
    assert main(["par", "operation-myow", "--paytable", "4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["paytable"] == "The King"


def test_titles_command_lists_denominations_lines_and_max_coins(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["titles", "--json"]) == 0
    rows = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    assert len(rows) == 16
    assert rows["crazy-dragon"]["denominations"] == ["$1"] and rows["light-speed"]["denominations"] == ["$0.25"]
    assert rows["its-good-to-be-bad"]["denominations"] == ["$0.25", "$1"]
    assert (rows["high-rollers"]["lines"], rows["high-rollers"]["max_coins"]) == (5, 5)
    assert (rows["pharaohs-gold"]["lines"], rows["pharaohs-gold"]["max_coins"]) == (3, 3)
    assert rows["bank-on-it"]["denominations"] == ["$0.05", "$0.25", "$0.50", "$1", "$5"]
    assert main(["titles"]) == 0
    assert "Operation M.Y.O.W." in capsys.readouterr().out


# --- each analysis against the exact chain of the real spin() -----------------------------------------

def toy(features: list[dict[str, Any]], reels: list[list[list[Any]]], rows: list[dict[str, Any]],
        symbols: dict[str, str], wild: dict[str, Any] | None = None, progressive: bool = False) -> Any:
    data: dict[str, Any] = {
        "name": "Toy", "denominations": [100], "lines": 1, "max_coins": 2, "target_rtp": [0.93, 0.95],
        "symbols": {"-": {"name": "Blank", "blank": True}, **symbols},
        "reels": [{"stops": r} for r in reels], "paytables": [{"name": "Only", "rows": rows}], "features": features}
    if wild:
        data["wild"] = wild
    if progressive:
        # no contribution: its carry would multiply the states (it is tested on the real titles)
        data["progressive"] = {"reset_cents": 10_000, "contribution_bp": 0}
    return parse_title("toy", data)


def brute(title: Any, bet: Bet, cash_in_at: int = 1, reset: float = 0.0, max_states: int = 3000) -> dict[str, float]:
    """Build the Markov chain of the cabinet by playing spin() on every stop combination (weighted by its
    virtual stops) from every reachable state, picks and Cash In! included; return the stationary return
    per paid spin, hit frequency and progressive rate."""
    reels = title.reels
    combos = [(tuple(r.physical.index(p) for r, p in zip(reels, c)), prod(r.weights[p] for r, p in zip(reels, c)))
              for c in product(*(range(r.size) for r in reels))]
    key = lambda s: json.dumps(s.to_json(), sort_keys=True)  # noqa: E731
    start = new_state(title)
    states, index = [start], {key(start): 0}
    edges: list[tuple[int, int, float, float, float, float, float]] = []  # from, to, p, won, paid, hit, jackpot
    leaks: list[tuple[int, float]] = []  # past max_states, a chain goes back to the start: its stationary mass
    i = 0
    while i < len(states):
        s = states[i]
        options: list[tuple[State, float, float, float, float, float]] = []
        if s.pending:
            for draw in (0, 1):
                s2, out = pick(s, "matador", draw)
                options.append((s2, 0.5, out.won, 0.0, 0.0, 0.0))
        elif s.free is None and cash_in_at and s.meters.get("free_winning_spins", 0) >= cash_in_at:
            s2, _ = cash_in(s)
            options.append((s2, 1.0, 0.0, 0.0, 0.0, 0.0))
        else:
            b = s.free.bet if s.free else bet
            allowed = [(st, w) for st, w in combos if not (s.free and s.free.guaranteed) or wins(title, 0, st, b)]
            total = sum(w for _, w in allowed)
            for st, w in allowed:
                s2, out = spin(s, st, b)
                paid = float(out.cost > 0)
                hit = paid * float(out.won > 0 or out.progressive_hit or s2.pending is not None)
                options.append((s2, w / total, out.won + reset * out.progressive_hit, paid, hit,
                                float(out.progressive_hit)))
        for s2, p, won, paid, hit, jackpot in options:
            k = key(s2)
            if k not in index:
                if len(states) >= max_states:
                    leaks.append((i, p))
                    k = key(start)
                else:
                    index[k] = len(states)
                    states.append(s2)
            edges.append((i, index[k], p, won, paid, hit, jackpot))
        i += 1
    n = len(states)
    matrix = np.zeros((n, n))
    per = np.zeros((n, 4))
    for a, b, p, won, paid, hit, jackpot in edges:
        matrix[a, b] += p
        per[a] += p * np.array([won, paid, hit, jackpot])
    lhs = matrix.T - np.eye(n)
    lhs[-1] = 1.0
    rhs = np.zeros(n)
    rhs[-1] = 1.0
    pi = np.linalg.solve(lhs, rhs)
    won, paid, hit, jackpot = pi @ per
    leaked = sum(pi[a] * p for a, p in leaks)
    return {"mean": won / paid, "hit": hit / paid, "progressive": jackpot / paid, "states": n, "leaked": leaked}


REELS3 = [[["-", 2], ["A", 1], ["X", 1], ["B", 2], ["-", 1], ["C", 1]]] * 3
ROWS = [{"line": "A A A", "pays": [30, 70]}, {"line": "B B B", "pays": [8, 16]}, {"anywhere": "C", "count": 1, "pays": [1, 2]}]
SYMBOLS = {"A": "Ace", "B": "Bee", "C": "Cherry", "X": "Feature"}


def _check(title: Any, bets: tuple[Bet, ...] = (Bet(1), Bet(2)), reset: float = 0.0, **kw: Any) -> dict[str, float]:
    for bet in bets:
        exact = brute(title, bet, reset=reset, **kw)
        m = moments(title, bet, reset=reset)
        assert exact["leaked"] < 1e-9
        assert m.mean == pytest.approx(exact["mean"], rel=1e-9, abs=1e-12), bet
        assert m.hit == pytest.approx(exact["hit"], rel=1e-9, abs=1e-12), bet
        assert m.progressive == pytest.approx(exact["progressive"], rel=1e-7, abs=1e-15), bet
    return exact


def test_piggy_bank_analysis_is_the_exact_chain() -> None:
    reels = [[["-", 3], ["A", 1], ["X", 2], ["B", 1]]] * 3
    t = toy([{"kind": "piggy_bank", "start": 10, "trigger": "X X X", "fill": "- - -"}], reels, ROWS[:2], SYMBOLS,
            wild={"symbol": "A"})
    _check(t, max_states=150)


def test_safe_analysis_is_the_exact_chain() -> None:
    t = toy([{"kind": "safe", "symbol": "X", "clicks": 7, "bonus": [3, 8], "three_dials": 10}], REELS3, ROWS, SYMBOLS)
    _check(t)


def test_free_winning_spins_analysis_is_the_exact_chain() -> None:
    t = toy([{"kind": "free_winning_spins", "symbol": "X", "for_two": 2, "for_three": 5, "end": "A A A"}], REELS3,
            ROWS, SYMBOLS)
    _check(t)


@pytest.mark.slow
def test_dragon_respins_analysis_is_the_exact_chain() -> None:
    reels = [[["-", 2], ["H", 2], ["A", 1], ["C", 1]], [["-", 2], ["Y", 3], ["A", 1]], [["-", 1], ["T", 3], ["A", 1], ["C", 1]]]
    t = toy([{"kind": "dragon_respins", "parts": ["H", "Y", "T"], "respins": [1, 2, 4], "jackpot_at": 6,
              "max_bet_only": True}], reels, ROWS, {**SYMBOLS, "H": "Head", "Y": "Body", "T": "Tail"},
            progressive=True)
    _check(t, reset=50.0, max_states=1000)
    _check(t, bets=(Bet(2),), reset=0.0, max_states=1000)  # the jackpot rate does not hang on its value


def test_bullfight_analysis_is_the_exact_chain() -> None:
    reels = [[["-", 2], ["M", 1], ["A", 1], ["C", 1]], [["-", 2], ["A", 1], ["B", 1]], [["-", 1], ["L", 2], ["A", 1]]]
    t = toy([{"kind": "bullfight", "matador": "M", "bull": "L", "win": 20, "lose": 2, "max_bet_only": True}], reels,
            ROWS, {**SYMBOLS, "M": "Matador", "L": "Bull"}, wild={"symbol": "C", "excludes": ["M", "L"]})
    _check(t)


@pytest.mark.slow
def test_snowman_analysis_is_the_exact_chain() -> None:
    reels = [[["-", 2], ["F", 2], ["S", 1], ["A", 1], ["C", 1]]] * 3
    t = toy([{"kind": "snowman", "flake": "F", "sun": "S", "target": 4, "bonus": 10, "max_bet_only": True}], reels,
            ROWS, {**SYMBOLS, "F": "Flake", "S": "Sun"})
    _check(t, max_states=500)


def test_loss_meter_analysis_is_the_exact_chain_for_every_cash_in_policy() -> None:
    t = toy([{"kind": "loss_meter", "free_spin_at": [2, 4], "jackpot_at": 5, "max_bet_only": True}], REELS3, ROWS,
            SYMBOLS, progressive=True)
    m = moments(t, Bet(2), reset=40.0)
    policies = m.details["loss_meter"]["policies"]
    for name, policy in policies.items():
        exact = brute(t, Bet(2), cash_in_at=policy["cash_in_at"], reset=40.0)
        assert policy["rtp"] * 2 == pytest.approx(exact["mean"], rel=1e-9), name
    best = max(policies.values(), key=lambda p: p["rtp"])
    assert m.mean == pytest.approx(best["rtp"] * 2)
    _check(t, bets=(Bet(1),))


def test_light_speed_analysis_is_the_exact_chain() -> None:
    reels = [[["-", 2], ["L", 1], ["G", 2], ["A", 1], ["C", 1]]] * 3
    t = toy([{"kind": "light_speed", "icon": "L", "top": 4, "jackpot": "G G G", "max_bet_only": True}], reels,
            [{"line": "G G G", "pays": [5, 12]}, *ROWS], {**SYMBOLS, "L": "Light", "G": "Gun"}, progressive=True)
    _check(t, reset=60.0)


def test_plain_and_multiline_titles_are_exact_fractions() -> None:
    from controller.slots import get_title

    for tid in ("pharaohs-gold", "diamond-mine"):
        s = par_sheet(get_title(tid))
        assert s["method"] == "exact" and s["rtp_exact"]


def test_par_simulate_gives_the_cross_check_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["par", "light-speed", "--simulate", "20000", "--seed", "2", "--json"]) == 0
    s = json.loads(capsys.readouterr().out)
    assert s["method"] == "simulation" and s["spins"] >= 20_000 and s["ci95"] > 0 and s["seed"] == 2
    assert abs(s["z"]) < 5
    assert main(["par", "its-good-to-be-bad", "--simulate", "10"]) == 2
