"""Mechanical reels on simulated pins: turning to the chosen stops, the optical index check, mis-index, and their pin map."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from drivers.panel import PanelConfigError, PanelError, panel_config_from_mapping, wiring_markdown
from drivers.panel.reels import stop_position

REELS = {"stops": 22, "steps": 200, "rate": 400, "offset": 3, "dir": 20, "enable": 21,
         "reel": [{"step": 12, "home": 2}, {"step": 13, "home": 3}, {"step": 16, "home": 4}]}


def spin(rig: Any, stops: tuple[int, ...], seconds: float = 10.0) -> list[str | None]:
    done: list[list[str | None]] = []
    rig.panel.spin_reels(stops, done.append)
    rig.clock.advance(seconds)
    assert len(done) == 1, "the reels did not come to rest"
    return done[0]


def positions(rig: Any) -> list[tuple[int, bool]]:
    return [(rig.sim.reel(i).stop, rig.sim.reel(i).centred) for i in range(3)]


def test_the_reels_stop_left_to_right_on_the_chosen_stops(rig: Callable[..., Any]) -> None:
    r = rig({"reels": REELS})
    assert r.panel.reels == 3
    done: list[list[str | None]] = []
    r.panel.spin_reels((5, 0, 21), done.append)
    stopped_at: list[float | None] = [None, None, None]
    for _ in range(4000):  # watch each reel come to rest, 2.5 ms at a time
        r.clock.advance(0.0025)
        for i in range(3):
            if stopped_at[i] is None and r.panel.reel_status()[i]["position"] == stop_position(r.panel.config.reels,
                                                                                             (5, 0, 21)[i]) \
                    and not r.panel._reels.reels[i].remaining:
                stopped_at[i] = r.clock.now()
        if done:
            break
    assert done == [[None, None, None]]
    assert positions(r) == [(5, True), (0, True), (21, True)]
    assert stopped_at[0] < stopped_at[1] < stopped_at[2]  # type: ignore[operator]
    # each reel turned its whole turns first: at least one turn, then half a turn more per reel
    assert [r.sim.reel(i).steps_taken >= 200 * (1 + 0.5 * i) for i in range(3)] == [True] * 3
    status = r.panel.reel_status()
    assert [s["stop"] for s in status] == [5, 0, 21] and all(s["homed"] for s in status)


def test_every_stop_of_the_strip_is_reached_exactly(rig: Callable[..., Any]) -> None:
    r = rig({"reels": REELS})
    for stop in range(22):
        assert spin(r, (stop, (stop + 7) % 22, (21 - stop))) == [None] * 3
        assert positions(r) == [(stop, True), ((stop + 7) % 22, True), (21 - stop, True)]


def test_a_slip_within_half_a_symbol_is_corrected_at_the_index(rig: Callable[..., Any]) -> None:
    r = rig({"reels": REELS})
    spin(r, (1, 1, 1))
    half = 200 / 22 / 2  # 4.5 steps
    r.sim.reel(0).slip(4)
    r.sim.reel(2).slip(-4)
    assert spin(r, (9, 9, 9)) == [None] * 3
    assert positions(r) == [(9, True), (9, True), (9, True)]
    assert half > 4


@pytest.mark.parametrize("slip, words", [(5, "came 5 steps early"), (-6, "came 6 steps late"),
                                         (100, "came 100 steps")])
def test_a_reel_that_misses_its_index_by_more_than_half_a_symbol_is_a_mis_index(rig: Callable[..., Any], slip: int,
                                                                               words: str) -> None:
    r = rig({"reels": REELS})
    spin(r, (0, 0, 0))
    r.sim.reel(1).slip(slip)
    errors = spin(r, (3, 4, 5))
    assert errors[0] is None and errors[2] is None
    assert errors[1] is not None and "reel 2: mis-index" in errors[1] and words in errors[1]
    assert not r.panel.reel_status()[1]["homed"]
    # re-homing on the next spin puts it right
    assert spin(r, (3, 4, 5)) == [None] * 3 and positions(r) == [(3, True), (4, True), (5, True)]


def test_a_dead_sensor_is_a_mis_index_within_a_turn(rig: Callable[..., Any]) -> None:
    r = rig({"reels": REELS})
    spin(r, (0, 0, 0))
    r.sim.reel(2).sensor_dead = True
    r.sim.reel(2).slip(0)
    errors = spin(r, (1, 1, 1))
    assert errors[:2] == [None, None] and "no index in a whole turn" in (errors[2] or "")


def test_unhomed_reels_home_on_their_first_turn_and_the_drivers_are_disabled_at_close(rig: Callable[..., Any]) -> None:
    r = rig({"reels": REELS})
    assert not any(s["homed"] for s in r.panel.reel_status())
    enable = r.sim.factory.pin(21)
    assert enable.state == 1  # EN is active low: the drivers stay off (high) until a move
    assert not r.panel.reels_busy
    homed: list[list[str | None]] = []
    r.panel.home_reels(homed.append)
    r.clock.advance(5)
    assert homed == [[None] * 3] and all(s["homed"] for s in r.panel.reel_status())
    assert [r.sim.reel(i).position for i in range(3)] == [0, 0, 0]
    with pytest.raises(PanelError, match="stops 0..21"):
        r.panel.spin_reels((0, 22, 0), lambda e: None)
    assert enable.state == 0  # EN (active low) on while the reels hold their stops
    r.panel.spin_reels((1, 1, 1), lambda e: None)
    with pytest.raises(PanelError, match="already turning"):
        r.panel.spin_reels((1, 1, 1), lambda e: None)
    r.panel.close()
    assert enable.state == 1  # the drivers are off


def test_a_panel_without_reels_says_so(rig: Callable[..., Any]) -> None:
    r = rig({"lamps": {"a": 17}})
    assert r.panel.reels == 0
    with pytest.raises(PanelError, match=r"no mechanical reels"):
        r.panel.spin_reels((0, 0, 0), lambda e: None)


def test_meter_lamps_on_a_max7219(rig: Callable[..., Any]) -> None:
    r = rig({"displays": {"bus": {"clock": 21, "data": 20, "select": 16}, "chain": [{"name": "bar", "digits": 2}]}})
    r.panel.show_lamps("bar", 10)
    assert r.sim.display("bar").cells == [0xFF, 0x60]  # digit 1 all 8 lamps, digit 2 segments A and B
    r.panel.show_lamps("bar", 0)
    assert r.sim.display("bar").cells == [0, 0]
    with pytest.raises(PanelError, match="cannot light 17"):
        r.panel.show_lamps("bar", 17)


@pytest.mark.parametrize("change, message", [
    ({"reel": []}, "list the reels"),
    ({"reel": [{"step": 12}]}, "has no home pin"),
    ({"dir": None}, "has no dir pin"),
    ({"steps": 30}, "cannot place 22 stops"),
    ({"rate": 0}, "outside"),
    ({"reel": [{"step": 12, "home": 2}, {"step": 12, "home": 3}]}, "used by both"),
    ({"reel": [{"step": 12, "home": 2, "dir": 13}, {"step": 13, "home": 3}]}, "used by both"),
    ({"colour": "red"}, "unknown key 'colour'"),
])
def test_reel_pin_map_errors_name_the_key(change: dict[str, Any], message: str) -> None:
    reels = {k: v for k, v in {**REELS, **change}.items() if v is not None}
    with pytest.raises(PanelConfigError, match=message):
        panel_config_from_mapping({"reels": reels})


def test_shared_dir_and_enable_lines_are_one_wire_each() -> None:
    text = wiring_markdown(panel_config_from_mapping({"reels": REELS}))
    assert text.count("reels.dir") == 1 and text.count("reels.enable") == 1
    assert "reels.reel3.step" in text and "reels.reel1.home" in text and "EN (active low)" in text
