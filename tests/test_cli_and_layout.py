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


def test_every_module_says_what_it_is_for() -> None:
    import ast

    for folder in ("controller", "drivers", "vision"):
        for path in (ROOT / folder).rglob("*.py"):
            doc = ast.get_docstring(ast.parse(path.read_text()))
            assert doc and doc.strip(), f"{path.relative_to(ROOT)} has no module docstring"


def test_math_refuses_an_unknown_game(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "roulette"]) == 2
    assert "unknown game 'roulette'" in capsys.readouterr().err
