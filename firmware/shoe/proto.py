"""Shoe wire protocol for MicroPython: frame codec, payload layouts and the device end of the link.

Implements firmware/protocol/PROTOCOL.md on its own (the host has its own code); both are tested against
firmware/protocol/vectors.json. Written for MicroPython on the RP2040: no dataclasses or typing, a
byte-at-a-time receiver, and a table-driven CRC. Runs unchanged on CPython for the tests.
"""

import struct

try:
    from micropython import const
except ImportError:  # CPython (tests)
    def const(x):
        return x

PROTOCOL_VERSION = const(1)
FLAG = const(0x7E)
ESC = const(0x7D)
ESC_XOR = const(0x20)
MAX_PAYLOAD = const(64)
MAX_STUFFED = const(138)  # 2 * (MAX_PAYLOAD + 5): the largest frame with every byte escaped
NO_CARD = const(0xFF)

# Types: name -> (type, reliable, layout). Same layouts as vectors.json (a test compares them).
MESSAGES = {
    "IDENTIFY": (0x01, False, "kind:u8 protocol:u8 fw_major:u8 fw_minor:u8 fw_patch:u8 shoe_id:u8 "
                              "tx_base:u8 boot:u32 draws:u32 last_card:u8 serial:ascii[1..32]"),
    "CARD": (0x02, True, "shoe_id:u8 draw:u32 card:u8"),
    "STATE": (0x03, True, "shoe_id:u8 flags:u16 draws:u32"),
    "DECK_CHECK": (0x04, True, "shoe_id:u8 status:u8 decks:u8 n_missing:u8 missing:card[n_missing] "
                               "n_extra:u8 extra:card[n_extra]"),
    "SHUFFLE": (0x05, True, "shoe_id:u8 phase:u8 decks:u8 count:u32"),
    "HEARTBEAT": (0x06, False, "uptime_ms:u32 flags:u16"),
    "ERROR": (0x07, True, "code:u8 text:ascii[0..63]"),
    "ACK": (0x10, False, ""),
    "NAK": (0x11, False, "reason:u8"),
    "HELLO": (0x20, True, "protocol:u8"),
    "RESET_COUNTERS": (0x21, True, ""),
    "LOCK": (0x22, True, "locked:u8"),
    "REQUEST_STATUS": (0x23, True, ""),
    "SET_TIME": (0x24, True, "unix_ms:u64"),
}
BY_TYPE = {}
for _name, (_type, _rel, _layout) in MESSAGES.items():
    BY_TYPE[_type] = (_name, _rel, [tuple(f.split(":")) for f in _layout.split()])

T_IDENTIFY, T_CARD, T_STATE, T_HEARTBEAT, T_ERROR = 0x01, 0x02, 0x03, 0x06, 0x07
T_ACK, T_NAK, T_HELLO, T_RESET, T_LOCK, T_STATUS, T_TIME = 0x10, 0x11, 0x20, 0x21, 0x22, 0x23, 0x24
HOST_TYPES = (T_HELLO, T_RESET, T_LOCK, T_STATUS, T_TIME)

LID_OPEN, CARDS_LOW, CUT_CARD, EMPTY, JAM, LOCKED = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
STATE_MASK = const(0x3F)
ERR_SENSOR, ERR_UNREADABLE, ERR_STORAGE, ERR_BAD_COMMAND, ERR_OVERFLOW = 1, 2, 3, 4, 5
NAK_BAD_FRAME = const(1)
_INTS = {"u8": ">B", "u16": ">H", "u32": ">I", "u64": ">Q"}


def _crc_table():
    table = []
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) if c & 0x8000 else (c << 1)
        table.append(c & 0xFFFF)
    return table


_CRC = _crc_table()


def crc16(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final XOR)."""
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC[(crc >> 8) ^ b]
    return crc


def encode(seq, type_, payload=b""):
    """One frame, flags included."""
    if len(payload) > MAX_PAYLOAD:
        raise ValueError("payload too long")
    body = bytes((len(payload), seq & 0xFF, type_)) + payload
    c = crc16(body)
    body += bytes((c >> 8, c & 0xFF))
    out = bytearray((FLAG,))
    for b in body:
        if b == FLAG or b == ESC:
            out.append(ESC)
            out.append(b ^ ESC_XOR)
        else:
            out.append(b)
    out.append(FLAG)
    return bytes(out)


def pack(name, fields):
    """Payload bytes of message `name` from a dict of wire-level fields (ints, card byte lists, str)."""
    out = b""
    for field, kind in BY_TYPE[MESSAGES[name][0]][2]:
        value = fields[field]
        if kind in _INTS:
            out += struct.pack(_INTS[kind], value)
        elif kind.startswith("card["):
            out += bytes(value)
        else:
            out += value.encode()
    return out


def unpack(type_, payload):
    """(verdict, fields): verdict 'ok', 'unknown_type' or 'bad_payload'; fields is a dict when ok."""
    entry = BY_TYPE.get(type_)
    if entry is None:
        return "unknown_type", None
    name, _, layout = entry
    fields = {}
    pos, n = 0, len(payload)
    for field, kind in layout:
        if kind in _INTS:
            size = struct.calcsize(_INTS[kind])
            if pos + size > n:
                return "bad_payload", None
            fields[field] = struct.unpack(_INTS[kind], payload[pos:pos + size])[0]
            pos += size
        elif kind.startswith("card["):
            count = fields[kind[5:-1]]
            if pos + count > n:
                return "bad_payload", None
            fields[field] = list(payload[pos:pos + count])
            pos += count
        else:
            lo, hi = kind[6:-1].split("..")
            raw = payload[pos:]
            if not int(lo) <= len(raw) <= int(hi):
                return "bad_payload", None
            for b in raw:
                if b < 0x20 or b > 0x7E:
                    return "bad_payload", None
            fields[field] = raw.decode()
            pos = n
    if pos != n or not _valid(name, fields):
        return "bad_payload", None
    return "ok", fields


def _valid(name, f):
    if name == "CARD":
        return f["draw"] != 0 and f["card"] <= 52
    if name in ("STATE", "HEARTBEAT"):
        return not f["flags"] & ~STATE_MASK
    if name == "IDENTIFY":
        return 0 < f["kind"] <= 3 and (f["last_card"] <= 52 or f["last_card"] == NO_CARD)
    if name == "DECK_CHECK":
        cards = f["missing"] + f["extra"]
        status = (1 if f["missing"] else 0) | (2 if f["extra"] else 0) | (f["status"] & 0x80)
        return (f["decks"] > 0 and status == f["status"] and all(c <= 52 for c in cards)
                and not (f["status"] & 0x80 and not cards))
    if name == "SHUFFLE":
        return f["phase"] in (0, 1)
    if name == "LOCK":
        return f["locked"] in (0, 1)
    return True


class Decoder:
    """Byte-at-a-time receiver. feed() returns a list of (verdict, seq, type, fields) for each segment."""

    def __init__(self):
        self.buf = bytearray()
        self.hunting = True
        self.escaped = False
        self.bad_escape = False
        self.stuffed = 0
        self.noise = 0
        self.oversize = 0

    def feed(self, data):
        out = []
        for b in data:
            if b == FLAG:
                if not self.hunting and self.stuffed:
                    out.append(self._segment())
                self.hunting = False
                self._clear()
                continue
            if self.hunting:
                self.noise += 1
                continue
            self.stuffed += 1
            if self.stuffed > MAX_STUFFED:
                self.oversize += 1
                self.hunting = True
                self._clear()
                continue
            if self.escaped:
                self.escaped = False
                if b == 0x5E or b == 0x5D:
                    self.buf.append(b ^ ESC_XOR)
                else:
                    self.bad_escape = True
            elif b == ESC:
                self.escaped = True
            else:
                self.buf.append(b)
        return out

    def _clear(self):
        self.buf = bytearray()
        self.escaped = False
        self.bad_escape = False
        self.stuffed = 0

    def _segment(self):
        body = self.buf
        if self.bad_escape or self.escaped:
            return ("bad_escape", None, None, None)
        if len(body) < 5:
            return ("too_short", None, None, None)
        if body[0] + 5 != len(body):
            return ("bad_length", None, None, None)
        if crc16(body):
            return ("bad_crc", None, None, None)
        verdict, fields = unpack(body[2], bytes(body[3:-2]))
        return (verdict, body[1], body[2], fields)


class DeviceLink:
    """Device end of the link: one reliable frame in flight, resent with backoff until acknowledged; host commands
    delivered once. `clock` is utime-like (ticks_ms, ticks_diff); `identify(tx_base)` returns IDENTIFY's payload."""

    def __init__(self, clock, identify, rto_ms=100, rto_max_ms=1000, queue_max=32):
        self.clock = clock
        self.identify_payload = identify
        self.rto_ms, self.rto_max_ms, self.queue_max = rto_ms, rto_max_ms, queue_max
        self.decoder = Decoder()
        self.queue = []  # (type, payload) of reliable messages not yet sent
        self.inflight = None  # [seq, frame, sent at, timeout]
        self.tx_next = 0
        self.rx_next = None
        self.out = []  # frames to write
        self.retransmits = 0
        self.rejected = 0

    def tx_base(self):
        return self.inflight[0] if self.inflight else self.tx_next

    def idle(self):
        return self.inflight is None and not self.queue

    def send(self, type_, payload):
        """Queue a reliable message. False if the queue is full (the caller reports OVERFLOW)."""
        if len(self.queue) >= self.queue_max:
            return False
        self.queue.append((type_, payload))
        self._pump()
        return True

    def send_unreliable(self, type_, payload):
        self.out.append(encode(0, type_, payload))

    def identify(self):
        self.out.append(encode(0, T_IDENTIFY, self.identify_payload(self.tx_base())))

    def _pump(self):
        if self.inflight is None and self.queue:
            type_, payload = self.queue.pop(0)
            frame = encode(self.tx_next, type_, payload)
            self.inflight = [self.tx_next, frame, self.clock.ticks_ms(), self.rto_ms]
            self.out.append(frame)

    def poll(self):
        f = self.inflight
        if f is not None and self.clock.ticks_diff(self.clock.ticks_ms(), f[2]) >= f[3]:
            f[2] = self.clock.ticks_ms()
            f[3] = min(f[3] * 2, self.rto_max_ms)
            self.retransmits += 1
            self.out.append(f[1])

    def receive(self, data):
        """Bytes from the host; returns [(type, fields)] of host commands to carry out, each once."""
        commands = []
        nak = False
        for verdict, seq, type_, fields in self.decoder.feed(data):
            if verdict != "ok":
                self.rejected += 1
                nak = True
            elif type_ == T_ACK:
                if self.inflight is not None and self.inflight[0] == seq:
                    self._acked()
            elif type_ == T_NAK and self.inflight is not None:
                if self.inflight[0] == seq:
                    self.retransmits += 1
                    self.inflight[2] = self.clock.ticks_ms()
                    self.out.append(self.inflight[1])
                elif (self.inflight[0] + 1) & 0xFF == seq:
                    self._acked()  # the host expects the next one: it has ours, its ACK was lost
            elif type_ == T_HELLO:
                self.rx_next = (seq + 1) & 0xFF
                self._ack(seq)
                self.identify()
            elif type_ in HOST_TYPES:
                if self.rx_next is None or seq == self.rx_next:
                    self.rx_next = (seq + 1) & 0xFF
                    self._ack(seq)
                    commands.append((type_, fields))
                elif seq == (self.rx_next - 1) & 0xFF:
                    self._ack(seq)
                else:
                    nak = True
        if nak and self.rx_next is not None:
            self.out.append(encode(self.rx_next, T_NAK, bytes((NAK_BAD_FRAME,))))
        return commands

    def _acked(self):
        self.tx_next = (self.inflight[0] + 1) & 0xFF
        self.inflight = None
        self._pump()

    def _ack(self, seq):
        self.out.append(encode(seq, T_ACK))

    def take(self):
        out, self.out = self.out, []
        return out
