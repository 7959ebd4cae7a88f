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
