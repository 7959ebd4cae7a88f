"""The one config reader (drivers/configreader.py): each key read is recorded, a key nobody read is refused naming
section.key, in every config (table, cabinet, link, [screens], [sas], [floor], the pin map)."""

from __future__ import annotations

import copy
import dataclasses
import re
from pathlib import Path
from typing import Any, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.config import ConfigError, any_config_from_mapping
from controller.games import get_game
from controller.screens.config import screens_config
from drivers.configreader import Listed, Section
from drivers.panel import PanelConfigError, panel_config_from_mapping


def test_a_key_read_is_known_and_a_key_left_unread_is_refused_as_section_key() -> None:
    s = Section({"port": "sim", "decks": 6, "colour": "red", "zoom": 2}, "t.toml[shoe]")
    assert s.get("port", str, "none") == "sim" and s.get("decks", int, 1) == 6 and s.get("cut", int) is None
    with pytest.raises(ConfigError) as info:
        s.done()
    assert str(info.value) == "t.toml[shoe].colour: unknown key (and zoom; known: cut, decks, port)"


def test_a_value_of_the_wrong_kind_is_refused_naming_the_key() -> None:
    s = Section({"hwm": True, "fps": "fast", "creds": 3}, "t.toml[bus]")
    with pytest.raises(ConfigError, match=r"^t\.toml\[bus\]\.hwm: expected a whole number, got True$"):
        s.get("hwm", int)  # true is not a number
    with pytest.raises(ConfigError, match=r"^t\.toml\[bus\]\.fps: expected a whole number or a number, got 'fast'$"):
        s.get("fps", (int, float))
    with pytest.raises(ConfigError, match=r"^t\.toml\[bus\]\.creds: expected a file name, got 3$"):
        s.get("creds", str, what="a file name")


def test_a_root_names_its_sections_and_a_listed_section_lists_its_unknown_keys() -> None:
    root = Section({"table": {"id": "t1"}, "extra": {}}, "t.toml", root=True)
    table = root.section("table")
    assert table.where == "t.toml[table]" and table.get("id", str) == "t1"
    with pytest.raises(ConfigError, match=r"^t\.toml\[extra\]: unknown key \(known: table\)$"):
        root.done()
    with pytest.raises(ConfigError, match=r"^t\.toml\[table\]: expected a table$"):
        Section({"table": 3}, "t.toml", root=True).section("table")
    floor = Listed({"servers": [], "server": 1, "subjet": 2}, "t.toml[floor]")
    floor.value("servers")
    with pytest.raises(ConfigError, match=r"^t\.toml\[floor\]: unknown key\(s\) server, subjet \(known: servers\)$"):
        floor.done()


def test_names_asked_about_skipped_or_iterated_are_read() -> None:
    s = Section({"journal": "j", "state_dir": "s", "screens": {}, "buttons": {"spin": "spin"}}, "c")
    assert s.has("journal") and not s.has("title")
    s.skip("screens", "state_dir")
    assert dict(s.section("buttons").items()) == {"spin": "spin"}
    s.done()
    assert s.read == {"journal", "title", "screens", "state_dir", "buttons"}


@pytest.mark.parametrize("screens", [3, "x", [1]])
def test_a_screens_section_that_is_not_a_table_is_a_config_error(tmp_path: Path, screens: Any) -> None:
    # it was a bare TypeError or ValueError (a traceback from `croupier screens`)
    cfg = any_config_from_mapping({"table": {"id": "t1", "game": "baccarat"}, "screens": screens}, tmp_path / "t.toml")
    with pytest.raises(ConfigError, match=rf"^{re.escape(str(tmp_path / 't.toml'))}\[screens\]: expected a table$"):
        screens_config(cfg)


def test_a_pin_map_file_with_another_key_names_that_key(tmp_path: Path) -> None:
    # it was read as an inline pin map, whose error named `file` (or, with no file behind it, nothing at all)
    (tmp_path / "pins.toml").write_text(PINS)
    data = {"table": {"id": "t1", "game": "baccarat"}, "panel": {"file": "pins.toml", "drivr": "sim"}}
    with pytest.raises(ConfigError, match=r"\[panel\]\.drivr: unknown key \(known: driver, file\)$"):
        any_config_from_mapping(data, tmp_path / "t.toml")
    with pytest.raises(ConfigError, match=r"^config\[panel\]\.drivr: unknown key"):
        any_config_from_mapping(data)


# -- any unknown key at any table of a valid config is refused, naming section.key ----------------------------------

PINS = """[panel]
name = "test"
[panel.buttons]
deal = { pin = 17, hold = 2 }
spin = 4
[panel.doors]
main = 6
[panel.lamps]
bell = 18
"""

TABLE: dict[str, Any] = {
    "table": {"id": "t1", "game": "blackjack", "state_dir": "s", "betting_seconds": 20},
    "rules": {"decks": 6},
    "shoe": {"port": "sim", "decks": 6},
    "camera": {"source": "sim", "fps": 4.0},
    "panel": {"file": "pins.toml", "driver": "sim"},
    "bus": {"keys": "keys", "heartbeat": 1.0, "client": [{"key": "dealer.key", "role": "dealer"}]},
    "screens": {"listen": "127.0.0.1:8080", "four_colour": True},
    "floor": {"servers": ["nats://a:4222"]},
}
CABINET: dict[str, Any] = {
    "cabinet": {"id": "c1", "title": "light-speed", "journal": "c1.journal", "coin_cents": 25,
                "buttons": {"help": "none"}, "displays": {"credit": "credit"},
                "progressive": {"link": "l1", "publish": "tcp://10.0.7.1:5560", "snapshot": "tcp://10.0.7.1:5561",
                                "commands": "tcp://10.0.7.1:5562", "heartbeat": 1.0}},
    "bus": {"publish": "tcp://127.0.0.1:5570"},
    "screens": {"listen": "127.0.0.1:8081"},
    "sas": {"port": "/dev/ttyUSB0", "address": 3},
    "floor": {"servers": ["nats://a:4222"], "subject": "croupier.journal.c1"},
}
LINK: dict[str, Any] = {
    "progressive": {"id": "l1", "title": "light-speed", "state_dir": "s"},
    "bus": {"heartbeat": 2.0},
    "floor": {"servers": ["tls://a:4222"]},
}
PIN_MAP: dict[str, Any] = {
    "name": "all of it", "reserve": ["uart"], "bounce": 0.02,
    "buttons": {"deal": {"pin": 17, "hold": 2}, "spot1_bet": 4},
    "doors": {"main": {"pin": 6, "pull": "up"}}, "switches": {"reset_key": 10},
    "pulses": {"coin_in": {"pin": 24, "min_width": 0.03, "max_width": 0.07}},
    "lamps": {"spin": {"pin": 18, "pwm": True, "brightness": 0.8}, "bell": 23},
    "outputs": {"hopper": {"pin": 5, "pulse": 0.1}},
    "tower": {"tiers": {"top": 26, "bottom": {"pin": 27}}, "conditions": {"tilt": {"top": "flash"}}},
    "groups": {"attract": ["spin", "bell"]},
    "displays": {"bus": {"clock": 21, "data": 20, "select": 16}, "chain": ["credit", {"name": "bet", "digits": 4}]},
    "reels": {"stops": 22, "dir": 22, "enable": 8, "reel": [{"step": 12, "home": 11}, {"step": 13, "home": 19}]},
}
P = "/floor/t.toml"  # the file the config is read from; replaced by a real folder below


def _tables(node: Any, where: str) -> Iterator[tuple[tuple[Any, ...], str]]:
    """(path, how errors name it) for every table below a section, the section included."""
    yield (), where
    for key, value in node.items():
        name = f"{where}.{key}"
        if isinstance(value, dict):
            for path, named in _tables(value, name):
                yield (key, *path), named
        elif isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, dict):
                    for path, named in _tables(item, f"{name}[{i}]"):
                        yield (key, i, *path), named


def _config_tables(data: dict[str, Any]) -> list[tuple[tuple[Any, ...], str]]:
    out = [((), P)]
    for section, value in data.items():
        if section == "bus":  # [[bus.client]] entries are named on their own
            out.append((("bus",), f"{P}[bus]"))
            out += [(("bus", "client", i), f"{P}[[bus.client]] #{i + 1}") for i in range(len(value.get("client", [])))]
        else:
            out += [((section, *path), named) for path, named in _tables(value, f"{P}[{section}]")]
    return out


CASES = [("table", TABLE, path, named) for path, named in _config_tables(TABLE)] + \
        [("cabinet", CABINET, path, named) for path, named in _config_tables(CABINET)] + \
        [("link", LINK, path, named) for path, named in _config_tables(LINK)] + \
        [("pins", PIN_MAP, path, named) for path, named in _tables(PIN_MAP, "panel")]


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The config's folder: the pin map file, the bus's key folder, a client key."""
    base = tmp_path_factory.mktemp("config")
    (base / "pins.toml").write_text(PINS)
    (base / "keys").mkdir()
    (base / "keys" / "server.key_secret").write_text("x")
    (base / "keys" / "dealer.key").write_text("x")
    return base


def _load(kind: str, data: dict[str, Any], base: Path) -> None:
    if kind == "pins":
        panel_config_from_mapping(data)
        return
    cfg = any_config_from_mapping(data, base / "t.toml")
    if "screens" in data:
        screens_config(cfg)


def _named(message: str, where: str, key: str) -> bool:
    """The message names the table and the key: `where.key: ...`, or (the wording [floor], the game's [rules] and
    the pin map's tables have always had) `where: unknown key(s) key ...` / `where: unknown key 'key'`."""
    return (message.startswith((f"{where}.{key}", f"{where}[{key}]", f"{where}: unknown key {key!r}"))
            or (message.startswith(f"{where}: unknown key(s) ") and key in message.split(" (known")[0]))


@pytest.mark.parametrize("kind, data", [("table", TABLE), ("cabinet", CABINET), ("link", LINK), ("pins", PIN_MAP)])
def test_the_valid_configs_load(folder: Path, kind: str, data: dict[str, Any]) -> None:
    _load(kind, copy.deepcopy(data), folder)


# A list of neither names nor tables: no key takes it, and a table of names (buttons, tiers, groups) refuses it too.
@settings(max_examples=300, deadline=None)
@given(case=st.sampled_from(CASES), key=st.text(min_size=1, max_size=12),
       value=st.sampled_from([[1], [True], [[]], ["x", 2]]))
def test_any_unknown_key_at_any_table_is_refused_naming_section_key(folder: Path, case: tuple[Any, ...], key: str,
                                                                    value: Any) -> None:
    kind, valid, path, where = case
    data = copy.deepcopy(valid)
    node = data
    for step in path:
        node = node[step]
    if key in node or key in _KNOWN:
        return  # not an unknown key
    node[key] = value
    with pytest.raises((ConfigError, PanelConfigError)) as info:
        _load(kind, data, folder)
    assert _named(str(info.value).replace(str(folder / "t.toml"), P), where, key), (str(info.value), where, key)


# Every key any reader knows (recorded while the valid configs load): injecting one of them is not an unknown key.
_KNOWN: set[str] = set()


@pytest.fixture(scope="module", autouse=True)
def _known_keys(folder: Path) -> None:
    done = Section.done

    def recording(self: Section) -> None:
        _KNOWN.update(self.read)
        done(self)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Section, "done", recording)
        for kind, data in (("table", TABLE), ("cabinet", CABINET), ("link", LINK), ("pins", PIN_MAP)):
            _load(kind, copy.deepcopy(data), folder)
    _KNOWN.update(f.name for f in dataclasses.fields(get_game("blackjack").rules_type))  # [rules]: the game's own


def test_one_toml_file_reader_names_the_file_for_a_missing_unreadable_or_binary_file(tmp_path: Path) -> None:
    from controller.floor.service import ServiceConfigError, load_service_config
    from drivers.configreader import read_toml
    from drivers.panel import PanelConfigError, load_panel_config

    binary = tmp_path / "t.journal"
    binary.write_bytes(b"\x00\x9f\xff journal rows")
    bad = tmp_path / "bad.toml"
    bad.write_text("[panel\n")
    good = tmp_path / "good.toml"
    good.write_text("a = 1\n")
    assert read_toml(good, ValueError) == {"a": 1}
    with pytest.raises(KeyError, match=re.escape(f"{tmp_path / 'missing.toml'}: cannot read: No such file")):
        read_toml(tmp_path / "missing.toml", KeyError)
    with pytest.raises(PanelConfigError, match=re.escape(f"{binary}: not valid TOML: ")):
        load_panel_config(binary)  # it raised UnicodeDecodeError, a traceback, before
    with pytest.raises(PanelConfigError, match=re.escape(f"{bad}: not valid TOML: ")):
        load_panel_config(bad)
    with pytest.raises(ServiceConfigError, match=re.escape(f"{tmp_path}: cannot read: ")):
        load_service_config(tmp_path)  # a folder given for the file
