"""sd_notify messages reach systemd's socket; `croupier keys` makes usable CURVE key pairs."""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

import pytest

from controller.bus import load_public_key, load_secret_keys
from controller.cli import main
from controller.sdnotify import notify, watchdog_interval


def test_notify_reaches_the_socket(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "notify.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as server:
        server.bind(str(path))
        monkeypatch.setenv("NOTIFY_SOCKET", str(path))
        assert notify("READY=1")
        assert server.recv(100) == b"READY=1"
    monkeypatch.delenv("NOTIFY_SOCKET")
    assert notify("READY=1") is False


def test_watchdog_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WATCHDOG_USEC", raising=False)
    assert watchdog_interval() is None
    monkeypatch.setenv("WATCHDOG_USEC", "10000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert watchdog_interval() == 5.0
    monkeypatch.setenv("WATCHDOG_PID", "1")
    assert watchdog_interval() is None


def test_keys_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["keys", "server", "dealer", "--dir", str(tmp_path)]) == 0
    public, secret = load_secret_keys(tmp_path / "dealer.key_secret")
    assert load_public_key(tmp_path / "dealer.key") == public and len(secret) == 40
    assert stat.S_IMODE((tmp_path / "dealer.key_secret").stat().st_mode) == 0o600
    assert main(["keys", "dealer", "--dir", str(tmp_path)]) == 2
    assert "exists" in capsys.readouterr().err
    assert main(["keys", "../evil", "--dir", str(tmp_path)]) == 2
