"""The SAS line, EGM side: CRC-16/Kermit, framing by wake-up bit and by protocol knowledge, resynchronisation, implied acknowledgement and chirping over a real pseudo-terminal."""

from __future__ import annotations

import os
import select
import threading
import time
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.sas_host import kermit
from drivers.sas import Framer, GeneralPoll, LongPoll, SasLine, crc16, open_line, rom_crc16
from drivers.sas.crc import with_crc
from drivers.sas.framing import FIXED_POLLS, READ_POLLS, CrcError, Unknown, unmark

ADDR = 1


def test_crc_is_kermit_and_goes_low_byte_first() -> None:
    assert crc16(b"123456789") == 0x2189  # CRC-16/KERMIT's check value
    assert with_crc(b"\x01\x01") == b"\x01\x01" + crc16(b"\x01\x01").to_bytes(2, "little")


@given(st.binary(max_size=300), st.integers(0, 0xFFFF))
def test_the_three_crc_implementations_agree(data: bytes, seed: int) -> None:
    # the EGM's table, the ROM's C-speed route and the host's bit-by-bit loop are written apart
    assert crc16(data, seed) == rom_crc16(data, seed) == kermit(data, seed)


def _polls() -> st.SearchStrategy[bytes]:
    read = st.sampled_from(sorted(READ_POLLS)).map(lambda c: bytes([ADDR, c]))
    fixed = st.sampled_from(sorted(FIXED_POLLS)).flatmap(
        lambda c: st.binary(min_size=FIXED_POLLS[c] - 4, max_size=FIXED_POLLS[c] - 4).map(
            lambda d: with_crc(bytes([ADDR, c]) + d)))
    variable = st.tuples(st.sampled_from([0x2F, 0x6F]), st.binary(min_size=2, max_size=20)).map(
        lambda t: with_crc(bytes([ADDR, t[0], len(t[1])]) + t[1]))
    general = st.just(bytes([0x80 | ADDR]))
    return st.one_of(read, fixed, variable, general)


def _raw(m: Any) -> bytes:
    return m.raw


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_polls(), st.lists(st.integers(0x82, 0xFF), max_size=3), st.integers(1, 7)),
                min_size=1, max_size=8))
def test_without_the_wake_up_bit_polls_are_framed_by_length_with_leading_bytes_and_any_split(
        script: list[tuple[bytes, list[int], int]]) -> None:
    # Leading bytes with the top bit set (a host's sync or a general poll to another EGM, as some hosts send
    # before each poll) come in the same burst; the burst arrives in reads of any size; silence ends it.
    framer = Framer([ADDR], gap=0.01)
    now, got = 0.0, []
    for poll, leading, chunk in script:
        burst = bytes(leading) + poll
        for i in range(0, len(burst), chunk):
            got += framer.feed([(b, None) for b in burst[i:i + chunk]], now)
            now += 0.001
        now += 0.05
    got += framer.expire()
    ours = [m.raw for m in got if m.address == ADDR]
    others = [m.address for m in got if m.address != ADDR]
    assert ours == [poll for poll, _, _ in script]
    assert others == [b & 0x7F for _, leading, _ in script for b in leading]
    assert all(isinstance(m, (GeneralPoll, LongPoll)) for m in got)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(_polls(), st.binary(max_size=4)), min_size=1, max_size=8))
def test_with_the_wake_up_bit_bytes_without_it_before_a_message_are_ignored(script: list[tuple[bytes, bytes]]) -> None:
    framer = Framer([ADDR], gap=0.01)
    got = []
    for i, (poll, noise) in enumerate(script):
        items = [(b, False) for b in noise] + [(poll[0], True)] + [(b, False) for b in poll[1:]]
        got += framer.feed(items, i * 0.001)  # back to back: the wake-up bit alone frames them
    assert [m.raw for m in got] == [poll for poll, _ in script]


def test_garbage_before_a_poll_resynchronises_at_the_silence_after_it() -> None:
    framer = Framer([ADDR], gap=0.01)
    poll = bytes([ADDR, 0x1A])
    assert framer.feed([(b, None) for b in b"\x05" + poll], 0.0) == []  # 05 01 ...: a 4-byte poll to 5?
    assert [m.raw for m in framer.expire()] == [poll]
    # a poll whose CRC is wrong is reported, not delivered
    bad = bytearray(with_crc(bytes([ADDR, 0x01])))
    bad[-1] ^= 0x40
    out = framer.feed([(b, None) for b in bad], 1.0) + framer.expire()
    assert any(isinstance(m, CrcError) and m.address == ADDR for m in out)
    assert not any(isinstance(m, LongPoll) and m.address == ADDR for m in out)
    # an unknown poll to us: the rest of its burst is skipped, not read as polls
    out = framer.feed([(b, None) for b in bytes([ADDR, 0xB0, ADDR, 0x1A])], 2.0)
    assert [type(m) for m in out] == [Unknown]
    assert [m.raw for m in framer.feed([(b, None) for b in poll], 3.0)] == [poll]
    # a host that sends its address, reopens the port, then sends the command (a pause past the gap)
    assert framer.feed([(ADDR, None)], 4.0) == [] and framer.expire(4.05) == []
    assert [m.raw for m in framer.feed([(0x1A, None)], 4.06)] == [poll]
    # ... but not for ever: a lone address byte with nothing after it is dropped
    assert framer.feed([(ADDR, None)], 5.0) == [] and framer.expire(5.3) == [] and not framer.partial


def test_parity_marks_are_undone_even_split_across_reads() -> None:
    state = bytearray()
    stream = b"\xff\x00\x81" + b"\x01" + b"\xff\xff" + b"\xff\x00\x01\x10"
    out = []
    for i in range(len(stream)):
        out += unmark(stream[i:i + 1], state)
    assert out == [(0x81, True), (0x01, False), (0xFF, False), (0x01, True), (0x10, False)]


# ------------------------------------------------------------------------------------------ over a pty

class Echo:
    """A responder that answers each poll with a counter, so repeats can be told from new answers."""

    def __init__(self) -> None:
        self.n = 0
        self.acked: list[bytes] = []
        self.done = threading.Event()

    def respond(self, m: Any) -> bytes:
        self.n += 1
        return bytes([ADDR, self.n])

    def acknowledged(self, m: Any, response: bytes) -> None:
        self.acked.append(response)


def _pty_line(responder: Any, **kw: Any) -> tuple[SasLine, int]:
    master, slave = os.openpty()
    line = SasLine(open_line(master, "timing"), ADDR, responder, **kw)
    line.start()
    return line, slave


def _read(fd: int, n: int, timeout: float = 2.0) -> bytes:
    out, deadline = b"", time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], deadline - time.monotonic())
        if ready:
            out += os.read(fd, n - len(out))
    return out


def _until(predicate: Any, timeout: float = 2.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.001)


def test_a_repeated_poll_gets_the_same_answer_and_the_next_poll_acknowledges_it() -> None:
    echo = Echo()
    line, host = _pty_line(echo, chirp_after=0)
    try:
        os.write(host, b"\x81")
        first = _read(host, 2)
        os.write(host, b"\x81")  # the host missed it: the same bytes again, nothing acknowledged
        assert _read(host, 2) == first and echo.acked == []
        os.write(host, b"\x80")  # a sync to address 0: the host moved on
        os.write(host, b"\x81")
        assert _read(host, 2) == bytes([ADDR, 2]) and echo.acked == [first]
        os.write(host, bytes([ADDR, 0x1A]))  # a different poll acknowledges too
        assert _read(host, 2) == bytes([ADDR, 3]) and echo.acked == [first, bytes([ADDR, 2])]
        assert line.stats.repeats == 1
    finally:
        line.close()
        os.close(host)


def test_a_silent_host_hears_the_egm_chirp_its_address_until_it_polls() -> None:
    echo = Echo()
    line, host = _pty_line(echo, chirp_after=0.05, chirp_every=0.02)
    try:
        assert _read(host, 3) == bytes([ADDR]) * 3  # announced, again and again
        line.chirp_after = 5.0  # (the next silence would chirp again after this long)
        os.write(host, b"\x81")
        _until(lambda: line.stats.polls == 1)
        assert not line.chirping
        chirps = line.stats.chirps
        assert _read(host, 64, 0.1).endswith(bytes([ADDR, 1]))  # chirps sent before the poll, then the answer
        assert line.stats.chirps == chirps  # and no more: the host is back
        assert line.stats.chirps >= 3
    finally:
        line.close()
        os.close(host)


def test_a_poll_with_a_bad_crc_and_an_unknown_poll_get_no_answer() -> None:
    echo = Echo()
    line, host = _pty_line(echo, chirp_after=0)
    try:
        bad = bytearray(with_crc(bytes([ADDR, 0x01])))
        bad[2] ^= 1
        os.write(host, bytes(bad))
        _until(lambda: line.stats.crc_errors == 1 and not line.framer.partial)  # the line fell silent
        os.write(host, bytes([ADDR, 0xB0, 0, 0]))
        _until(lambda: line.stats.unknown == 1)
        assert _read(host, 1, 0.05) == b""
        os.write(host, bytes([ADDR, 0x1A]))
        assert _read(host, 2) == bytes([ADDR, 1])
        assert (line.stats.crc_errors, line.stats.unknown, echo.n) == (1, 1, 1)
    finally:
        line.close()
        os.close(host)


@pytest.mark.parametrize("driver", ["refuses", "drops"])
def test_a_device_without_stick_parity_is_framed_by_timing_with_a_warning(driver: str, caplog: Any,
                                                                         monkeypatch: Any) -> None:
    # A serial driver that cannot make the ninth bit either refuses mark/space parity (EINVAL) or quietly
    # clears CMSPAR (as a Pi's mini UART has no parity at all); a pty stands in for the device here.
    import termios

    from drivers.sas.line import CMSPAR

    real_set, real_get = termios.tcsetattr, termios.tcgetattr

    def tcsetattr(fd: int, when: int, attrs: list) -> None:
        if attrs[2] & CMSPAR and driver == "refuses":
            raise termios.error(22, "Invalid argument")
        real_set(fd, when, attrs)

    def tcgetattr(fd: int) -> list:
        attrs = real_get(fd)
        attrs[2] &= ~CMSPAR if driver == "drops" else ~0
        return attrs

    monkeypatch.setattr(termios, "tcsetattr", tcsetattr)
    monkeypatch.setattr(termios, "tcgetattr", tcgetattr)
    master, slave = os.openpty()
    try:
        with caplog.at_level("WARNING", logger="croupier.sas.line"):
            transport = open_line(slave, "parity")
        assert transport.marked is False and not real_get(slave)[2] & CMSPAR
        assert "does not carry the wake-up bit" in caplog.text
    finally:
        os.close(master)
        os.close(slave)


def test_a_pyserial_url_port_is_framed_by_timing() -> None:
    # [sas] port may be a pyserial URL (a terminal server's socket://): no wake-up bit there
    import socket

    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    echo = Echo()
    line = SasLine(f"socket://127.0.0.1:{server.getsockname()[1]}", ADDR, echo, chirp_after=0)
    conn, _ = server.accept()
    line.start()
    try:
        assert line.marked is False
        conn.sendall(b"\x82" + bytes([ADDR, 0x1A]))  # a leading byte, then the poll
        conn.settimeout(2)
        got = b""
        while len(got) < 2:
            got += conn.recv(2 - len(got))
        assert got == bytes([ADDR, 1])
    finally:
        line.close()
        conn.close()
        server.close()
