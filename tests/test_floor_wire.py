"""The floor's wire format and chain check (pure) and the `[floor]` config section: no NATS needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.config import ConfigError, any_config_from_mapping
from controller.floor.wire import (ChainError, ChainState, FloorRow, FloorWireError, check_link, check_message,
                                   decode_row, decode_rows, encode_row, encode_rows, machine_of, msg_id, subject_for)
from controller.journal import Journal, canonical_json

MAC = st.text("0123456789abcdef", min_size=64, max_size=64)
MACHINE = st.from_regex(r"[A-Za-z0-9_-]{1,64}", fullmatch=True)
RECORD = st.dictionaries(st.text(max_size=8), st.one_of(st.integers(), st.text(max_size=12), st.booleans()),
                         max_size=4).map(canonical_json)


@st.composite
def rows(draw: st.DrawFn) -> FloorRow:
    return FloorRow(draw(st.integers(1, 2**53)), draw(MACHINE), draw(st.integers(0, 2**63)), draw(st.integers(1, 9)),
                    draw(RECORD), draw(MAC), draw(MAC))


@pytest.mark.slow
@given(rows())
def test_a_row_survives_the_wire_byte_for_byte(row: FloorRow) -> None:
    assert decode_row(encode_row(row)) == row


@given(st.binary(max_size=300))
def test_any_bytes_decode_to_a_row_or_a_wire_error_never_anything_else(data: bytes) -> None:
    try:
        decode_row(data)
    except FloorWireError:
        pass


@pytest.mark.parametrize("change, field", [
    ({"seq": 0}, "seq"), ({"seq": True}, "seq"), ({"mac": "ABC"}, "mac"), ({"prev": 7}, "prev"),
    ({"record": "{nope"}, "record"), ({"record": "[1]"}, "record"), ({"table_id": "a.b"}, "table_id"),
    ({"ts_ns": -1}, "ts_ns"), ({"extra": 1}, "unknown ['extra']"),
])
def test_a_malformed_row_is_refused_naming_its_field(change: dict[str, object], field: str) -> None:
    body = json.loads(encode_row(FloorRow(1, "m1", 5, 2, "{}", "0" * 64, "1" * 64)))
    body.update(change)
    with pytest.raises(FloorWireError, match=field.replace("[", r"\[").replace("]", r"\]")):
        decode_row(json.dumps(body).encode())


def test_subjects_and_ids_name_the_machine() -> None:
    assert subject_for("bj-1") == "croupier.journal.bj-1"
    assert machine_of("croupier.journal.bj-1") == "bj-1"
    assert msg_id("bj-1", 42) == "bj-1:42"
    for bad in ("", "a.b", "a*", "a>", "x" * 65):
        with pytest.raises(FloorWireError):
            subject_for(bad)
    with pytest.raises(FloorWireError):
        machine_of("croupier.journal.a.b")


def _chain(n: int, machine: str = "m1") -> list[FloorRow]:
    out, prev = [], "0" * 64
    for seq in range(1, n + 1):
        mac = f"{seq:064x}"
        out.append(FloorRow(seq, machine, seq, 2, "{}", prev, mac))
        prev = mac
    return out


def test_an_unbroken_chain_checks() -> None:
    state = ChainState("m1")
    for row in _chain(5):
        state = check_link(state, row, msg_id("m1", row.seq))
    assert state == ChainState("m1", 5, f"{5:064x}")


@pytest.mark.parametrize("what, rows_, header, reason", [
    ("gap", [1, 3], None, r"expected row 2 \(rows 2..2 missing\)"),
    ("duplicate", [1, 2, 2], None, r"expected row 3 \(a second copy or an older row\)"),
    ("reorder", [2], None, r"expected row 1 \(rows 1..1 missing\)"),
    ("wrong id", [1], "m1:2", r"message id 'm1:2' is not 'm1:1'"),
])
def test_the_floor_refuses_a_gap_a_copy_a_reorder_and_a_wrong_id(what: str, rows_: list[int], header: str | None,
                                                                  reason: str) -> None:
    chain = _chain(3)
    state = ChainState("m1")
    with pytest.raises(ChainError, match=reason):
        for seq in rows_:
            state = check_link(state, chain[seq - 1], header)


def test_the_floor_refuses_a_broken_link_and_another_machines_row() -> None:
    a, b = _chain(2)
    state = check_link(ChainState("m1"), a, None)
    with pytest.raises(ChainError, match="chain broken"):
        check_link(state, FloorRow(2, "m1", 2, 2, "{}", "f" * 64, b.mac), None)
    with pytest.raises(ChainError, match="belongs to 'm2'"):
        check_link(state, FloorRow(2, "m2", 2, 2, "{}", a.mac, b.mac), None)


def test_a_journal_row_is_a_floor_row_and_its_links_check(tmp_path: Path) -> None:
    """The replicator ships the journal's columns as they are: the floor's check holds on a real keyed chain."""
    from controller.floor.replicator import JournalReader

    with Journal(tmp_path / "j" / "m1.journal", "m1", key_file=tmp_path / "key", anchor=tmp_path / "m1.anchor") as j:
        j.append_many([{"kind": "a", "n": i} for i in range(4)])
        j.append({"kind": "b", "text": "é"})
    reader = JournalReader(tmp_path / "j" / "m1.journal")
    got = reader.rows(0, 100)
    reader.close()
    assert [r.seq for r in got] == [1, 2, 3, 4, 5]
    assert json.loads(got[4].record) == {"kind": "b", "text": "é"}
    state = ChainState("m1")
    for row in got:
        state = check_link(state, decode_row(encode_row(row)), msg_id("m1", row.seq))
    assert state.seq == 5 and state.mac == got[-1].mac


@given(st.lists(rows(), min_size=1, max_size=5))
def test_a_batch_of_rows_survives_the_wire_and_a_single_row_message_is_the_row_itself(batch: list[FloorRow]) -> None:
    assert decode_rows(encode_rows(batch)) == batch
    assert encode_rows(batch[:1]) == encode_row(batch[0])


def test_a_malformed_line_of_a_batch_is_refused_naming_the_line() -> None:
    good = encode_rows(_chain(2))
    with pytest.raises(FloorWireError, match=r"line 3 of 3: journal row is not JSON"):
        decode_rows(good + b"\nnope")
    with pytest.raises(FloorWireError, match=r"line 2 of 2: journal row is not JSON"):
        decode_rows(good.split(b"\n")[0] + b"\n")


def test_a_message_checks_when_its_id_names_its_first_row_and_its_rows_link() -> None:
    chain = _chain(6)
    state = check_message(ChainState("m1"), chain[:3], "m1:1")
    state = check_message(state, chain[3:], "m1:4")
    assert state == ChainState("m1", 6, chain[-1].mac)
    with pytest.raises(ChainError, match=r"message id 'm1:3' is not 'm1:1'"):
        check_message(ChainState("m1"), chain[:3], "m1:3")
    with pytest.raises(ChainError, match=r"expected row 3 \(a second copy or an older row\)"):
        check_message(check_message(ChainState("m1"), chain[:2], "m1:1"), chain[1:4], "m1:2")
    with pytest.raises(ChainError, match="a message with no row"):
        check_message(ChainState("m1"), [], "m1:1")


# ---------------------------------------------------------------------------------------------- [floor] config

def _table(extra: dict[str, object]) -> dict[str, object]:
    return {"table": {"id": "bj-1", "game": "blackjack", "journal": "bj.journal"}, **extra}


def test_no_floor_section_means_no_floor() -> None:
    assert any_config_from_mapping(_table({}), Path("/x/t.toml")).floor is None


def test_a_floor_section_names_servers_subject_and_credentials() -> None:
    cfg = any_config_from_mapping(_table({"floor": {"servers": ["nats://a:4222", "tls://b:4222"],
                                                    "credentials": "bj.creds"}}), Path("/x/t.toml"))
    assert cfg.floor.servers == ("nats://a:4222", "tls://b:4222")
    assert cfg.floor.subject == "croupier.journal.bj-1" and cfg.floor.machine == "bj-1"
    assert cfg.floor.credentials == Path("/x/bj.creds")


@pytest.mark.parametrize("floor, message", [
    ({}, r"\[floor\].servers: a list of NATS server URLs"),
    ({"servers": "nats://a:4222"}, r"\[floor\].servers: a list"),
    ({"servers": ["http://a"]}, r"\[floor\].servers: 'http://a' is not a nats:// or tls:// URL"),
    ({"servers": ["nats://a"], "subject": "journal.bj-1"}, r"\[floor\].subject: 'journal.bj-1' is not "),
    ({"servers": ["nats://a"], "credentials": 3}, r"\[floor\].credentials: expected a file name"),
    ({"servers": ["nats://a"], "server": 1}, r"\[floor\]: unknown key\(s\) server"),
    ({"servers": ["nats://a"], "stop_play_after": 0}, r"\[floor\].stop_play_after: minutes without the floor"),
])
def test_a_bad_floor_section_is_refused_naming_the_key(floor: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        any_config_from_mapping(_table({"floor": floor}), Path("/x/t.toml"))


class _SettlingFloor:
    """A JetStream stand-in whose first requests time out as nats does while a node restarts or a leader moves."""

    def __init__(self, messages: list[bytes], stalls: int) -> None:
        self.messages, self.stalls = messages, stalls

    def _stall(self) -> None:
        import nats.errors
        if self.stalls:
            self.stalls -= 1
            raise nats.errors.TimeoutError

    async def stream_info(self, stream: str, subjects_filter: str) -> object:
        from types import SimpleNamespace
        self._stall()
        return SimpleNamespace(state=SimpleNamespace(subjects={subjects_filter: len(self.messages)}))

    async def pull_subscribe(self, subject: str, stream: str, config: object) -> object:
        from types import SimpleNamespace
        self._stall()
        start = config.opt_start_seq  # type: ignore[attr-defined]
        left = [SimpleNamespace(data=m, metadata=SimpleNamespace(sequence=SimpleNamespace(stream=s)))
                for s, m in enumerate(self.messages, 1) if s >= start]
        floor = self

        class Sub:
            async def fetch(self, n: int, timeout: float) -> list[object]:
                floor._stall()
                taken, left[:] = left[:n], left[n:]
                return taken

            async def unsubscribe(self) -> None:
                pass

        return Sub()


@pytest.mark.parametrize("stalls", [1, 2, 3, 5])
def test_the_floor_copy_is_read_through_nats_timeouts_while_the_floor_settles(stalls: int) -> None:
    """A nats request timeout is a TimeoutError too; it once ended the read at once instead of reading on (CI)."""
    import asyncio

    from controller.floor.ingest import floor_rows
    chain = _chain(6)
    floor = _SettlingFloor([encode_rows(chain[:2]), encode_row(chain[2]), encode_rows(chain[3:])], stalls)
    got = asyncio.run(floor_rows(floor, "m1", timeout=10.0))
    assert [row for _, row in got] == chain
    assert [seq for seq, _ in got] == [1, 1, 2, 3, 3, 3]
