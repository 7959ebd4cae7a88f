"""SAS against an independent host: zacharytomlinson/saspy (MIT), run in its own process, polls a cabinet's EGM over a pty.

saspy is not on PyPI (the PyPI "saspy" is another project), so the test runs only where `CROUPIER_SASPY` names a
checkout of https://github.com/zacharytomlinson/saspy (measured at e2224b21) and skips otherwise. saspy writes a
sync byte (its `poll_address`, 0x82) before each poll and switches its port between mark and space parity around
every message; on a Linux pseudo-terminal the kernel clears PARENB and glibc's tcsetattr then answers EINVAL for a
call that asks for parity and changes nothing, so the host process ignores exactly that error (the settings it asked
for are in force; a pty carries no parity bit either way). Nothing else of saspy is changed.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from controller.cabinet import ATTENDANT, PLAYER
from controller.sas import rom_image
from drivers.sas import rom_crc16
from tests.cabinet_helpers import replayed, run, started
from tests.sas_helpers import note_in, sas_cabinet_config, write

SASPY = os.environ.get("CROUPIER_SASPY", "")
pytestmark = pytest.mark.skipif(not (SASPY and Path(SASPY, "sas.py").is_file()),
                                reason="no saspy checkout (set CROUPIER_SASPY to a clone of zacharytomlinson/saspy)")

# How each host script starts, in its own process (argv: saspy's checkout, the EGM's pty, then its own): saspy
# on the pty, its address read into `out`, which the script fills with what saspy reads.
SASPY_START = textwrap.dedent("""
    import json, sys, termios
    import serial.serialposix as sp
    sys.path.insert(0, sys.argv[1])
    reconfigure = sp.Serial._reconfigure_port
    def tolerant(self, force_update=False):
        try:
            reconfigure(self, force_update)
        except termios.error as e:  # a pty drops PARENB: glibc reports EINVAL; nothing else is tolerated
            if e.args[0] != 22:
                raise
    sp.Serial._reconfigure_port = tolerant
    from sas import Sas
    s = Sas(sys.argv[2], timeout=2, debug_level="ERROR")
    out = {"address": s.start()}
""")


async def saspy(script: Path, text: str, port: str, *args: str, timeout: float) -> dict[str, Any]:
    """Run host script `text` (after SASPY_START) from `script` against the EGM on `port`: its `out`."""
    script.write_text(SASPY_START + textwrap.dedent(text) + "print(json.dumps(out))\n")
    proc = await asyncio.create_subprocess_exec(sys.executable, str(script), SASPY, port, *args,
                                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    stdout, stderr = await asyncio.wait_for(proc.communicate(), timeout)
    assert proc.returncode == 0, stderr.decode()[-2000:]
    return json.loads(stdout.decode().strip().splitlines()[-1])


HOST = """
    out["credits"] = s.current_credits(denom=False)
    out["meters_19"] = s.meters_11_15(denom=False)
    out["games_played"] = s.games_played_meter()
    out["events"] = [s.events_poll() for _ in range(14)]
    # seed 0xBEEF, low byte first. saspy's own rom_signature_verification reads one byte only (it leaves its
    # size argument at 1): the same poll, framed and CRC-checked by saspy, read whole
    sig = s._send_command([0x21, 0xEF, 0xBE], crc_need=True, size=6)
    out["rom_signature"] = None if sig is None else sig.hex()
"""


def test_an_independent_sas_host_reads_credits_meters_exceptions_and_the_rom_signature(tmp_path: Path) -> None:
    cfg = sas_cabinet_config(tmp_path, accounting_denomination=1, chirp_after=0.3)
    k = cfg.denomination

    async def main() -> dict[str, Any]:
        cab = await started(cfg)
        assert (await cab.command(ATTENDANT, "add_credits", {"credits": 30}))["ok"]
        for _ in range(3):
            assert (await cab.command(PLAYER, "max_bet", {}))["ok"]
            await asyncio.wait_for(cab.shown.wait(), 5)
        out = await saspy(tmp_path / "host.py", HOST, cab.sas.pty[2], timeout=60)
        await cab.stop()
        return out

    out = run(main())
    s = replayed(cfg)
    m = s.meters
    assert out["address"] == "01"
    assert out["credits"] == s.credits * k
    # saspy's names for long poll 19's coin in, coin out and games played; it leaves out the meters that are 0
    assert {key: out["meters_19"].get(key, 0) for key in ("total_bet_meter", "total_win_meter", "games_played_meter")} \
        == {"total_bet_meter": m.coin_in * k, "total_win_meter": m.coin_out * k, "games_played_meter": 3}
    assert out["games_played"] == 3
    # the power-up and the three games, in the order they happened, then nothing more to say
    events = [e for e in out["events"] if e != "No activity"]
    assert events[0] == "AC power was applied to gaming machine"
    assert events.count("Game has started") == 3 and events.count("Game has ended") == 3
    expected = rom_crc16(rom_image(extra=cfg.title.digest.encode()), 0xBEEF)
    assert out["rom_signature"] is not None and out["rom_signature"][:2] == "21"  # saspy strips the address and CRC
    assert int.from_bytes(bytes.fromhex(out["rom_signature"][2:6]), "little") == expected


# The bill and ticket polls saspy has methods for; where its method cannot frame or read the poll (saspy 58, 71 and
# 7B put lists inside the command; 4C packs 3-byte ids in one byte each; 4D, 50, 70 and 71 read one byte: their
# `no_response` flag), the same poll goes through saspy's own framing and CRC check (_send_command) at the answer's
# length, as for the ROM signature above.
TICKET_HOST = """
    def raw(cmd, size, crc=False):
        got = s._send_command(cmd, crc_need=crc, size=size)
        return None if got is None else bytes(got).hex()
    out["events"] = [s.events_poll() for _ in range(6)]
    out["bill_meters"] = s.total_bill_meters()
    out["bill_value"] = s.total_dollar_value_of_bills_meter()
    out["twenties"] = s.send_20_bills_in_meters()
    out["fives"] = s.send_5_bills_in_meters()
    out["hundreds"] = s.send_100_bills_in_meters()
    out["last_bill"] = s.last_accepted_bill_info()
    out["last_bill_raw"] = raw([0x48], 10)
    out["disable_bills"] = s.disable_bill_acceptor()
    out["enable_bills"] = s.enable_bill_acceptor()
    out["configure_bills"] = s.configure_bill_denom([0xFF, 0x00, 0x00], [0x01])
    out["pending_cashout"] = s.pending_cashout_info()
    out["pending_raw"] = raw([0x57], 10)
    out["validation_meters"] = raw([0x50, 0x00], 14, True)
    out["enhanced_validation"] = raw([0x4D, 0x00], 35, True)
    out["ticket_validation"] = raw([0x70], 21)
    out["redeem"] = raw([0x71, 0x10, 0x00, 0x00, 0x00, 0x00, 0x25, 0x00, 0x00] + list(bytes.fromhex(sys.argv[3])),
                        21, True)
"""


def test_an_independent_sas_host_reads_the_bill_and_ticket_polls(tmp_path: Path) -> None:
    from controller import cabinetrecords as cr

    cfg = sas_cabinet_config(tmp_path, accounting_denomination=1, chirp_after=0.3)
    validation = "001234567890123456"

    async def main() -> dict[str, Any]:
        cab = await started(cfg)
        await write(cab, *note_in(2000, cfg.denomination), *note_in(500, cfg.denomination),
                    cr.TicketInInserted(validation))
        out = await saspy(tmp_path / "tickets.py", TICKET_HOST, cab.sas.pty[2], validation, timeout=90)
        out["state"] = (cab.sas.state.bills, cab.sas.state.notes, cab.sas.state.redemption)
        await cab.stop()
        return out

    out = run(main())
    m = replayed(cfg).meters
    notes = dict(m.notes_in)
    assert out["address"] == "01"
    # saspy's own names for the exceptions: the ticket first (a priority exception), then in order
    assert [e for e in out["events"] if e != "No activity"] == [
        "Ticket has been inserted", "AC power was applied to gaming machine", "$20.00 bill accepted (non-RTE only)",
        "$5.00 bill accepted (non-RTE only)"]
    # saspy's methods for 1E, 20, 31-45 (it leaves out the meters that are 0)
    named = {"s1_bills_accepted_meter": 100, "s5_bills_accepted_meter": 500, "s10_bills_accepted_meter": 1000,
             "s20_bills_accepted_meter": 2000, "s50_bills_accepted_meter": 5000, "s100_bills_accepted_meter": 10000}
    assert out["bill_meters"] == {k: notes[c] for k, c in named.items() if notes.get(c)}
    assert out["bill_value"] == m.notes_in_cents // 100
    assert (out["twenties"], out["fives"], out["hundreds"]) == (notes.get(2000, 0), notes.get(500, 0),
                                                                notes.get(10000, 0))
    # 06, 07 and 08 through saspy's methods (its 08 sends a first byte of 00 and the three it is given: $200-$10,000)
    assert (out["disable_bills"], out["enable_bills"], out["configure_bills"]) == (True, True, True)
    bills, enabled, redemption = out["state"]
    assert bills is True and enabled == (20000, 25000, 50000, 100000, 200000, 250000, 500000, 1000000)
    # saspy's framing and CRC check at each answer's length (its own methods read one byte of these)
    assert out["last_bill_raw"] == f"483702{notes.get(500, 0):08d}"
    assert out["pending_raw"] == "57" "80" "0000000000"
    assert out["validation_meters"] == f"5000{m.tickets_out_cashable:08d}{m.tickets_out_cashable_cents:010d}"
    assert out["enhanced_validation"] == "4d" + "00" * 31
    assert out["ticket_validation"] == "70" "10" "00" "0000000000" "00" + validation
    assert out["redeem"] == "71" "10" "40" "0000002500" "00" + validation
    assert (redemption.status, redemption.cents) == (0x40, 2500)
