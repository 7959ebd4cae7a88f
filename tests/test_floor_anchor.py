"""The floor as the journal's anchor off the machine: an older journal (with its matching anchor) refuses to start; `croupier floor restore` rebuilds a dead machine that then resumes exactly."""

from __future__ import annotations

import asyncio
import logging
import shutil
from pathlib import Path
from typing import Any

import pytest

from controller.bus import Role
from controller.cli import main
from controller.config import load_config
from controller.floor.replicator import JournalReader
from controller.floor.server import NatsCluster
from controller.journal import JournalIntegrityError
from controller.progressive import LinkController
from tests.floor_cluster import floor_cluster  # noqa: F401 - the module's cluster fixture
from tests.table_helpers import free_ports


def link_toml(tmp: Path, ident: str, cluster: NatsCluster) -> Path:
    p1, p2, p3 = free_ports(3)
    servers = ", ".join(f'"{u}"' for u in cluster.urls)
    path = tmp / f"{ident}.toml"
    path.write_text(f"""
[progressive]
id = "{ident}"
reset_cents = 10000
journal = "card/{ident}.journal"
journal_key = "keys/{ident}.key"

[bus]
publish = "tcp://127.0.0.1:{p1}"
snapshot = "tcp://127.0.0.1:{p2}"
commands = "tcp://127.0.0.1:{p3}"
heartbeat = 0.2

[floor]
servers = [{servers}]
""")
    return path


async def session(cfg: Any, contributions: range, hit: int | None = None) -> dict[str, Any]:
    """Run the link once: contributions from cabinet c1 (and a hit), wait until the floor holds every row; its meters."""
    link = LinkController(cfg)
    await link.start()
    try:
        for game in contributions:
            assert (await link.command(Role("cabinet", name="c1"), "contribute", {"game": game, "cents": 37}))["ok"]
        if hit is not None:
            assert (await link.command(Role("cabinet", name="c2"), "hit", {"game": hit, "denomination": 5}))["ok"]
        assert await link.replicator.wait_acked(link.journal.last_seq, 30), link.replicator.status
        return {"pool": link.state.pool, "meters": link._meters(link.state), "seq": link.state.seq}
    finally:
        await link.stop()


@pytest.mark.slow
def test_an_older_journal_with_its_own_anchor_refuses_to_start_against_the_floor(
        floor_cluster: NatsCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    toml = link_toml(tmp_path, "old-card", floor_cluster)
    cfg = load_config(toml)
    asyncio.run(session(cfg, range(0)))  # row 1: the start record
    shutil.copytree(tmp_path / "card", tmp_path / "image")  # an image of the card: journal and anchor agree
    after = asyncio.run(session(cfg, range(1, 11)))
    assert after["seq"] == 12  # two start records and ten contributions
    shutil.rmtree(tmp_path / "card")
    shutil.copytree(tmp_path / "image", tmp_path / "card")

    with pytest.raises(JournalIntegrityError, match=r"ends at row 1, but the floor acknowledged row 12 of old-card: "
                                                    r"rows 2 to 12 are missing"):
        asyncio.run(LinkController(cfg).start())
    handlers = logging.root.handlers[:]
    try:
        assert main(["run", "--config", str(toml)]) == 2
    finally:  # `croupier run` sets up logging to this test's captured stderr: leave the next test its own
        logging.root.handlers[:] = handlers
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("croupier run: error: journal integrity check failed: journal ")
    assert "rows 2 to 12 are missing" in err.strip().splitlines()[-1]


@pytest.mark.slow
def test_restore_rebuilds_a_dead_machines_journal_and_it_resumes_exactly(
        floor_cluster: NatsCluster, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    toml = link_toml(tmp_path, "dead-card", floor_cluster)
    cfg = load_config(toml)
    asyncio.run(session(cfg, range(1, 21), hit=99))
    last = asyncio.run(session(cfg, range(21, 26)))
    reader = JournalReader(cfg.journal)
    rows = reader.rows(0, 10**6)
    reader.close()
    shutil.rmtree(tmp_path / "card")  # the SD card died; the key comes back from its backup

    assert main(["floor", "restore", "dead-card", "--config", str(toml)]) == 0
    out = capsys.readouterr().out
    assert "dead-card: 28 rows restored from the floor, every MAC verified under its journal key" in out
    assert main(["journal", "verify", "--config", str(toml)]) == 0
    reader = JournalReader(cfg.journal)
    assert reader.rows(0, 10**6) == rows  # row for row, MACs and times included
    reader.close()

    async def resumed() -> dict[str, Any]:
        link = LinkController(cfg)
        await link.start()
        try:
            return link._meters(link.state)
        finally:
            await link.stop()

    # the pool, the hit, every cabinet's last game: as before the card died; one more power-up (this start)
    assert asyncio.run(resumed()) == {**last["meters"], "power_ups": last["meters"]["power_ups"] + 1}
    assert last["meters"]["hits"] == 1 and last["meters"]["contributions"] == 25

    assert main(["floor", "restore", "dead-card", "--config", str(toml)]) == 2  # never over a journal
    err = capsys.readouterr().err  # (the runtime's warnings above it, when logging goes to stderr)
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("croupier floor: error: ")
    assert "exists: restore writes a replacement machine's journal, never over one" in err.strip().splitlines()[-1]
    assert main(["floor", "restore", "other", "--config", str(toml)]) == 2
    assert "is the config of dead-card, not other" in capsys.readouterr().err


class _ElectingFloor:
    """The floor while its cluster settles: the first connections are refused and the first requests fail as
    nats fails them during a leader election, then it answers with its last row of the machine (row 12)."""

    def __init__(self, errors: list[Exception]) -> None:
        self.errors = errors
        self.is_closed = False

    def jetstream(self, timeout: float) -> "_ElectingFloor":
        return self

    async def get_last_msg(self, stream: str, subject: str) -> Any:
        from types import SimpleNamespace

        if self.errors:
            raise self.errors.pop(0)
        return SimpleNamespace(seq=7, data=b"")

    async def close(self) -> None:
        self.is_closed = True


@pytest.mark.parametrize("errors", ["refused", "no-responders", "unavailable", "timeout", "all"])
def test_the_start_check_asks_the_floor_again_while_its_cluster_elects_a_leader(
        errors: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A transient nats error ended the start check at once as "floor unreachable", so a journal behind the
    floor ran (the first test of this module, right after its cluster started, on a busy machine)."""
    import nats.errors
    import nats.js.errors
    from types import SimpleNamespace

    from controller.floor import anchor, replicator, server

    refused, rest = {"refused": (2, []), "no-responders": (0, [nats.errors.NoRespondersError()]),
                     "unavailable": (0, [nats.js.errors.ServiceUnavailableError()] * 2),
                     "timeout": (0, [nats.errors.TimeoutError()]),
                     "all": (1, [nats.errors.NoRespondersError(), nats.js.errors.ServiceUnavailableError(),
                                 nats.errors.TimeoutError()])}[errors]
    floor = _ElectingFloor(list(rest))
    tries = []

    async def connect(*args: Any, **kwargs: Any) -> _ElectingFloor:
        tries.append(kwargs)
        if len(tries) <= refused:
            raise ConnectionRefusedError("no server yet")
        return floor

    monkeypatch.setattr(server, "connect", connect)
    monkeypatch.setattr(replicator, "decode_rows", lambda data: [SimpleNamespace(seq=12)])
    machine = SimpleNamespace(servers=["nats://127.0.0.1:1"], credentials=None, machine="m1", subject="x.m1")
    with pytest.raises(JournalIntegrityError, match="ends at row 1, but the floor acknowledged row 12 of m1"):
        anchor.check_on_start(machine, tmp_path / "m1.journal", 1, timeout=30.0)
    assert len(tries) == refused + 1 and not floor.errors and floor.is_closed


def test_a_floor_that_never_answers_is_unreachable_after_the_timeout(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from controller.floor import anchor, server

    async def connect(*args: Any, **kwargs: Any) -> None:
        raise ConnectionRefusedError("nobody there")

    monkeypatch.setattr(server, "connect", connect)
    machine = SimpleNamespace(servers=["nats://127.0.0.1:1"], credentials=None, machine="m1", subject="x.m1")
    assert anchor.check_on_start(machine, Path("/x/m1.journal"), 1, timeout=0.5) == \
        "floor unreachable on start (ConnectionRefusedError: nobody there)"
