"""Writes vectors.json, the shoe protocol's machine-readable declaration and test vectors (stdlib only).

The message layouts below are the protocol's single declaration; PROTOCOL.md explains them. This script
encodes every vector from those layouts with its own small encoder, independent of both the host driver
(drivers/shoe/protocol.py) and the firmware (firmware/shoe/proto.py), which are both tested against the
output. Run it after changing a layout: `python3 firmware/protocol/make_vectors.py`; a test fails while
vectors.json and this script disagree.
"""

import binascii
import json
import os
import struct

PROTOCOL_VERSION = 1
FLAG, ESC, ESC_XOR = 0x7E, 0x7D, 0x20
MAX_PAYLOAD = 64

# name: (type byte, reliable, sender, layout). Layout fields are `name:kind`, kinds u8 u16 u32 u64,
# `card[count_field]` (a list of card bytes) and `ascii[min..max]` (the rest of the payload).
MESSAGES = {
    "IDENTIFY": (0x01, False, "device", "kind:u8 protocol:u8 fw_major:u8 fw_minor:u8 fw_patch:u8 shoe_id:u8 "
                                        "tx_base:u8 boot:u32 draws:u32 last_card:u8 serial:ascii[1..32]"),
    "CARD": (0x02, True, "device", "shoe_id:u8 draw:u32 card:u8"),
    "STATE": (0x03, True, "device", "shoe_id:u8 flags:u16 draws:u32"),
    "DECK_CHECK": (0x04, True, "device", "shoe_id:u8 status:u8 decks:u8 n_missing:u8 missing:card[n_missing] "
                                         "n_extra:u8 extra:card[n_extra]"),
    "SHUFFLE": (0x05, True, "device", "shoe_id:u8 phase:u8 decks:u8 count:u32"),
    "HEARTBEAT": (0x06, False, "device", "uptime_ms:u32 flags:u16"),
    "ERROR": (0x07, True, "device", "code:u8 text:ascii[0..63]"),
    "ACK": (0x10, False, "both", ""),
    "NAK": (0x11, False, "both", "reason:u8"),
    "HELLO": (0x20, True, "host", "protocol:u8"),
    "RESET_COUNTERS": (0x21, True, "host", ""),
    "LOCK": (0x22, True, "host", "locked:u8"),
    "REQUEST_STATUS": (0x23, True, "host", ""),
    "SET_TIME": (0x24, True, "host", "unix_ms:u64"),
}
STATE_FLAGS = {"LID_OPEN": 0x01, "CARDS_LOW": 0x02, "CUT_CARD": 0x04, "EMPTY": 0x08, "JAM": 0x10, "LOCKED": 0x20}
DEVICE_KINDS = {"SHOE": 1, "SHUFFLER": 2}
DECK_STATUS = {"MISSING": 0x01, "EXTRA": 0x02, "TRUNCATED": 0x80}
SHUFFLE_PHASES = {"STARTED": 0, "FINISHED": 1}
ERROR_CODES = {"SENSOR": 1, "UNREADABLE": 2, "STORAGE": 3, "BAD_COMMAND": 4, "OVERFLOW": 5, "OTHER": 255}
NAK_REASONS = {"BAD_FRAME": 1, "OUT_OF_ORDER": 2, "BAD_PAYLOAD": 3}
VERDICTS = ["ok", "bad_escape", "too_short", "bad_length", "bad_crc", "unknown_type", "bad_payload"]
NO_CARD = 0xFF
INTS = {"u8": ">B", "u16": ">H", "u32": ">I", "u64": ">Q"}


def crc16(data):
    return binascii.crc_hqx(data, 0xFFFF)


def pack(name, fields):
    out = b""
    for item in MESSAGES[name][3].split():
        field, kind = item.split(":")
        value = fields[field]
        if kind in INTS:
            out += struct.pack(INTS[kind], value)
        elif kind.startswith("card["):
            out += bytes(value)
        elif kind.startswith("ascii["):
            out += value.encode("ascii")
        else:
            raise ValueError(kind)
    return out


def body(seq, type_, payload, length=None):
    raw = bytes((len(payload) if length is None else length, seq, type_)) + payload
    return raw + struct.pack(">H", crc16(raw))


def stuff(raw):
    out = bytearray()
    for b in raw:
        if b in (FLAG, ESC):
            out += bytes((ESC, b ^ ESC_XOR))
        else:
            out.append(b)
    return bytes(out)


def wire(seq, type_, payload):
    return bytes((FLAG,)) + stuff(body(seq, type_, payload)) + bytes((FLAG,))


def frame(name, seq, fields, label):
    return {"name": label, "message": name, "seq": seq, "fields": fields,
            "hex": wire(seq, MESSAGES[name][0], pack(name, fields)).hex()}


def vectors():
    frames = [
        frame("IDENTIFY", 0, {"kind": 3, "protocol": 1, "fw_major": 1, "fw_minor": 2, "fw_patch": 3, "shoe_id": 1,
                              "tx_base": 0, "boot": 42, "draws": 0, "last_card": NO_CARD, "serial": "CRP-SHOE-0001"},
              "identify at boot, no card drawn yet"),
        frame("IDENTIFY", 0, {"kind": 1, "protocol": 1, "fw_major": 0, "fw_minor": 1, "fw_patch": 0, "shoe_id": 7,
                              "tx_base": 126, "boot": 3, "draws": 1234, "last_card": 51, "serial": "S"},
              "identify with a resend base that needs escaping and last card AS"),
        frame("CARD", 0, {"shoe_id": 1, "draw": 1, "card": 51}, "card AS, draw 1"),
        frame("CARD", 255, {"shoe_id": 255, "draw": 4294967295, "card": 52}, "joker, last sequence number, last draw"),
        frame("CARD", 0x7E, {"shoe_id": 0x7D, "draw": 0x7E7D7E7D, "card": 0}, "card 2C with every byte escaped"),
        frame("STATE", 3, {"shoe_id": 1, "flags": 0x11, "draws": 10}, "lid open and jam"),
        frame("STATE", 4, {"shoe_id": 1, "flags": 0x3F, "draws": 0}, "every state bit"),
        frame("DECK_CHECK", 5, {"shoe_id": 1, "status": 0, "decks": 6, "n_missing": 0, "missing": [],
                                "n_extra": 0, "extra": []}, "six decks complete"),
        frame("DECK_CHECK", 6, {"shoe_id": 1, "status": 1, "decks": 1, "n_missing": 2, "missing": [22, 51],
                                "n_extra": 0, "extra": []}, "missing 7H and AS"),
        frame("DECK_CHECK", 7, {"shoe_id": 1, "status": 3, "decks": 2, "n_missing": 1, "missing": [0],
                                "n_extra": 1, "extra": [52]}, "missing 2C, extra joker"),
        frame("DECK_CHECK", 8, {"shoe_id": 1, "status": 0x81, "decks": 8, "n_missing": 3, "missing": [1, 2, 3],
                                "n_extra": 0, "extra": []}, "truncated missing list"),
        frame("SHUFFLE", 9, {"shoe_id": 1, "phase": 0, "decks": 6, "count": 1}, "shuffle started"),
        frame("SHUFFLE", 10, {"shoe_id": 1, "phase": 1, "decks": 6, "count": 1}, "shuffle finished"),
        frame("HEARTBEAT", 0, {"uptime_ms": 123456, "flags": 0x02}, "heartbeat, cards low"),
        frame("ERROR", 11, {"code": 2, "text": "unreadable card"}, "error with text"),
        frame("ERROR", 12, {"code": 1, "text": ""}, "error without text"),
        frame("ACK", 5, {}, "ack of sequence 5"),
        frame("ACK", 0x7D, {}, "ack of sequence 0x7D (escaped)"),
        frame("NAK", 9, {"reason": 1}, "nak expecting 9, bad frame"),
        frame("HELLO", 0, {"protocol": 1}, "hello"),
        frame("RESET_COUNTERS", 1, {}, "reset counters"),
        frame("LOCK", 2, {"locked": 1}, "lock"),
        frame("LOCK", 3, {"locked": 0}, "unlock"),
        frame("REQUEST_STATUS", 4, {}, "request status"),
        frame("SET_TIME", 5, {"unix_ms": 1767225600000}, "set time 2026-01-01T00:00:00Z"),
    ]
    card = pack("CARD", {"shoe_id": 1, "draw": 1, "card": 51})
    good = body(0, 0x02, card)

    def flip(raw, index, bit=0x01):
        raw = bytearray(raw)
        raw[index] ^= bit
        return bytes(raw)

    def framed(raw):
        return (bytes((FLAG,)) + raw + bytes((FLAG,))).hex()

    rejects = [
        {"name": "CRC low byte flipped", "hex": framed(stuff(flip(good, -1))), "verdict": "bad_crc"},
        {"name": "payload bit flipped", "hex": framed(stuff(flip(good, 5, 0x40))), "verdict": "bad_crc"},
        {"name": "sequence bit flipped", "hex": framed(stuff(flip(good, 1))), "verdict": "bad_crc"},
        {"name": "length says 7, payload has 6 (CRC over what was sent)",
         "hex": framed(stuff(body(0, 0x02, card, length=7))), "verdict": "bad_length"},
        {"name": "one payload byte lost", "hex": framed(stuff(good[:4] + good[5:])), "verdict": "bad_length"},
        {"name": "four bytes", "hex": framed(bytes((0x01, 0x00, 0x02, 0x00))), "verdict": "too_short"},
        {"name": "escape before an ordinary byte", "hex": framed(good[:3] + bytes((ESC, 0x41)) + good[3:]),
         "verdict": "bad_escape"},
        {"name": "escape as the last byte", "hex": framed(stuff(good) + bytes((ESC,))), "verdict": "bad_escape"},
        {"name": "unknown type 0x99", "hex": wire(0, 0x99, b"").hex(), "verdict": "unknown_type"},
        {"name": "card byte 53", "hex": wire(0, 0x02, bytes((1, 0, 0, 0, 1, 53))).hex(), "verdict": "bad_payload"},
        {"name": "draw counter 0", "hex": wire(0, 0x02, bytes((1, 0, 0, 0, 0, 5))).hex(), "verdict": "bad_payload"},
        {"name": "card payload one byte short", "hex": wire(0, 0x02, card[:-1]).hex(), "verdict": "bad_payload"},
        {"name": "unknown state bit", "hex": wire(0, 0x03, bytes((1, 0, 0x40, 0, 0, 0, 0))).hex(),
         "verdict": "bad_payload"},
        {"name": "deck check status without its list",
         "hex": wire(0, 0x04, bytes((1, 1, 1, 0, 0))).hex(), "verdict": "bad_payload"},
        {"name": "deck check count past the payload",
         "hex": wire(0, 0x04, bytes((1, 1, 1, 9, 0, 0))).hex(), "verdict": "bad_payload"},
        {"name": "identify with a control character in the serial",
         "hex": wire(0, 0x01, pack("IDENTIFY", {"kind": 1, "protocol": 1, "fw_major": 0, "fw_minor": 0,
                                               "fw_patch": 0, "shoe_id": 1, "tx_base": 0, "boot": 0, "draws": 0,
                                               "last_card": NO_CARD, "serial": "A\nB"})).hex(),
         "verdict": "bad_payload"},
        {"name": "lock value 2", "hex": wire(0, 0x22, b"\x02").hex(), "verdict": "bad_payload"},
        {"name": "shuffle phase 2", "hex": wire(0, 0x05, bytes((1, 2, 1, 0, 0, 0, 1))).hex(),
         "verdict": "bad_payload"},
    ]
    a = bytes.fromhex(frames[2]["hex"])
    b = bytes.fromhex(frames[5]["hex"])
    streams = [
        {"name": "noise before the first flag is ignored", "hex": (b"\x00\x11\x22\xff" + a).hex(),
         "items": ["card AS, draw 1"], "noise": 4},
        {"name": "two frames sharing one flag", "hex": (a[:-1] + b).hex(), "items": ["card AS, draw 1",
                                                                                    "lid open and jam"]},
        {"name": "a frame that lost a byte costs only itself", "hex": (a[:5] + a[6:] + b).hex(),
         "items": ["bad_length", "lid open and jam"]},
        {"name": "a flag inserted mid-frame costs only that frame",
         "hex": (a[:6] + bytes((FLAG,)) + a[6:] + b).hex(), "items": ["bad_length", "bad_length", "lid open and jam"]},
        {"name": "noise between frames is one rejected segment", "hex": (a + b"\x01\x02\x03" + b).hex(),
         "items": ["card AS, draw 1", "too_short", "lid open and jam"]},
        {"name": "a run longer than any frame is dropped, then the next frame decodes",
         "hex": (bytes((FLAG,)) + b"\x55" * 300 + b).hex(), "items": ["lid open and jam"], "oversize": 1},
        {"name": "a complete segment longer than any frame is dropped the same way",
         "hex": (bytes((FLAG,)) + b"\x55" * 139 + b).hex(), "items": ["lid open and jam"], "oversize": 1},
    ]
    return {
        "about": "Croupier shoe wire protocol: declaration and test vectors. Generated by make_vectors.py; "
                 "explained in PROTOCOL.md.",
        "protocol_version": PROTOCOL_VERSION,
        "crc": {"name": "CRC-16/CCITT-FALSE", "poly": 0x1021, "init": 0xFFFF, "refin": False, "refout": False,
                "xorout": 0, "check_ascii": "123456789", "check": crc16(b"123456789"), "byte_order": "big"},
        "framing": {"flag": FLAG, "escape": ESC, "escape_xor": ESC_XOR, "max_payload": MAX_PAYLOAD,
                    "header": ["length", "seq", "type"], "max_stuffed_segment": 2 * (MAX_PAYLOAD + 5)},
        "messages": {name: {"type": t, "reliable": r, "from": s, "layout": layout}
                     for name, (t, r, s, layout) in MESSAGES.items()},
        "state_flags": STATE_FLAGS, "device_kinds": DEVICE_KINDS, "deck_status": DECK_STATUS,
        "shuffle_phases": SHUFFLE_PHASES, "error_codes": ERROR_CODES, "nak_reasons": NAK_REASONS,
        "no_card": NO_CARD, "verdicts": VERDICTS,
        "frames": frames, "rejects": rejects, "streams": streams,
    }


def render():
    return json.dumps(vectors(), indent=1) + "\n"


if __name__ == "__main__":
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors.json")
    with open(path, "w") as fh:
        fh.write(render())
    print("wrote", path)
