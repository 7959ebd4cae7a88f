"""The cabinet and the progressive link on the command line: recall and meters from the journal, demo --cabinet, run
and progressive on their configs, watch."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from controller.cabinet import ATTENDANT, PLAYER, Cabinet
from controller.cli import main
from controller.config import load_config
from tests.cabinet_helpers import ROOT, SCREEN_MAP
from tests.table_helpers import bus_toml, run_demo, serving


def write_config(tmp: Path, extra: str = "") -> Path:
    path = tmp / "cabinet.toml"
    path.write_text(f"""
[cabinet]
id = "fa-1"
title = "frozen-assets"
denomination = 25
journal = "fa.journal"
seed = 4
spin_seconds = 0.0
{extra}
{bus_toml()}""")
    return path


def play(path: Path, games: int) -> None:
    async def run() -> None:
        cab = Cabinet(load_config(path))
        await cab.start()
        await cab.shown.wait()  # mechanical reels home at start; play waits for them
        await cab.command(ATTENDANT, "add_credits", {"credits": 3 * games})
        for _ in range(games):
            await cab.command(PLAYER, "max_bet", {})
            await cab.shown.wait()
        await cab.command(PLAYER, "cash_out", {}) if cab.state.credits else None
        await cab.stop()

    asyncio.run(asyncio.wait_for(run(), 60))


@pytest.mark.slow
def test_recall_and_meters_of_a_cabinet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path)
    play(path, 12)
    assert main(["recall", "--config", str(path), "--last", "3"]) == 0
    out = capsys.readouterr().out
    assert out.count("game ") == 3 and "game 12: bet 3 coin(s) x 1 line(s)" in out and "stops " in out
    assert "|" in out and "credits" in out
    assert main(["recall", "--config", str(path), "--json"]) == 0
    games = [g for g in json.loads(capsys.readouterr().out) if g["kind"] == "spin"]
    assert [g["game"] for g in games] == list(range(3, 13)) and all(len(g["stops"]) == 3 for g in games)
    assert main(["meters", "--config", str(path), "--json"]) == 0
    m = json.loads(capsys.readouterr().out)
    assert m["games_played"] == 12 and m["coin_in"] == 36 and m["credits_added"] == 36
    assert m["credits"] + m["owed"] == m["credits_in"] - m["credits_out"] - m["coin_in"] + m["coin_out"]
    assert main(["meters", "--config", str(path)]) == 0
    text = capsys.readouterr().out
    assert "cabinet fa-1: Frozen Assets at 25 cents a credit" in text and "MISMATCH" not in text
    assert "games played" in text and "feature meters: snowman" in text


def test_the_link_controller_on_the_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    link = tmp_path / "link.toml"
    link.write_text(f'[progressive]\nid = "l1"\nreset_cents = 50000\njournal = "l1.journal"\n{bus_toml(None)}')
    cabinet = write_config(tmp_path)
    assert main(["progressive", "--config", str(cabinet)]) == 2
    assert "not a progressive link's config" in capsys.readouterr().err
    assert main(["meters", "--config", str(link)]) == 2  # it has not run yet
    assert "no journal" in capsys.readouterr().err
    from controller.progressive import LinkController

    with serving(lambda: LinkController(load_config(link))):
        assert main(["command", "--config", str(link), "contribute", "cabinet=c9", "game=1", "cents=7"]) == 0
        assert json.loads(capsys.readouterr().out)["result"] == {"duplicate": False, "pool": 50_007}
        assert main(["watch", "--config", str(link), "--count", "1"]) == 0
        assert "[l1 #" in capsys.readouterr().out
    assert main(["meters", "--config", str(link)]) == 0
    assert "pool 50007 cents" in capsys.readouterr().out


def test_watch_a_running_cabinet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_config(tmp_path, f'[panel]\nfile = "{SCREEN_MAP}"\ndriver = "sim"\n')

    async def first_game(cab: Cabinet) -> None:
        await cab.command(ATTENDANT, "add_credits", {"credits": 9})
        await cab.command(PLAYER, "max_bet", {})

    with serving(lambda: Cabinet(load_config(path)), first_game):
        assert main(["watch", "--config", str(path), "--count", "1", "--view", "dealer"]) == 0
        out = capsys.readouterr().out
        assert "[fa-1 #" in out and "game 1:" in out and "credits" in out
        assert main(["command", "--config", str(path), "add_credits", "credits=5"]) == 0  # ops, unauthenticated
        assert json.loads(capsys.readouterr().out)["ok"] is True


@pytest.mark.slow
def test_cabinet_demo_runs_to_the_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = run_demo("--cabinet", "el-toro", "--spins", "6", "--pace", "0", "--seed", "5", "--dir", str(tmp_path))
    assert "croupier watch --table demo-el-toro" in out.stdout and "game 6:" in out.stdout
    assert main(["recall", "--config", str(tmp_path / "demo.toml"), "--json"]) == 0
    assert len([g for g in json.loads(capsys.readouterr().out) if g["kind"] == "spin"]) >= 6
    assert main(["demo", "--cabinet", "no-such-title"]) == 2
    assert "unknown title" in capsys.readouterr().err


@pytest.mark.slow
def test_croupier_run_serves_a_cabinet_as_the_systemd_unit_does(tmp_path: Path) -> None:
    # deploy/systemd/croupier@.service runs `croupier run --config /etc/croupier/%i.toml` as Type=notify: the same
    # command must bring a cabinet up, say READY=1 once its bus and panel are up, and stop cleanly on SIGTERM.
    import signal
    import socket

    path = write_config(tmp_path, f'[panel]\nfile = "{SCREEN_MAP}"\ndriver = "gpio"\n')
    sock_path = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(str(sock_path))
        server.settimeout(60)
        proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "run", "--config", str(path), "--sim"],
                                cwd=ROOT, env={**__import__("os").environ, "NOTIFY_SOCKET": str(sock_path)},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            messages = [server.recv(200).decode(), server.recv(200).decode()]
            proc.send_signal(signal.SIGTERM)
            messages.append(server.recv(200).decode())
            assert proc.wait(30) == 0, proc.stderr.read() if proc.stderr else ""
        finally:
            if proc.poll() is None:
                proc.kill()
    assert messages == ["READY=1", "STATUS=cabinet fa-1: Frozen Assets", "STOPPING=1"]


@pytest.mark.parametrize("name", ["Frozen Assets", "frozen assets", "FROZEN-ASSETS", " Frozen  Assets "])
def test_demo_cabinet_takes_the_titles_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """`croupier titles` shows "Frozen Assets"; `demo --cabinet` took only the id."""
    played: list = []
    monkeypatch.setattr("controller.commands.table.demo._play_demo", lambda args, cfg, ready, autoplay: played.append(cfg))
    assert main(["demo", "--cabinet", name, "--dir", str(tmp_path)]) == 0
    assert [cfg.title.id for cfg in played] == ["frozen-assets"]
    assert played[0].cabinet_id == "demo-frozen-assets"


def test_par_takes_the_titles_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["par", "Bank on It!", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == "bank-on-it"
    assert main(["par", "Bank on Nothing"]) == 2
    assert capsys.readouterr().err.startswith("croupier par: error: unknown title 'Bank on Nothing' (titles: "
                                              "bank-on-it (Bank on It!), ")


@pytest.mark.slow
def test_a_cabinet_demo_prints_its_recall_and_meters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = run_demo("--cabinet", "Frozen Assets", "--spins", "2", "--pace", "0", "--seed", "5", "--no-screens",
                   "--dir", "rel", cwd=tmp_path, env={**__import__("os").environ, "PYTHONPATH": str(ROOT)})
    config = tmp_path / "rel" / "demo.toml"
    assert f"recall:     croupier recall --config {config}   (its journal and config stay in {tmp_path / 'rel'})\n" \
           f"meters:     croupier meters --config {config}\n" in out.stdout
    assert main(["meters", "--config", str(config), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["games_played"] == 2
