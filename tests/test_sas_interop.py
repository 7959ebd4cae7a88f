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
from tests.sas_helpers import sas_cabinet_config

SASPY = os.environ.get("CROUPIER_SASPY", "")
pytestmark = pytest.mark.skipif(not (SASPY and Path(SASPY, "sas.py").is_file()),
                                reason="no saspy checkout (set CROUPIER_SASPY to a clone of zacharytomlinson/saspy)")

# The host's side, in its own process: what saspy itself reads, as JSON on stdout.
HOST = textwrap.dedent("""
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
    out["credits"] = s.current_credits(denom=False)
    out["meters_19"] = s.meters_11_15(denom=False)
    out["games_played"] = s.games_played_meter()
    out["events"] = [s.events_poll() for _ in range(14)]
    # seed 0xBEEF, low byte first. saspy's own rom_signature_verification reads one byte only (it leaves its
    # size argument at 1): the same poll, framed and CRC-checked by saspy, read whole
    sig = s._send_command([0x21, 0xEF, 0xBE], crc_need=True, size=6)
    out["rom_signature"] = None if sig is None else sig.hex()
    print(json.dumps(out))
""")


def test_an_independent_sas_host_reads_credits_meters_exceptions_and_the_rom_signature(tmp_path: Path) -> None:
    cfg = sas_cabinet_config(tmp_path, accounting_denomination=1, chirp_after=0.3)
    k = cfg.denomination
    script = tmp_path / "host.py"
    script.write_text(HOST)

    async def main() -> dict[str, Any]:
        cab = await started(cfg)
        assert (await cab.command(ATTENDANT, "add_credits", {"credits": 30}))["ok"]
        for _ in range(3):
            assert (await cab.command(PLAYER, "max_bet", {}))["ok"]
            await asyncio.wait_for(cab.shown.wait(), 5)
        proc = await asyncio.create_subprocess_exec(sys.executable, str(script), SASPY, cab.sas.pty[2],
                                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        stdout, stderr = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, stderr.decode()[-2000:]
        await cab.stop()
        return json.loads(stdout.decode().strip().splitlines()[-1])

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
