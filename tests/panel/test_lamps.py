"""Lamps, tower light and outputs: each pattern's exact pin timeline on mock pins under a manual clock."""

from __future__ import annotations

import pytest

from drivers.panel import PanelError
from drivers.panel.lamps import LOOKS, Pattern, group_pattern
from drivers.panel.sim import timeline

F, T = False, True
LAMPS = {"lamps": {"a": 12, "b": 13, "c": 16}}


def test_pattern_steps_and_next_change() -> None:
    blink = LOOKS["blink"]
    assert blink.at(0.0) == ((1.0,), 0.5)
    assert blink.at(0.7) == ((0.0,), 1.0)
    assert blink.at(12.25) == ((1.0,), 12.5)
    assert LOOKS["on"].at(1e6) == ((1.0,), None)
    chase = group_pattern("attract", 3)
    assert [chase.at(t)[0] for t in (0.0, 0.16, 0.31, 0.46)] == [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 0, 0)]
    once = Pattern("once", ((0.05, (1.0,)), (0.05, (0.0,))), repeat=False)
    assert once.at(0.06) == ((0.0,), 0.1) and once.at(0.1) == ((0.0,), None)


def test_blink_timeline(rig) -> None:
    r = rig(LAMPS)
    [pin] = r.pins("lamps.a")
    r.panel.light("a", "blink")
    r.clock.advance(2.2)
    assert timeline(pin) == [(0.0, F), (0.0, T), (0.5, F), (0.5, T), (0.5, F), (0.5, T)]
    # gpiozero's own helper, with its tolerances, agrees
    pin.assert_states_and_times([(0.0, F), (0.0, T), (0.5, F), (0.5, T), (0.5, F), (0.5, T)])


def test_lamps_that_blink_blink_in_step(rig) -> None:
    r = rig(LAMPS)
    a, b = r.pins("lamps.a", "lamps.b")
    r.panel.light("a", "blink")
    r.clock.advance(0.7)
    r.panel.light("b", "blink")  # mid-cycle: it waits for the shared phase rather than starting its own
    r.clock.advance(1.0)
    assert timeline(a) == [(0.0, F), (0.0, T), (0.5, F), (0.5, T), (0.5, F)]
    assert timeline(b) == [(0.0, F), (1.0, T), (0.5, F)]


def test_a_spot_look_is_a_named_lamp_look(rig) -> None:
    r = rig({"lamps": {"spot3_bet": 12, "spot3_insurance": 13, "spot4_bet": 16}})
    r.panel.light_spot(3, "bet_placed")
    assert r.sim.lamp("spot3_bet") == 1.0 and r.sim.lamp("spot3_insurance") == 1.0
    assert r.sim.lamp("spot4_bet") == 0.0
    [pin] = r.pins("lamps.spot4_bet")
    r.panel.light_spot(4, "betting_open")  # a slow blink: one second on, one off
    r.clock.advance(4.5)
    assert timeline(pin) == [(0.0, F), (0.0, T), (1.0, F), (1.0, T), (1.0, F), (1.0, T)]
    with pytest.raises(PanelError, match="no lamp for spot 9"):
        r.panel.light_spot(9, "win")
    with pytest.raises(PanelError, match="no look 'sparkle'"):
        r.panel.light("spot3_bet", "sparkle")
    with pytest.raises(PanelError, match=r"no lamp named 'nope' \(lamps: spot3_bet"):
        r.panel.light("nope", "on")


def test_attract_chases_in_group_order(rig) -> None:
    r = rig({**LAMPS, "groups": {"attract": ["c", "b", "a"]}})
    pins = dict(zip("abc", r.pins("lamps.a", "lamps.b", "lamps.c")))
    r.panel.attract()
    r.clock.advance(0.7)
    assert timeline(pins["c"]) == [(0.0, F), (0.0, T), (0.15, F), (0.3, T), (0.15, F)]
    assert timeline(pins["b"]) == [(0.0, F), (0.15, T), (0.15, F), (0.3, T)]
    assert timeline(pins["a"]) == [(0.0, F), (0.3, T), (0.15, F)]
    r.panel.attract(False)
    assert [r.sim.lamp(n) for n in "abc"] == [0.0, 0.0, 0.0]


def test_win_flash_borrows_the_lamps_and_gives_them_back(rig) -> None:
    r = rig(LAMPS)
    a, b = r.pins("lamps.a", "lamps.b")
    r.panel.light("a", "on")
    r.clock.advance(0.2)
    r.panel.flash_win(seconds=1.0)
    r.clock.advance(2.0)
    assert timeline(a) == [(0.0, F), (0.0, T), (0.35, F), (0.15, T), (0.15, F), (0.15, T), (0.15, F), (0.15, T)]
    assert timeline(b) == [(0.0, F), (0.2, T), (0.15, F), (0.15, T), (0.15, F), (0.15, T), (0.15, F), (0.15, T),
                           (0.1, F)]
    assert r.sim.lamp("a") == 1.0 and r.sim.lamp("b") == 0.0


def test_tilt_flashes_alternate_halves(rig) -> None:
    r = rig(LAMPS)
    r.panel.flash_tilt()
    levels = []
    for _ in range(4):
        levels.append(tuple(r.sim.lamp(n) for n in "abc"))
        r.clock.advance(0.25)
    assert levels == [(1, 0, 1), (0, 1, 0), (1, 0, 1), (0, 1, 0)]
    r.panel.flash_tilt(False)
    assert [r.sim.lamp(n) for n in "abc"] == [0, 0, 0]


def test_a_group_pattern_takes_lamps_from_another(rig) -> None:
    r = rig({**LAMPS, "groups": {"win": ["a"]}})
    r.panel.attract()                   # over all three
    r.clock.advance(0.1)
    r.panel.flash_win(seconds=0.3)      # takes lamp a; b and c keep chasing
    r.clock.advance(0.1)                # t = 0.2: the chase is on b; the win flash shows a lit
    assert [r.sim.lamp(n) for n in "abc"] == [1.0, 1.0, 0.0]
    r.clock.advance(0.2)                # t = 0.4: the win flash is over; a shows its own look (off)
    assert [r.sim.lamp(n) for n in "abc"] == [0.0, 0.0, 1.0]
    r.clock.advance(0.1)                # t = 0.5: the chase goes on without a
    assert [r.sim.lamp(n) for n in "abc"] == [0.0, 0.0, 0.0]
    r.panel.stop()
    with pytest.raises(PanelError, match="no lamp group 'nope'"):
        r.panel.play("win", group="nope")
    with pytest.raises(PanelError, match="no lamp pattern 'sparkle'"):
        r.panel.play("sparkle")


def test_pwm_lamps_breathe_and_dim(rig) -> None:
    r = rig({"lamps": {"spin": {"pin": 18, "pwm": True, "brightness": 0.5}, "plain": 12}})
    spin, plain = r.pins("lamps.spin", "lamps.plain")
    r.panel.light("spin", "pulse")
    r.panel.light("plain", "pulse")  # no PWM: lit while the breath is above half
    r.clock.advance(2.0)
    up = [round((i + 0.5) / 10 * 0.5, 6) for i in range(10)]
    # up for a second in ten steps, down for a second (the top step lasts two: no change at the turn)
    assert [state for _, state in timeline(spin)] == [0.0] + up + up[::-1][1:]
    assert [dt for dt, _ in timeline(spin)[1:]] == [0.0] + [0.1] * 9 + [0.2] + [0.1] * 8
    assert timeline(plain) == [(0.0, F), (0.5, T), (1.0, F)]
    r.panel.light("spin", "on")
    assert r.sim.lamp("spin") == 0.5
    r.panel.set_brightness("spin", 0.25)
    assert r.sim.lamp("spin") == 0.25 and r.panel.lamp_level("spin") == 0.25
    with pytest.raises(PanelError, match="lamp plain is not wired for PWM"):
        r.panel.set_brightness("plain", 0.5)
    with pytest.raises(PanelError, match="outside 0..1"):
        r.panel.set_brightness("spin", 2)


def test_tower_light_conditions_by_priority(rig) -> None:
    r = rig({"tower": {"tiers": {"top": 26, "bottom": 27}}})
    tower = r.panel.tower_light

    def looks() -> tuple[str, str]:
        return tuple(r.panel._tiers[tier][1].look.pattern.name for tier in ("top", "bottom"))

    assert looks() == ("off", "off")
    tower("service")
    assert looks() == ("on", "off")
    tower("door_open")
    assert looks() == ("on", "blink")          # both shown: they use different tiers
    tower("hand_pay")
    assert looks() == ("slow_blink", "slow_blink")
    tower("tilt")
    assert looks() == ("flash", "flash_alt")
    for _ in range(6):
        assert r.sim.lamp("top") != r.sim.lamp("bottom")  # a tilt flashes the tiers in turn
        r.clock.advance(0.1)
    tower("tilt", False)
    tower("hand_pay", False)
    assert looks() == ("on", "blink")
    tower("service", False)
    tower("door_open", False)
    assert looks() == ("off", "off") and r.panel.tower_conditions == frozenset()
    with pytest.raises(PanelError, match="no condition 'party'"):
        tower("party")


def test_tower_conditions_from_the_pin_map(rig) -> None:
    r = rig({"tower": {"tiers": {"red": 24, "amber": 25, "green": 26},
                       "conditions": {"fault": {"red": "fast_blink"}, "open": {"green": "on"}}}})
    r.panel.tower_light("open")
    assert (r.sim.lamp("red"), r.sim.lamp("amber"), r.sim.lamp("green")) == (0.0, 0.0, 1.0)
    r.panel.tower_light("fault")
    assert r.sim.lamp("red") == 1.0
    r.clock.advance(0.25)
    assert r.sim.lamp("red") == 0.0 and r.sim.lamp("green") == 1.0


def test_no_tower_light(rig) -> None:
    r = rig(LAMPS)
    with pytest.raises(PanelError, match="no tower light"):
        r.panel.tower_light("service")


def test_meter_pulses_are_queued_and_timed(rig) -> None:
    r = rig({"outputs": {"meter_coin_in": {"pin": 22, "pulse": 0.05, "gap": 0.05}, "hopper_motor": 17}})
    [pin] = r.pins("outputs.meter_coin_in")
    r.panel.pulse_output("meter_coin_in", 2)
    r.clock.advance(0.06)
    r.panel.pulse_output("meter_coin_in")     # queued behind the two
    assert r.panel.pending_pulses("meter_coin_in") == 3
    r.clock.advance(1)
    assert timeline(pin) == [(0.0, F), (0.0, T), (0.05, F), (0.05, T), (0.05, F), (0.05, T), (0.05, F)]
    assert r.panel.pending_pulses("meter_coin_in") == 0
    r.panel.set_output("hopper_motor", True)
    assert r.sim.lamp("hopper_motor") == 1.0
    r.panel.set_output("hopper_motor", False)
    assert r.sim.lamp("hopper_motor") == 0.0
    with pytest.raises(PanelError, match="not positive"):
        r.panel.pulse_output("meter_coin_in", 0)
    with pytest.raises(PanelError, match="no output named 'bell'"):
        r.panel.set_output("bell", True)


def test_active_low_outputs(rig) -> None:
    r = rig({"lamps": {"a": {"pin": 12, "active": "low"}}})
    pin = r.sim.pin("lamps.a")
    assert pin.state is True  # dark: the line idles high
    r.panel.light("a", "on")
    assert pin.state is False and r.sim.lamp("a") == 1.0


def test_closing_turns_everything_off(rig) -> None:
    r = rig({**LAMPS, "outputs": {"hopper_motor": 17}})
    r.panel.light("a", "blink")
    r.panel.set_output("hopper_motor", True)
    pins = [r.sim.pin("lamps.a"), r.sim.pin("outputs.hopper_motor")]
    r.panel.close()
    assert [pin.state for pin in pins] == [False, False]
    r.clock.advance(5)  # no timer of the closed panel fires
    assert r.clock.pending == 0
