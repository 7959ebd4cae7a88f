"""Configs a new user or an audit got wrong (issue 43): each a one-line error naming the key, exit 2, no traceback."""

from __future__ import annotations

import math
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.cli import main
from controller.config import ConfigError, any_config_from_mapping, load_config
from tests.table_helpers import free_ports

ROOT = Path(__file__).resolve().parent.parent


def table_toml(tmp: Path, table: str = "", bus: str = "", shoe: str = 'port = "sim"', ident: str = "t1",
               ports: list[int] | None = None) -> Path:
    p1, p2, p3 = ports or free_ports(3)
    path = tmp / "table.toml"
    path.write_text(f'[table]\nid = "{ident}"\ngame = "baccarat"\nstate_dir = "state"\n{table}\n[shoe]\n{shoe}\n'
                    f'[bus]\npublish = "tcp://127.0.0.1:{p1}"\nsnapshot = "tcp://127.0.0.1:{p2}"\n'
                    f'commands = "tcp://127.0.0.1:{p3}"\n{bus}\n')
    return path


def cabinet_toml(tmp: Path, cabinet: str = "", extra: str = "") -> Path:
    p1, p2, p3 = free_ports(3)
    path = tmp / "cabinet.toml"
    path.write_text(f'[cabinet]\nid = "c1"\ntitle = "frozen-assets"\njournal = "c1.journal"\n{cabinet}\n{extra}\n'
                    f'[bus]\npublish = "tcp://127.0.0.1:{p1}"\nsnapshot = "tcp://127.0.0.1:{p2}"\n'
                    f'commands = "tcp://127.0.0.1:{p3}"\n')
    return path


def check_runnable(cfg: Any) -> None:
    from controller.config import check_runnable as check  # new with issue 43: imported here so the file loads on main

    check(cfg)


def refused(path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    """`croupier run` on the config: exit 2 and the one line it printed, before anything starts."""
    async def started(cfg: Any) -> None:
        raise AssertionError(f"{path} passed the checks and started")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("controller.commands.table.run.serve_runtime", started)
        assert main(["run", "--config", str(path), *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.strip()


# -- point 1 (config side) and point 12: nan and inf ----------------------------------------------------------------

@pytest.mark.parametrize("table, bus, key", [
    ("betting_seconds = inf", "", "[table].betting_seconds: inf"),
    ("betting_seconds = nan", "", "[table].betting_seconds: nan"),
    ("", "heartbeat = nan", "[bus].heartbeat: nan"),
    ("", "heartbeat = -inf", "[bus].heartbeat: -inf"),
    ("[camera]\nsource = \"sim\"\nfps = nan", "", "[camera].fps: nan"),
    ("[rules]\ncommission_percent = inf", "", "[rules].commission_percent: inf"),
])
def test_a_non_finite_number_in_a_table_config_is_refused_naming_the_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], table: str, bus: str, key: str) -> None:
    path = table_toml(tmp_path, table, bus)
    assert refused(path, capsys) == (f"croupier run: error: {path}{key} is not a finite number (nan and inf are "
                                     "refused)")


@pytest.mark.parametrize("cabinet, key", [
    ("spin_seconds = inf", "[cabinet].spin_seconds: inf"),
    ("hopper_timeout = nan", "[cabinet].hopper_timeout: nan"),
    ("attract_seconds = inf", "[cabinet].attract_seconds: inf"),
])
def test_a_non_finite_number_in_a_cabinet_config_is_refused_naming_the_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], cabinet: str, key: str) -> None:
    path = cabinet_toml(tmp_path, cabinet)
    assert refused(path, capsys, "--sim") == (f"croupier run: error: {path}{key} is not a finite number (nan and "
                                              "inf are refused)")


def test_a_non_finite_number_in_a_link_config_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "link.toml"
    path.write_text('[progressive]\nid = "l1"\nreset_cents = 500\n[bus]\nheartbeat = inf\n')
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}[bus].heartbeat: inf is not a finite number (nan and inf are refused)"


VALID: dict[str, Any] = {
    "table": {"id": "t1", "game": "blackjack", "state_dir": "s", "betting_seconds": 20},
    "rules": {"decks": 6, "limits": {"main": {"min": 10, "max": 1000}}},
    "shoe": {"port": "sim", "decks": 6},
    "camera": {"source": "sim", "fps": 4.0, "stable_frames": 3, "min_confidence": 0.9},
    "bus": {"heartbeat": 1.0, "hwm": 1000},
}


def _paths(node: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    if isinstance(node, dict):
        return [p for k, v in node.items() for p in _paths(v, (*path, k))]
    return [path]


@given(st.sampled_from(_paths(VALID)), st.sampled_from([math.inf, -math.inf, math.nan]))
def test_nan_or_inf_at_any_key_is_refused_naming_that_key(path: tuple[str, ...], bad: float) -> None:
    import copy

    data = copy.deepcopy(VALID)
    node = data
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = bad
    with pytest.raises(ConfigError) as info:
        any_config_from_mapping(data, Path("/nowhere/t.toml"))
    named = f"/nowhere/t.toml[{path[0]}]." + ".".join(path[1:])
    assert str(info.value) == f"{named}: {bad} is not a finite number (nan and inf are refused)"


# -- point 12: timing bounds, ids, endpoints, state_dir, a port clash ------------------------------------------------

@pytest.mark.parametrize("table, bus, message", [
    ("", "heartbeat = 1e-9", "[bus].heartbeat: 0.05 to 60 seconds, got 1e-09"),
    ("", "heartbeat = 3600", "[bus].heartbeat: 0.05 to 60 seconds, got 3600"),
    ("", "hwm = 0", "[bus].hwm: 1 to 1000000 messages, got 0"),
    ("betting_seconds = 0.001", "", "[table].betting_seconds: 0 (off) or 1 to 3600 seconds, got 0.001"),
    ("betting_seconds = -1", "", "[table].betting_seconds: 0 (off) or 1 to 3600 seconds, got -1"),
])
def test_timing_keys_have_sane_bounds(tmp_path: Path, table: str, bus: str, message: str) -> None:
    path = table_toml(tmp_path, table, bus)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}{message}"


@pytest.mark.parametrize("cabinet, message", [
    ("hopper_timeout = 0", "[cabinet].hopper_timeout: 0.1 to 60 seconds, got 0"),
    ("spin_seconds = 1e6", "[cabinet].spin_seconds: 0 to 30 seconds, got 1e+06"),
    ("attract_seconds = 1e-9", "[cabinet].attract_seconds: 0 (off) or 0.1 to 86400 seconds, got 1e-09"),
])
def test_cabinet_timing_keys_have_sane_bounds(tmp_path: Path, cabinet: str, message: str) -> None:
    path = cabinet_toml(tmp_path, cabinet)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}{message}"


def test_link_timing_keys_have_sane_bounds(tmp_path: Path) -> None:
    link = ('[cabinet.progressive]\nlink = "l1"\npublish = "tcp://127.0.0.1:1"\nsnapshot = "tcp://127.0.0.1:2"\n'
            'commands = "tcp://127.0.0.1:3"\n')
    path = cabinet_toml(tmp_path, extra=link + "heartbeat = 1e-9\n")
    path.write_text(path.read_text().replace('"frozen-assets"', '"light-speed"'))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}[cabinet].progressive.heartbeat: 0.05 to 60 seconds, got 1e-09"
    path.write_text(path.read_text().replace("heartbeat = 1e-9", "timeout = 0"))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}[cabinet].progressive.timeout: 0.05 to 60 seconds, got 0"


@pytest.mark.parametrize("ident, shown", [
    ("t\u0663", "'t\u0663'"),             # an Arabic-Indic three: isalnum() took it
    ("t\u00e9", "'t\u00e9'"),
    ("", "''"),
    ("a" * 300, f"{'a' * 40!r}... (300 characters)"),
])
def test_an_id_is_short_ascii(tmp_path: Path, capsys: pytest.CaptureFixture[str], ident: str, shown: str) -> None:
    path = table_toml(tmp_path, ident=ident)
    assert refused(path, capsys) == (f"croupier run: error: {path}[table].id: a table id is 1 to 64 ASCII letters, "
                                     f"digits, - and _ (got {shown})")


def test_an_id_of_64_characters_runs_the_check(tmp_path: Path) -> None:
    assert load_config(table_toml(tmp_path, ident="a" * 64)).table_id == "a" * 64


@pytest.mark.parametrize("endpoint", ["nonsense", "tcp://127.0.0.1:99999", "tcp://127.0.0.1", "tcp://:5550",
                                      "udp://127.0.0.1:5550", "tcp://127.0.0.1:\u0665\u0665\u0665"])
def test_a_bad_endpoint_is_refused_naming_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  endpoint: str) -> None:
    path = table_toml(tmp_path)
    path.write_text(path.read_text().replace(path.read_text().split('snapshot = "')[1].split('"')[0], endpoint))
    assert refused(path, capsys) == (f"croupier run: error: {path}[bus].snapshot: expected tcp://HOST:PORT (port "
                                     f"1..65535), ipc://PATH or inproc://NAME, got {endpoint!r}")


def test_two_bus_sockets_on_one_endpoint_are_refused(tmp_path: Path) -> None:
    path = table_toml(tmp_path, ports=[6001, 6002, 6001])
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (f"{path}[bus].commands: tcp://127.0.0.1:6001 is bound by another of the bus's sockets "
                               "already")


@pytest.mark.slow
def test_a_port_clash_is_a_clear_error(tmp_path: Path) -> None:
    ports = free_ports(3)
    path = table_toml(tmp_path, ports=ports)
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", ports[1]))
        holder.listen()
        out = subprocess.run([sys.executable, "-m", "controller.cli", "run", "--config", str(path)], cwd=ROOT,
                             capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr
    assert out.stderr.splitlines()[-1] == (f"croupier run: error: {path}[bus].snapshot: cannot bind "
                                           f"tcp://127.0.0.1:{ports[1]}: Address already in use (another program "
                                           "holds it?)")


def test_a_state_dir_that_is_a_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "state").write_text("not a folder")
    path = table_toml(tmp_path)
    assert refused(path, capsys) == (f"croupier run: error: {path}[table].state_dir: {tmp_path / 'state'} is a "
                                     "file, not a folder for the journal")
    path.write_text(path.read_text().replace('state_dir = "state"', 'state_dir = "state/deeper"'))
    assert refused(path, capsys) == (f"croupier run: error: {path}[table].state_dir: {tmp_path / 'state'} is a "
                                     "file, not a folder for the journal")


def test_a_journal_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "c1.journal").mkdir()
    path = cabinet_toml(tmp_path)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}[cabinet].journal: the journal {tmp_path / 'c1.journal'} is a folder"


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write to any folder")
def test_an_unwritable_state_dir_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "state").mkdir(mode=0o555)
    path = table_toml(tmp_path)
    assert refused(path, capsys) == (f"croupier run: error: {path}[table].state_dir: {tmp_path / 'state'} is not "
                                     "writable by this user")


def test_an_unwritable_state_dir_is_refused_by_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Root may write anywhere, so the refusal is also shown with os.access answering as a service user would.
    (tmp_path / "state").mkdir()
    cfg = load_config(table_toml(tmp_path))
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != tmp_path / "state")
    with pytest.raises(ConfigError) as info:
        check_runnable(cfg)
    assert str(info.value) == (f"{cfg.path}[table].state_dir: {tmp_path / 'state'} is not writable by this user")


# -- point 7: a seed outside simulation -------------------------------------------------------------------------------

def test_a_live_cabinet_refuses_a_seed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = cabinet_toml(tmp_path, "seed = 11")
    assert refused(path, capsys) == (f"croupier run: error: {path}[cabinet].seed: a seed is for simulation only "
                                     "(croupier run --sim, croupier demo); a live cabinet draws its stops from the "
                                     "system's random numbers")
    # --sim, or a pin map on simulated pins, is a simulation: the seed is honoured there
    check_runnable(load_config(path).simulated())
    sim_pins = f'[panel]\nfile = "{ROOT / "deploy/config/panel-cabinet-3reel.toml"}"\ndriver = "sim"\n'
    check_runnable(load_config(cabinet_toml(tmp_path, "seed = 11", sim_pins)))


def test_a_live_shoe_refuses_a_seed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = table_toml(tmp_path, shoe='port = "/dev/card-shoe"\nseed = 11')
    assert refused(path, capsys) == (f"croupier run: error: {path}[shoe].seed: a seed is for the simulated shoe "
                                     "only (port = \"sim\" or croupier run --sim); this shoe is /dev/card-shoe")
    check_runnable(load_config(path).simulated())
    check_runnable(load_config(table_toml(tmp_path, shoe='port = "sim"\nseed = 11')))


# -- point 15: croupier progressive ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_croupier_progressive_runs_the_example_link(tmp_path: Path) -> None:
    """`croupier progressive --config deploy/config/progressive-light-speed.toml` crashed on args.sim; run a copy of
    it (its own ports and state folder) until it says READY, then stop it as systemd would."""
    p1, p2, p3 = free_ports(3)
    text = (ROOT / "deploy/config/progressive-light-speed.toml").read_text()
    for old, new in (("5560", p1), ("5561", p2), ("5562", p3)):
        text = text.replace(old, str(new))
    path = tmp_path / "progressive-light-speed.toml"
    path.write_text(text)
    sock_path = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(str(sock_path))
        server.settimeout(60)
        proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "progressive", "--config", str(path)],
                                cwd=ROOT, env={**os.environ, "NOTIFY_SOCKET": str(sock_path)},
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            ready = server.recv(200).decode()
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(30) == 0, proc.stderr.read() if proc.stderr else ""
        finally:
            if proc.poll() is None:
                proc.kill()
    assert ready == "READY=1"
    assert (tmp_path / "state" / "ls-link.journal").is_file()


# -- point 18: panel-test on a table's or cabinet's config -----------------------------------------------------------

@pytest.mark.parametrize("config, pin_map", [("table-blackjack.toml", "panel-blackjack-7spot.toml"),
                                             ("cabinet-frozen-assets.toml", "panel-cabinet-3reel-mechanical.toml")])
def test_panel_test_takes_a_table_or_cabinet_config(capsys: pytest.CaptureFixture[str], config: str,
                                                    pin_map: str) -> None:
    from drivers.panel import load_panel_config, wiring_markdown

    deploy = ROOT / "deploy" / "config"
    assert main(["panel-test", "--config", str(deploy / config), "--wiring"]) == 0
    assert capsys.readouterr().out == (f"Wiring of {load_panel_config(deploy / pin_map).name}\n\n"
                                       f"{wiring_markdown(load_panel_config(deploy / pin_map))}")


def test_panel_test_runs_a_configs_simulated_pin_map(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    import io

    path = cabinet_toml(tmp_path, extra=f'[panel]\nfile = "{ROOT / "deploy/config/panel-cabinet-3reel.toml"}"\n'
                                        'driver = "sim"\n')
    monkeypatch.setattr("sys.stdin", io.StringIO("tap spin\nquit\n"))
    assert main(["panel-test", "--config", str(path), "--no-walk"]) == 0  # driver = "sim": no --sim needed
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("panel: 3-reel cabinet (simulated pins); 9 buttons")
    assert [line.split("s  ", 1)[1] for line in lines if line.startswith("input")] == ["spin button pressed",
                                                                                       "spin button released"]
    path.write_text(path.read_text().replace(str(ROOT / "deploy/config/"), "nowhere/"))
    assert main(["panel-test", "--config", str(path), "--sim"]) == 2
    missing = tmp_path / "nowhere/panel-cabinet-3reel.toml"
    assert capsys.readouterr().err == f"croupier panel-test: error: {path}[panel].file: no such file {missing}\n"


# -- point 24: what the README and the example configs promise -------------------------------------------------------

@pytest.mark.parametrize("config, folder, journal, ports", [
    ("table-blackjack.toml", "bj-check", "bj-1.journal", ("5550", "5551", "5552")),
    ("cabinet-light-speed.toml", "ls-check", "ls-7.journal", ("5570", "5571", "5572")),
])
@pytest.mark.slow
def test_the_live_examples_check_without_hardware_holds(tmp_path: Path, config: str, folder: str, journal: str,
                                                        ports: tuple[str, ...]) -> None:
    """table-blackjack.toml's (and cabinet-light-speed.toml's) "check it without hardware" failed without
    /etc/croupier/keys. The comment's commands are run as written (in a copy of deploy/config/, with /tmp/FOLDER
    moved into this test's folder and the bus on free ports) until the runtime says READY."""
    import re
    import shutil

    text = (ROOT / "deploy/config" / config).read_text()
    block = text.split("Check it without hardware, and without touching a live journal")[1]
    commands = re.findall(r"^#   (.*)$", block, flags=re.M)
    script = "\n".join(commands).replace("\\\n", " ").replace(f"/tmp/{folder}", str(tmp_path / folder))
    lines = [line for line in script.splitlines() if line.strip()]
    assert [line.split()[:2] for line in lines] == [["croupier", "keys"], ["sed", "-e"], ["croupier", "run"]]
    shutil.copytree(ROOT / "deploy" / "config", tmp_path / "deploy" / "config")
    free = free_ports(3)
    moved = "".join(f" -e 's|:{port}\"|:{new}\"|'" for port, new in zip(ports, free))  # free ports for the test
    lines[1] = lines[1].replace("sed ", "sed" + moved + " ", 1)
    croupier = f"{sys.executable} -m controller.cli"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for line in lines[:2]:
        subprocess.run(line.replace("croupier ", croupier + " ", 1), shell=True, cwd=tmp_path, env=env, check=True,
                       capture_output=True, timeout=60)
    sock_path = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(str(sock_path))
        server.settimeout(60)
        proc = subprocess.Popen(lines[2].replace("croupier ", croupier + " ", 1), shell=True, cwd=tmp_path,
                                env={**env, "NOTIFY_SOCKET": str(sock_path)}, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            ready = server.recv(200).decode()
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(30)
    assert ready == "READY=1"
    assert (tmp_path / folder / journal).is_file()


def test_the_baccarat_example_says_how_many_spots_the_table_has() -> None:
    cfg = load_config(ROOT / "deploy/config/table-baccarat.toml")
    first = (ROOT / "deploy/config/table-baccarat.toml").read_text().splitlines()[0]
    assert first.startswith(f"# A {cfg.rules.spots}-spot punto banco table") and cfg.rules.spots == 12


def test_math_red_dog_prints_the_edges_for_1_to_8_decks(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main(["math", "red-dog", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert list(report["by_decks"]) == [str(d) for d in range(1, 9)]
    assert main(["math", "red-dog"]) == 0
    out = capsys.readouterr().out
    by_decks = out.split("house edge by decks (the same rules, each with its best raises):\n")[1].splitlines()
    assert by_decks == [f"  {d + (' deck' if d == '1' else ' decks'):<28}{-edge * 100:>9.4f}%"
                        for d, edge in report["by_decks"].items()]
    assert "  ante                           2.7978%" in out  # six decks: the house's edge, positive


def test_math_lists_only_the_games_it_has_a_report_for(capsys: pytest.CaptureFixture[str]) -> None:
    reports = ("baccarat, blackjack, caribbean-stud, let-it-ride, pai-gow, red-dog, three-card-poker, "
               "trente-et-quarante")
    assert main(["math", "faro"]) == 2
    assert capsys.readouterr().err == f"croupier math: error: no math report for faro (math reports: {reports})\n"
    assert main(["math", "roulette"]) == 2
    assert capsys.readouterr().err == f"croupier math: error: unknown game 'roulette' (math reports: {reports})\n"


def test_a_bad_link_endpoint_and_link_id_are_refused(tmp_path: Path) -> None:
    link = ('[cabinet.progressive]\nlink = "l1"\npublish = "tcp://10.0.7.1:5560"\nsnapshot = "tcp://10.0.7.1"\n'
            'commands = "tcp://10.0.7.1:5562"\n')
    path = cabinet_toml(tmp_path, extra=link)
    path.write_text(path.read_text().replace('"frozen-assets"', '"light-speed"'))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (f"{path}[cabinet].progressive.snapshot: expected tcp://HOST:PORT (port 1..65535), "
                               "ipc://PATH or inproc://NAME, got 'tcp://10.0.7.1'")
    path.write_text(path.read_text().replace('"tcp://10.0.7.1"', '"tcp://10.0.7.1:5561"').replace('"l1"', '"l\u0661"'))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (f"{path}[cabinet].progressive.link: a link id is 1 to 64 ASCII letters, digits, - and _ "
                               "(got 'l\u0661')")


def test_a_link_controllers_journal_folder_is_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "state").write_text("a file")
    path = tmp_path / "link.toml"
    path.write_text('[progressive]\nid = "l1"\nreset_cents = 500\nstate_dir = "state/deeper"\n')
    assert main(["progressive", "--config", str(path)]) == 2
    assert capsys.readouterr().err == (f"croupier progressive: error: {path}[progressive].state_dir: "
                                       f"{tmp_path / 'state'} is a file, not a folder for the journal\n")
