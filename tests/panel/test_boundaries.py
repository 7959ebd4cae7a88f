"""Layout rules for the panel: only drivers/panel imports gpiozero; drivers import nothing of controller but cards."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def product_files() -> list[Path]:
    return [p for folder in ("controller", "drivers", "vision") for p in (ROOT / folder).rglob("*.py")]


@pytest.mark.slow
def test_only_the_panel_driver_imports_gpiozero() -> None:
    offenders = [str(p.relative_to(ROOT)) for p in product_files()
                 if any(name == "gpiozero" or name.startswith("gpiozero.") for name in imports(p))
                 and not p.is_relative_to(ROOT / "drivers/panel")]
    assert offenders == []


def test_drivers_import_nothing_of_controller_but_cards() -> None:
    offenders = [(str(p.relative_to(ROOT)), name) for p in (ROOT / "drivers").rglob("*.py") for name in imports(p)
                 if (name == "controller" or name.startswith("controller.")) and name != "controller.cards"]
    assert offenders == []


def test_the_pin_map_parser_needs_no_gpiozero() -> None:
    # Validating a config (e.g. before deploying it) must work where gpiozero is absent.
    for module in ("config.py", "events.py", "inputs.py", "lamps.py", "max7219.py", "clock.py"):
        assert not any(name.startswith("gpiozero") for name in imports(ROOT / "drivers/panel" / module)), module
