"""Pin maps: the example maps load and match their wiring tables; every mistake gets an error naming the key."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from drivers.panel.config import (DEFAULT_TOWER_CONDITIONS, HEADER, PanelConfigError, load_panel_config,
                                  panel_config_from_mapping, parse_pin, wiring_markdown)

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "deploy/config/panel-blackjack-7spot.toml"
CABINET = ROOT / "deploy/config/panel-cabinet-3reel.toml"
MECHANICAL = ROOT / "deploy/config/panel-cabinet-3reel-mechanical.toml"
WIRING = ROOT / "deploy/config/panel-wiring.md"


def test_the_blackjack_table_map() -> None:
    config = load_panel_config(TABLE)
    assert config.name == "7-spot blackjack table" and config.driver == "gpio" and config.source == str(TABLE)
    bets = [b for b in config.buttons if b.role == "bet"]
    assert [b.spot for b in bets] == [1, 2, 3, 4, 5, 6, 7]
    assert {b.name for b in config.buttons if b.spot is None} == {"deal", "confirm", "void", "shuffle", "next"}
    assert next(b for b in config.buttons if b.name == "void").hold == 2.0
    assert sorted(lamp.spot for lamp in config.lamps) == [1, 2, 3, 4, 5, 6, 7]
    assert config.displays and config.displays.bus == "spi0" and len(config.displays.displays) == 8
    assert [d.spot for d in config.displays.displays] == [None, 1, 2, 3, 4, 5, 6, 7]
    assert config.displays.displays[0].intensity == 4 and config.displays.displays[1].intensity == 8
    assert config.group("attract") == tuple(f"spot{i}_bet" for i in range(1, 8))
    assert config.simulated().driver == "sim"


def test_the_cabinet_map() -> None:
    config = load_panel_config(CABINET)
    assert {d.name for d in config.doors} == {"main", "logic", "cash_box"}
    assert [s.name for s in config.switches if s.kind == "switch"] == ["reset_key"]
    assert {p.name for p in config.pulses} == {"coin_in", "coin_out"}
    assert {o.name for o in config.outputs} == {"hopper_motor", "meter_coin_in"}
    assert config.tower and [t.name for t in config.tower.tiers] == ["top", "bottom"]
    assert config.tower.conditions == DEFAULT_TOWER_CONDITIONS
    assert config.displays and config.displays.bus is None  # bit-banged
    assert [(d.name, d.digits) for d in config.displays.displays] == [("credit", 8), ("bet", 4), ("win", 8),
                                                                      ("progressive", 8), ("feature", 4),
                                                                      ("feature_lamps", 8)]
    spin = next(lamp for lamp in config.lamps if lamp.name == "spin")
    assert spin.pwm and spin.brightness == 0.8
    assert config.reserve == ()


@pytest.mark.parametrize("path", [TABLE, CABINET, MECHANICAL], ids=["table", "cabinet", "mechanical"])
def test_the_wiring_document_matches_the_maps(path: Path) -> None:
    # The wiring tables in panel-wiring.md are generated from the maps; this keeps them from drifting apart.
    assert wiring_markdown(load_panel_config(path)) in WIRING.read_text()


@pytest.mark.parametrize("path", [TABLE, CABINET, MECHANICAL], ids=["table", "cabinet", "mechanical"])
def test_outputs_are_on_pins_that_boot_low(path: Path) -> None:
    # GPIO0..8 are pulled high while the Pi boots: an active-high output there would run a hopper or light a
    # lamp before Croupier starts (and an active-low stepper enable belongs there, so the motors stay off).
    config = load_panel_config(path)
    outputs = list(config.lamps) + list(config.outputs) + (list(config.tower.tiers) if config.tower else [])
    assert all(o.pin >= 9 for o in outputs if o.active_high)
    if config.reels:
        assert all(r.step >= 9 and r.dir >= 9 for r in config.reels.reels)
        assert config.reels.enable_active_high or all(r.enable <= 8 for r in config.reels.reels)


def test_pins_by_any_name() -> None:
    assert parse_pin(17, "k") == parse_pin("GPIO17", "k") == parse_pin("bcm17", "k") == parse_pin("17", "k") == 17
    assert parse_pin("BOARD11", "k") == parse_pin("J8:11", "k") == 17
    for physical, what in HEADER.items():  # the whole header
        if isinstance(what, int):
            assert parse_pin(f"BOARD{physical}", "k") == what
        else:
            with pytest.raises(PanelConfigError, match=f"BOARD{physical} is {what}, not a GPIO"):
                parse_pin(f"BOARD{physical}", "k")
    assert sorted(w for w in HEADER.values() if isinstance(w, int)) == list(range(28))


def error(mapping: dict) -> str:
    with pytest.raises(PanelConfigError) as info:
        panel_config_from_mapping(mapping)
    return str(info.value)


@pytest.mark.parametrize("mapping, message", [
    ({"buttons": {"deal": 17, "spin": "GPIO17"}},
     "panel: GPIO17 (pin 11) is used by both buttons.deal and buttons.spin"),
    ({"buttons": {"deal": 17}, "lamps": {"deal": "BOARD11"}},
     "panel: GPIO17 (pin 11) is used by both buttons.deal and lamps.deal"),
    ({"buttons": {"deal": 28}}, "panel.buttons.deal.pin: GPIO28 does not exist on the board (GPIO0..GPIO27)"),
    ({"buttons": {"deal": "BOARD41"}}, "panel.buttons.deal.pin: BOARD41 does not exist on the board"),
    ({"buttons": {"deal": "BOARD2"}}, "panel.buttons.deal.pin: BOARD2 is 5V power, not a GPIO"),
    ({"buttons": {"deal": "SDA"}}, "panel.buttons.deal.pin: 'SDA' is not a pin name"),
    ({"buttons": {"deal": True}}, "panel.buttons.deal.pin: a pin is a GPIO number"),
    ({"buttons": {"deal": 14}}, "panel: buttons.deal is on GPIO14 (pin 8), which is reserved for the serial UART (TXD)"),
    ({"buttons": {"deal": 0}}, "reserved for the HAT ID EEPROM (ID_SD)"),
    ({"reserve": ["i2c"], "lamps": {"a": 3}}, "lamps.a is on GPIO3 (pin 5), which is reserved for I2C (SCL)"),
    ({"buttons": {"deal": 9}, "displays": {"chain": ["credit"]}},
     "buttons.deal is on GPIO9 (pin 21), which is reserved for SPI0 (MISO)"),
    ({"buttons": {"deal": {"hold": 2}}}, "panel.buttons.deal: has no pin"),
    ({"displays": {"chain": []}}, "panel.displays.chain: has no displays"),
    ({"displays": {"bus": {"clock": 20, "data": 21}, "chain": ["a"]}}, "panel.displays.bus: has no select pin"),
    ({"displays": {"bus": "spi1", "chain": ["a"]}}, "panel.displays.bus: 'spi1' is not"),
    ({"displays": {"chain": ["a", {"digits": 4}]}}, "panel.displays.chain[1]: a display needs a name"),
    ({"displays": {"chain": [{"name": "a", "digits": 9}]}}, "panel.displays.chain[0].digits: 9 is outside 1..8"),
    ({"tower": {}}, "panel.tower: has no pins"),
    ({"tower": {"tiers": {"red": 20, "green": 21}}}, "tiers are green, red; the default conditions are for tiers"),
    ({"tower": {"tiers": {"top": 20}, "conditions": {"tilt": {"bottom": "flash"}}}},
     "panel.tower.conditions.tilt.bottom: the tower has no tier 'bottom'"),
    ({"tower": {"tiers": {"top": 20}, "conditions": {"tilt": {"top": "sparkle"}}}},
     "panel.tower.conditions.tilt.top: 'sparkle' is not one of"),
    ({"buttons": {"deal": {"pin": 17, "bounse": 0.01}}}, "panel.buttons.deal: unknown key 'bounse'"),
    ({"buttonz": {}}, "panel: unknown key 'buttonz'"),
    ({"driver": "lgpio"}, "panel.driver: 'lgpio' is not one of gpio, sim"),
    ({"reserve": "uart"}, "panel.reserve: expected a list"),
    ({"buttons": {"Deal": 17}}, "panel.buttons.Deal: 'Deal' is not a device name"),
    ({"buttons": {"deal": {"pin": 17, "bounce": -1}}}, "panel.buttons.deal.bounce: -1 is outside 0.0..1.0"),
    ({"buttons": {"deal": {"pin": 17, "hold": "long"}}}, "panel.buttons.deal.hold: expected a number, got 'long'"),
    ({"buttons": {"deal": {"pin": 17, "hold": 5, "stuck": 4}}}, "stuck (4.0s) must be longer than hold (5.0s)"),
    ({"buttons": {"deal": {"pin": 17, "pull": "sideways"}}}, "panel.buttons.deal.pull: 'sideways' is not one of"),
    ({"buttons": {"spot0_bet": 17}}, "panel.buttons.spot0_bet: spot 0 is outside 1..99"),
    ({"buttons": {"main": 17}, "doors": {"main": 18}},
     "panel: input name 'main' is used by both buttons.main and doors.main"),
    ({"lamps": {"bell": 17}, "outputs": {"bell": 18}}, "output name 'bell' is used by both lamps.bell and outputs.bell"),
    ({"pulses": {"coin": {"pin": 17, "min_width": 0.2}}}, "panel.pulses.coin: needs glitch < min_width < max_width"),
    ({"lamps": {"a": {"pin": 17, "brightness": 0.5}}}, "panel.lamps.a.brightness: only a PWM lamp can be dimmed"),
    ({"lamps": {"a": 17}, "groups": {"attract": ["a", "b"]}}, "panel.groups.attract: no lamp named 'b'"),
    ({"lamps": {"a": 17}, "groups": {"attract": []}}, "panel.groups.attract: expected a list of lamp names"),
])
def test_mistakes_are_named(mapping: dict, message: str) -> None:
    assert message in error(mapping)


def test_spot_and_role_come_from_the_name_or_the_keys() -> None:
    config = panel_config_from_mapping({"buttons": {"spot12_double_down": 17, "hit": {"pin": 18, "spot": 2},
                                                    "x1": {"pin": 19, "role": "insurance", "spot": 4}}})
    assert [(b.spot, b.role) for b in config.buttons] == [(12, "double_down"), (2, "hit"), (4, "insurance")]


def test_reading_files(tmp_path: Path) -> None:
    with pytest.raises(PanelConfigError, match="cannot read"):
        load_panel_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[panel\n")
    with pytest.raises(PanelConfigError, match="not valid TOML"):
        load_panel_config(bad)
    other = tmp_path / "other.toml"
    other.write_text("[shoe]\nport = '/dev/ttyAMA0'\n")
    with pytest.raises(PanelConfigError, match=re.escape(f"{other}: no [panel] section")):
        load_panel_config(other)
    whole = tmp_path / "table.toml"
    whole.write_text("[shoe]\nport = 'x'\n\n[panel]\ndriver = 'sim'\n[panel.buttons]\ndeal = 17\n")
    assert load_panel_config(whole).buttons[0].name == "deal"


def test_an_empty_panel_is_valid() -> None:
    config = panel_config_from_mapping({})
    assert config.buttons == () and config.displays is None and config.tower is None and config.group("all") == ()
