"""`croupier sas-host` against `croupier demo --cabinet --sas-pty` and `croupier run --sim --sas-pty` (separate processes, as a technician would run them), and its one-line errors."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from controller.cli import main
from controller.sas import rom_image
from controller.slots import get_title
from drivers.sas import rom_crc16
from tests.cabinet_helpers import ROOT
from tests.table_helpers import bus_toml, free_ports, run_demo


def _wait_line(stream: Any, text: str, limit: int = 200) -> str:
    for _ in range(limit):
        line = stream.readline()
        if not line:
            break
        if text in line:
            return line
    raise AssertionError(f"never printed {text!r}")


@pytest.mark.slow
def test_sas_host_reads_meters_exceptions_and_rom_signature_from_the_demo_cabinet(tmp_path: Path,
                                                                                    capsys: Any) -> None:
    link = tmp_path / "sas"
    ports = [str(p) for p in free_ports(3)]
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "demo", "--cabinet", "frozen-assets",
                             "--sas-pty", str(link), "--no-screens", "--quiet", "--pace", "0.05", "--seed", "3",
                             "--dir", str(tmp_path / "state"), "--ports", *ports],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = _wait_line(proc.stdout, "SAS:")
        assert f"croupier sas-host {link}" in line and link.is_symlink()
        assert main(["sas-host", str(link), "--json", "--polls", "8", "--period", "0.01"]) == 0
        out = json.loads(capsys.readouterr().out)
    finally:
        proc.terminate()
        proc.wait(30)
    title = get_title("frozen-assets")
    image = rom_image([ROOT / "controller", ROOT / "drivers", ROOT / "vision"], extra=title.digest.encode())
    assert out["rom_signature"] == f"{rom_crc16(image):04X}" and out["rom_seed"] == "0000"
    assert out["machine"]["game_id"] == "FR" and out["sas_version"] == "602" and out["serial"] == "demo-frozen-assets"
    assert out["meters"]["power_resets"] == 1
    assert out["exceptions"][0] == {"code": "17", "name": "AC power applied"}
    assert out["line"]["retries"] == 0
    assert not link.exists()  # the link goes with the cabinet


@pytest.mark.slow
def test_croupier_run_sim_serves_the_configured_address_on_a_pty(tmp_path: Path, capsys: Any) -> None:
    link = tmp_path / "sas"
    config = tmp_path / "cab.toml"
    config.write_text(f"""
[cabinet]
id = "fa-9"
title = "frozen-assets"
journal = "{tmp_path / 'fa.journal'}"
spin_seconds = 0
[sas]
port = "/dev/serial/by-id/usb-not-here"
address = 9
asset_number = 1234
{bus_toml(None)}""")
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "run", "--config", str(config), "--sim",
                             "--sas-pty", str(link)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        _wait_line(proc.stderr, "self-authentication at power up")
        assert main(["sas-host", str(link), "--address", "9", "--json", "--polls", "2", "--period", "0"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert main(["sas-host", str(link), "--address", "3", "--timeout", "0.02"]) == 2  # nobody at 3
        assert "no answer from address 3" in capsys.readouterr().err
    finally:
        proc.terminate()
        proc.wait(30)
    assert out["address"] == 9 and out["serial"] == "fa-9" and out["exceptions"] == [
        {"code": "17", "name": "AC power applied"}]


@pytest.mark.parametrize("argv, error", [
    (["sas-host", "/nonexistent/tty"], "cannot open /nonexistent/tty"),
    (["sas-host", "/dev/null", "--address", "0"], "--address: 1..127"),
])
def test_sas_host_errors_are_one_line(argv: list[str], error: str, capsys: Any) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert error in err and len(err.strip().splitlines()) == 1


def test_sas_host_on_a_silent_line_says_to_check_wiring_and_address(capsys: Any) -> None:
    master, slave = os.openpty()
    try:
        assert main(["sas-host", os.ttyname(slave), "--timeout", "0.02"]) == 2
    finally:
        os.close(master)
        os.close(slave)
    err = capsys.readouterr().err
    assert "no answer from address 1" in err and "check the wiring" in err


def test_bench_sas_times_every_poll_while_the_cabinet_spins(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "bench.json"
    level = logging.getLogger("croupier").level
    assert main(["bench", "sas", "--polls", "200", "--json", str(path)]) == 0
    # The bench quiets the cabinet's log while it runs, and leaves it as it found it: once it stayed at ERROR for
    # the rest of the process, and the shoe's pty port test after this module never heard "cannot be opened".
    assert logging.getLogger("croupier").level == level
    figures = json.loads(path.read_text())
    assert figures["answered"] == 200 and figures["unanswered"] == 0 and figures["line"]["polls"] == 200
    assert figures["line"]["repeats"] == 0 and figures["games"] > 0
    assert 0 < figures["p50_ms"] <= figures["p99_ms"] <= figures["max_ms"]
    assert "first response byte: p50" in capsys.readouterr().out


@pytest.mark.slow
def test_the_demo_cabinets_ticket_system_polls_its_sas_line(tmp_path: Path) -> None:
    from controller.journal import Journal

    state = tmp_path / "state"
    done = run_demo("--cabinet", "frozen-assets", "--ticket-system", "--spins", "3", "--no-screens", "--quiet",
                    "--pace", "0.05", "--seed", "3", "--dir", str(state))
    assert "polled by the demo's ticket system" in done.stdout
    with Journal(state / "demo-frozen-assets.journal", "demo-frozen-assets") as j:
        acked = [e.record["code"] for e in j.entries() if e.record.get("what") == "ack"]
    assert acked[:1] == [0x17]  # the ticket system is the line's host: it heard and acknowledged the power up


class Lines:
    """A process's stdout read on a thread (a demo printing as it plays must never block on a full pipe)."""

    def __init__(self, stream: Any) -> None:
        import threading

        self.lines: list[str] = []
        self.changed = threading.Condition()
        self.thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self.thread.start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            with self.changed:
                self.lines.append(line)
                self.changed.notify_all()

    def wait(self, text: str, timeout: float = 60) -> str:
        with self.changed:
            found = self.changed.wait_for(lambda: any(text in x for x in self.lines), timeout)
            assert found, f"never printed {text!r}"
            return next(x for x in self.lines if text in x)


async def _insert_ticket(port: str, validation: str) -> dict[str, Any]:
    """insert_ticket into the demo's simulated validator, again while it is busy with the autoplay's play."""
    from controller.bus import CommandClient

    client = CommandClient(f"tcp://127.0.0.1:{port}", None, None, table="demo-frozen-assets")
    try:
        for _ in range(200):
            reply = await client.send("insert_ticket", barcode=validation)
            if reply.get("ok"):
                return reply
            await asyncio.sleep(0.05)  # the validator was busy or inhibited (a game, a cash out): try again
        return reply
    finally:
        client.close()


@pytest.mark.slow
def test_a_ticket_the_demo_printed_is_redeemed_by_its_ticket_system(tmp_path: Path) -> None:
    ports = [str(p) for p in free_ports(3)]
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "demo", "--cabinet", "frozen-assets",
                             "--ticket-system", "--no-screens", "--pace", "0.02", "--seed", "5", "--dir",
                             str(tmp_path / "state"), "--ports", *ports],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = Lines(proc.stdout)
    try:
        printed = out.wait("ticket system: printed")
        validation = printed.split()[3].rstrip(":")
        # over the bus as the attendant page sends it (croupier command would read the 18 digits as a number)
        reply = asyncio.run(_insert_ticket(ports[2], validation))
        assert reply["ok"], reply
        authorised = out.wait(f"ticket system: authorised {validation}")
        redeemed = out.wait(f"ticket system: redeemed {validation}")
    finally:
        proc.terminate()
        proc.wait(30)
    assert printed.split()[4] == authorised.split()[4]  # the amount printed is the amount redeemed
    assert redeemed.strip() == f"ticket system: redeemed {validation}"
