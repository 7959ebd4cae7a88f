"""The kiosk's start-up script waits on the bridge's /healthz before it starts the browser; the installer sets up autostart once."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from tests.screens_helpers import run, stack
from tests.table_helpers import table_config

KIOSK = Path(__file__).resolve().parents[1] / "deploy" / "kiosk"


def test_kiosk_starts_the_browser_only_once_the_table_is_heard(tmp_path: Path) -> None:
    cfg = table_config(tmp_path, "baccarat")
    launched = tmp_path / "launched"
    fake = tmp_path / "fake-chromium"
    fake.write_text(f'#!/bin/sh\necho "$@" > {launched}\n')
    fake.chmod(0o755)

    async def main() -> None:
        async with stack(cfg, start_table=False) as (table, bridge):
            url = f"http://127.0.0.1:{bridge.port}/table/{cfg.table_id}"
            env = {**os.environ, "HOME": str(tmp_path), "CROUPIER_KIOSK_BROWSER": str(fake),
                   "CROUPIER_KIOSK_ONCE": "1", "CROUPIER_KIOSK_POLL": "0.1", "CROUPIER_KIOSK_WAIT": "0"}
            proc = await asyncio.create_subprocess_exec(str(KIOSK / "croupier-kiosk"), url, env=env,
                                                        stderr=asyncio.subprocess.PIPE)
            line = await asyncio.wait_for(proc.stderr.readline(), 10)
            assert b"waiting for" in line and b"/healthz" in line
            assert not launched.exists()           # the bridge answers 503: the table has not been heard
            await table.start()                    # now it is: /healthz turns 200 and the browser starts
            try:
                assert await asyncio.wait_for(proc.wait(), 30) == 0
            finally:
                await table.stop()
            args = launched.read_text().split()
            assert args[-1] == url and "--kiosk" in args and any(a.startswith("--user-data-dir=") for a in args)

    run(main())


def test_kiosk_needs_a_url(tmp_path: Path) -> None:
    out = subprocess.run([str(KIOSK / "croupier-kiosk")], env={**os.environ, "HOME": str(tmp_path)},
                         capture_output=True, text=True, timeout=30, check=False)
    assert out.returncode == 2 and "no URL" in out.stderr


def test_installer_sets_up_every_desktop_once(tmp_path: Path) -> None:
    prefix: list[str] = []
    if os.getuid() == 0:   # it refuses root: run it as nobody, with a home nobody can reach and write
        tmp_path = Path(tempfile.mkdtemp(prefix="croupier-kiosk-home-", dir="/tmp"))
        tmp_path.chmod(0o777)
        prefix = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / ".config")}
    for url in ("http://table-pi:8080/table/bj-1", "http://table-pi:8080/dealer/bj-1?token=abc&x=1"):
        out = subprocess.run([*prefix, "bash", str(KIOSK / "install-kiosk.sh"), url], env=env, capture_output=True,
                             text=True, timeout=30, check=False)
        assert out.returncode == 0, out.stderr
    config = tmp_path / ".config"
    kiosk = str(tmp_path / ".local" / "bin" / "croupier-kiosk")
    assert (config / "labwc" / "autostart").read_text().splitlines() == [f"{kiosk} &"]
    assert (config / "wayfire.ini").read_text().count("croupier_kiosk = ") == 1
    assert (config / "lxsession" / "LXDE-pi" / "autostart").read_text().splitlines() == [f"@{kiosk}"]
    conf = config / "croupier-kiosk.conf"
    assert oct(conf.stat().st_mode & 0o777) == "0o600"
    sourced = subprocess.run(["bash", "-c", f". {conf}; echo \"$URL\""], capture_output=True, text=True, check=True)
    assert sourced.stdout.strip() == "http://table-pi:8080/dealer/bj-1?token=abc&x=1"
    if prefix:
        shutil.rmtree(tmp_path, ignore_errors=True)
