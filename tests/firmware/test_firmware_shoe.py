"""Shoe reader firmware on CPython: the protocol vectors, the device link rules, the sensors, and a whole shoe
talking to the host driver's link code through a fake UART."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.firmware.fakes import UART, Clock, Pin, load_firmware
from tests.shoe.vectors import VECTORS


@pytest.fixture
def fw(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    monkeypatch.chdir(tmp_path)  # the flash store's files
    clock = Clock(start=(1 << 30) - 5_000)  # ticks wrap 5 s into every test
    ns = load_firmware(clock)
    ns.clock = clock
    return ns


# ---- vectors ---------------------------------------------------------------------------------------------

def test_declaration_matches_the_vectors_file(fw: SimpleNamespace) -> None:
    proto = fw.proto
    assert {n: (t, r, layout) for n, (t, r, layout) in proto.MESSAGES.items()} == {
        n: (m["type"], m["reliable"], m["layout"]) for n, m in VECTORS["messages"].items()}
    assert proto.crc16(VECTORS["crc"]["check_ascii"].encode()) == VECTORS["crc"]["check"] == 0x29B1
    framing = VECTORS["framing"]
    assert (proto.FLAG, proto.ESC, proto.ESC_XOR, proto.MAX_PAYLOAD, proto.MAX_STUFFED) == (
        framing["flag"], framing["escape"], framing["escape_xor"], framing["max_payload"],
        framing["max_stuffed_segment"])
    flags = VECTORS["state_flags"]
    assert (proto.LID_OPEN, proto.CARDS_LOW, proto.CUT_CARD, proto.EMPTY, proto.JAM, proto.LOCKED) == (
        flags["LID_OPEN"], flags["CARDS_LOW"], flags["CUT_CARD"], flags["EMPTY"], flags["JAM"], flags["LOCKED"])
    codes = VECTORS["error_codes"]
    assert (proto.ERR_SENSOR, proto.ERR_UNREADABLE, proto.ERR_STORAGE, proto.ERR_BAD_COMMAND, proto.ERR_OVERFLOW) == (
        codes["SENSOR"], codes["UNREADABLE"], codes["STORAGE"], codes["BAD_COMMAND"], codes["OVERFLOW"])
    assert proto.PROTOCOL_VERSION == VECTORS["protocol_version"] and proto.NO_CARD == VECTORS["no_card"]


@pytest.mark.parametrize("vector", VECTORS["frames"], ids=lambda v: v["name"])
def test_every_valid_vector_decodes_and_encodes(fw: SimpleNamespace, vector: dict) -> None:
    proto = fw.proto
    wire = bytes.fromhex(vector["hex"])
    type_ = VECTORS["messages"][vector["message"]]["type"]
    assert proto.encode(vector["seq"], type_, proto.pack(vector["message"], vector["fields"])) == wire
    for chunks in ([wire], [wire[i:i + 1] for i in range(len(wire))]):
        decoder = proto.Decoder()
        items = [item for chunk in chunks for item in decoder.feed(chunk)]
        assert items == [("ok", vector["seq"], type_, vector["fields"])]


@pytest.mark.parametrize("vector", VECTORS["rejects"], ids=lambda v: v["name"])
def test_every_corrupt_vector_gets_its_verdict(fw: SimpleNamespace, vector: dict) -> None:
    items = fw.proto.Decoder().feed(bytes.fromhex(vector["hex"]))
    assert [item[0] for item in items] == [vector["verdict"]]


@pytest.mark.parametrize("vector", VECTORS["streams"], ids=lambda v: v["name"])
def test_streams_resynchronise(fw: SimpleNamespace, vector: dict) -> None:
    decoder = fw.proto.Decoder()
    items = decoder.feed(bytes.fromhex(vector["hex"]))
    names = {(f["seq"], VECTORS["messages"][f["message"]]["type"], repr(f["fields"])): f["name"]
             for f in VECTORS["frames"]}
    got = [names[(seq, t, repr(fields))] if verdict == "ok" else verdict for verdict, seq, t, fields in items]
    assert got == vector["items"]
    assert decoder.oversize == vector.get("oversize", 0)
    if "noise" in vector:
        assert decoder.noise == vector["noise"]


# ---- the device link -------------------------------------------------------------------------------------

def _link(fw: SimpleNamespace):
    proto = fw.proto
    return proto.DeviceLink(fw.clock, lambda base: proto.pack("IDENTIFY", {
        "kind": 1, "protocol": 1, "fw_major": 1, "fw_minor": 0, "fw_patch": 0, "shoe_id": 1, "tx_base": base,
        "boot": 1, "draws": 0, "last_card": 255, "serial": "T"}))


def _sending(fw: SimpleNamespace, *cards: int):
    """A device link that was given a CARD message for each of these card bytes (draws 1, 2, ...) to send."""
    link = _link(fw)
    for draw, card in enumerate(cards, 1):
        link.send(fw.proto.T_CARD, fw.proto.pack("CARD", {"shoe_id": 1, "draw": draw, "card": card}))
    return link


def _decode(fw: SimpleNamespace, frames: list[bytes]) -> list[tuple]:
    decoder = fw.proto.Decoder()
    return [(item[2], item[1]) for frame in frames for item in decoder.feed(frame)]


def test_device_resends_with_backoff_until_acknowledged(fw: SimpleNamespace) -> None:
    proto, clock = fw.proto, fw.clock
    link = _sending(fw, 51)
    assert _decode(fw, link.take()) == [(proto.T_CARD, 0)]
    resent_at = []
    for ms in range(1, 4000):
        clock.advance(1)
        link.poll()
        if link.take():
            resent_at.append(ms)
    assert resent_at[:5] == [100, 300, 700, 1500, 2500]  # 100, 200, 400, 800, then capped at 1000 ms
    link.receive(proto.encode(0, proto.T_ACK))
    assert link.idle() and link.tx_base() == 1
    clock.advance(5000)
    link.poll()
    assert link.take() == []


def test_device_resends_at_once_on_a_nak_naming_its_frame(fw: SimpleNamespace) -> None:
    proto = fw.proto
    link = _sending(fw, 51)
    frame = link.take()
    link.receive(proto.encode(7, proto.T_NAK, b"\x01"))  # names another frame: ignored
    assert link.take() == []
    link.receive(proto.encode(0, proto.T_NAK, b"\x01"))
    assert link.take() == frame


def test_device_delivers_each_host_command_once(fw: SimpleNamespace) -> None:
    proto = fw.proto
    link = _link(fw)
    assert link.receive(proto.encode(9, proto.T_HELLO, b"\x01")) == []
    assert _decode(fw, link.take()) == [(proto.T_ACK, 9), (proto.T_IDENTIFY, 0)]
    lock = proto.encode(10, proto.T_LOCK, b"\x01")
    assert link.receive(lock) == [(proto.T_LOCK, {"locked": 1})]
    assert link.receive(lock) == []  # the host lost our ACK and resent: acknowledged again, not repeated
    assert _decode(fw, link.take()) == [(proto.T_ACK, 10), (proto.T_ACK, 10)]
    assert link.receive(proto.encode(12, proto.T_STATUS)) == []  # 11 is missing
    assert _decode(fw, link.take()) == [(proto.T_NAK, 11)]
    assert link.receive(b"\x7e\x01\x02\x7e") == []
    assert _decode(fw, link.take()) == [(proto.T_NAK, 11)]


def test_identify_names_the_frame_in_flight(fw: SimpleNamespace) -> None:
    proto = fw.proto
    link = _sending(fw, 51, 50)
    link.take()
    link.receive(proto.encode(0, proto.T_HELLO, b"\x01"))
    frames = link.take()
    (verdict, seq, t, fields), = proto.Decoder().feed(frames[-1])
    assert t == proto.T_IDENTIFY and fields["tx_base"] == 0


# ---- the shoe: sensors, flash, messages ------------------------------------------------------------------

def _shoe(fw: SimpleNamespace, pins: dict | None = None):
    main, clock = fw.main, fw.clock
    pins = pins or {n: Pin(n, Pin.IN, Pin.PULL_UP) for n in ("draw", "lid", "low", "empty")}
    pins["lid"].drive(0)  # lid shut
    host, reader_uart = UART(0), UART(1)
    sensors = fw.sensors
    shoe = main.Shoe(host, sensors.IndexReader(reader_uart),
                     draw=sensors.Debounced(pins["draw"], clock, main.DEBOUNCE_MS),
                     lid=sensors.Debounced(pins["lid"], clock, main.DEBOUNCE_MS, active_low=False),
                     low=sensors.Debounced(pins["low"], clock, main.DEBOUNCE_MS),
                     empty=sensors.Debounced(pins["empty"], clock, main.DEBOUNCE_MS),
                     lock_out=Pin(14, Pin.OUT, value=0), led=Pin(25, Pin.OUT), store=fw.store.Store(),
                     clock=clock, serial="PICO-TEST")
    return SimpleNamespace(shoe=shoe, host=host, reader=reader_uart, pins=pins)


def _run(fw: SimpleNamespace, rig: SimpleNamespace, ms: int) -> list[tuple]:
    """Step the shoe for `ms` milliseconds, acknowledging every reliable frame; returns (type, fields) sent."""
    proto = fw.proto
    decoder = proto.Decoder()
    out = []
    for _ in range(ms):
        rig.shoe.step()
        for verdict, seq, t, fields in decoder.feed(rig.host.drain()):
            assert verdict == "ok"
            out.append((t, fields))
            if proto.BY_TYPE[t][1]:
                rig.host.feed(proto.encode(seq, proto.T_ACK))
        fw.clock.advance(1)
    return [(t, f) for t, f in out if t != proto.T_HEARTBEAT]


def _draw(fw: SimpleNamespace, rig: SimpleNamespace, card: str | None, bounce: bool = False) -> list[tuple]:
    if card:
        rig.reader.feed(card.encode() + b"\r\n")
    if bounce:
        rig.pins["draw"].drive(0)
        _run(fw, rig, 2)
        rig.pins["draw"].drive(1)
        _run(fw, rig, 2)
    rig.pins["draw"].drive(0)  # the card passes the exit switch...
    sent = _run(fw, rig, 20)
    rig.pins["draw"].drive(1)  # ...and is gone
    return sent + _run(fw, rig, 20)


def test_boot_identifies_and_reports_state(fw: SimpleNamespace) -> None:
    rig = _shoe(fw)
    sent = _run(fw, rig, 10)
    proto = fw.proto
    assert sent[0][0] == proto.T_IDENTIFY
    ident = sent[0][1]
    assert (ident["boot"], ident["draws"], ident["last_card"], ident["serial"]) == (1, 0, 255, "PICO-TEST")
    assert sent[1] == (proto.T_STATE, {"shoe_id": 1, "flags": 0, "draws": 0})


def test_a_read_card_is_reported_with_its_draw_number_once(fw: SimpleNamespace) -> None:
    rig = _shoe(fw)
    _run(fw, rig, 10)
    proto = fw.proto
    assert _draw(fw, rig, "AS") == [(proto.T_CARD, {"shoe_id": 1, "draw": 1, "card": 51})]
    assert _draw(fw, rig, "10h", bounce=True) == [(proto.T_CARD, {"shoe_id": 1, "draw": 2, "card": 34})]
    assert _draw(fw, rig, "JK") == [(proto.T_CARD, {"shoe_id": 1, "draw": 3, "card": 52})]


def test_a_draw_without_a_fresh_read_is_counted_and_reported(fw: SimpleNamespace) -> None:
    rig = _shoe(fw)
    _run(fw, rig, 10)
    proto = fw.proto
    assert _draw(fw, rig, None) == [(proto.T_ERROR, {"code": proto.ERR_UNREADABLE, "text": "draw 1: card not read"})]
    rig.reader.feed(b"KD\n")
    _run(fw, rig, fw.main.READ_WINDOW_MS + 10)  # the read is stale by the time the card leaves
    assert _draw(fw, rig, None)[0][1]["code"] == proto.ERR_UNREADABLE
    assert _draw(fw, rig, "XX")[0][1]["code"] == proto.ERR_UNREADABLE
    assert _draw(fw, rig, "2c") == [(proto.T_CARD, {"shoe_id": 1, "draw": 4, "card": 0})]


def test_sensors_and_commands_change_the_state(fw: SimpleNamespace) -> None:
    rig = _shoe(fw)
    _run(fw, rig, 10)
    proto = fw.proto
    rig.pins["lid"].drive(1)
    assert _run(fw, rig, 10) == [(proto.T_STATE, {"shoe_id": 1, "flags": proto.LID_OPEN, "draws": 0})]
    rig.pins["lid"].drive(0)
    rig.pins["low"].drive(0)
    assert _run(fw, rig, 10) == [(proto.T_STATE, {"shoe_id": 1, "flags": proto.CARDS_LOW, "draws": 0})]
    rig.reader.feed(b"CUT\n")
    assert _run(fw, rig, 10)[-1][1]["flags"] == proto.CARDS_LOW | proto.CUT_CARD
    rig.pins["draw"].drive(0)  # stuck
    sent = _run(fw, rig, fw.main.JAM_MS + 50)
    assert sent[-1][1]["flags"] & proto.JAM
    rig.pins["draw"].drive(1)
    assert not _run(fw, rig, 20)[-1][1]["flags"] & proto.JAM
    rig.host.feed(proto.encode(0, proto.T_HELLO, b"\x01") + proto.encode(1, proto.T_LOCK, b"\x01"))
    sent = _run(fw, rig, 5)
    assert rig.shoe.lock_out.value() == 1 and sent[-1][1]["flags"] & proto.LOCKED
    rig.host.feed(proto.encode(2, proto.T_RESET) + proto.encode(3, proto.T_TIME, (1767225600000).to_bytes(8, "big")))
    sent = _run(fw, rig, 5)
    assert sent[-1] == (proto.T_STATE, {"shoe_id": 1, "flags": proto.CARDS_LOW | proto.LOCKED, "draws": 0})
    assert rig.shoe.clock_offset_ms is not None


def test_the_draw_counter_and_last_card_survive_a_reset(fw: SimpleNamespace) -> None:
    rig = _shoe(fw)
    _run(fw, rig, 10)
    _draw(fw, rig, "QH")
    _draw(fw, rig, "3D")
    again = _shoe(fw)  # power cycle: a new Shoe over the same flash
    ident = _run(fw, again, 5)[0][1]
    assert (ident["boot"], ident["draws"], ident["last_card"]) == (2, 2, 5)
    assert _draw(fw, again, "4S")[0][1]["draw"] == 3


def test_a_failed_flash_write_is_reported_and_the_card_still_sent(fw: SimpleNamespace,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    rig = _shoe(fw)
    _run(fw, rig, 10)
    proto = fw.proto

    def broken(self):
        raise OSError(28, "no space")

    monkeypatch.setattr(fw.store.Store, "save", broken)
    sent = _draw(fw, rig, "AH")
    assert sent == [(proto.T_ERROR, {"code": proto.ERR_STORAGE, "text": "flash write failed"}),
                    (proto.T_CARD, {"shoe_id": 1, "draw": 1, "card": 50})]


def test_build_wires_the_documented_pins(fw: SimpleNamespace) -> None:
    shoe = fw.main.build()
    assert shoe.host.baudrate == 115200 and shoe.host.settings["bits"] == 8 and shoe.host.settings["stop"] == 1
    assert shoe.draw.pin.id == 10 and shoe.lid.pin.id == 11 and shoe.lock_out.id == 14
    assert shoe.serial == "PICO-E6613852834A2B2F"


# ---- firmware against the host driver --------------------------------------------------------------------

def test_firmware_and_host_link_deliver_every_card_once_through_a_lossy_line(fw: SimpleNamespace) -> None:
    """The real firmware and the host's link code over a fake UART that loses every 7th chunk, with a power
    cycle of the shoe in the middle: the host gets every card exactly once, in order."""
    from controller.cards import from_index
    from drivers.shoe.link import HostLink, LinkConfig, LinkUp
    from drivers.shoe.protocol import CardDrawn

    rig = _shoe(fw)
    host = HostLink(LinkConfig(heartbeat_timeout=2.0))
    clock = fw.clock
    events: list = []
    chunks = 0

    def lossy(data: bytes) -> bytes:
        nonlocal chunks
        chunks += 1
        return b"" if chunks % 7 == 0 else data

    def run(ms: int) -> None:
        for _ in range(ms):
            now = clock.ticks_ms() / 1000
            rig.shoe.step()
            data = lossy(rig.host.drain())
            events.extend(host.receive(data, now) if data else [])
            events.extend(host.poll(now))
            rig.host.feed(lossy(host.take_output()))
            clock.advance(1)

    events.extend(host.opened(clock.ticks_ms() / 1000))
    run(600)
    dealt = []
    for i in range(40):
        if i == 20:
            rig = _shoe(fw, rig.pins)  # power cycle: same flash, same wiring
        card = from_index((i * 7) % 52)
        dealt.append(card)
        rig.reader.feed(str(card).encode() + b"\n")
        rig.pins["draw"].drive(0)
        run(15)
        rig.pins["draw"].drive(1)
        run(60)
    run(3000)
    cards = [e.card for e in events if isinstance(e, CardDrawn)]
    assert cards == dealt
    assert [e.draw for e in events if isinstance(e, CardDrawn)] == list(range(1, 41))
    assert sum(isinstance(e, LinkUp) for e in events) >= 2
    assert host.counters["device_restarts"] == 1


def test_a_nak_naming_the_next_frame_acknowledges_the_one_in_flight(fw: SimpleNamespace) -> None:
    proto = fw.proto
    link = _sending(fw, 51, 50)
    link.take()
    link.receive(proto.encode(1, proto.T_NAK, b"\x01"))  # the host expects 1: it has 0
    assert _decode(fw, link.take()) == [(proto.T_CARD, 1)]
