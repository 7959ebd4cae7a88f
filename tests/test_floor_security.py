"""The floor's set-up and security, deploy-style (credentials made by controller/floor/credentials.py, TLS on, verify_and_map): a machine publishes its own subjects and is refused any other machine's; a client without a site certificate is refused."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from typing import Any, Iterator

import pytest

from controller.floor.credentials import (add_machine, add_server, add_service, authorization_conf,
                                          machine_permissions, user_block)
from controller.floor.replicator import Replicator
from controller.floor.wire import STREAM, subject_for
from controller.journal import Journal
from tests.floor_cluster import ServedFloor, floor_page_json, replicate, skip_without_floor
from tests.table_helpers import free_ports


def test_a_machines_permissions_name_its_own_subjects_only() -> None:
    assert machine_permissions("bj-1", "table") == {
        "publish": ["croupier.journal.bj-1", "$JS.API.STREAM.MSG.GET.CROUPIER_JOURNAL"], "subscribe": ["_INBOX.>"]}
    assert machine_permissions("cab-1", "cabinet", link="L1") == {
        "publish": ["croupier.journal.cab-1", "$JS.API.STREAM.MSG.GET.CROUPIER_JOURNAL",
                    "croupier.link.L1.cab-1", "$JS.API.STREAM.INFO.CROUPIER_LINK",
                    "$JS.API.CONSUMER.CREATE.CROUPIER_LINK.*.croupier.link.L1.*",
                    "$JS.API.CONSUMER.MSG.NEXT.CROUPIER_LINK.*"], "subscribe": ["_INBOX.>"]}
    assert user_block("CN=x", {"publish": ["a"], "subscribe": ["b"]}) == \
        '  { user: "CN=x", permissions: { publish: { allow: ["a"] }, subscribe: { allow: ["b"] } } }\n'
    assert authorization_conf([user_block("CN=floor-service", None)]).endswith(
        'authorization {\n  users = [\n  { user: "CN=floor-service" }\n  ]\n}\n')
    with pytest.raises(ValueError, match="only a cabinet plays on a link"):
        machine_permissions("bj-1", "table", link="L1")


class Site:
    def __init__(self, folder: Path, url: str) -> None:
        self.folder, self.url = folder, url

    def cred(self, who: str) -> Path:
        return self.folder / ("services" if who == "floor-service" else "machines") / who


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    skip_without_floor()
    import shutil

    if shutil.which("openssl") is None:
        pytest.skip("no openssl command (apt-get install openssl)")
    from controller.floor.embedded import EmbeddedServer
    from controller.floor.server import connect, ensure_journal_stream

    folder = tmp_path_factory.mktemp("site")
    add_server(folder, "n1", ("127.0.0.1",))
    add_service(folder)
    add_machine(folder, "bj-1", "table")
    add_machine(folder, "cab-1", "cabinet", link="L1")
    add_machine(folder, "cab-2", "cabinet", link="L1")
    (port,) = free_ports(1)
    server = EmbeddedServer(folder / "node", "127.0.0.1", port, authorization=folder / "authorization.conf",
                            tls={"cert": folder / "servers/n1/cert.pem", "key": folder / "servers/n1/key.pem",
                                 "ca": folder / "ca/ca.pem"})
    server.start()
    the_site = Site(folder, server.url)

    async def ready() -> None:
        for _ in range(100):  # a just-started server: try again until it listens (bounded)
            try:
                nc = await connect([server.url], credentials=the_site.cred("floor-service"), max_reconnect_attempts=1)
                break
            except Exception:  # noqa: BLE001
                await asyncio.sleep(0.1)
        else:
            raise RuntimeError(f"the TLS floor did not start\n{server.log_tail()}")
        try:
            await ensure_journal_stream(nc.jetstream(timeout=2.0), replicas=1)
        finally:
            await nc.close()

    try:
        asyncio.run(ready())
        yield the_site
    finally:
        server.stop()


async def _violations(site: Site, who: str) -> tuple[Any, list[str], asyncio.Event]:
    from controller.floor.server import connect

    seen: list[str] = []
    event = asyncio.Event()

    async def on_error(exc: Exception) -> None:
        seen.append(str(exc))
        event.set()

    nc = await connect([site.url], credentials=site.cred(who), name=f"croupier-{who}", error_cb=on_error)
    return nc, seen, event


async def _held(site: Site, subject: str) -> int:
    from controller.floor.server import connect

    nc = await connect([site.url], credentials=site.cred("floor-service"))
    try:
        info = await nc.jetstream(timeout=2.0).stream_info(STREAM, subjects_filter=subject)
        return (info.state.subjects or {}).get(subject, 0)
    finally:
        await nc.close()


def test_a_machine_replicates_its_own_subject_and_is_refused_another_machines(site: Site, tmp_path: Path) -> None:
    from controller.floor.service import FloorService, service_config_from_mapping

    journal = Journal(tmp_path / "bj-1.journal", "bj-1", key_file=tmp_path / "bj-1.key", anchor=tmp_path / "bj-1.a")
    journal.append_many([{"kind": "refused", "who": "test", "reason": f"row {i}", "request": {}} for i in range(5)])
    journal.close()
    cfg = service_config_from_mapping({"service": {"servers": [site.url], "credentials": "services/floor-service",
                                                   "replicas": 1}}, site.folder)

    async def scenario() -> None:
        rep = Replicator(tmp_path / "bj-1.journal", subject_for("bj-1"), [site.url], credentials=site.cred("bj-1"))
        task = asyncio.create_task(rep.run())
        service = FloorService(cfg)
        await service.start()
        try:
            assert await rep.wait_acked(5, 30), rep.status  # its own subject, over TLS, as CN=bj-1
            assert await service.wait_for(lambda s: "bj-1" in s.summaries and s.summaries["bj-1"].seq == 5, 30)
        finally:
            rep.stop()
            await task
            await service.close()

        nc, seen, refused = await _violations(site, "bj-1")
        try:
            await nc.publish(subject_for("cab-1"), b'{"forged": true}')
            await asyncio.wait_for(refused.wait(), 10)
            assert seen == ['nats: permissions violation for publish to "croupier.journal.cab-1"']
        finally:
            await nc.close()
        assert await _held(site, subject_for("cab-1")) == 0
        assert await _held(site, subject_for("bj-1")) == 1  # its five rows, already journaled, in one batch

    asyncio.run(scenario())


def test_a_cabinet_publishes_only_its_own_contributions_and_hits_and_follows_only_its_link(site: Site) -> None:
    """The progressives' stream (controller/floor/progressive_fold.py's subjects): a cabinet writes its own subject
    of its link, reads its link's messages back through a consumer, and nothing of another cabinet or link."""
    from nats.js.api import AckPolicy, ConsumerConfig, StreamConfig

    from controller.floor.server import connect

    async def scenario() -> None:
        admin = await connect([site.url], credentials=site.cred("floor-service"))
        ajs = admin.jetstream(timeout=2.0)
        await ajs.add_stream(StreamConfig(name="CROUPIER_LINK", subjects=["croupier.link.>"]))
        await ajs.publish("croupier.link.L2.cab-9", b'{"other": "link"}')
        nc, seen, refused = await _violations(site, "cab-1")
        js = nc.jetstream(timeout=2.0)
        try:
            for subject in ("croupier.link.L1.cab-2", "croupier.link.L2.cab-1", "croupier.journal.cab-2"):
                refused.clear()
                await nc.publish(subject, b"{}")
                await asyncio.wait_for(refused.wait(), 10)
            await js.publish("croupier.link.L1.cab-1", b'{"contrib": 1}')  # acknowledged by the stream
            await js.publish("croupier.link.L1.cab-1", b'{"hit": 1}')
            assert (await js.stream_info("CROUPIER_LINK")).state.messages == 3
            config = ConsumerConfig(ack_policy=AckPolicy.NONE, inactive_threshold=5.0)
            sub = await js.pull_subscribe("croupier.link.L1.*", stream="CROUPIER_LINK", config=config)
            msgs = await sub.fetch(2, timeout=5)
            assert [m.data for m in msgs] == [b'{"contrib": 1}', b'{"hit": 1}']
            refused_js = nc.jetstream(timeout=0.5)  # a refused API request is never answered: a short wait
            with pytest.raises(Exception):  # noqa: B017 - another link's messages: the consumer is never made
                await refused_js.pull_subscribe("croupier.link.L2.*", stream="CROUPIER_LINK",
                                                config=config)
            with pytest.raises(Exception):  # noqa: B017 - nor may it delete the stream
                await refused_js.delete_stream("CROUPIER_LINK")
            assert (await ajs.stream_info("CROUPIER_LINK")).state.messages == 3
        finally:
            await nc.close()
            await ajs.delete_stream("CROUPIER_LINK")
            await admin.close()
        refused_subjects = ("croupier.link.L1.cab-2", "croupier.link.L2.cab-1", "croupier.journal.cab-2")
        assert seen[:3] == [f'nats: permissions violation for publish to "{s.lower()}"'  # nats-py lowers it
                            for s in refused_subjects]
        assert all("permissions violation for publish to \"$js.api." in e for e in seen[3:]) and len(seen) == 5, seen

    asyncio.run(scenario())


def test_a_client_without_a_site_certificate_is_refused(site: Site) -> None:
    import nats

    async def scenario() -> None:
        ctx = ssl.create_default_context(cafile=str(site.folder / "ca" / "ca.pem"))  # trusts the floor, no cert
        with pytest.raises(Exception):  # noqa: B017 - the TLS handshake or the authorization fails
            nc = await nats.connect(servers=[site.url], tls=ctx, connect_timeout=2, max_reconnect_attempts=0,
                                    allow_reconnect=False)
            await nc.close()

    asyncio.run(scenario())


@pytest.mark.slow
def test_the_deploy_configs_run_a_three_node_tls_cluster_a_machine_replicates_to(site: Site, tmp_path: Path) -> None:
    """deploy/floor/nats-floor{1,2,3}.conf as shipped, only their addresses, store and certificate paths moved onto
    loopback and this test's site: the nodes route over TLS, a machine replicates to the R3 stream."""
    import subprocess

    from controller.floor.server import connect, ensure_journal_stream, find_server

    deploy = Path(__file__).resolve().parents[1] / "deploy" / "floor"
    ports = free_ports(9)
    client, route, http = ports[0:3], ports[3:6], ports[6:9]
    procs = []
    for i in range(3):
        add_server(site.folder, f"floor{i + 1}", ("127.0.0.1",))
        node = tmp_path / f"node{i + 1}"
        node.mkdir()
        text = (deploy / f"nats-floor{i + 1}.conf").read_text()
        for old, new in [('"0.0.0.0:4222"', f'"127.0.0.1:{client[i]}"'), ('"0.0.0.0:6222"', f'"127.0.0.1:{route[i]}"'),
                         ('"127.0.0.1:8222"', f'"127.0.0.1:{http[i]}"'), ("/var/lib/nats/jetstream", str(node / "js")),
                         ("/etc/croupier/floor/node/", f"{site.folder}/servers/floor{i + 1}/")] + \
                [(f"nats-route://floor{j + 1}:6222", f"nats-route://127.0.0.1:{route[j]}") for j in range(3)]:
            assert old in text or old.startswith("nats-route"), old
            text = text.replace(old, new)
        (node / "nats.conf").write_text(text)
        (node / "authorization.conf").write_text((site.folder / "authorization.conf").read_text())
        log = open(node / "nats.log", "wb")  # noqa: SIM115 - the child holds it
        procs.append(subprocess.Popen([str(find_server()), "-c", str(node / "nats.conf")], stdout=log,
                                      stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
        log.close()
    urls = [f"tls://127.0.0.1:{p}" for p in client]
    journal = Journal(tmp_path / "cab-2.journal", "cab-2", key_file=tmp_path / "k", anchor=tmp_path / "a")
    journal.append_many([{"kind": "refused", "who": "test", "reason": str(i), "request": {}} for i in range(7)])
    journal.close()

    async def scenario() -> None:
        for _ in range(100):  # just-started nodes: try again until one listens (bounded)
            try:
                nc = await connect(urls, credentials=site.cred("floor-service"), max_reconnect_attempts=1)
                break
            except Exception:  # noqa: BLE001
                await asyncio.sleep(0.1)
        else:
            raise AssertionError("no deploy-style node accepted the floor service")
        try:
            js = nc.jetstream(timeout=2.0)
            await ensure_journal_stream(js, replicas=3, timeout=30)  # R3 needs the three nodes routed over TLS
            await replicate(tmp_path / "cab-2.journal", "cab-2", urls, 7, site.cred("cab-2"))
            info = await js.stream_info(STREAM, subjects_filter=subject_for("cab-2"))
            assert info.config.num_replicas == 3 and len(info.cluster.replicas or []) == 2
            assert (info.state.subjects or {}).get(subject_for("cab-2")) == 1  # its seven rows in one batch
        finally:
            await nc.close()

    try:
        asyncio.run(scenario())
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)


def test_an_embedded_floor_with_a_site_takes_tls_and_the_machines_users(site: Site, tmp_path: Path) -> None:
    """`croupier floor serve --embedded --site SITE`: the one local server speaks TLS with the site's users; a machine
    replicates with its credential and the page lists it; the server stops with the service."""
    add_server(site.folder, "embedded", ("127.0.0.1",))
    nats_port, page_port = free_ports(2)
    served = ServedFloor(tmp_path / "state", nats_port, page_port, "--site", str(site.folder))
    journal = Journal(tmp_path / "bj-1.journal", "bj-1", key_file=tmp_path / "k", anchor=tmp_path / "a")
    journal.append_many([{"kind": "refused", "who": "test", "reason": str(i), "request": {}} for i in range(3)])
    journal.close()
    try:
        token = served.token()
        assert served.lines[0].startswith(f"floor: embedded nats-server at tls://127.0.0.1:{nats_port}")
        servers = [f"tls://127.0.0.1:{nats_port}"]
        asyncio.run(replicate(tmp_path / "bj-1.journal", "bj-1", servers, 3, site.cred("bj-1")))

        def view() -> dict[str, Any]:
            return floor_page_json(page_port, token)

        async def until_listed() -> list[tuple[str, int]]:
            seen: list[tuple[str, int]] = []
            for _ in range(100):  # the page is polled: the service folds in its own process
                seen = [(m["machine"], m["floor_seq"]) for m in (await asyncio.to_thread(view))["machines"]]
                if seen == [("bj-1", 3)]:
                    break
                await asyncio.sleep(0.1)
            return seen

        assert asyncio.run(until_listed()) == [("bj-1", 3)]
    finally:
        rc = served.stop()
    assert rc == 0 and served.lines[-1] == "floor: stopped\n", "".join(served.lines)
