"""The screens bridge's fan-out fast path (what `croupier bench screens --fanout` led to): a screen that keeps up gets a prebuilt frame written at once, the same bytes aiohttp would write; a laggard still goes through its queue."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import WSMsgType
from aiohttp._websocket.writer import WebSocketWriter
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.screens.bridge import _frame, _Screen


class _Transport:
    def __init__(self, buffered: int = 0) -> None:
        self.writes: list[bytes] = []
        self.buffered = buffered

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def is_closing(self) -> bool:
        return False

    def get_write_buffer_size(self) -> int:
        return self.buffered


class _Socket:
    closed = False

    def __init__(self) -> None:
        self.sent: list[str] = []

    async def send_str(self, text: str) -> None:
        self.sent.append(text)


def _aiohttp_frame(text: str) -> bytes:
    """What aiohttp's own server-side writer puts on the wire for `text`."""
    transport = _Transport()
    protocol: Any = type("P", (), {"_paused": False})()
    coro = WebSocketWriter(protocol, transport, use_mask=False).send_frame(text.encode(), WSMsgType.TEXT)  # type: ignore[arg-type]
    try:
        coro.send(None)
    except StopIteration:
        pass
    return b"".join(transport.writes)


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.text(max_size=300), st.integers(120, 70_000).map(lambda n: "é" * (n // 2) + "x" * (n % 2))))
def test_a_prebuilt_frame_is_the_frame_aiohttp_writes(text: str) -> None:
    assert _frame(text) == _aiohttp_frame(text)
    # A fresh string object of the same text (the one-entry cache is by identity) gives the same bytes.
    assert _frame("".join([text, ""]) if text else str(text)) == _aiohttp_frame(text)


def test_a_screen_that_keeps_up_is_written_at_once_and_a_laggard_is_queued() -> None:
    async def main() -> None:
        live, busy = _Transport(), _Transport(buffered=10)
        quick = _Screen(_Socket(), "quick", live)  # type: ignore[arg-type]
        slow_socket = _Socket()
        slow = _Screen(slow_socket, "slow", busy)  # type: ignore[arg-type]
        text = '{"kind": "update", "seq": 2, "prev": 1, "ts": 1.0, "state": {}}'
        quick.push(text)
        slow.push(text)
        # Written before the loop ran anything: no task, no queue.
        assert live.writes == [_aiohttp_frame(text)] and quick.queue.empty()
        assert busy.writes == [] and slow.queue.qsize() == 1
        await asyncio.sleep(0)   # the laggard's sender takes its message through aiohttp
        assert slow_socket.sent == [text]
        quick.stop()
        slow.stop()

    asyncio.run(main())
