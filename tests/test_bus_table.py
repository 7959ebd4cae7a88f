"""The bus's hardening at a running table (controller/runtime.py behind the bus): no input makes a journal write fail,
refusals are journaled bounded and rate-limited, a resent command is applied once, and `croupier watch` and
`croupier command` refuse another table's endpoints."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from controller.bus import CommandClient, CommandError, Role, create_keys, load_secret_keys
from tests.bus_helpers import MAX_DEPTH


def keyed_table_config(tmp: Path) -> Any:
    """A blackjack table on free ports whose commands need CURVE: dealer, spot:3 and ops listed, `stranger` not."""
    import dataclasses

    from tests.table_helpers import table_config

    keys = tmp / "keys"
    for name in ("server", "dealer", "spot3", "ops", "stranger"):
        create_keys(keys, name)
    cfg = table_config(tmp, "blackjack")
    return dataclasses.replace(cfg, bus=dataclasses.replace(cfg.bus, keys=keys, clients=(
        (keys / "dealer.key", "dealer"), (keys / "spot3.key", "spot:3"), (keys / "ops.key", "ops"))))


def keyed_client(cfg: Any, name: str, **kw: Any) -> CommandClient:
    from controller.bus import load_public_key

    return CommandClient(cfg.bus.endpoints.commands, load_secret_keys(cfg.bus.keys / f"{name}.key_secret"),
                         load_public_key(cfg.bus.keys / "server.key"), **kw)


async def shuffled(table: Any) -> None:
    """The table's simulated shoe shuffled and loaded: bets may open."""
    assert (await table.command(Role("dealer"), "shuffle", {}))["ok"]
    assert await table.wait_for(lambda state: not state.shoe.shuffling, 10)


def refusals(table: Any) -> list[dict[str, Any]]:
    assert table.journal is not None
    return [e.record for e in table.journal.entries() if e.record["kind"] == "refused"]


def test_no_input_can_make_a_journal_write_fail(tmp_path: Path) -> None:
    """Issue 43 point 1: NaN in a command from any key (listed or not) stopped the table: its refusal record
    could not be written. Now nothing a command carries reaches the journal unless the journal can hold it:
    the bus refuses what strict JSON cannot write, and a command whose records still cannot be written (a
    local caller's lone surrogate) is refused, its args kept as a summary."""
    from controller.table import Table

    cfg = keyed_table_config(tmp_path)

    async def main() -> None:
        table = Table(cfg)
        await table.start()
        try:
            for name in ("stranger", "dealer"):
                client = keyed_client(cfg, name)
                for body in (b'{"command": "place_bet", "args": {"spot": 1, "box": "player", "amount": NaN}}',
                             b'{"command": "void", "args": {"reason": "\\ud800"}}',
                             b'{"command": "open_bets", "args": {"x": [Infinity]}}'):
                    reply = await client.send_raw(body)
                    assert not reply["ok"] and reply["error"].startswith("malformed command: args.")
                client.close()
            await shuffled(table)
            assert (await table.command(Role("dealer"), "open_bets", {}))["ok"]
            local = await table.command(Role("dealer"), "void", {"reason": "\ud800"})
            assert local["ok"] is False and local["error"].startswith("malformed void: the journal cannot hold")
            dealer = keyed_client(cfg, "dealer")
            status = await dealer.send("status")
            assert status["ok"] and status["result"]["table"] == cfg.table_id
            assert (await dealer.send("void", reason="the table still takes commands"))["ok"]
            dealer.close()
            assert table.failure is None
            await table.wait_for(lambda state: len(refusals(table)) >= 7, 5)
            records = refusals(table)
            assert len(records) == 7 and all(r["request"]["peer"] == "127.0.0.1" for r in records[:6])
            assert records[6]["request"] == {"command": "void", "args": {
                "bytes": 20, "sha256": records[6]["request"]["args"]["sha256"], "head": "{'reason': '\\ud800'}"}}
        finally:
            await table.stop()

    asyncio.run(main())


@pytest.mark.slow
def test_a_fatal_stop_exits_non_zero_so_systemd_restarts_it(tmp_path: Path) -> None:
    """Issue 43 point 1: the runtime stopped with exit status 0 when its journal could not be written, so
    Restart=on-failure left it down. Now run() raises FatalStop: exit status 1, one line, no traceback."""
    import sqlite3
    import subprocess
    import sys

    from controller.table import Table
    from tests.table_helpers import table_config

    cfg = table_config(tmp_path, "baccarat")

    async def main() -> SystemExit:
        table = Table(cfg)
        await table.start()
        assert table.journal is not None

        def broken(*args: Any, **kw: Any) -> Any:
            raise sqlite3.OperationalError("disk I/O error")

        table.journal.append = table.journal.append_many = broken  # type: ignore[method-assign]
        command = asyncio.create_task(table.command(Role("dealer"), "open_bets", {}))
        with pytest.raises(SystemExit) as stopped:  # FatalStop: awaited here, not in a task of its own
            await table.run()
        with pytest.raises(RuntimeError, match="journal write failed"):
            await command
        await table.stop()
        return stopped.value

    stop = asyncio.run(main())
    assert stop.code == f"{cfg.table_id} stopped: journal write failed: OperationalError: disk I/O error"
    done = subprocess.run([sys.executable, "-c", "from controller.runtime import FatalStop\n"
                           f"raise FatalStop({stop.code!r})"], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent.parent)
    assert (done.returncode, done.stderr) == (1, stop.code + "\n")


@pytest.mark.slow
def test_refusals_are_journaled_as_bounded_summaries_rate_limited_per_peer(tmp_path: Path) -> None:
    """Issue 43 point 6: a 10 MB message from an unlisted key was journaled in full, and failed handshakes
    without the peer's address (20 attempts: 45 rows). Now a refusal keeps a summary (size, SHA-256, first
    bytes, peer's address), a message over MAX_MESSAGE never gets in, and one peer's refusals are journaled at
    most at the limiter's rate, the rest counted."""
    import hashlib
    import os

    from controller.journal import canonical_json
    from controller.table import Table

    cfg = keyed_table_config(tmp_path)

    def journal_bytes() -> int:
        return sum(os.path.getsize(p) for p in (cfg.journal, Path(f"{cfg.journal}-wal")) if p.exists())

    async def main() -> None:
        table = Table(cfg)
        await table.start()
        try:
            # Clients without CURVE: their failed handshakes are journaled with their address. libzmq names a
            # connection by its descriptor only, closed when a handshake fails at once, so the address is read
            # from it or from the port's TIME_WAIT entries: best effort, "unknown" when neither has it (a
            # connection reset rather than closed); of 8 tries, some name it.
            def handshakes() -> list[dict[str, Any]]:
                return [r for r in refusals(table) if "handshake" in r["reason"]]

            for tries in range(1, 9):
                plain = CommandClient(cfg.bus.endpoints.commands, timeout_s=0.2)
                with pytest.raises(CommandError, match="no answer"):
                    await plain.send("open_bets")
                plain.close()
                assert await table.wait_for(lambda state: len(handshakes()) >= tries, 5)
            assert all(r["who"] == "unauthenticated" and r["request"]["peer"] in ("127.0.0.1", "unknown")
                       for r in handshakes())
            assert any(r["request"]["peer"] == "127.0.0.1" for r in handshakes())
            # Just under the limit, from an unlisted key: refused, journaled as a summary.
            stranger = keyed_client(cfg, "stranger")
            body = json.dumps({"command": "open_bets", "args": {"pad": "x" * 65_000}}).encode()  # MAX_MESSAGE: 65,536
            reply = await stranger.send_raw(body)
            assert reply == {"v": 2, "id": None, "ok": False,
                             "error": "unknown key: this client is not authorised for any role"}
            assert await table.wait_for(lambda state: any("unknown key" in r["reason"] for r in refusals(table)), 5)
            record = next(r for r in refusals(table) if "unknown key" in r["reason"])
            assert record["request"] == {"bytes": len(body), "sha256": hashlib.sha256(body).hexdigest(),
                                         "head": body[:64].decode(), "peer": "127.0.0.1", "command": "open_bets"}
            assert len(canonical_json(record)) < 1024
            # 10 MB: libzmq drops it unread with the connection; the journal does not grow by it.
            before = journal_bytes()
            await stranger._sock.send_multipart([b"", b"x" * 10_485_760])
            reply = await keyed_client(cfg, "dealer").send("status")  # the table still answers
            assert reply["ok"] and journal_bytes() - before < 64 * 1024
            # A flood from one address: at most the burst and one a second are journaled, the rest counted.
            started, count = time.monotonic(), len(refusals(table))
            for i in range(200):
                await stranger.send_raw(b"not json %d" % i)
            seconds = time.monotonic() - started
            await keyed_client(cfg, "dealer").send("status")  # after every refusal above has been journaled
            flood = refusals(table)[count:]
            assert len(flood) <= table.refusals.burst + seconds / table.refusals.every + 1
            assert table.refusals.left_out > 0
            stranger.close()
        finally:
            await table.stop()

    asyncio.run(main())


def test_a_resent_command_is_answered_once_and_applied_once_even_across_a_restart(tmp_path: Path) -> None:
    """Issue 43 point 11: a resent request (same body, same id) was applied twice (a bet went 25 -> 45). Now a
    (key, id) seen within the window gets the first answer and changes nothing, also after a restart (the
    window is rebuilt from the journal, where each command's first record keeps its id and answer); the same
    id for another command is refused."""
    from controller.table import Table

    cfg = keyed_table_config(tmp_path)

    async def bets(client: CommandClient) -> list[dict[str, Any]]:
        status = await client.send("status")
        return status["result"]["game"]["bets"]

    async def main() -> None:
        table = Table(cfg)
        await table.start()
        dealer = keyed_client(cfg, "dealer")
        await shuffled(table)
        assert (await dealer.send("open_bets"))["ok"]
        placed = json.dumps({"v": 2, "id": "bet-17", "command": "place_bet",
                             "args": {"spot": 1, "box": "main", "amount": 25}}).encode()
        first = await dealer.send_raw(placed)
        assert first["ok"] and first["id"] == "bet-17"
        assert await dealer.send_raw(placed) == first   # resent: the first answer, not applied again
        assert await bets(dealer) == [{"spot": 1, "box": "main", "amount": 25}]
        await table.stop()
        table = Table(cfg)   # a restart: the window comes back from the journal
        await table.start()
        try:
            assert await dealer.send_raw(placed) == first
            assert await bets(dealer) == [{"spot": 1, "box": "main", "amount": 25}]
            other = json.loads(placed)
            other["args"]["amount"] = 50
            reply = await dealer.send_raw(json.dumps(other).encode())
            assert reply["ok"] is False and reply["error"].startswith("id 'bet-17' was used for another command")
            assert await bets(dealer) == [{"spot": 1, "box": "main", "amount": 25}]
            dealer.close()
        finally:
            await table.stop()

    asyncio.run(main())


def test_decision_amounts_infinity_nesting_and_a_spot_keys_status(tmp_path: Path) -> None:
    """Issue 43 point 13: a decision amount of 25.9 was taken as 25; Infinity and deep nesting were answered
    "internal error: OverflowError / RecursionError" and not journaled; a spot key's `status` without `spot`
    was refused as "spot:3 may act only for spot 3"."""
    from controller.table import Table

    cfg = keyed_table_config(tmp_path)

    async def main() -> None:
        table = Table(cfg)
        await table.start()
        try:
            local = await table.command(Role("dealer"), "decision", {"actor": "spot:1", "action": "double",
                                                                     "amount": 25.9})
            assert local == {"ok": False, "error": "malformed decision: amount must be a whole number, not 25.9"}
            dealer = keyed_client(cfg, "dealer")
            count = len(refusals(table))
            infinite = await dealer.send_raw(b'{"command": "decision", "args": {"actor": "spot:1", '
                                             b'"action": "double", "amount": Infinity}}')
            assert infinite["error"] == ("malformed command: args.amount is inf: only finite numbers are taken "
                                         "(no NaN or Infinity)")
            deep = b'{"command": "decision", "args": {"amount": ' + b"[" * 20_000 + b"]" * 20_000 + b"}}"
            nested = await dealer.send_raw(deep)
            assert nested["error"] == f"malformed command: nested 20002 deep: at most {MAX_DEPTH}"
            assert await table.wait_for(lambda state: len(refusals(table)) == count + 2, 5)
            journaled = refusals(table)[count:]
            assert [r["reason"] for r in journaled] == [infinite["error"], nested["error"]]
            assert journaled[1]["request"]["bytes"] == len(deep) and journaled[1]["request"]["head"] == deep[:64].decode()
            spot3 = keyed_client(cfg, "spot3")
            status = await spot3.send("status")
            assert status["ok"] and "dealer_only" not in status["result"]
            wrong = await spot3.send("status", spot=4)
            assert (wrong["ok"], wrong["error"]) == (False, "spot:3 may act only for spot 3")
            for c in (dealer, spot3):
                c.close()
        finally:
            await table.stop()

    asyncio.run(main())


def test_croupier_watch_and_command_refuse_another_tables_endpoints(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 43 point 16: `croupier watch --table totally-wrong-id` streamed whatever table was on the ports, and
    `croupier command --table totally-wrong-id status` was answered by it."""
    from controller.cli import main as cli
    from controller.table import Table
    from tests.table_helpers import serving, table_config

    cfg = table_config(tmp_path, "baccarat")
    ports = [e.rsplit(":", 1)[1] for e in (cfg.bus.endpoints.publish, cfg.bus.endpoints.snapshot,
                                           cfg.bus.endpoints.commands)]
    with serving(lambda: Table(cfg)):
        assert cli(["watch", "--table", "totally-wrong-id", "--ports", *ports, "--count", "1"]) == 2
        err = capsys.readouterr().err
        assert err == (f"croupier watch: error: {cfg.bus.endpoints.snapshot}: this is table {cfg.table_id}, not "
                       f"totally-wrong-id\n")
        assert cli(["command", "--table", "totally-wrong-id", "--ports", *ports, "open_bets"]) == 1
        reply = json.loads(capsys.readouterr().out)
        assert reply["error"] == f"this is table {cfg.table_id}, not totally-wrong-id: the command was not applied"
        assert cli(["command", "--table", cfg.table_id, "--ports", *ports, "status"]) == 0
        assert json.loads(capsys.readouterr().out)["result"]["table"] == cfg.table_id


@pytest.mark.slow
def test_croupier_watch_says_it_waits_for_a_table_that_does_not_answer(tmp_path: Path) -> None:
    """Issue 43 point 17: `croupier watch --config FILE` hung without a word when the table was not running. It
    waits (the table may be starting, or restarting under systemd) and says so on stderr at once, and again
    every 30 s, naming the table and endpoint."""
    import selectors
    import subprocess
    import sys

    from tests.table_helpers import free_ports

    p1, p2, p3 = free_ports(3)
    config = tmp_path / "table.toml"
    config.write_text(f'[table]\nid = "bj-9"\ngame = "blackjack"\njournal = "{tmp_path / "bj.journal"}"\n'
                      f'[shoe]\nport = "sim"\n[bus]\npublish = "tcp://127.0.0.1:{p1}"\n'
                      f'snapshot = "tcp://127.0.0.1:{p2}"\ncommands = "tcp://127.0.0.1:{p3}"\nheartbeat = 0.2\n')
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "watch", "--config", str(config)],
                            stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parent.parent)
    try:
        assert proc.stderr is not None
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stderr, selectors.EVENT_READ)
            assert sel.select(30), "watch said nothing"
        line = proc.stderr.readline()
        assert line == (f"croupier watch: waiting for table bj-9 at tcp://127.0.0.1:{p2}: no answer yet (is it "
                        f"running?). Ctrl-C to stop.\n")
    finally:
        proc.kill()
        proc.wait()
