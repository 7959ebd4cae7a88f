"""The shoe link as pure state machines on a virtual clock: the host end (drivers.shoe.link) against the device end
(drivers.shoe.device) through a wire that loses, corrupts, duplicates and reorders nothing but what each test says.
Every dealt card must reach the runtime exactly once, in order."""

from __future__ import annotations

import random
from typing import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import Card, from_index, parse_card
from drivers.shoe.device import DeviceLink, DeviceTiming
from drivers.shoe.link import (
    Anomaly, CommandFailed, CounterReset, HostLink, LinkConfig, LinkDown, LinkDownError, LinkUp,
)
from drivers.shoe.protocol import (
    CardDrawn, DeviceKind, Heartbeat, Identify, Lock, ResetCounters, ShoeState, StateFlags,
)

Filter = Callable[[bytes, str], bytes | None]


def keep(frame: bytes, kind: str) -> bytes:
    return frame


class Pair:
    """A host link and a device link joined by a wire with fault filters, stepped 1 ms at a time."""

    def __init__(self, config: LinkConfig | None = None, timing: DeviceTiming | None = None,
                 last_draws: dict[int, int] | None = None) -> None:
        self.t = 0.0
        self.host = HostLink(config or LinkConfig(), last_draws=last_draws)
        self.timing = timing or DeviceTiming()
        self.draws, self.last_card, self.boot = 0, None, 1
        self.dev = self._device()
        self.up: Filter = keep  # device -> host, per frame
        self.down: Callable[[bytes], bytes | None] = lambda data: data  # host -> device, per write
        self.events: list = []
        self.commands: list = []
        self.dealt: list[Card] = []
        self.events += self.host.opened(self.t)

    def _device(self) -> DeviceLink:
        return DeviceLink(lambda base: Identify(DeviceKind.SHOE, 1, (1, 0, 0), 1, base, self.boot, self.draws,
                                                self.last_card, "PAIR"),
                          lambda: Heartbeat(int(self.t * 1000), StateFlags(0)), self.timing)

    def step(self) -> None:
        self.t = round(self.t + 0.001, 6)
        self.dev.poll(self.t)
        for frame, kind in self.dev.take_frames():
            data = self.up(frame, kind)
            if data:
                self.events += self.host.receive(data, self.t)
        self.events += self.host.poll(self.t)
        out = self.host.take_output()
        data = self.down(out) if out else None
        if data:
            self.commands += self.dev.receive(data, self.t)

    def run(self, seconds: float) -> None:
        for _ in range(round(seconds * 1000)):
            self.step()

    def deal(self, card: Card | str) -> None:
        card = parse_card(card) if isinstance(card, str) else card
        self.draws += 1
        self.last_card = card
        self.dealt.append(card)
        self.dev.send(CardDrawn(1, self.draws, card), self.t)

    def reboot(self) -> None:
        self.boot += 1
        self.dev = self._device()
        self.dev.identify()

    def cards(self) -> list[Card]:
        return [e.card for e in self.events if isinstance(e, CardDrawn)]

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]


def test_clean_line_delivers_cards_in_order() -> None:
    pair = Pair()
    pair.run(0.01)
    assert [type(e) for e in pair.events] == [LinkUp] and pair.host.up
    for card in ("AS", "KD", "7H", "2C"):
        pair.deal(card)
    pair.run(0.05)
    assert pair.cards() == pair.dealt
    assert [e.draw for e in pair.of(CardDrawn)] == [1, 2, 3, 4]
    assert pair.dev.idle


def test_sequence_numbers_wrap() -> None:
    pair = Pair()
    pair.run(0.01)
    for i in range(600):
        pair.deal(from_index(i % 53))
        pair.run(0.002)
    pair.run(0.05)
    assert pair.cards() == pair.dealt and len(pair.dealt) == 600


def test_lost_frames_are_resent() -> None:
    pair = Pair()
    pair.run(0.01)
    lost = iter([True, True, False] * 100)
    pair.up = lambda f, k: None if k == "CardDrawn" and next(lost) else f
    for card in ("AS", "KD", "7H"):
        pair.deal(card)
    pair.run(3)
    assert pair.cards() == pair.dealt
    assert pair.dev.counters["retransmits"] == 6


def test_lost_acks_give_duplicates_that_are_suppressed() -> None:
    pair = Pair()
    pair.run(0.01)
    writes = iter(range(10**6))
    pair.down = lambda data: None if next(writes) % 2 == 0 else data
    for card in ("AS", "KD", "7H", "6S", "5H"):
        pair.deal(card)
    pair.run(3)
    assert pair.cards() == pair.dealt
    assert pair.host.counters["duplicates"] >= 1


def test_a_corrupt_frame_is_resent_at_once_on_the_nak() -> None:
    pair = Pair(timing=DeviceTiming(retransmit_timeout=0.5, retransmit_max=1.0))
    pair.run(0.01)
    corrupt = iter([True])
    pair.up = lambda f, k: (f[:5] + bytes((f[5] ^ 1,)) + f[6:]) if k == "CardDrawn" and next(corrupt, False) else f
    pair.deal("QC")
    pair.run(0.01)  # far less than the 500 ms retransmit timeout
    assert pair.cards() == pair.dealt
    assert pair.host.counters["bad_crc"] == 1 and pair.host.counters["naks_sent"] == 1
    assert pair.dev.counters["naks_received"] == 1


def test_duplicated_frames_are_delivered_once() -> None:
    pair = Pair()
    pair.run(0.01)
    pair.up = lambda f, k: f + f + f if k != "Heartbeat" else f
    for card in ("AS", "KD", "7H"):
        pair.deal(card)
    pair.run(0.1)
    assert pair.cards() == pair.dealt
    assert pair.host.counters["duplicates"] == 6


def test_heartbeat_loss_brings_the_link_down_and_back_without_redelivery() -> None:
    pair = Pair()
    pair.run(0.01)
    pair.deal("AS")
    cut = True
    drop_first_ack = iter([True])

    def down(data: bytes) -> bytes | None:
        return None if next(drop_first_ack, False) else data

    pair.down = down  # the ACK of AS is lost: the device still has it in flight
    pair.run(0.01)
    pair.up = lambda f, k: None if cut else f  # then the line goes dead
    pair.deal("KD")
    pair.run(2.0)
    assert pair.of(LinkDown) == [LinkDown("heartbeat lost")] and not pair.host.up
    assert pair.host.counters["heartbeat_losses"] == 1
    cut = False
    pair.run(1.0)
    assert pair.host.up and len(pair.of(LinkUp)) == 2
    assert pair.cards() == pair.dealt  # AS once (its resend after resync is a duplicate), then KD


def test_commands_are_acknowledged_resent_and_fail_after_the_retries() -> None:
    pair = Pair(LinkConfig(retransmit_timeout=0.05, retries=3))
    pair.run(0.01)
    done = pair.host.submit(Lock(True), pair.t)
    pair.run(0.01)
    assert done.result(0) is None and pair.commands == [Lock(True)]
    lost = iter([True, True])
    pair.down = lambda data: None if next(lost, False) else data
    done = pair.host.submit(ResetCounters(), pair.t)
    pair.run(0.2)
    assert done.result(0) is None and pair.commands[-1] == ResetCounters()
    assert pair.host.counters["retransmits"] == 2
    pair.down = lambda data: None
    done = pair.host.submit(Lock(False), pair.t)
    pair.run(0.5)
    with pytest.raises(CommandFailed):
        done.result(0)
    assert pair.of(Anomaly)[-1].kind == "command_failures"
    pair.down = lambda data: data  # the line is back: the next command goes through, on a fresh sequence
    done = pair.host.submit(Lock(False), pair.t)
    pair.run(0.05)
    assert done.result(0) is None and pair.commands[-1] == Lock(False) and pair.host.up


def test_commands_fail_when_the_link_is_or_goes_down() -> None:
    pair = Pair(LinkConfig(heartbeat_timeout=0.2))
    with pytest.raises(LinkDownError):
        pair.host.submit(Lock(True), pair.t).result(0)
    pair.run(0.01)
    pair.down = lambda data: None
    pair.up = lambda f, k: None
    first, second = pair.host.submit(Lock(True), pair.t), pair.host.submit(Lock(False), pair.t)
    pair.run(0.5)
    for future in (first, second):
        with pytest.raises(LinkDownError):
            future.result(0)
    with pytest.raises(ValueError):
        pair.host.submit(CardDrawn(1, 1, parse_card("AS")), pair.t).result(0)


def test_a_restarted_device_gives_back_the_card_it_lost() -> None:
    pair = Pair()
    pair.run(0.01)
    pair.deal("AS")
    pair.run(0.01)
    pair.up = lambda f, k: None if k == "CardDrawn" else f
    pair.deal("9D")  # never reaches the host...
    pair.run(0.01)
    pair.reboot()  # ...and the device restarts before resending it
    pair.up = keep
    pair.run(0.5)
    assert pair.cards() == pair.dealt
    assert [type(e) for e in pair.events] == [LinkUp, CardDrawn, LinkDown, LinkUp, CardDrawn]
    assert pair.of(LinkDown) == [LinkDown("device restarted")]
    assert pair.host.counters["recovered_cards"] == 1 and pair.host.counters["device_restarts"] == 1


def test_a_restart_after_a_lost_ack_does_not_deliver_twice() -> None:
    pair = Pair()
    pair.run(0.01)
    pair.down = lambda data: None
    pair.deal("AS")
    pair.run(0.01)
    pair.reboot()
    pair.down = lambda data: data
    pair.run(0.5)
    assert pair.cards() == [parse_card("AS")]
    assert not pair.of(Anomaly)


@pytest.mark.parametrize("known", ["delivered", "journal"])
def test_cards_lost_in_a_restart_are_reported_as_a_gap(known: str) -> None:
    """The host knows the last draw from a card it delivered, or from the runtime's journal (last_draws)."""
    pair = Pair(last_draws={1: 0} if known == "journal" else None)
    pair.run(0.01)
    if known == "delivered":
        pair.deal("2H")
        pair.run(0.01)
    pair.up = lambda f, k: None if k == "CardDrawn" else f
    pair.deal("AS")
    pair.deal("KS")
    pair.deal("QS")
    pair.run(0.01)
    pair.reboot()
    pair.up = keep
    pair.run(0.5)
    assert pair.cards()[-1:] == [parse_card("QS")]
    gap, = pair.of(Anomaly)
    first = 2 if known == "delivered" else 1
    assert gap.kind == "draw_gaps" and f"draws {first}..{first + 1}" in gap.detail


def test_draw_counter_guards_replays_conflicts_gaps_and_resets() -> None:
    host = HostLink(last_draws={1: 10})
    host.opened(0.0)
    from drivers.shoe.protocol import encode_message
    ident = Identify(DeviceKind.SHOE, 1, (1, 0, 0), 1, 0, 1, 10, None, "X")
    events = host.receive(encode_message(ident), 0.0)
    frames = [CardDrawn(1, 10, parse_card("AS")), CardDrawn(1, 11, parse_card("KS")),
              CardDrawn(1, 11, parse_card("QS")), CardDrawn(1, 14, parse_card("JS")), ShoeState(1, StateFlags(0), 0),
              CardDrawn(1, 1, parse_card("TS"))]
    for seq, msg in enumerate(frames):
        events += host.receive(encode_message(msg, seq), 0.0)
    kinds = [(type(e).__name__, getattr(e, "kind", getattr(e, "draw", None))) for e in events]
    assert kinds == [("LinkUp", None), ("CardDrawn", 11), ("Anomaly", "draw_conflicts"), ("Anomaly", "draw_gaps"),
                     ("CardDrawn", 14), ("CounterReset", None), ("ShoeState", None), ("CardDrawn", 1)]
    assert events[5] == CounterReset(1, 0, "shoe 1 draw counter went from 14 to 0")
    assert host.counters["replayed_cards"] == 1 and host.counters["draw_resets"] == 1


@settings(max_examples=200, deadline=None)
@given(sessions=st.lists(st.tuples(st.sampled_from(["SHOE-A", "SHOE-B"]), st.integers(0, 30), st.integers(0, 6)),
                         min_size=1, max_size=8))
@pytest.mark.slow
def test_a_reset_or_swapped_shoe_is_reported_and_none_of_its_cards_is_lost(
        sessions: list[tuple[str, int, int]]) -> None:
    """Issue 43 point 3, as a property: the device restarts any number of times (a new boot each time), as the
    same shoe or another (its serial), with its draw counter anywhere, and draws a few cards after each start.
    The host reports a CounterReset exactly when the counter went back or the serial changed, and hands on
    every card drawn after it: none is taken for a draw already delivered."""
    from drivers.shoe.protocol import encode_message

    host = HostLink()
    host.opened(0.0)
    events: list = []
    expected: list = []
    last: int | None = None   # the last draw the host knows of (none before a card or a reset tells it)
    serial_before: str | None = None
    for boot, (serial, start, cards) in enumerate(sessions, 1):
        events += host.receive(encode_message(Identify(DeviceKind.SHOE, 1, (1, 0, 0), 1, 0, boot, start, None,
                                                       serial)), 0.0)
        if serial_before is not None and serial != serial_before:
            expected.append(("reset", start))
            last = start
        elif last is not None and start < last:
            expected.append(("reset", start))
            last = start
        elif last is not None and start > last:
            expected.append(("gap", None))     # the same shoe lost the cards between
            last = start
        for i in range(cards):
            card = from_index((start + i) % 52)
            events += host.receive(encode_message(CardDrawn(1, start + i + 1, card), i), 0.0)
            expected.append(("card", start + i + 1))
            last = start + i + 1
        serial_before = serial
    seen = [("reset", e.draws) if isinstance(e, CounterReset) else ("card", e.draw) if isinstance(e, CardDrawn)
            else ("gap", None) for e in events if isinstance(e, (CounterReset, CardDrawn))
            or (isinstance(e, Anomaly) and e.kind == "draw_gaps")]
    assert expected == seen


def test_a_device_of_another_protocol_version_is_refused() -> None:
    host = HostLink()
    host.opened(0.0)
    from drivers.shoe.protocol import encode_message
    ident = Identify(DeviceKind.SHOE, 2, (9, 0, 0), 1, 0, 1, 0, None, "NEW")
    events = host.receive(encode_message(ident), 0.0) + host.receive(encode_message(ident), 0.0)
    assert [type(e) for e in events] == [Anomaly] and not host.up
    assert host.counters["protocol_mismatch"] == 1


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), loss=st.floats(0, 0.4), corruption=st.floats(0, 0.2), dup=st.floats(0, 0.3),
       ack_loss=st.floats(0, 0.4), outages=st.lists(st.tuples(st.integers(0, 2000), st.integers(1, 2500)),
                                                     max_size=2), gaps=st.lists(st.integers(0, 40), min_size=1,
                                                                                max_size=25))
@pytest.mark.slow
def test_any_mix_of_line_faults_delivers_every_card_exactly_once(seed: int, loss: float, corruption: float,
                                                                 dup: float, ack_loss: float,
                                                                 outages: list[tuple[int, int]],
                                                                 gaps: list[int]) -> None:
    rng = random.Random(seed)
    pair = Pair()
    dead = set()
    for start, length in outages:
        dead.update(range(start, start + length))

    def up(frame: bytes, kind: str) -> bytes | None:
        if int(pair.t * 1000) in dead or rng.random() < loss:
            return None
        if rng.random() < corruption:
            i = rng.randrange(len(frame))
            frame = frame[:i] + bytes((frame[i] ^ (1 << rng.randrange(8)),)) + frame[i + 1:]
        return frame + frame if rng.random() < dup else frame

    pair.up = up
    pair.down = lambda data: None if int(pair.t * 1000) in dead or rng.random() < ack_loss else data
    for i, gap in enumerate(gaps):
        pair.run(gap / 1000)
        pair.deal(from_index((i * 11) % 52))
    pair.up, pair.down = keep, (lambda data: data)
    pair.run(4.0)
    assert pair.cards() == pair.dealt
    assert not pair.of(Anomaly)
