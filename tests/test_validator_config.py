"""The cabinet's [validator] section: its shape, its defaults, and one clear error naming the key for bad input."""

from __future__ import annotations

import pytest

from controller.config import ConfigError
from drivers.validator.config import ValidatorConfig, validator_config

W = "cabinet.toml[validator]"


def test_defaults_and_values() -> None:
    assert validator_config({}, W) == ValidatorConfig("none", (100, 200, 500, 1000, 2000, 5000, 10000), "USD")
    cfg = validator_config({"port": "sim", "notes": [2000, 100, 500], "country": "USD"}, W)
    assert cfg == ValidatorConfig("sim", (100, 500, 2000), "USD") and cfg.simulated and cfg.on
    assert validator_config({"port": "/dev/ttyUSB0"}, W).port == "/dev/ttyUSB0"
    assert validator_config({"port": "socket://127.0.0.1:7001", "country": "EUR"}, W).notes[-1] == 20000
    assert not validator_config({"port": "none"}, W).on


@pytest.mark.parametrize("mapping,message", [
    ({"port": 3}, "cabinet.toml[validator].port: expected text"),
    ({"port": ""}, "cabinet.toml[validator].port: expected \"sim\""),
    ({"country": "XYZ"}, "cabinet.toml[validator].country: no ID-003 note table for 'XYZ'"),
    ({"notes": 100}, "cabinet.toml[validator].notes: expected a list"),
    ({"notes": [100, "5"]}, "cabinet.toml[validator].notes[1]: expected a whole number of cents"),
    ({"notes": [True]}, "cabinet.toml[validator].notes[0]: expected a whole number of cents"),
    ({"notes": [300]}, "cabinet.toml[validator].notes[0]: 300 cents is not a USD note"),
    ({"notes": [100, 100]}, "cabinet.toml[validator].notes: a note is listed twice"),
    ({"country": "EUR", "notes": [100]}, "cabinet.toml[validator].notes[0]: 100 cents is not a EUR note"),
    ({"prot": "sim"}, "cabinet.toml[validator].prot: unknown key"),
])
def test_bad_input_names_the_key(mapping: dict, message: str) -> None:
    with pytest.raises(ConfigError) as err:
        validator_config(mapping, W)
    assert str(err.value).startswith(message), str(err.value)
    assert "\n" not in str(err.value)
