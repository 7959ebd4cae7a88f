"""Shoe wire protocol, host side: frame codec (flags, byte stuffing, CRC-16/CCITT-FALSE) and typed messages.

The protocol is declared once in firmware/protocol/PROTOCOL.md; firmware/protocol/vectors.json holds the test
vectors that this module and the firmware are both checked against. Frame on the wire:

    7E | stuffed( LEN | SEQ | TYPE | PAYLOAD[LEN] | CRC16 big-endian ) | 7E

Inside the flags 0x7E and 0x7D are sent as 0x7D, byte ^ 0x20, so a flag byte always means "frame boundary":
garbage or a lost byte costs the one frame it hit, never the link.
"""

from __future__ import annotations

import binascii
from dataclasses import dataclass
from enum import IntEnum, IntFlag
from typing import Any, ClassVar, final

from controller.cards import Card, from_index
from drivers.shoe.layout import Field, Layout, PayloadError

__all__ = [
    "FLAG", "ESC", "MAX_PAYLOAD", "PROTOCOL_VERSION", "NO_CARD", "crc16", "encode_frame", "Frame", "Rejected",
    "Decoder", "decode_message", "PayloadError", "Message", "DeviceKind", "StateFlags", "ErrorCode", "NakReason",
    "Identify", "CardDrawn", "ShoeState", "DeckCheck", "Shuffle", "Heartbeat", "DeviceError", "Ack", "Nak",
    "Hello", "ResetCounters", "Lock", "RequestStatus", "SetTime", "MESSAGE_TYPES", "DEVICE_TYPES", "HOST_TYPES",
    "encode_message", "VERDICTS", "Field", "Layout", "layout_of",
]

FLAG = 0x7E
ESC = 0x7D
ESC_XOR = 0x20
MAX_PAYLOAD = 64
HEADER = 3  # LEN, SEQ, TYPE
OVERHEAD = HEADER + 2  # + CRC
MAX_STUFFED = 2 * (MAX_PAYLOAD + OVERHEAD)  # worst case: every byte escaped
PROTOCOL_VERSION = 1
NO_CARD = 0xFF

_FLAG_B = b"\x7e"
_ESC_B = b"\x7d"
_ESC_FLAG = b"\x7d\x5e"
_ESC_ESC = b"\x7d\x5d"

# Every way a received segment can be refused, in the order they are checked (the vectors name them).
VERDICTS = ("ok", "bad_escape", "too_short", "bad_length", "bad_crc", "unknown_type", "bad_payload")


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE: polynomial 0x1021, initial 0xFFFF, not reflected, no final XOR ("123456789" -> 0x29B1)."""
    return binascii.crc_hqx(data, 0xFFFF)


def encode_frame(seq: int, type_: int, payload: bytes = b"") -> bytes:
    """One complete frame, flags included."""
    if not 0 <= seq <= 255 or not 0 <= type_ <= 255:
        raise ValueError(f"sequence and type are bytes, got seq={seq!r} type={type_!r}")
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes exceeds the maximum of {MAX_PAYLOAD}")
    body = bytes((len(payload), seq, type_)) + payload
    body += crc16(body).to_bytes(2, "big")
    if ESC in body or FLAG in body:
        # Escapes first, so the escapes added for flags are not escaped again.
        body = body.replace(_ESC_B, _ESC_ESC).replace(_FLAG_B, _ESC_FLAG)
    return _FLAG_B + body + _FLAG_B


@final  # final, so that `type(item) is Rejected` tells mypy the rest are Frames
@dataclass(frozen=True, slots=True)
class Frame:
    """A frame that passed the framing checks (escapes, length, CRC); its payload is not interpreted yet."""

    seq: int
    type: int
    payload: bytes


@final
@dataclass(frozen=True, slots=True)
class Rejected:
    """A segment between two flags that is not a valid frame: `verdict` says why, `raw` is the stuffed bytes."""

    verdict: str
    raw: bytes


def parse_segment(seg: bytes) -> Frame | Rejected:
    """Check one stuffed segment (the bytes between two flags)."""
    if ESC in seg:
        if seg.count(_ESC_B) != seg.count(_ESC_FLAG) + seg.count(_ESC_ESC):
            return Rejected("bad_escape", seg)
        body = seg.replace(_ESC_FLAG, _FLAG_B).replace(_ESC_ESC, _ESC_B)
    else:
        body = seg
    n = len(body)
    if n < OVERHEAD:
        return Rejected("too_short", seg)
    if body[0] + OVERHEAD != n:
        return Rejected("bad_length", seg)
    # Running the CRC over the message and its big-endian CRC leaves zero exactly when they agree.
    if binascii.crc_hqx(body, 0xFFFF):
        return Rejected("bad_crc", seg)
    return Frame(body[1], body[2], body[3:-2])


class Decoder:
    """Turns a byte stream into frames and rejections. Feed it whatever arrives, in any chunks.

    Until the first flag is seen the decoder hunts (those bytes are counted in `noise`); after that every
    segment between two flags is a candidate frame. A partial segment longer than any valid frame is dropped
    as `oversize` and the decoder hunts for the next flag.
    """

    __slots__ = ("_buf", "_hunting", "noise", "oversize")

    def __init__(self) -> None:
        self._buf = b""
        self._hunting = True
        self.noise = 0
        self.oversize = 0

    def reset(self) -> None:
        """Forget any partial frame (after a reconnect the old bytes belong to no frame)."""
        self._buf = b""
        self._hunting = True

    def feed(self, data: bytes) -> list[Frame | Rejected]:
        buf = self._buf + data if self._buf else bytes(data)
        if FLAG not in buf:
            if self._hunting:
                self.noise += len(buf)
                self._buf = b""
            elif len(buf) > MAX_STUFFED:
                self._drop_oversize()
            else:
                self._buf = buf
            return []
        parts = buf.split(_FLAG_B)
        if self._hunting:
            self.noise += len(parts[0])
            self._hunting = False
            del parts[0]
        tail = parts.pop()
        out: list[Frame | Rejected] = []
        for seg in parts:
            if len(seg) > MAX_STUFFED:
                self.oversize += 1  # as if it had arrived byte by byte: dropped without a verdict
            elif seg:  # an empty segment is two adjacent flags (end of one frame, start of the next)
                out.append(parse_segment(seg))
        if len(tail) > MAX_STUFFED:
            self._drop_oversize()
        else:
            self._buf = tail
        return out

    def _drop_oversize(self) -> None:
        self.oversize += 1
        self._buf = b""
        self._hunting = True


class DeviceKind(IntFlag):
    SHOE = 1
    SHUFFLER = 2


class StateFlags(IntFlag):
    """Shoe state bits (STATE and HEARTBEAT); a bit outside these is a protocol error."""

    LID_OPEN = 0x01
    CARDS_LOW = 0x02
    CUT_CARD = 0x04
    EMPTY = 0x08
    JAM = 0x10
    LOCKED = 0x20


STATE_MASK = int(StateFlags.LID_OPEN | StateFlags.CARDS_LOW | StateFlags.CUT_CARD | StateFlags.EMPTY
                 | StateFlags.JAM | StateFlags.LOCKED)


class ErrorCode(IntEnum):
    SENSOR = 1  # the card reader module failed or timed out
    UNREADABLE = 2  # a card passed the draw switch but its index could not be read
    STORAGE = 3  # the draw counter could not be written to flash
    BAD_COMMAND = 4  # a host command was malformed or not allowed now
    OVERFLOW = 5  # the device's queue of unacknowledged messages overflowed
    OTHER = 255


class NakReason(IntEnum):
    BAD_FRAME = 1  # a segment failed the framing checks (escape, length, CRC)
    OUT_OF_ORDER = 2  # a reliable frame arrived with an unexpected sequence number
    BAD_PAYLOAD = 3  # unknown type or a payload that does not fit its type


def _card_of(byte: int, what: str) -> Card:
    if byte > 52:
        raise PayloadError("bad_payload", f"{what}: card byte {byte} is not a card (0..51, 52 joker)")
    return from_index(byte)


# ---- messages: each declares its payload layout once, in the words of vectors.json ------------------------

_LAYOUTS: dict[type[Message], Layout] = {}


def layout_of(cls: type[Message]) -> Layout:
    """The compiled layout of a message class (compiled once)."""
    layout = _LAYOUTS.get(cls)
    if layout is None:
        layout = _LAYOUTS[cls] = Layout(cls.__name__, cls.LAYOUT)
    return layout


@dataclass(frozen=True, slots=True)
class Message:
    """Base of every message. TYPE is its type byte; RELIABLE ones are sequenced, acknowledged and retransmitted.

    NAME and LAYOUT are its declaration as vectors.json words it (a test compares them); `wire()` gives its wire
    fields and `from_wire` builds it from them, so the bytes come from the layout alone. A message whose fields
    are its wire fields as they are (and `seq`, where it has one) needs neither."""

    TYPE: ClassVar[int] = -1
    NAME: ClassVar[str] = ""
    LAYOUT: ClassVar[str] = ""
    RELIABLE: ClassVar[bool] = True
    FROM_DEVICE: ClassVar[bool | None] = True  # False: a host command; None: either way (link control)

    def wire(self) -> dict[str, Any]:
        """The message's fields as the wire carries them (cards as their index bytes)."""
        return {f.name: getattr(self, f.name) for f in layout_of(type(self)).fields}

    @classmethod
    def from_wire(cls, fields: dict[str, Any], seq: int) -> Message:
        """The message its wire fields make (the frame's sequence number is its `seq`, where it has one)."""
        if "seq" in cls.__dataclass_fields__:
            fields = {**fields, "seq": seq}
        return cls(**fields)

    def pack(self) -> bytes:
        return layout_of(type(self)).encode(self.wire())

    @classmethod
    def unpack(cls, payload: bytes, seq: int) -> Message:
        return cls.from_wire(layout_of(cls).decode(payload), seq)


# ---- device -> host ---------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Identify(Message):
    """Who the device is and where its counters stand; sent at boot and in answer to every HELLO (not acknowledged).

    `tx_base` is the sequence number of the device's oldest unacknowledged message (or of the next one if none is
    waiting): a host that already has `tx_base` knows the frame in flight is a duplicate, so a resync never
    renumbers or redelivers anything.
    """

    TYPE: ClassVar[int] = 0x01
    NAME: ClassVar[str] = "IDENTIFY"
    LAYOUT: ClassVar[str] = ("kind:u8 protocol:u8 fw_major:u8 fw_minor:u8 fw_patch:u8 shoe_id:u8 tx_base:u8 boot:u32 "
                             "draws:u32 last_card:u8 serial:ascii[1..32]")
    RELIABLE: ClassVar[bool] = False
    kind: DeviceKind
    protocol: int
    firmware: tuple[int, int, int]
    shoe_id: int
    tx_base: int
    boot: int  # boot counter kept in flash: a new value means the device restarted
    draws: int  # draw counter: the number of the last card drawn
    last_card: Card | None  # the card of draw number `draws` (None after a counter reset)
    serial: str

    def wire(self) -> dict[str, Any]:
        return {"kind": int(self.kind), "protocol": self.protocol, "fw_major": self.firmware[0],
                "fw_minor": self.firmware[1], "fw_patch": self.firmware[2], "shoe_id": self.shoe_id,
                "tx_base": self.tx_base, "boot": self.boot, "draws": self.draws,
                "last_card": NO_CARD if self.last_card is None else self.last_card.index, "serial": self.serial}

    @classmethod
    def from_wire(cls, f: dict[str, Any], seq: int) -> Identify:
        if f["kind"] == 0 or f["kind"] & ~3:
            raise PayloadError("bad_payload", f"Identify: unknown device kind {f['kind']}")
        last = None if f["last_card"] == NO_CARD else _card_of(f["last_card"], "Identify last card")
        return cls(DeviceKind(f["kind"]), f["protocol"], (f["fw_major"], f["fw_minor"], f["fw_patch"]), f["shoe_id"],
                   f["tx_base"], f["boot"], f["draws"], last, f["serial"])


@dataclass(frozen=True, slots=True)
class CardDrawn(Message):
    """The dealer drew `card`; `draw` counts cards drawn from shoe `shoe_id` since its counter was reset (from 1)."""

    TYPE: ClassVar[int] = 0x02
    NAME: ClassVar[str] = "CARD"
    LAYOUT: ClassVar[str] = "shoe_id:u8 draw:u32 card:u8"
    shoe_id: int
    draw: int
    card: Card

    def wire(self) -> dict[str, Any]:
        return {"shoe_id": self.shoe_id, "draw": self.draw, "card": self.card.index}

    @classmethod
    def from_wire(cls, f: dict[str, Any], seq: int) -> CardDrawn:
        if f["draw"] == 0:
            raise PayloadError("bad_payload", "CardDrawn: draw counter 0 (the first card drawn is number 1)")
        return cls(f["shoe_id"], f["draw"], _card_of(f["card"], "CardDrawn"))


def _flags(value: int, what: str) -> StateFlags:
    if value & ~STATE_MASK:
        raise PayloadError("bad_payload", f"{what}: unknown state bits 0x{value & ~STATE_MASK:04x}")
    return StateFlags(value)


@dataclass(frozen=True, slots=True)
class ShoeState(Message):
    """The shoe's state bits, sent on every change and in answer to REQUEST_STATUS, LOCK and RESET_COUNTERS."""

    TYPE: ClassVar[int] = 0x03
    NAME: ClassVar[str] = "STATE"
    LAYOUT: ClassVar[str] = "shoe_id:u8 flags:u16 draws:u32"
    shoe_id: int
    flags: StateFlags
    draws: int

    def wire(self) -> dict[str, Any]:
        return {"shoe_id": self.shoe_id, "flags": int(self.flags), "draws": self.draws}

    @classmethod
    def from_wire(cls, f: dict[str, Any], seq: int) -> ShoeState:
        return cls(f["shoe_id"], _flags(f["flags"], "ShoeState"), f["draws"])


DECK_MISSING, DECK_EXTRA, DECK_TRUNCATED = 0x01, 0x02, 0x80


@dataclass(frozen=True, slots=True)
class DeckCheck(Message):
    """The shuffler counted the cards: `missing` and `extra` list what differs from `decks` full packs.

    `truncated` means more cards differ than fit in one frame (the lists are a prefix); the shoe is not complete.
    """

    TYPE: ClassVar[int] = 0x04
    NAME: ClassVar[str] = "DECK_CHECK"
    LAYOUT: ClassVar[str] = ("shoe_id:u8 status:u8 decks:u8 n_missing:u8 missing:card[n_missing] n_extra:u8 "
                             "extra:card[n_extra]")
    shoe_id: int
    decks: int
    missing: tuple[Card, ...] = ()
    extra: tuple[Card, ...] = ()
    truncated: bool = False

    @property
    def complete(self) -> bool:
        return not (self.missing or self.extra or self.truncated)

    @staticmethod
    def _status(missing: object, extra: object, truncated: bool) -> int:
        return (DECK_MISSING if missing else 0) | (DECK_EXTRA if extra else 0) | (DECK_TRUNCATED if truncated else 0)

    def wire(self) -> dict[str, Any]:
        return {"shoe_id": self.shoe_id, "status": self._status(self.missing, self.extra, self.truncated),
                "decks": self.decks, "n_missing": len(self.missing), "missing": [c.index for c in self.missing],
                "n_extra": len(self.extra), "extra": [c.index for c in self.extra]}

    @classmethod
    def from_wire(cls, f: dict[str, Any], seq: int) -> DeckCheck:
        missing = tuple(_card_of(b, "DeckCheck missing") for b in f["missing"])
        extra = tuple(_card_of(b, "DeckCheck extra") for b in f["extra"])
        truncated = bool(f["status"] & DECK_TRUNCATED)
        if f["status"] != cls._status(missing, extra, truncated) or (truncated and not (missing or extra)):
            raise PayloadError("bad_payload", f"DeckCheck: status 0x{f['status']:02x} does not match its card lists")
        if f["decks"] == 0:
            raise PayloadError("bad_payload", "DeckCheck: zero decks")
        return cls(f["shoe_id"], f["decks"], missing, extra, truncated)


SHUFFLE_STARTED, SHUFFLE_FINISHED = 0, 1


@dataclass(frozen=True, slots=True)
class Shuffle(Message):
    """The shuffler started or finished shuffling; `count` numbers the shuffles since its counters were reset."""

    TYPE: ClassVar[int] = 0x05
    NAME: ClassVar[str] = "SHUFFLE"
    LAYOUT: ClassVar[str] = "shoe_id:u8 phase:u8 decks:u8 count:u32"
    shoe_id: int
    started: bool  # True: started; False: finished
    decks: int
    count: int

    def wire(self) -> dict[str, Any]:
        return {"shoe_id": self.shoe_id, "phase": SHUFFLE_STARTED if self.started else SHUFFLE_FINISHED,
                "decks": self.decks, "count": self.count}

    @classmethod
    def from_wire(cls, f: dict[str, Any], seq: int) -> Shuffle:
        if f["phase"] not in (SHUFFLE_STARTED, SHUFFLE_FINISHED):
            raise PayloadError("bad_payload", f"Shuffle: unknown phase {f['phase']}")
        return cls(f["shoe_id"], f["phase"] == SHUFFLE_STARTED, f["decks"], f["count"])


@dataclass(frozen=True, slots=True)
class Heartbeat(Message):
    """Sent by the device every heartbeat interval; not acknowledged. Its absence is how the host sees a dead link."""

    TYPE: ClassVar[int] = 0x06
    NAME: ClassVar[str] = "HEARTBEAT"
    LAYOUT: ClassVar[str] = "uptime_ms:u32 flags:u16"
    RELIABLE: ClassVar[bool] = False
    uptime_ms: int  # modulo 2**32
    flags: StateFlags

    def wire(self) -> dict[str, Any]:
        return {"uptime_ms": self.uptime_ms, "flags": int(self.flags)}

    @classmethod
    def from_wire(cls, f: dict[str, Any], seq: int) -> Heartbeat:
        return cls(f["uptime_ms"], _flags(f["flags"], "Heartbeat"))


@dataclass(frozen=True, slots=True)
class DeviceError(Message):
    """The device reports a fault (see ErrorCode) with a short text."""

    TYPE: ClassVar[int] = 0x07
    NAME: ClassVar[str] = "ERROR"
    LAYOUT: ClassVar[str] = f"code:u8 text:ascii[0..{MAX_PAYLOAD - 1}]"
    code: int
    text: str = ""


# ---- link control, both directions ------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Ack(Message):
    """Acknowledges the reliable frame whose sequence number is carried in the SEQ field."""

    TYPE: ClassVar[int] = 0x10
    NAME: ClassVar[str] = "ACK"
    RELIABLE: ClassVar[bool] = False
    FROM_DEVICE: ClassVar[bool | None] = None  # both directions
    seq: int


@dataclass(frozen=True, slots=True)
class Nak(Message):
    """The receiver refused a frame and still expects sequence number `seq`: resend it now if it is in flight."""

    TYPE: ClassVar[int] = 0x11
    NAME: ClassVar[str] = "NAK"
    LAYOUT: ClassVar[str] = "reason:u8"
    RELIABLE: ClassVar[bool] = False
    FROM_DEVICE: ClassVar[bool | None] = None
    seq: int
    reason: int


# ---- host -> device ---------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Hello(Message):
    """Host opens a session: the device takes this frame's sequence number as the start, and sends IDENTIFY."""

    TYPE: ClassVar[int] = 0x20
    NAME: ClassVar[str] = "HELLO"
    LAYOUT: ClassVar[str] = "protocol:u8"
    FROM_DEVICE: ClassVar[bool | None] = False
    protocol: int = PROTOCOL_VERSION


@dataclass(frozen=True, slots=True)
class ResetCounters(Message):
    """Set the draw counter to 0 (a new shoe is loaded); the device answers with STATE."""

    TYPE: ClassVar[int] = 0x21
    NAME: ClassVar[str] = "RESET_COUNTERS"
    FROM_DEVICE: ClassVar[bool | None] = False


@dataclass(frozen=True, slots=True)
class Lock(Message):
    """Lock (no card can be drawn) or unlock the shoe; the device answers with STATE."""

    TYPE: ClassVar[int] = 0x22
    NAME: ClassVar[str] = "LOCK"
    LAYOUT: ClassVar[str] = "locked:u8"
    FROM_DEVICE: ClassVar[bool | None] = False
    locked: bool = True

    def wire(self) -> dict[str, Any]:
        return {"locked": int(self.locked)}

    @classmethod
    def from_wire(cls, f: dict[str, Any], seq: int) -> Lock:
        if f["locked"] not in (0, 1):
            raise PayloadError("bad_payload", "Lock: expected one byte, 0 (unlock) or 1 (lock)")
        return cls(f["locked"] == 1)


@dataclass(frozen=True, slots=True)
class RequestStatus(Message):
    """Ask for a STATE message now."""

    TYPE: ClassVar[int] = 0x23
    NAME: ClassVar[str] = "REQUEST_STATUS"
    FROM_DEVICE: ClassVar[bool | None] = False


@dataclass(frozen=True, slots=True)
class SetTime(Message):
    """Set the device clock (Unix time in milliseconds), used to stamp the device's own log."""

    TYPE: ClassVar[int] = 0x24
    NAME: ClassVar[str] = "SET_TIME"
    LAYOUT: ClassVar[str] = "unix_ms:u64"
    FROM_DEVICE: ClassVar[bool | None] = False
    unix_ms: int


MESSAGE_TYPES: dict[int, type[Message]] = {m.TYPE: m for m in (
    Identify, CardDrawn, ShoeState, DeckCheck, Shuffle, Heartbeat, DeviceError, Ack, Nak,
    Hello, ResetCounters, Lock, RequestStatus, SetTime)}
DEVICE_TYPES = frozenset(t for t, m in MESSAGE_TYPES.items() if m.FROM_DEVICE is not False)
HOST_TYPES = frozenset(t for t, m in MESSAGE_TYPES.items() if m.FROM_DEVICE is not True)


def decode_message(frame: Frame) -> Message:
    """The typed message in a frame, or PayloadError (verdict 'unknown_type' or 'bad_payload')."""
    cls = MESSAGE_TYPES.get(frame.type)
    if cls is None:
        raise PayloadError("unknown_type", f"unknown message type 0x{frame.type:02x}")
    return cls.unpack(frame.payload, frame.seq)


def encode_message(message: Message, seq: int = 0) -> bytes:
    """A frame for `message`; ACK and NAK carry their own sequence number, unreliable messages use 0."""
    if isinstance(message, (Ack, Nak)):
        seq = message.seq
    elif not message.RELIABLE:
        seq = 0
    return encode_frame(seq, message.TYPE, message.pack())
