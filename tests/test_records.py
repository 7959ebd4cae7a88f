"""Journal records as typed, versioned, frozen dataclasses (controller/records.py): every recorded row is written back
byte for byte, unknown kinds and versions are refused naming the row, and the README's list of kinds is the code's."""

from __future__ import annotations

import dataclasses
import json
import re
import types
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


def _values(hint: Any) -> Any:
    """A hypothesis strategy for a record field's type (JSON: any JSON value)."""
    import typing

    from hypothesis import strategies as st

    from controller.records import Absent

    json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                               lambda inner: st.lists(inner, max_size=3)
                               | st.dictionaries(st.text(max_size=3), inner, max_size=3), max_leaves=6)
    if hint is Any:
        return json_values
    args = typing.get_args(hint)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        return st.one_of(*[st.just(None) if a is type(None) else st.just(Absent.ABSENT) if a is Absent
                           else _values(a) for a in args])
    if typing.get_origin(hint) is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return st.lists(_values(args[0]), max_size=3).map(tuple)
        return st.tuples(*[_values(a) for a in args])
    return {str: st.text(max_size=8), int: st.integers(), bool: st.booleans(), float: st.floats(allow_nan=False)}[hint]


@pytest.mark.parametrize("family", ["table", "cabinet", "progressive"])
def test_any_record_reads_back_from_its_row_as_it_was(family: str) -> None:
    import typing

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from controller.records import _FAMILIES, record_from_json

    for cls in [c for (kind, _), c in _FAMILIES[family].items() if not kind.startswith("test_")]:
        hints = typing.get_type_hints(cls)
        fields = {f.name: _values(hints[f.name]) for f in dataclasses.fields(cls)}

        @settings(max_examples=25, deadline=None)
        @given(st.fixed_dictionaries(fields).map(lambda kw, cls=cls: cls(**kw)))
        def roundtrip(record: Any) -> None:
            row = json.loads(canonical_json(record.to_json()))  # what the journal stores and gives back
            again = record_from_json(family, row)
            assert again == record and canonical_json(again.to_json()) == canonical_json(row)

        roundtrip()
