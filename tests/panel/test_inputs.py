"""Inputs on mock pins and a manual clock: bounce rejected, hold and stuck detected, doors, pulses checked."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.panel import (ButtonHeld, ButtonPressed, ButtonReleased, DoorClosed, DoorOpened, InputFreed,
                           InputStuck, ManualClock, PulseCounted, PulseRejected, SwitchOff, SwitchOn)
from drivers.panel.inputs import Debouncer

BUTTONS = {"buttons": {"spot3_bet": 4, "deal": 17, "void": {"pin": 18, "hold": 2.0}, "spin": {"pin": 22, "stuck": 5.0}}}


def at(clock: ManualClock, when: float) -> None:
    assert when >= clock.now(), "a test step in the past"
    clock.advance_to(when)


def active_at_start(rig, mapping: dict, name: str, until: float):
    """A rig whose input `name` is active as the panel starts (reported stuck at once), released at `until`."""
    r = rig(mapping, before_start=lambda panel: panel.sim.press(name))
    assert r.take() == [InputStuck(name, 0.0, since=0.0)]
    at(r.clock, until)
    r.sim.release(name)
    r.clock.advance(1)
    return r


def test_a_clean_press_and_release(rig) -> None:
    r = rig(BUTTONS)
    at(r.clock, 1.0)
    r.sim.press("spot3_bet")
    r.clock.advance(0.0199)
    assert r.events == []  # not yet steady for the 20 ms bounce time
    r.clock.advance(0.0001)
    assert r.take() == [ButtonPressed("spot3_bet", 1.0, 3, "bet")]
    assert r.panel.is_active("spot3_bet")
    at(r.clock, 1.25)
    r.sim.release("spot3_bet")
    r.clock.advance(1)
    assert r.take() == [ButtonReleased("spot3_bet", 1.25, 3, "bet", duration=0.25, held=False)]
    assert str(ButtonPressed("spot3_bet", 1.0, 3, "bet")) == "spot 3 bet button pressed"
    assert str(ButtonReleased("deal", 1.0, None, "deal")) == "deal button released"


def test_bounce_is_rejected(rig) -> None:
    r = rig(BUTTONS)
    # Contact bounce on press: only the level that then holds for 20 ms counts, dated when it began.
    for when, pressed in [(1.000, True), (1.003, False), (1.006, True), (1.008, False), (1.010, True)]:
        at(r.clock, when)
        r.sim.set("deal", pressed)
    r.clock.advance(0.5)
    assert r.take() == [ButtonPressed("deal", 1.010, None, "deal")]
    for when, pressed in [(1.600, False), (1.602, True), (1.605, False)]:
        at(r.clock, when)
        r.sim.set("deal", pressed)
    r.clock.advance(0.5)
    [released] = r.take()
    assert released == ButtonReleased("deal", 1.605, None, "deal", duration=pytest.approx(0.595), held=False)


def test_a_glitch_shorter_than_the_bounce_time_is_nothing(rig) -> None:
    r = rig(BUTTONS)
    at(r.clock, 1.0)
    r.sim.press("deal")
    at(r.clock, 1.019)
    r.sim.release("deal")
    r.clock.advance(5)
    assert r.events == []
    assert not r.panel.is_active("deal")


def test_hold_is_detected_once_and_reported_on_release(rig) -> None:
    r = rig(BUTTONS)
    at(r.clock, 1.0)
    r.sim.press("deal")
    at(r.clock, 1.999)
    assert r.take() == [ButtonPressed("deal", 1.0, None, "deal")]
    at(r.clock, 2.0)
    assert r.take() == [ButtonHeld("deal", 2.0, None, "deal", duration=1.0)]
    at(r.clock, 2.5)
    r.sim.release("deal")
    r.clock.advance(1)
    assert r.take() == [ButtonReleased("deal", 2.5, None, "deal", duration=1.5, held=True)]


def test_a_per_button_hold_time(rig) -> None:
    r = rig(BUTTONS)
    at(r.clock, 1.0)
    r.sim.press("void")
    at(r.clock, 2.9)
    assert [type(e) for e in r.take()] == [ButtonPressed]
    at(r.clock, 3.0)
    assert r.take() == [ButtonHeld("void", 3.0, None, "void", duration=2.0)]


def test_a_stuck_button_is_reported_and_freed(rig) -> None:
    r = rig(BUTTONS)
    at(r.clock, 1.0)
    r.sim.press("spin")
    at(r.clock, 6.0)
    assert r.take() == [ButtonPressed("spin", 1.0, None, "spin"), ButtonHeld("spin", 2.0, None, "spin", 1.0),
                        InputStuck("spin", 6.0, since=1.0)]
    at(r.clock, 7.0)
    r.sim.release("spin")
    r.clock.advance(1)
    assert r.take() == [InputFreed("spin", 7.0, stuck_for=6.0),
                        ButtonReleased("spin", 7.0, None, "spin", duration=6.0, held=True)]


def test_a_button_down_at_start_is_stuck_not_pressed(rig) -> None:
    r = active_at_start(rig, BUTTONS, "deal", until=3.0)
    assert r.take() == [InputFreed("deal", 3.0, stuck_for=3.0)]  # no release of a press never reported
    at(r.clock, 5.0)
    r.sim.press("deal")
    r.clock.advance(0.1)
    assert r.take() == [ButtonPressed("deal", 5.0, None, "deal")]


def test_mashing_a_button_gives_one_press_per_real_press(rig) -> None:
    r = rig(BUTTONS)
    for i in range(10):  # ten presses of 40 ms, 40 ms apart, each with a bouncy start
        t = 1.0 + i * 0.08
        for dt, pressed in [(0.0, True), (0.001, False), (0.002, True), (0.040, False)]:
            at(r.clock, t + dt)
            r.sim.set("spot3_bet", pressed)
    r.clock.advance(1)
    presses = [e for e in r.events if isinstance(e, ButtonPressed)]
    releases = [e for e in r.events if isinstance(e, ButtonReleased)]
    assert [e.at for e in presses] == pytest.approx([1.002 + i * 0.08 for i in range(10)])
    assert len(releases) == 10


def test_doors_and_key_switches(rig) -> None:
    r = rig({"doors": {"main": 5, "cash_box": 6}, "switches": {"reset_key": 7}})
    at(r.clock, 1.0)
    r.sim.open_door("cash_box")
    at(r.clock, 1.03)
    r.sim.close_door("cash_box")  # shorter than the door's 50 ms: a knock, not an opening
    at(r.clock, 2.0)
    r.sim.open_door("main")
    at(r.clock, 3.0)
    r.sim.close_door("main")
    r.sim.press("reset_key")
    at(r.clock, 4.0)
    r.sim.release("reset_key")
    r.clock.advance(1)
    assert r.words() == ["main door opened", "main door closed", "reset key switch on", "reset key switch off"]
    assert r.events == [DoorOpened("main", 2.0), DoorClosed("main", 3.0), SwitchOn("reset_key", 3.0),
                        SwitchOff("reset_key", 4.0)]
    assert not r.panel.door_open("main")


def test_a_door_open_at_start_is_reported_at_once(rig) -> None:
    r = rig({"doors": {"main": 5, "logic": 6}}, before_start=lambda panel: panel.sim.open_door("logic"))
    assert r.take() == [DoorOpened("logic", 0.0)]
    assert r.panel.door_open("logic") and not r.panel.door_open("main")
    assert str(DoorOpened("cash_box", 0.0)) == "cash box door opened"


def test_door_switches_fail_safe_a_cut_wire_reads_open(rig) -> None:
    # Normally-closed wiring: a shut door pulls the line low; a cut wire floats up to the pull-up = "open".
    r = rig({"doors": {"main": 5}})
    pin = r.sim.pin("main")
    at(r.clock, 1.0)
    pin.drive_high()
    r.clock.advance(1)
    assert r.take() == [DoorOpened("main", 1.0)]


# ---------------------------------------------------------------------------------------------------------------
# Pulse lines

COIN = {"pulses": {"coin_in": {"pin": 24, "min_width": 0.015, "max_width": 0.15, "min_gap": 0.015}}}


def pulse(r, start: float, width: float, name: str = "coin_in") -> None:
    at(r.clock, start)
    r.sim.press(name)
    at(r.clock, start + width)
    r.sim.release(name)


def test_good_pulses_are_counted(rig) -> None:
    r = rig(COIN)
    r.sim.coins("coin_in", 3, width=0.05, gap=0.05)
    r.clock.advance(1)
    assert r.take() == [PulseCounted("coin_in", 0.05, 0.05, 1), PulseCounted("coin_in", pytest.approx(0.15), pytest.approx(0.05), 2),
                        PulseCounted("coin_in", pytest.approx(0.25), pytest.approx(0.05), 3)]
    assert r.panel.pulse_count("coin_in") == (3, 0)


def test_bad_pulses_are_rejected_with_the_reason(rig) -> None:
    r = rig(COIN)
    pulse(r, 1.0, 0.005)        # noise: too short
    pulse(r, 2.0, 0.05)         # good
    pulse(r, 2.06, 0.05)        # 10 ms after the last: too soon (a strung coin, or a bouncing opto)
    pulse(r, 3.0, 0.5)          # stuck line
    r.clock.advance(1)
    kinds = [(type(e).__name__, getattr(e, "reason", "")) for e in r.events]
    assert kinds == [
        ("PulseRejected", "5.0 ms is shorter than 15 ms"),
        ("PulseCounted", ""),
        ("PulseRejected", "came 10.0 ms after the last pulse (at least 15 ms)"),
        ("InputStuck", ""),
        ("InputFreed", ""),
        ("PulseRejected", "500.0 ms is longer than 150 ms"),
    ]
    stuck = r.events[3]
    assert stuck == InputStuck("coin_in", pytest.approx(3.15), since=3.0)  # reported while still stuck
    assert r.panel.pulse_count("coin_in") == (1, 3)
    assert str(r.events[0]) == "coin in pulse rejected: 5.0 ms is shorter than 15 ms"


def test_the_glitch_filter_keeps_a_pulse_whole(rig) -> None:
    r = rig(COIN)
    at(r.clock, 1.0)
    r.sim.press("coin_in")
    at(r.clock, 1.02)
    r.sim.release("coin_in")    # a 1 ms dropout inside the pulse
    at(r.clock, 1.021)
    r.sim.press("coin_in")
    at(r.clock, 1.05)
    r.sim.release("coin_in")
    at(r.clock, 2.0)
    r.sim.press("coin_in")      # a 1 ms spike
    at(r.clock, 2.001)
    r.sim.release("coin_in")
    r.clock.advance(1)
    assert r.take() == [PulseCounted("coin_in", 1.05, pytest.approx(0.05), 1)]


def test_a_line_active_at_start_does_not_count(rig) -> None:
    r = active_at_start(rig, COIN, "coin_in", until=0.05)
    assert r.take() == [InputFreed("coin_in", 0.05, stuck_for=0.05),
                        PulseRejected("coin_in", 0.05, 0.05, "line was active when the panel started")]


def classify(pulses: list[tuple[int, int]], min_width: int, max_width: int, min_gap: int) -> list[str]:
    """Reference: each (gap before, width) in ms -> counted / short / long / soon."""
    out = []
    for i, (gap, width) in enumerate(pulses):
        if width < min_width:
            out.append("short")
        elif width > max_width:
            out.append("long")
        elif i > 0 and gap < min_gap:
            out.append("soon")
        else:
            out.append("counted")
    return out


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([5, 10, 20, 100, 300]), st.sampled_from([5, 10, 20, 50, 140, 160, 400])),
                min_size=1, max_size=12))
def test_pulse_validation_matches_the_rules(pulses: list[tuple[int, int]]) -> None:
    from drivers.panel import open_panel, panel_config_from_mapping

    clock = ManualClock()
    panel = open_panel(panel_config_from_mapping({"driver": "sim", **COIN}), clock=clock)
    events: list = []
    panel.start(events.append)
    try:
        t = 1.0
        for gap, width in pulses:
            t += gap / 1000
            clock.advance_to(t)
            panel.sim.press("coin_in")
            t += width / 1000
            clock.advance_to(t)
            panel.sim.release("coin_in")
        clock.advance(1)
    finally:
        panel.close()
    outcomes = []
    for e in events:
        if isinstance(e, PulseCounted):
            outcomes.append("counted")
        elif isinstance(e, PulseRejected):
            outcomes.append({"shorter": "short", "longer": "long", "came": "soon"}[
                next(w for w in ("shorter", "longer", "came") if w in e.reason)])
    assert outcomes == classify(pulses, 15, 150, 15)
    assert sum(isinstance(e, InputStuck) for e in events) == sum(width > 150 for _, width in pulses)
    counted = [e.count for e in events if isinstance(e, PulseCounted)]
    assert counted == list(range(1, len(counted) + 1))


# ---------------------------------------------------------------------------------------------------------------
# The debouncer alone: the timestamps decide, not when the edges are delivered

def reference_debounce(edges: list[tuple[float, bool]], bounce: float, start: bool) -> list[tuple[float, bool]]:
    accepted, level = [], start
    for i, (t, new) in enumerate(edges):
        steady_until = edges[i + 1][0] if i + 1 < len(edges) else math.inf
        if steady_until - t >= bounce and new != level:
            level = new
            accepted.append((t, new))
    return accepted


edge_lists = st.lists(st.sampled_from([0.001, 0.005, 0.019, 0.021, 0.05, 0.3]), min_size=1, max_size=20).map(
    lambda gaps: [(round(sum(gaps[:i + 1]), 6), i % 2 == 0) for i in range(len(gaps))])


@settings(max_examples=200, deadline=None)
@given(edge_lists, st.booleans())
def test_debouncer_matches_the_reference_whenever_edges_arrive(edges: list[tuple[float, bool]], late: bool) -> None:
    clock = ManualClock()
    seen: list[tuple[float, bool]] = []
    debouncer = Debouncer(clock, 0.02, False, lambda t, level: seen.append((t, level)))
    for t, level in edges:
        if not late:  # on time; or all delivered at once, as after a busy event loop
            clock.advance_to(t)
        debouncer.edge(t, level)
    clock.advance(10)
    assert seen == reference_debounce(edges, 0.02, False)


def test_a_release_heard_late_is_not_taken_for_a_stuck_line() -> None:
    # A busy loop can run the stuck check (due at start + max_width) in the same turn as a release edge dated long
    # before it; the release wins, and the pulse counts once the edge settles.
    from drivers.panel.config import PulseSpec
    from drivers.panel.inputs import PulseInput

    clock = ManualClock()
    events: list = []
    logic = PulseInput(PulseSpec("coin_out", 25, glitch=0.001, min_width=0.005, max_width=0.06, min_gap=0.01),
                       clock, events.append)
    logic.start(False, 0.0)
    logic.edge(0.0, True)
    clock.advance(0.002)                 # the press settles; the stuck check waits for 0.06
    clock._now = 0.1                     # the loop was busy for 98 ms
    logic.edge(0.0075, False)            # the release, dated when it happened
    logic._report_stuck(0.06, 0.0)       # the stuck check, already due in the same turn
    clock.advance(0.0)                   # the release settles
    assert [type(e).__name__ for e in events] == ["PulseCounted"] and events[0].width == pytest.approx(0.0075)
