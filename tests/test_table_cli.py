"""The table's command line: demo, watch, command, recall and meters against a simulated table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.cli import main
from controller.config import load_config
from controller.table import Table
from tests.table_helpers import play_config, run_demo, serving, table_toml


def write_config(tmp: Path, game: str = "baccarat") -> Path:
    return table_toml(tmp, f"t-{game}", game)


play = play_config


@pytest.mark.slow
def test_recall_and_meters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path)
    play(path, 4)
    assert main(["recall", "--config", str(path), "--last", "2"]) == 0
    out = capsys.readouterr().out
    assert out.count("round ") >= 2 and "card player:" in out and "stakes" in out
    assert main(["recall", "--config", str(path), "--json"]) == 0
    rounds = [r for r in json.loads(capsys.readouterr().out) if r["kind"] == "round"]
    assert [r["round"] for r in rounds] == [1, 2, 3, 4]
    assert all(r["result"]["stakes"] == sum(r["bets"].values()) for r in rounds)
    assert main(["meters", "--config", str(path), "--json"]) == 0
    meters = json.loads(capsys.readouterr().out)
    assert meters["rounds"] == 4 and meters["handle"] == sum(r["result"]["stakes"] for r in rounds)
    assert meters["house_win"] == meters["handle"] - meters["paid"]


def test_recall_without_a_journal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recall", "--config", str(write_config(tmp_path))]) == 2
    assert "no journal" in capsys.readouterr().err


def test_watch_and_command_against_a_running_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path, "three-card-poker")  # a fresh deck each round: bets open at once
    with serving(lambda: Table(load_config(path))):
        assert main(["command", "--config", str(path), "open_bets"]) == 0
        assert json.loads(capsys.readouterr().out)["ok"] is True
        assert main(["command", "--config", str(path), "place_bet", "spot=2", "box=ante", "amount=20"]) == 0
        capsys.readouterr()
        assert main(["command", "--config", str(path), "place_bet", "spot=2", "box=dragon", "amount=20"]) == 1
        assert "no box" in json.loads(capsys.readouterr().out)["error"]
        assert main(["watch", "--config", str(path), "--count", "1", "--view", "dealer"]) == 0
        out = capsys.readouterr().out
        assert "round 1 betting" in out and "spot 2 ante 20" in out
        assert main(["command", "--config", str(path), "place_bet", "spot"]) == 2  # not KEY=VALUE


def test_watch_a_table_whose_views_go_over_curve(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """[bus].curve_screens: `croupier watch` follows with a listed key; without one it is told what to give."""
    from controller.bus import create_keys

    for name in ("server", "dealer"):
        create_keys(tmp_path / "keys", name)
    path = write_config(tmp_path)
    path.write_text(path.read_text() + 'keys = "keys"\ncurve_screens = true\n'
                    '[[bus.client]]\nkey = "dealer.key"\nrole = "dealer"\n')
    with serving(lambda: Table(load_config(path))):
        key = str(tmp_path / "keys" / "dealer.key_secret")
        assert main(["watch", "--config", str(path), "--count", "1", "--view", "dealer", "--key", key]) == 0
        assert "round 0" in capsys.readouterr().out
        assert main(["watch", "--config", str(path), "--count", "1"]) == 2
        assert "give --key" in capsys.readouterr().err


@pytest.mark.slow
@pytest.mark.parametrize("camera", [[], ["--no-camera"]])
def test_demo_runs_to_the_end(tmp_path: Path, camera: list[str]) -> None:
    out = run_demo("--game", "baccarat", "--rounds", "3", "--pace", "0", "--seed", "5", "--dir", str(tmp_path),
                   *camera)
    assert "croupier watch --table demo-baccarat" in out.stdout
    assert ("camera:     simulated" in out.stdout) == (not camera)
    assert "round 3 settled" in out.stdout


def test_the_terminal_prints_a_tables_view_only_when_what_it_shows_changes(capsys: pytest.CaptureFixture[str]
                                                                          ) -> None:
    """The demo and `croupier watch` print the table's progress: an update that changed nothing they show (a
    camera sighting, a shoe status: only its seq moved) is left out, where each used to print the same block."""
    from controller.commands.table.printing import state_printer as _printer

    def view(seq: int, bet: int, seen: list[str]) -> dict:
        return {"table": "t", "seq": seq, "expected": {"text": "bets open"},
                "game": {"round": 1, "phase": "betting", "bets": [{"spot": 1, "box": "main", "amount": bet}]},
                "dealer_only": {"camera": seen}}

    show = _printer()
    for state in (view(4, 10, []), view(5, 10, ["KH"]), view(6, 10, ["KH", "2C"]), view(7, 15, ["KH", "2C"])):
        show(state)
    assert capsys.readouterr().out == ("[t #4] round 1 betting  NEXT: bets open\n    bets: spot 1 main 10\n"
                                       "[t #7] round 1 betting  NEXT: bets open\n    bets: spot 1 main 15\n")


def no_demo(monkeypatch: pytest.MonkeyPatch) -> list:
    """Keep `croupier demo` from serving: what it would have played lands in the returned list."""
    played: list = []

    def play(args, cfg, ready, autoplay):  # noqa: ANN001, ANN202 - _play_demo's signature
        played.append(cfg)
        return 0

    monkeypatch.setattr("controller.commands.table.demo._play_demo", play)
    return played


@pytest.mark.parametrize("argv, error", [
    (["--rounds", "-1"], "--rounds: 1 or more (leave it out to run until Ctrl-C), got -1"),
    (["--rounds", "0"], "--rounds: 1 or more (leave it out to run until Ctrl-C), got 0"),
    (["--cabinet", "el-toro", "--spins", "-3"], "--spins: 1 or more (leave it out to run until Ctrl-C), got -3"),
    (["--pace", "-1"], "--pace: seconds between the autoplay's actions, 0 or more, got -1"),
    (["--pace", "nan"], "--pace: seconds between the autoplay's actions, 0 or more, got nan"),
    (["--spins", "3"], "--spins counts a cabinet's games (with --cabinet); a table counts --rounds"),
])
def test_demo_refuses_counts_below_one_and_a_negative_pace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str], argv: list[str],
                                                           error: str) -> None:
    played = no_demo(monkeypatch)
    assert main(["demo", "--dir", str(tmp_path), *argv]) == 2
    assert capsys.readouterr().err == f"croupier demo: error: {error}\n"
    assert played == []


def test_demo_help_lists_the_games(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from controller.games import game_names

    monkeypatch.setenv("COLUMNS", "400")
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    assert f"game to deal (default blackjack): {', '.join(game_names())}\n" in capsys.readouterr().out


@pytest.mark.slow
def test_a_table_demo_keeps_its_folder_and_config_and_prints_every_settlement(tmp_path: Path,
                                                                               capsys: pytest.CaptureFixture[str]
                                                                               ) -> None:
    """Demos left a /tmp/croupier-demo-* folder per run with no config: now a table demo keeps one folder per demo
    under the user's state folder, with its config, says how to recall it, and prints each round's settlement
    (blackjack printed none: the view after a settlement had no cards, and the next round opened in the same
    update)."""
    import os

    (tmp_path / "tmp").mkdir()
    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "TMPDIR": str(tmp_path / "tmp")}
    folder = tmp_path / "state" / "croupier" / "demo" / "demo-blackjack"
    outs = []
    for _ in range(2):
        out = run_demo("--rounds", "3", "--pace", "0", "--seed", "5", "--no-camera", "--no-screens", env=env)
        outs.append(out.stdout)
    config = folder / "demo.toml"
    assert f"recall:     croupier recall --config {config}   (its journal and config stay in {folder})\n" \
           f"meters:     croupier meters --config {config}\n" in outs[0]
    settled = [line.split(":")[0].strip() for line in outs[0].splitlines() if "settled: stakes" in line]
    assert settled == ["round 1 settled", "round 2 settled", "round 3 settled"]
    settled = [line.split(":")[0].strip() for line in outs[1].splitlines() if "settled: stakes" in line]
    # the second run carries on the journal: it starts on the view the first left (round 3 settled), then deals 3
    assert settled == ["round 3 settled", "round 4 settled", "round 5 settled", "round 6 settled"]
    assert list((tmp_path / "tmp").iterdir()) == []
    assert main(["meters", "--config", str(folder / "demo.toml"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["rounds"] == 6
    assert main(["recall", "--config", str(folder / "demo.toml"), "--last", "1", "--json"]) == 0
    assert [r["round"] for r in json.loads(capsys.readouterr().out) if r["kind"] == "round"] == [6]


def test_the_terminal_prints_a_settlement_that_came_with_the_next_rounds_opening(
        capsys: pytest.CaptureFixture[str]) -> None:
    from controller.commands.table.printing import state_printer as _printer

    settled = {"round": 1, "stakes": 20, "returned": 30, "results": [{"stake": 20, "returned": 30}]}
    show = _printer(compact=True)
    show({"table": "t", "seq": 9, "expected": {"text": "settle the round"}, "history": [],
          "game": {"round": 1, "phase": "settling", "dealer": {"cards": [{"card": "KH", "up": True}]}}})
    show({"table": "t", "seq": 12, "expected": {"text": "bets open"}, "history": [settled],
          "game": {"round": 2, "phase": "betting"}})
    show({"table": "t", "seq": 13, "expected": {"text": "bets open"}, "history": [settled],
          "game": {"round": 2, "phase": "betting", "bets": [{"spot": 1, "box": "main", "amount": 5}]}})
    assert capsys.readouterr().out == ("[t #9] round 1 settling  NEXT: settle the round\n"
                                       "    dealer.cards                 K♥\n"
                                       "[t #12] round 2 betting  NEXT: bets open\n"
                                       "    round 1 settled: stakes 20, paid 30, players +10\n"
                                       "[t #13] round 2 betting  NEXT: bets open\n")


def test_two_demos_never_share_a_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import fcntl

    with open(tmp_path / ".lock", "w") as lock:  # as a running demo holds it
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert main(["demo", "--dir", str(tmp_path), "--rounds", "1", "--no-screens"]) == 2
    assert capsys.readouterr().err == (f"croupier demo: error: another demo is running on {tmp_path.resolve()} (stop "
                                       "it, or give this one --dir)\n")
