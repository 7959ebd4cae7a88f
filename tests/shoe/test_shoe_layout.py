"""Layout rules for the shoe: drivers/shoe imports nothing of controller but the card type, the firmware imports
nothing of this repository, and `croupier bench shoe` writes its figures."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from controller.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module or "")
    return names


def test_the_shoe_driver_imports_only_the_card_type_from_controller() -> None:
    for path in (ROOT / "drivers" / "shoe").glob("*.py"):
        for name in _imports(path):
            if name.split(".")[0] == "controller":
                assert name == "controller.cards", f"{path.name} imports {name}"


def test_the_firmware_imports_only_micropython_modules_and_itself() -> None:
    allowed = {"machine", "utime", "micropython", "struct", "os", "uos", "proto", "sensors", "store"}
    for path in (ROOT / "firmware" / "shoe").glob("*.py"):
        assert _imports(path) <= allowed, f"{path.name} imports {_imports(path) - allowed}"


@pytest.mark.slow
def test_bench_shoe_writes_its_figures(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "shoe.json"
    assert main(["bench", "shoe", "--frames", "200", "--parse-frames", "2000", "--interval", "0.0005",
                 "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["bench"] == "shoe" and report["latency"]["frames"] == 200
    assert report["parser"]["parser_frames_per_s"] > 0 and report["latency"]["p99_us"] > 0
    assert "p99" in capsys.readouterr().out
    assert main(["bench", "shoe", "--frames", "0"]) == 2
