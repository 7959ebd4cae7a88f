"""bus.md's command tables against the commands and roles the runtimes declare beside their handlers (@command,
seen through ALLOWED), so the document a client's author reads cannot drift from what a table, cabinet or link
controller takes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.cabinet import Cabinet
from controller.progressive import LinkController
from controller.table import Table

BUS_MD = Path(__file__).resolve().parents[1] / "controller" / "bus.md"
ROLES = {"dealer", "spot", "ops", "pit", "player", "attendant", "cabinet"}


def documented(section: str) -> dict[str, set[str]]:
    """command -> roles, from the first command table after the heading `section` in bus.md."""
    text = BUS_MD.read_text()
    body = text[text.index(f"## {section}\n"):]
    body = body[:body.index("\n## ", 1)] if "\n## " in body[1:] else body
    table: dict[str, set[str]] = {}
    rows = [line for line in body.splitlines() if line.startswith("| `")]
    for row in rows:
        names, _args, roles = (cell.strip() for cell in row.strip("|").split("|", 2))
        who = re.sub(r"\([^)]*\)", "", roles).split(":")[0]  # the roles come first; asides are in brackets
        allowed = {word for word in re.findall(r"[a-z]+", who) if word in ROLES}
        for name in re.findall(r"`([a-z_]+)`", names):
            table[name] = allowed
    return table


@pytest.mark.parametrize("section, runtime", [("Commands (ROUTER, CURVE)", Table), ("Slot cabinets", Cabinet),
                                              ("Progressive link controllers", LinkController)])
def test_bus_md_lists_every_command_with_the_roles_the_runtime_allows(section: str, runtime: type) -> None:
    declared = {command: set(roles) for command, roles in runtime.ALLOWED.items()}
    assert documented(section) == declared
