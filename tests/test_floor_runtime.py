"""A runtime whose config has a `[floor]` streams its journal to the floor beside its one writer; without one, nothing changes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from controller.bus import Role
from controller.config import progressive_config_from_mapping
from controller.floor.ingest import floor_rows
from controller.floor.replicator import JournalReader
from controller.floor.server import NatsCluster, connect
from controller.progressive import LinkController
from tests.floor_cluster import floor_cluster, floor_missing  # noqa: F401 - the module's cluster fixture
from tests.table_helpers import free_ports


def link_config(tmp: Path, floor: dict[str, Any] | None) -> Any:
    p1, p2, p3 = free_ports(3)
    data: dict[str, Any] = {
        "progressive": {"id": "floor-link", "reset_cents": 50_000, "journal": str(tmp / "link.journal")},
        "bus": {"publish": f"tcp://127.0.0.1:{p1}", "snapshot": f"tcp://127.0.0.1:{p2}",
                "commands": f"tcp://127.0.0.1:{p3}", "heartbeat": 0.2}}
    if floor is not None:
        data["floor"] = floor
    return progressive_config_from_mapping(data, tmp / "link.toml")


@pytest.mark.slow
def test_a_link_controller_with_a_floor_section_replicates_every_journal_row(floor_cluster: NatsCluster,  # noqa: F811
                                                                             tmp_path: Path) -> None:
    cfg = link_config(tmp_path, {"servers": floor_cluster.urls})

    async def main() -> None:
        link = LinkController(cfg)
        await link.start()
        try:
            for game in range(1, 41):
                reply = await link.command(Role("cabinet", name="c1"), "contribute", {"game": game, "cents": 25})
                assert reply["ok"], reply
            last = link.journal.last_seq
            assert await link.replicator.wait_acked(last, 30), link.replicator.status
            assert link.replicator.status.diverged is None
        finally:
            await link.stop()
        nc = await connect(floor_cluster.urls)
        copy = [row for _, row in await floor_rows(nc.jetstream(), "floor-link")]
        await nc.close()
        reader = JournalReader(cfg.journal)
        assert copy == reader.rows(0, 10**6)
        reader.close()
        assert len(copy) == last == 41  # the start record and 40 contributions

    asyncio.run(main())


def test_without_a_floor_section_a_runtime_has_no_replicator(tmp_path: Path) -> None:
    cfg = link_config(tmp_path, None)

    async def main() -> None:
        link = LinkController(cfg)
        await link.start()
        try:
            assert cfg.floor is None and link.replicator is None
        finally:
            await link.stop()

    asyncio.run(main())


@pytest.mark.slow
def test_a_machine_whose_floor_is_unreachable_starts_and_plays_on_its_local_journal(tmp_path: Path) -> None:
    why = floor_missing()
    if why:
        pytest.skip(why)
    (port,) = free_ports(1)  # nothing listens there
    cfg = link_config(tmp_path, {"servers": [f"nats://127.0.0.1:{port}"]})

    async def main() -> None:
        link = LinkController(cfg)
        await link.start()
        try:
            for game in range(1, 6):
                assert (await link.command(Role("cabinet", name="c1"), "contribute", {"game": game, "cents": 5}))["ok"]
            assert link.journal.last_seq == 6 and link.state.pool == 50_025
            assert not await link.replicator.wait_acked(1, 0.5)
            assert link.replicator.status.acked_seq == 0 and not link.replicator.status.reachable
        finally:
            await link.stop()

    asyncio.run(main())
