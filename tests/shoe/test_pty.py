"""Simulated shoe <-> host driver over a real pseudo-terminal (and TCP, and a separate `croupier shoe-sim` process):
unplug/replug, frame loss with retransmission, duplicates, corruption, delay, noise, heartbeat loss, a device
reset, host commands. Every dealt card must arrive exactly once, in order. Nothing sleeps to synchronise: each
step waits on the driver's events or the simulator's state, with a timeout."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Callable, Iterator

import pytest

from controller.cards import Card, parse_cards, shoe
from controller.rng import SeededRng
from drivers.shoe.aio import AsyncShoe
from drivers.shoe.device import DeviceTiming
from drivers.shoe.driver import ShoeDriver
from drivers.shoe.link import Anomaly, LinkConfig, LinkDown, LinkUp
from drivers.shoe.protocol import CardDrawn, DeckCheck, ShoeState, Shuffle, StateFlags
from drivers.shoe.sim import ShoeSim

FAST = LinkConfig(heartbeat_timeout=1.0, hello_interval=0.05, retransmit_timeout=0.05, retries=5,
                  reconnect_interval=0.05, poll_interval=0.005)
FAST_DEVICE = DeviceTiming(heartbeat_interval=0.1, retransmit_timeout=0.03, retransmit_max=0.2)
TIMEOUT = 10.0


class Recorder:
    """The runtime's side: collects events and lets a test wait for a condition on them."""

    def __init__(self) -> None:
        self.events: list = []
        self._cond = threading.Condition()

    def __call__(self, event: object) -> None:
        with self._cond:
            self.events.append(event)
            self._cond.notify_all()

    def wait(self, predicate: Callable[[Recorder], bool], what: str, timeout: float = TIMEOUT) -> None:
        with self._cond:
            if not self._cond.wait_for(lambda: predicate(self), timeout):
                raise AssertionError(f"timed out waiting for {what}; events: {self.events}")

    def of(self, kind: type) -> list:
        with self._cond:
            return [e for e in self.events if isinstance(e, kind)]

    def cards(self) -> list[Card]:
        return [e.card for e in self.of(CardDrawn)]

    def wait_cards(self, count: int) -> None:
        self.wait(lambda r: len(r.cards()) >= count, f"{count} cards")


def shuffled(seed: int, decks: int = 1) -> list[Card]:
    return SeededRng(seed).shuffled(shoe(decks))


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[tuple[ShoeSim, ShoeDriver, Recorder]]:
    sim = ShoeSim(shuffled(7, 2), decks=2, timing=FAST_DEVICE, new_order=lambda d: shuffled(8, d))
    url = sim.open_pty(str(tmp_path / "shoe0"))
    sim.start()
    rec = Recorder()
    driver = ShoeDriver(url, rec, config=FAST).start()
    rec.wait(lambda r: r.of(LinkUp), "the link to come up")
    yield sim, driver, rec
    driver.stop()
    sim.stop()


def deal(sim: ShoeSim, n: int) -> list[Card]:
    return [sim.deal().card for _ in range(n)]


def settle(sim: ShoeSim, rec: Recorder, expected: list[Card]) -> None:
    rec.wait_cards(len(expected))
    assert sim.wait_idle(TIMEOUT)
    assert rec.cards() == expected, "every card exactly once, in order"
    assert [e.draw for e in rec.of(CardDrawn)] == list(range(1, len(expected) + 1))


def test_a_whole_shoe_arrives_in_order(rig) -> None:
    sim, driver, rec = rig
    dealt = deal(sim, 104)
    settle(sim, rec, dealt)
    assert dealt == shuffled(7, 2)
    assert driver.up and driver.identity.serial == "SIM-0001"
    assert [e.flags for e in rec.of(ShoeState)][-1] == StateFlags.CARDS_LOW | StateFlags.EMPTY
    assert driver.counters["bad_crc"] == 0 and driver.counters["duplicates"] == 0


def test_lost_frames_are_resent(rig) -> None:
    sim, driver, rec = rig
    dealt = deal(sim, 3)
    sim.command("drop 4")
    dealt += deal(sim, 5)
    settle(sim, rec, dealt)
    assert sim.counters["dropped"] == 4 and sim.link.counters["retransmits"] >= 4


def test_duplicates_are_delivered_once(rig) -> None:
    sim, driver, rec = rig
    assert sim.command("duplicate 5") == "ok duplicate 5"
    assert sim.command("ignore-acks 3") == "ok ignore-acks 3"  # the shoe resends what the host already has
    dealt = deal(sim, 8)
    settle(sim, rec, dealt)
    # Five doubled frames are five duplicates; an ignored ACK may be the second ACK of a doubled frame.
    assert driver.counters["duplicates"] >= 5 and sim.link.counters["acks_ignored"] == 3


def test_corrupt_frames_delay_and_noise_cost_nothing(rig) -> None:
    sim, driver, rec = rig
    sim.command("corrupt 3")
    dealt = deal(sim, 4)
    sim.command("garbage 200")
    dealt += deal(sim, 2)
    sim.command("delay 0.15 2")  # longer than the resend timeout: the resends overtake the late copies
    dealt += deal(sim, 4)
    settle(sim, rec, dealt)
    assert sim.wait_until(lambda s: not s._delayed, TIMEOUT)
    # The first copy, held longer than two resends take, comes late: a duplicate, or out of order if the next
    # frame has overtaken it too. Never delivered.
    assert driver.wait_counters(lambda c: c["duplicates"] + c["out_of_order"] >= 1, TIMEOUT)
    assert rec.cards() == dealt
    counters = driver.counters
    assert counters["bad_crc"] + counters["bad_escape"] + counters["bad_length"] >= 3
    assert counters["naks_sent"] >= 1


def test_unplug_and_replug(rig) -> None:
    sim, driver, rec = rig
    dealt = deal(sim, 2)
    rec.wait_cards(2)
    sim.unplug(None)
    rec.wait(lambda r: r.of(LinkDown), "the unplug to be seen")
    assert rec.of(LinkDown)[0].reason.startswith("disconnected")
    dealt += deal(sim, 3)  # drawn while the cable is out: queued in the shoe
    sim.replug()
    rec.wait(lambda r: len(r.of(LinkUp)) == 2, "the link to come back")
    dealt += deal(sim, 2)
    settle(sim, rec, dealt)
    assert driver.counters["disconnects"] == 1 and driver.counters["connects"] == 2


def test_a_resync_after_a_lost_ack_does_not_redeliver(rig) -> None:
    """The host has the card but the shoe never saw the ACK; the cable comes out and back. The shoe's IDENTIFY
    names the frame it still holds, so the host takes the resend for the duplicate it is."""
    sim, driver, rec = rig
    sim.command("ignore-acks 1")
    dealt = deal(sim, 1)
    rec.wait_cards(1)
    assert sim.command("unplug 0.3") == "ok unplugged for 0.3 s"
    rec.wait(lambda r: len(r.of(LinkUp)) == 2, "the timed replug")
    dealt += deal(sim, 1)
    settle(sim, rec, dealt)
    assert driver.counters["duplicates"] >= 1 and driver.counters["replayed_cards"] == 0


@pytest.mark.slow
def test_heartbeat_loss(rig) -> None:
    sim, driver, rec = rig
    dealt = deal(sim, 1)
    rec.wait_cards(1)
    assert sim.wait_idle(TIMEOUT)
    sim.command("heartbeat off")
    rec.wait(lambda r: r.of(LinkDown), "the watchdog")
    # Not `driver.up` here: the shoe still answers HELLO, so on a busy machine the link may already be back.
    assert rec.of(LinkDown) == [LinkDown("heartbeat lost")]
    dealt += deal(sim, 2)  # answered with IDENTIFY on the next HELLO: the link comes back, cards follow
    rec.wait(lambda r: len(r.of(LinkUp)) >= 2, "the link to come back on HELLO")
    settle(sim, rec, dealt)
    assert driver.counters["heartbeat_losses"] >= 1
    sim.command("heartbeat on")


def test_a_device_reset_recovers_the_card_it_lost(rig) -> None:
    sim, driver, rec = rig
    dealt = deal(sim, 2)
    rec.wait_cards(2)
    sim.command("drop 1000")
    dealt += deal(sim, 1)
    sim.command("reset")
    sim.faults.drop = 0
    rec.wait(lambda r: r.of(LinkDown), "the restart to be seen")
    settle(sim, rec, dealt)
    assert rec.of(LinkDown) == [LinkDown("device restarted")]
    assert driver.counters["recovered_cards"] == 1 and not rec.of(Anomaly)


def test_host_commands(rig) -> None:
    sim, driver, rec = rig
    driver.lock(True).result(TIMEOUT)
    rec.wait(lambda r: any(e.flags & StateFlags.LOCKED for e in r.of(ShoeState)), "the LOCKED state")
    assert sim.command("deal") == "error: the shoe is locked: no card can be drawn"
    driver.lock(False).result(TIMEOUT)
    dealt = deal(sim, 2)
    settle(sim, rec, dealt)
    driver.reset_counters().result(TIMEOUT)
    rec.wait(lambda r: r.of(ShoeState)[-1].draws == 0, "the counter reset")
    driver.request_status().result(TIMEOUT)
    driver.set_time(1767225600000).result(TIMEOUT)
    more = deal(sim, 1)
    rec.wait(lambda r: r.of(CardDrawn)[-1].draw == 1, "draw 1 after the reset")
    assert rec.cards() == dealt + more and driver.counters["draw_resets"] == 1


def test_shuffle_and_deck_check(rig) -> None:
    sim, driver, rec = rig
    assert sim.command("missing 7h AS") == "ok next deck check misses 7H AS"
    assert sim.command("shuffle 1") == "ok deck check missing 7H AS extra -"
    rec.wait(lambda r: len(r.of(Shuffle)) == 2, "the shuffle")
    started, finished = rec.of(Shuffle)
    assert started.started and not finished.started and started.count == finished.count == 1
    check, = rec.of(DeckCheck)
    assert check.missing == parse_cards("7H AS") and not check.complete and check.decks == 1
    assert sim.remaining == 50
    sim.shuffle(shuffled(9))
    rec.wait(lambda r: len(r.of(DeckCheck)) == 2, "the second deck check")
    assert rec.of(DeckCheck)[-1].complete


def test_sim_commands_report_errors(rig) -> None:
    sim, _, _ = rig
    assert sim.command("bogus").startswith("error: unknown command")
    assert sim.command("jam sideways").startswith("error: expected on/off")
    assert sim.command("drop -1").startswith("error:")
    assert sim.command("load AS ZZ").startswith("error: not a card")
    assert sim.command("jam on") == "ok jam on"
    assert sim.command("deal") == "error: the shoe is jammed: clear it first"
    assert '"JAM"' in sim.command("status")
    assert "deal [N]" in sim.command("help")


@pytest.mark.slow
def test_tcp_transport_and_reconnect() -> None:
    sim = ShoeSim(parse_cards("AS KS QS JS TS 9S"), timing=FAST_DEVICE)
    url = sim.listen_tcp(0)
    assert url.startswith("socket://127.0.0.1:")
    rec = Recorder()
    with sim, ShoeDriver(url, rec, config=FAST):
        rec.wait(lambda r: r.of(LinkUp), "the link over TCP")
        dealt = deal(sim, 2)
        rec.wait_cards(2)
        sim.unplug(None)
        rec.wait(lambda r: r.of(LinkDown), "the dropped connection")
        dealt += deal(sim, 2)
        sim.replug()
        dealt += deal(sim, 2)
        settle(sim, rec, dealt)


@pytest.mark.slow
def test_loop_url_opens_and_counts_what_it_hears() -> None:
    rec = Recorder()
    with ShoeDriver("loop://", rec, config=FAST) as driver:
        # loop:// echoes our own HELLOs: host commands from the "device", refused and counted.
        rec.wait(lambda r: driver.counters["wrong_direction"] >= 1, "the echo", timeout=TIMEOUT)
    assert not driver.up


def test_a_port_that_is_not_there_is_retried(tmp_path: Path) -> None:
    import logging

    failed = threading.Event()

    class Seen(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "cannot be opened" in record.getMessage():
                failed.set()

    handler = Seen()
    logging.getLogger("croupier.shoe").addHandler(handler)
    rec = Recorder()
    path = str(tmp_path / "later")
    sim = ShoeSim(parse_cards("AS"), timing=FAST_DEVICE)
    try:
        with ShoeDriver(path, rec, config=FAST) as driver:
            assert failed.wait(TIMEOUT)
            sim.open_pty(path)  # the adapter is plugged in
            with sim:
                rec.wait(lambda r: r.of(LinkUp), "the port to appear")
                settle(sim, rec, deal(sim, 1))
            assert driver.counters["open_failures"] >= 1
    finally:
        logging.getLogger("croupier.shoe").removeHandler(handler)
    with pytest.raises(ValueError):
        ShoeDriver("", rec)


def test_asyncio_adapter(tmp_path: Path) -> None:
    sim = ShoeSim(parse_cards("AS KS QS"), timing=FAST_DEVICE)
    url = sim.open_pty(str(tmp_path / "shoe"))

    async def main() -> list:
        got = []
        async with AsyncShoe(url, config=FAST) as shoe_:
            assert isinstance(await asyncio.wait_for(shoe_.get(), TIMEOUT), LinkUp)
            await shoe_.lock(False)
            await asyncio.to_thread(deal, sim, 3)
            async for event in shoe_:
                if isinstance(event, CardDrawn):
                    got.append(event.card)
                    if len(got) == 3:
                        break
            assert shoe_.up and shoe_.counters["frames_in"] > 0
        return got

    with sim:
        assert asyncio.run(asyncio.wait_for(main(), 3 * TIMEOUT)) == list(parse_cards("AS KS QS"))


def test_asyncio_adapter_hands_events_to_a_callback_on_the_loop(tmp_path: Path) -> None:
    # The table's way: each event goes to `on_event` on the loop's own thread, in order, and none is queued.
    sim = ShoeSim(parse_cards("AS KS QS"), timing=FAST_DEVICE)
    url = sim.open_pty(str(tmp_path / "shoe"))

    async def main() -> list:
        loop_thread = threading.get_ident()
        got: list = []
        threads: set[int] = set()
        up, three = asyncio.get_running_loop().create_future(), asyncio.get_running_loop().create_future()

        def on_event(event: object) -> None:
            threads.add(threading.get_ident())
            if isinstance(event, LinkUp) and not up.done():
                up.set_result(None)
            if isinstance(event, CardDrawn):
                got.append(event.card)
                if len(got) == 3:
                    three.set_result(None)

        shoe_ = AsyncShoe(url, config=FAST, on_event=on_event).start()
        try:
            await asyncio.wait_for(up, TIMEOUT)
            await shoe_.lock(False)
            await asyncio.to_thread(deal, sim, 3)
            await asyncio.wait_for(three, TIMEOUT)
            assert threads == {loop_thread} and shoe_.events.empty()
        finally:
            await shoe_.stop()
        return got

    with sim:
        assert asyncio.run(asyncio.wait_for(main(), 3 * TIMEOUT)) == list(parse_cards("AS KS QS"))


@pytest.mark.slow
def test_shoe_sim_as_a_separate_process(tmp_path: Path) -> None:
    link = str(tmp_path / "shoe-proc")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "shoe-sim", "--pty", link, "--seed", "11",
                             "--decks", "1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == link
        rec = Recorder()
        with ShoeDriver(link, rec, config=LinkConfig(heartbeat_timeout=2.0, reconnect_interval=0.05)):
            rec.wait(lambda r: r.of(LinkUp), "the separate simulator")

            def say(line: str) -> str:
                proc.stdin.write(line + "\n")
                proc.stdin.flush()
                return proc.stdout.readline().strip()

            assert say("deal 3").startswith("ok ")
            rec.wait_cards(3)
            assert say("unplug 0.2") == "ok unplugged for 0.2 s"
            rec.wait(lambda r: len(r.of(LinkUp)) == 2, "the replug")
            assert say("deal 2").startswith("ok ")
            rec.wait_cards(5)
            assert rec.cards() == SeededRng(11).shuffled(shoe(1))[:5]
        proc.stdin.close()
        assert proc.wait(TIMEOUT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.mark.slow
def test_shoe_sim_over_tcp_with_a_control_port() -> None:
    import socket

    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "shoe-sim", "--tcp", "0", "--cards",
                             "AS KD", "--control", "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("socket://127.0.0.1:")
        control = None
        for line in proc.stderr:
            if "control commands on 127.0.0.1:" in line:
                control = int(line.rsplit(":", 1)[1])
                break
        rec = Recorder()
        with ShoeDriver(url, rec, config=FAST), socket.create_connection(("127.0.0.1", control), TIMEOUT) as conn:
            rec.wait(lambda r: r.of(LinkUp), "the TCP simulator")
            stream = conn.makefile("rw")
            stream.write("deal 2\n")
            stream.flush()
            assert stream.readline().strip() == "ok AS#1 KD#2"
            rec.wait_cards(2)
            assert rec.cards() == list(parse_cards("AS KD"))
        proc.stdin.close()  # with a control port, the end of stdin does not stop it...
        assert proc.poll() is None
        proc.terminate()  # ...SIGTERM does
        assert proc.wait(TIMEOUT) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_shoe_sim_refuses_bad_options(capsys: pytest.CaptureFixture[str]) -> None:
    from controller.cli import main

    assert main(["shoe-sim", "--decks", "0"]) == 2
    assert main(["shoe-sim", "--cards", "AS XX"]) == 2
    assert "not a card" in capsys.readouterr().err
