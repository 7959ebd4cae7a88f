"""`croupier panel-test`: the wiring table, and the diagnostics walk and input report on simulated pins."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from controller.cli import main
from drivers.panel import load_panel_config, wiring_markdown
from tests.panel.test_config import CABINET, TABLE


def run(argv: list[str], stdin: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_help_lists_panel_test(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    assert "panel-test" in capsys.readouterr().out


@pytest.mark.parametrize("path", [TABLE, CABINET], ids=["table", "cabinet"])
def test_wiring(path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["panel-test", "--config", str(path), "--wiring"], "", monkeypatch, capsys)
    assert code == 0 and wiring_markdown(load_panel_config(path)) in out


def test_table_walk_and_inputs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    script = "press spot3_bet\nrelease spot3_bet\ntap deal\nshow spot3_bet 1250\nshow limits 5-500\nshow limits 1,000\n" \
             "light spot1_bet sparkle\nfly away\npress nobody\n"
    code, out, _ = run(["panel-test", "--config", str(TABLE), "--sim", "--step", "0"], script, monkeypatch, capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("panel: 7-spot blackjack table (simulated pins); 12 buttons")
    assert sum(line.startswith("lamp    spot") and line.endswith("on (pin reads 1)") for line in lines) == 7
    assert sum("all segments; reads '8.8.8.8.8.8.8.8.'" in line for line in lines) == 8
    inputs = [line.split("s  ", 1)[1] for line in lines if line.startswith("input")]
    assert inputs == ["spot 3 bet button pressed", "spot 3 bet button released", "deal button pressed",
                      "deal button released"]
    assert "display spot3_bet        reads '    1250'" in lines
    assert "display limits           reads '   5-500'" in lines
    assert "error   display limits: ',' cannot be shown on a seven-segment display" in lines
    assert any(line.startswith("error   no look 'sparkle'") for line in lines)
    assert "error   not a command: 'fly away' ('help' lists them)" in lines
    assert any(line.startswith("error   no input named 'nobody'") for line in lines)


@pytest.mark.slow
def test_cabinet_walk_and_inputs(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    script = "open main\nclose main\ncoin coin_in 2\nopen reset_key\ntower service on\nstatus\nquit\npress spin\n"
    code, out, _ = run(["panel-test", "--config", str(CABINET), "--sim", "--step", "0"], script, monkeypatch, capsys)
    assert code == 0
    lines = out.splitlines()
    assert "lamp    spin             GPIO18 (pin 12): on (pin reads 0.8)" in lines
    assert [line.split()[1] for line in lines if line.startswith("tower   ")][:4] == ["tilt", "hand_pay", "door_open",
                                                                                   "service"]
    assert "outputs hopper_motor, meter_coin_in: not driven (give --outputs)" in lines
    inputs = [line.split("s  ", 1)[1] for line in lines if line.startswith("input")]
    assert inputs == ["main door opened", "main door closed", "coin in pulse 1 counted", "coin in pulse 2 counted",
                      "reset key switch on"]
    assert "status  tower: ['service']" in lines
    assert not any("spin button" in line for line in lines)  # nothing after quit


def test_bad_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "panel.toml"
    path.write_text("[panel]\n[panel.buttons]\ndeal = 17\nspin = 17\n")
    code, _, err = run(["panel-test", "--config", str(path), "--sim"], "", monkeypatch, capsys)
    assert code == 2
    assert err.strip() == "croupier panel-test: error: panel: GPIO17 (pin 11) is used by both buttons.deal and buttons.spin"


def test_bench_panel(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    path = tmp_path / "panel.json"
    assert main(["bench", "panel", "--edges", "20", "--shows", "2", "--json", str(path)]) == 0
    report = json.loads(path.read_text())
    assert report["bench"] == "panel" and report["edges"] == 20 and report["display"]["frames"] == 16
    assert 0 < report["latency"]["median_us"] <= report["latency"]["max_us"]
    assert main(["bench", "panel", "--edges", "1"]) == 2
