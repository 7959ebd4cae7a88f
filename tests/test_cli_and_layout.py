"""The command line works as installed, and the layout's import rules hold (rules import no hardware or numpy)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from controller.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_help_lists_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out
    assert "usage: croupier" in out and "bench" in out


@pytest.mark.slow
def test_console_script_runs() -> None:
    result = subprocess.run([sys.executable, "-m", "controller.cli", "--help"], capture_output=True, text=True,
                            timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert "bench" in result.stdout


def test_bench_hands_writes_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "hands.json"
    assert main(["bench", "hands", "--hands", "3000", "--json", str(path)]) == 0
    out = capsys.readouterr().out
    assert "7-card scalar" in out and "7-card batch" in out
    report = json.loads(path.read_text())
    assert report["bench"] == "hands" and report["hands"] == 3000
    assert report["batch_equals_scalar"] is True
    assert set(report["ours"]) >= {"eval5_scalar", "eval7_scalar", "eval5_batch", "eval7_batch"}
    assert all(rate > 0 for rate in report["ours"].values())


def test_bench_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "hands", "--hands", "0"]) == 2
    assert "--hands must be at least 1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["bench", "no-such-bench"])


RULE_PACKAGES = ["controller.cards", "controller.hands", "controller.games", "controller.slots"]
FORBIDDEN = ["numpy", "zmq", "serial", "gpiozero", "cv2", "drivers", "vision"]


@pytest.mark.slow
def test_rules_import_only_the_standard_library() -> None:
    # ARCHITECTURE.md: rules stay importable with no hardware library (and no numpy) present.
    script = textwrap.dedent(f"""
        import importlib, pkgutil, sys
        for name in {FORBIDDEN!r}:
            sys.modules[name] = None  # any import of these now fails
        for pkg in {RULE_PACKAGES!r}:
            try:
                module = importlib.import_module(pkg)
            except ModuleNotFoundError as exc:
                if exc.name == pkg:
                    continue  # that package does not exist yet
                raise
            for info in pkgutil.walk_packages(getattr(module, "__path__", []), pkg + "."):
                importlib.import_module(info.name)
        print("ok")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120,
                            check=False)
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr


@pytest.mark.slow
def test_every_module_says_what_it_is_for() -> None:
    import ast

    for folder in ("controller", "drivers", "vision"):
        for path in (ROOT / folder).rglob("*.py"):
            doc = ast.get_docstring(ast.parse(path.read_text()))
            assert doc and doc.strip(), f"{path.relative_to(ROOT)} has no module docstring"


def test_math_refuses_an_unknown_game(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "roulette"]) == 2
    assert "unknown game 'roulette'" in capsys.readouterr().err


# -- issue 43 point 25: long jobs show progress on a terminal, and reports print for people --------------------------

class _Terminal:
    """A stream that says it is a terminal and keeps what was written."""

    def __init__(self) -> None:
        self.written = ""

    def write(self, text: str) -> None:
        self.written += text

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


def test_a_progress_bar_draws_the_count_and_the_time_left() -> None:
    from controller.progress import Progress

    now = [100.0]
    term = _Terminal()
    bar = Progress("rounds", 1000, shown=True, stream=term, clock=lambda: now[0], interval=0.5, width=10)
    bar(0)
    now[0] += 2
    bar(250)
    now[0] += 0.1
    bar(300)                      # within the interval: not drawn
    now[0] += 2
    bar(1000)                     # the end is always drawn
    bar.close()
    assert term.written.split("\r") == ["", "rounds [..........]   0% 0/1,000\x1b[K",
                                        "rounds [##........]  25% 250/1,000, about 0:06 left\x1b[K",
                                        "rounds [##########] 100% 1,000/1,000, 0:04\x1b[K", "\x1b[K"]


def test_a_progress_bar_prints_lines_above_itself_and_nothing_when_not_shown(
        capsys: pytest.CaptureFixture[str]) -> None:
    from controller.progress import Progress, progress

    term = _Terminal()
    bar = Progress("cards", 10, shown=True, stream=term, clock=lambda: 0.0)
    bar(5)
    bar.say("a line for people")
    assert capsys.readouterr().out == "a line for people\n"
    assert term.written == "\rcards [###############...............]  50% 5/10\x1b[K\r\x1b[K" \
                           "\rcards [###############...............]  50% 5/10\x1b[K"
    quiet = Progress("cards", 10, shown=False, stream=term, clock=lambda: 0.0)
    before = term.written
    quiet(5)
    quiet.say("still printed")
    quiet.close()
    assert term.written == before and capsys.readouterr().out == "still printed\n"
    assert progress("x").shown is False  # pytest captures stdout and stderr: no terminal, no bar


def _on_a_terminal(argv: list[str], timeout: float = 240) -> str:
    """Run `croupier ARGV` with stdout and stderr on a pseudo-terminal, as a person at a terminal would; all it
    wrote, both streams together."""
    import os
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", *argv], cwd=ROOT, stdin=subprocess.DEVNULL,
                            stdout=follower, stderr=follower)
    os.close(follower)
    chunks = []
    try:
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the other end closed
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
        assert proc.wait(timeout) == 0
    return b"".join(chunks).decode()


@pytest.mark.slow
def test_math_blackjack_shows_a_bar_on_a_terminal_and_none_when_piped() -> None:
    argv = ["math", "blackjack", "--rounds", "300000"]
    shown = _on_a_terminal(argv)
    assert "\rblackjack: rounds [##########....................]  33% 100,000/300,000" in shown
    assert "\rblackjack: rounds [##############################] 100% 300,000/300,000, " in shown
    piped = subprocess.run([sys.executable, "-m", "controller.cli", *argv], cwd=ROOT, capture_output=True, text=True,
                           timeout=240, check=True)
    assert "\r" not in piped.stdout + piped.stderr and "rounds [" not in piped.stderr
    assert "house edge (the house's expected win per unit of the initial wager; positive: the house wins, " \
           "negative: the player does):\n  base     " in piped.stdout


@pytest.mark.slow
def test_par_all_and_vision_evaluate_show_a_bar_on_a_terminal() -> None:
    shown = _on_a_terminal(["par", "--all"])
    assert "\rPAR sheets [##############################] 100% 16/16, " in shown
    assert "PAR sheets [" not in _on_a_terminal(["par", "--all", "--json"])
    shown = _on_a_terminal(["vision", "evaluate", "--synthetic", "20", "--piles", "0", "--no-real"])
    assert "\rsynthetic cards [" in shown and "right rank and suit" in shown


def test_vision_train_hands_its_stages_a_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """Training needs torch (the train extra); a stand-in training module shows what the command hands it."""
    import types

    from controller.progress import Progress

    seen: dict = {}

    def train_body(rng, **kwargs):  # noqa: ANN001, ANN003, ANN202 - the stand-in of vision.training.train's
        seen.update(kwargs)

    fake = types.ModuleType("vision.training.train")
    for name in ("finetune_classifier", "finetune_detector", "train", "train_index_reader", "train_locator",
                 "train_sign_reader"):
        setattr(fake, name, lambda *a, **k: None)
    fake.train_body = train_body
    monkeypatch.setitem(sys.modules, "vision.training.train", fake)
    assert main(["vision", "train", "--body"]) == 0
    assert isinstance(seen["progress"], Progress) and seen["say"] == seen["progress"].say


@pytest.mark.slow
def test_par_rounds_its_feature_figures(capsys: pytest.CaptureFixture[str]) -> None:
    import re

    assert main(["par", "frozen-assets"]) == 0
    out = capsys.readouterr().out
    lines = out.split("  feature snowman:\n")[1].splitlines()
    feature = [line for line in lines if line.startswith("    ")]  # the snowman is the last thing on the sheet
    assert feature[:4] == ["    won: 1 in 2,576.9", "    mean bonus when won: 649.95", "    rtp: 8.4073%",
                           "    mean snowman: 99.11"]
    assert not [line for line in feature if re.search(r"\d\.\d{5,}", line)]


@pytest.mark.slow
def test_bench_slots_shows_a_bar_on_a_terminal() -> None:
    shown = _on_a_terminal(["bench", "slots", "--titles", "bank-on-it", "--spins", "20000", "--scalar-spins", "500"])
    assert "\rbench slots [##############################] 100% 18/18, " in shown  # 16 sheets, the command, 1 title
    assert "bank-on-it  " in shown


@pytest.mark.parametrize("text, value", [("12", 12), ("-5", -5), ("0", 0), ("open", "open"), ("007", "007"),
                                         ("006429188185446104", "006429188185446104"), (str(2**53 - 1), 2**53 - 1),
                                         (str(2**53), str(2**53)), ("1.5", "1.5"), ("-", "-")])
def test_command_arguments_are_numbers_only_where_the_bus_carries_them_exactly(text: str, value: object) -> None:
    """A ticket's validation number (18 digits, leading zeros) once went out as a number beyond JSON's safe
    integers: the bus refused it as malformed and `croupier command` waited for an answer that never came."""
    from controller.commands.table.command import arg_value
    assert arg_value(text) == value and type(arg_value(text)) is type(value)
