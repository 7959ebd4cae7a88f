"""The floor's wire format for journal records, and the pure chain check the floor runs as it ingests them.

One JetStream message on the subject `croupier.journal.<machine>` of the stream `CROUPIER_JOURNAL` carries
one or more consecutive journal rows (a batch: one round trip to the floor for many rows), with the message
id `<machine>:<first row's seq>` (JetStream drops a second message starting at the same row within its
duplicate window, whatever rows it ends at: a batch re-sent after an outage with other boundaries is still a
copy) and `Nats-Expected-Last-Subject-Sequence` set to the stream sequence of the machine's previous message
(the stream refuses a message that would leave a gap or come out of order). The body is each row exactly as
the journal holds it (canonical JSON, keys sorted), one a line (a single-row message is one line, no newline):

    {"mac": MAC, "prev": previous MAC, "record": "<the record's canonical JSON text>", "schema": 2,
     "seq": N, "table_id": MACHINE, "ts_ns": NANOSECONDS}

`record` stays text, byte for byte the text the MAC covers, so a restored journal verifies under its key.

What the floor can check without the machine's journal key (the key never leaves the machine): that each
machine's rows come in order with no gap and no second version of a row, that every row names the MAC of
the row before it (the chain is linked end to end), and that each row is well formed. What only a holder
of the key can check: that each MAC is right for its row, and the first row's link to the chain's
genesis. So the floor proves that what it holds is one unbroken chain, as the machine sent it; `croupier
journal verify` on a restored journal proves the chain is genuine.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping

__all__ = ["STREAM", "SUBJECT_PREFIX", "FloorRow", "FloorWireError", "ChainState", "ChainError", "subject_for",
           "machine_of", "msg_id", "encode_row", "decode_row", "encode_rows", "decode_rows", "check_link",
           "check_message", "HDR_MSG_ID", "HDR_EXPECTED_SUBJECT_SEQ", "json_object", "exact_fields", "whole_field"]

STREAM = "CROUPIER_JOURNAL"
SUBJECT_PREFIX = "croupier.journal."
HDR_MSG_ID = "Nats-Msg-Id"
HDR_EXPECTED_SUBJECT_SEQ = "Nats-Expected-Last-Subject-Sequence"

_MACHINE = re.compile(r"[A-Za-z0-9_-]{1,64}")  # the config's id rule: also a valid single NATS subject token
_MAC = re.compile(r"[0-9a-f]{64}")
_FIELDS = {"mac", "prev", "record", "schema", "seq", "table_id", "ts_ns"}


class FloorWireError(ValueError):
    """A message on a journal subject that is not a well-formed journal row."""


class ChainError(ValueError):
    """A machine's rows on the floor do not form one unbroken chain (a gap, a reorder, a fork, a broken link)."""


@dataclass(frozen=True, slots=True)
class FloorRow:
    """One journal row as the floor holds it."""

    seq: int
    table_id: str
    ts_ns: int
    schema: int
    record: str   # canonical JSON text, exactly as MACed
    prev: str     # the previous row's MAC (row 1: the chain's genesis)
    mac: str

    def as_tuple(self) -> tuple[int, str, int, int, str, str, str]:
        """The row in the journal table's column order."""
        return (self.seq, self.table_id, self.ts_ns, self.schema, self.record, self.prev, self.mac)


def subject_for(machine: str) -> str:
    """The subject a machine's journal rows go to."""
    if not _MACHINE.fullmatch(machine):
        raise FloorWireError(f"machine id {machine!r}: 1 to 64 ASCII letters, digits, - and _")
    return SUBJECT_PREFIX + machine


def machine_of(subject: str) -> str:
    """The machine a journal subject belongs to."""
    machine = subject[len(SUBJECT_PREFIX):] if subject.startswith(SUBJECT_PREFIX) else ""
    if not _MACHINE.fullmatch(machine):
        raise FloorWireError(f"subject {subject!r} is not a journal subject ({SUBJECT_PREFIX}<machine>)")
    return machine


def msg_id(machine: str, seq: int) -> str:
    """The de-duplication id of a machine's message whose first row is `seq`."""
    return f"{machine}:{seq}"


def encode_row(row: FloorRow) -> bytes:
    """A row's message body (canonical JSON)."""
    body = {"mac": row.mac, "prev": row.prev, "record": row.record, "schema": row.schema, "seq": row.seq,
            "table_id": row.table_id, "ts_ns": row.ts_ns}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def encode_rows(rows: list[FloorRow] | tuple[FloorRow, ...]) -> bytes:
    """A message body of consecutive rows (one line each; canonical JSON escapes every newline in a row)."""
    return b"\n".join(encode_row(row) for row in rows)


def decode_rows(data: bytes) -> list[FloorRow]:
    """The rows of a message body, in order; anything malformed raises FloorWireError naming the line and field."""
    lines = data.split(b"\n")
    if len(lines) == 1:
        return [decode_row(data)]
    out = []
    for i, line in enumerate(lines, 1):
        try:
            out.append(decode_row(line))
        except FloorWireError as exc:
            raise FloorWireError(f"line {i} of {len(lines)}: {exc}") from None
    return out


def json_object(data: bytes, what: str, error: type[ValueError]) -> dict[str, Any]:
    """A floor message's body, which is one JSON object; anything else raises `error` saying what `what` is not."""
    try:
        body = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise error(f"{what} is not JSON: {exc}") from None
    if not isinstance(body, dict):
        raise error(f"{what} is not a JSON object")
    return body


def exact_fields(body: Mapping[str, Any], fields: set[str], what: str, error: type[ValueError]) -> None:
    """Raise `error` naming the missing and unknown fields unless `body` has exactly `fields`."""
    if set(body) != fields:
        missing, extra = sorted(fields - set(body)), sorted(set(body) - fields)
        raise error(f"{what} fields: missing {missing or 'none'}, unknown {extra or 'none'}")


def whole_field(body: Mapping[str, Any], key: str, low: int, what: str, error: type[ValueError]) -> int:
    """Field `key` of `body`, a whole number >= `low` (not a bool), else `error` naming the field."""
    value = body[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise error(f"{what} field {key}: expected a whole number >= {low}, got {value!r}")
    return value


def _int(body: Mapping[str, Any], key: str, low: int) -> int:
    return whole_field(body, key, low, "journal row", FloorWireError)


def decode_row(data: bytes) -> FloorRow:
    """Parse a message body into a row; anything malformed raises FloorWireError naming the field."""
    body = json_object(data, "journal row", FloorWireError)
    exact_fields(body, _FIELDS, "journal row", FloorWireError)
    for key in ("mac", "prev"):
        if not isinstance(body[key], str) or not _MAC.fullmatch(body[key]):
            raise FloorWireError(f"journal row field {key}: expected 64 lowercase hex digits")
    if not isinstance(body["table_id"], str) or not _MACHINE.fullmatch(body["table_id"]):
        raise FloorWireError(f"journal row field table_id: not a machine id: {body['table_id']!r}")
    if not isinstance(body["record"], str):
        raise FloorWireError("journal row field record: expected the record's JSON text")
    try:
        record = json.loads(body["record"])
    except ValueError:
        raise FloorWireError("journal row field record: not valid JSON text") from None
    if not isinstance(record, dict):
        raise FloorWireError("journal row field record: not a JSON object")
    return FloorRow(_int(body, "seq", 1), body["table_id"], _int(body, "ts_ns", 0), _int(body, "schema", 1),
                    body["record"], body["prev"], body["mac"])


@dataclass(frozen=True, slots=True)
class ChainState:
    """What the floor knows of one machine's chain: its last row's seq and MAC (seq 0: nothing yet)."""

    machine: str
    seq: int = 0
    mac: str = ""


def check_link(state: ChainState, row: FloorRow, header_id: str | None) -> ChainState:
    """The floor's check of the next row of a machine's chain; the new state, or ChainError saying what broke."""
    where = f"floor copy of {state.machine} row {row.seq}"
    if row.table_id != state.machine:
        raise ChainError(f"{where}: belongs to {row.table_id!r} (published on another machine's subject)")
    if header_id is not None and header_id != msg_id(state.machine, row.seq):
        raise ChainError(f"{where}: message id {header_id!r} is not {msg_id(state.machine, row.seq)!r}")
    if row.seq != state.seq + 1:
        what = "a second copy or an older row" if row.seq <= state.seq else \
            f"rows {state.seq + 1}..{row.seq - 1} missing"
        raise ChainError(f"{where}: expected row {state.seq + 1} ({what})")
    if state.seq and row.prev != state.mac:
        raise ChainError(f"{where}: chain broken (its previous MAC is not row {state.seq}'s MAC)")
    return ChainState(state.machine, row.seq, row.mac)


def check_message(state: ChainState, rows: list[FloorRow], header_id: str | None) -> ChainState:
    """The floor's check of a machine's next message: its id names its first row, and each row links to the one
    before (check_link); the new state, or ChainError saying what broke."""
    if not rows:
        raise ChainError(f"floor copy of {state.machine}: a message with no row")
    for i, row in enumerate(rows):
        state = check_link(state, row, header_id if i == 0 else None)
    return state
