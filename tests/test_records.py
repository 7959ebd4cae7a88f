"""Journal records as typed, versioned, frozen dataclasses (controller/records.py): every recorded row is written back
byte for byte, unknown kinds and versions are refused naming the row, and the README's list of kinds is the code's."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path
from typing import Any, ClassVar

import pytest

from controller.journal import canonical_json
from controller.records import ABSENT, RecordError, kinds_text, opt
from controller.cabinetrecords import cabinet_record
from controller.linkrecords import link_record
from controller.tablerecords import Game, ShoeFlags, TableRecord, table_record

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "journals"
RECORDS = json.loads((DATA / "records.json").read_text())
TABLES = json.loads((DATA / "tables.json").read_text())
CABINETS = json.loads((DATA / "cabinets.json").read_text())


def _table_rows() -> list[dict[str, Any]]:
    return RECORDS["table"] + [r for rows in TABLES.values() for r in rows]


def test_every_recorded_table_row_is_written_back_byte_for_byte() -> None:
    # The rows the runtimes and the tests wrote before the records were typed (one to three of each shape)
    # and the recorded sessions of every game: the MAC chain covers these bytes.
    rows = _table_rows()
    kinds = set()
    for row in rows:
        record = table_record(row)
        assert canonical_json(record.to_json()) == canonical_json(row)
        kinds.add((record.KIND, record.WHAT))
    assert len(kinds) == 17  # every table kind occurs


def test_every_recorded_cabinet_row_is_written_back_byte_for_byte() -> None:
    kinds = set()
    for row in RECORDS["cabinet"] + [r for rows in CABINETS.values() for r in rows]:
        record = cabinet_record(row)
        assert canonical_json(record.to_json()) == canonical_json(row)
        kinds.add((record.KIND, record.WHAT))
    assert len(kinds) == 25  # every cabinet kind occurs (SAS's seven among them)


def test_every_recorded_link_row_is_written_back_byte_for_byte() -> None:
    kinds = set()
    for row in RECORDS["progressive"]:
        record = link_record(row)
        assert canonical_json(record.to_json()) == canonical_json(row)
        kinds.add(record.KIND)
    assert kinds == {"start", "contribution", "hit", "refused"}


def test_a_cabinet_row_of_an_unknown_kind_is_refused_naming_the_row() -> None:
    from controller.cabinetstate import new_state, replay
    from controller.slots.catalog import get_title

    title = get_title("frozen-assets")
    with pytest.raises(RecordError, match=r"^journal row 2: unknown cabinet record kind 'spin_twice'"):
        replay(new_state("fa-1", title, title.denominations[0]), [(1, CABINETS["frozen-assets"][0]),
                                                                   (2, {"kind": "spin_twice"})])


def test_what_the_table_writes_is_what_it_wrote_before() -> None:
    assert Game({"kind": "open_bets"}, "dealer", closes_at=None).to_json() == \
        {"kind": "game", "event": {"kind": "open_bets"}, "via": "dealer", "closes_at": None}
    assert Game({"kind": "settle"}, "dealer").to_json() == \
        {"kind": "game", "event": {"kind": "settle"}, "via": "dealer"}
    assert ShoeFlags(("EMPTY",)).to_json() == {"kind": "shoe", "what": "flags", "flags": ["EMPTY"]}


def test_records_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        ShoeFlags(("EMPTY",)).flags = ()  # type: ignore[misc]


@pytest.mark.parametrize("row, error", [
    ({"kind": "sparkle"}, "journal row 3: unknown table record kind 'sparkle'"),
    ({"kind": "shoe", "what": "levitate"}, "journal row 3: unknown table record 'shoe' of what 'levitate'"),
    ({"kind": "door", "name": "main", "open": True, "v": 2},
     "journal row 3: table record 'door' version 2 is not known (this build reads version 1)"),
    ({"kind": "door", "name": "main", "open": True, "ajar": 1},
     "journal row 3: table record 'door' has no field(s) ajar"),
    ({"kind": "door", "name": "main"}, "journal row 3: table record 'door' lacks field(s) open"),
    ([1, 2], "journal row 3: a record is an object with a \"kind\""),
])
def test_a_row_of_an_unknown_kind_or_version_is_refused_naming_the_row(row: Any, error: str) -> None:
    from controller.games import get_game
    from controller.tablestate import new_state, replay

    spec = get_game("baccarat")
    start = TABLES["baccarat"][0]
    state = new_state("baccarat-1", spec, spec.rules_type())
    with pytest.raises(RecordError) as info:
        replay(state, [(1, start), (2, {"kind": "door", "name": "main", "open": True}), (3, row)])
    assert str(info.value).startswith(error)


def test_a_later_version_writes_its_number_and_reads_only_its_own() -> None:
    @dataclasses.dataclass(frozen=True, slots=True)
    class Buzz(TableRecord):
        """a test kind at its second version"""
        KIND: ClassVar[str] = "test_buzz"
        VERSION: ClassVar[int] = 2
        loud: bool
        note: str | None = opt()

    assert Buzz(True).to_json() == {"kind": "test_buzz", "v": 2, "loud": True}
    assert table_record({"kind": "test_buzz", "v": 2, "loud": False, "note": "x"}) == Buzz(False, "x")
    with pytest.raises(RecordError, match="version 1 is not known"):
        table_record({"kind": "test_buzz", "loud": False})


@pytest.mark.parametrize("family", ["table", "cabinet", "progressive"])
def test_the_readme_lists_the_kinds_the_code_has(family: str) -> None:
    readme = (ROOT / "README.md").read_text()
    block = re.search(rf"<!-- record kinds: {family} -->\n(.*?)\n<!-- end record kinds: {family} -->", readme, re.S)
    assert block is not None, f"README.md has no generated list of {family} record kinds"
    listed = "\n".join(line for line in kinds_text(family).splitlines() if "test_buzz" not in line)
    assert block.group(1) == listed, f"regenerate it: python -m controller.records {family}"


def test_absent_and_null_are_told_apart() -> None:
    assert Game({"kind": "open_bets"}).closes_at is ABSENT
    assert table_record({"kind": "game", "event": {}, "closes_at": None}).to_json() == \
        {"kind": "game", "event": {}, "closes_at": None}
