"""The table's command line: demo, watch, command, recall and meters against a simulated table."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from controller.autoplay import Autoplay
from controller.cli import main
from controller.config import load_config
from controller.rng import SeededRng
from controller.table import Table
from tests.table_helpers import free_ports, serving

ROOT = Path(__file__).resolve().parent.parent


def write_config(tmp: Path, game: str = "baccarat") -> Path:
    p1, p2, p3 = free_ports(3)
    path = tmp / "table.toml"
    path.write_text(f"""
[table]
id = "t-{game}"
game = "{game}"
journal = "t.journal"
[shoe]
port = "sim"
seed = 3
[bus]
publish = "tcp://127.0.0.1:{p1}"
snapshot = "tcp://127.0.0.1:{p2}"
commands = "tcp://127.0.0.1:{p3}"
heartbeat = 0.2
""")
    return path


def play(path: Path, rounds: int) -> None:
    async def run() -> None:
        table = Table(load_config(path))
        await table.start()
        await Autoplay(table, SeededRng(1), rounds=rounds).run()
        await table.stop()

    asyncio.run(asyncio.wait_for(run(), 120))


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


@pytest.mark.parametrize("camera", [[], ["--no-camera"]])
def test_demo_runs_to_the_end(tmp_path: Path, camera: list[str]) -> None:
    ports = [str(p) for p in free_ports(3)]
    out = subprocess.run([sys.executable, "-m", "controller.cli", "demo", "--game", "baccarat", "--rounds", "3",
                          "--pace", "0", "--seed", "5", "--dir", str(tmp_path), "--ports", *ports, *camera],
                         capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
    assert out.returncode == 0, out.stderr
    assert "croupier watch --table demo-baccarat" in out.stdout
    assert ("camera:     simulated" in out.stdout) == (not camera)
    assert "round 3 settled" in out.stdout


def test_the_terminal_prints_a_tables_view_only_when_what_it_shows_changes(capsys: pytest.CaptureFixture[str]
                                                                          ) -> None:
    """The demo and `croupier watch` print the table's progress: an update that changed nothing they show (a
    camera sighting, a shoe status: only its seq moved) is left out, where each used to print the same block."""
    from controller.commands.table import _printer

    def view(seq: int, bet: int, seen: list[str]) -> dict:
        return {"table": "t", "seq": seq, "expected": {"text": "bets open"},
                "game": {"round": 1, "phase": "betting", "bets": [{"spot": 1, "box": "main", "amount": bet}]},
                "dealer_only": {"camera": seen}}

    show = _printer()
    for state in (view(4, 10, []), view(5, 10, ["KH"]), view(6, 10, ["KH", "2C"]), view(7, 15, ["KH", "2C"])):
        show(state)
    assert capsys.readouterr().out == ("[t #4] round 1 betting: bets open\n    bets: spot 1 main 10\n"
                                       "[t #7] round 1 betting: bets open\n    bets: spot 1 main 15\n")
