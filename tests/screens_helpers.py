"""Helpers for the screens tests: a simulated table with its screens bridge, a WebSocket reader, the phase of a table, a demo's recorded views and pages served from them."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import aiohttp

from controller.bus import create_keys
from controller.screens.bridge import Bridge, source_for_table
from controller.table import Table

TOKEN = "test-dealer-token-0123456789"


def run(coro: Any, timeout: float = 120) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))


@asynccontextmanager
async def stack(cfg: Any, *, port: int = 0, start_table: bool = True, **source: Any) -> AsyncIterator[tuple[Any, Bridge]]:
    """A running table (unless start_table is False) and a bridge following it on 127.0.0.1. A started table's
    shoe has answered first: its link coming up is a record, which would land in the middle of a test."""
    table = Table(cfg)
    if start_table:
        await table.start()
        if table.shoe is not None:
            assert await table.wait_for(lambda state: state.shoe.link, 10), "the simulated shoe never answered"
    try:
        async with bridged(source_for_table(cfg, **source), cfg.bus.heartbeat, port) as bridge:
            yield table, bridge
    finally:
        if start_table:
            await table.stop()


@asynccontextmanager
async def bridged(source: Any, heartbeat: float, port: int = 0) -> AsyncIterator[Bridge]:
    """A bridge following one table's or cabinet's `source` on 127.0.0.1, closed on the way out."""
    bridge = Bridge([source], dealer_token=TOKEN, host="127.0.0.1", port=port, heartbeat=heartbeat)
    await bridge.start()
    try:
        yield bridge
    finally:
        await bridge.close()


def with_keys(cfg: Any, folder: Path, role: str, screens: dict[str, Any]) -> Any:
    """`cfg` with CURVE keys (in `folder`/keys) for the server, a `role` client and an ops client, and `screens`
    as its [screens] section."""
    keys = folder / "keys"
    for name in ("server", role, "ops"):
        create_keys(keys, name)
    return dataclasses.replace(cfg, raw={**cfg.raw, "screens": screens}, bus=dataclasses.replace(
        cfg.bus, keys=keys, clients=((keys / f"{role}.key", role), (keys / "ops.key", "ops"))))


def phase(table: Any) -> str:
    return table.game.expected_next(table.state.game).phase


class Socket:
    """A screen's WebSocket read from Python: every message kept, parsed."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self.ws = ws
        self.messages: list[dict[str, Any]] = []

    async def next(self, kind: str | None = None, timeout: float = 10) -> dict[str, Any]:
        while True:
            msg = await asyncio.wait_for(self.ws.receive(), timeout)
            if msg.type != aiohttp.WSMsgType.TEXT:
                raise ConnectionError(f"socket closed: {msg.type} {msg.data} {msg.extra}")
            body = json.loads(msg.data)
            self.messages.append(body)
            if kind is None or body["kind"] == kind:
                return body

    async def until_seq(self, seq: int, timeout: float = 10) -> dict[str, Any]:
        """The first state message at or past `seq`, among those already read or the next ones."""
        for body in self.messages:
            if body["kind"] in ("update", "snapshot") and body["seq"] >= seq:
                return body
        while True:
            body = await self.next(timeout=timeout)
            if body["kind"] in ("update", "snapshot") and body["seq"] >= seq:
                return body

    async def send(self, body: Any) -> None:
        await self.ws.send_str(body if isinstance(body, str) else json.dumps(body))


def url(bridge: Any, path: str, ws: bool = False) -> str:
    return f"{'ws' if ws else 'http'}://127.0.0.1:{bridge.port}{path}"


@asynccontextmanager
async def dealer_socket(http: aiohttp.ClientSession, bridge: Any, sid: str) -> AsyncIterator[Socket]:
    """A staff screen's WebSocket: `sid`'s dealer view, opened with the dealer token's cookie."""
    async with http.ws_connect(url(bridge, f"/ws/{sid}/dealer", ws=True),
                               headers={"Cookie": f"croupier_dealer={TOKEN}"}) as ws:
        yield Socket(ws)


def cards_in(node: Any, up: bool) -> set[str]:
    """The identities of the face-up (or face-down) cards anywhere in a view or snapshot."""
    found: set[str] = set()
    if isinstance(node, dict):
        if node.get("up") is up and isinstance(node.get("card"), str):
            found.add(node["card"])
        for value in node.values():
            found |= cards_in(value, up)
    elif isinstance(node, list):
        for value in node:
            found |= cards_in(value, up)
    return found


def artifacts(name: str) -> Path:
    """The folder for a test's artifacts (screenshots): artifacts/screens/ at the root (gitignored)."""
    folder = Path(__file__).resolve().parents[1] / "artifacts" / "screens"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / name


async def recorded_views(tmp: Path, game: str, rounds: int = 3, seed: int = 3, audience: str = "public",
                         rules: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A demo's table of `game` (module name, with `rules` over its defaults) dealt `rounds` rounds by Autoplay:
    (its pages' info, every `audience` ("public" or "dealer") view it published, in order)."""
    from controller.autoplay import Autoplay
    from controller.rng import SeededRng
    from tests.table_helpers import table_config

    cfg = table_config(tmp, game, seed=seed, rules=rules)
    table = Table(cfg)
    await table.start()
    views: list[dict[str, Any]] = []
    table.on_publish = lambda v: views.append(v[1][audience])
    try:
        await Autoplay(table, SeededRng(seed + 1), rounds=rounds).run()
    finally:
        await table.stop()
    return source_for_table(cfg).info, views


class Replay:
    """The screens' pages served from recorded views instead of a bus: `await show(table, state)` sends the
    table's pages that state as the next update (a page opened later gets it as its snapshot). The dealer page
    (/dealer/<id>) is served too, with no token: it is sent whatever state is shown (a dealer view for it)."""

    def __init__(self) -> None:
        self.info: dict[str, dict[str, Any]] = {}
        self.state: dict[str, tuple[int, dict[str, Any]]] = {}
        self.sockets: dict[str, list[Any]] = {}
        self.port = 0
        self._runner: Any = None

    async def start(self) -> None:
        from aiohttp import web

        from controller.screens.bridge import STATIC
        from controller.screens.pages import PAGES, render_page

        async def page(request: web.Request) -> web.Response:
            name = "spot" if "spot" in request.match_info else "dealer" if request.path.startswith("/dealer/") \
                else "table"
            params = {"spot": int(request.match_info["spot"])} if name == "spot" else {}
            text = render_page(PAGES[name], request.match_info["id"], params)
            return web.Response(text=text, content_type="text/html")

        async def socket(request: web.Request) -> web.WebSocketResponse:
            table = request.match_info["id"]
            ws = web.WebSocketResponse()
            await ws.prepare(request)
            seq, state = self.state[table]
            await ws.send_json({"kind": "snapshot", "seq": seq, "ts": time.time(), "now": time.time(),
                                "info": self.info[table], "state": state})
            self.sockets.setdefault(table, []).append(ws)
            async for _ in ws:
                pass
            return ws

        app = web.Application()
        app.router.add_get("/table/{id}", page)
        app.router.add_get("/table/{id}/spot/{spot:[0-9]+}", page)
        app.router.add_get("/dealer/{id}", page)
        app.router.add_get("/ws/{id}/{view:public|dealer}", socket)
        app.router.add_static("/static/", STATIC)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def show(self, table: str, info: dict[str, Any], state: dict[str, Any]) -> int:
        """Send `state` to `table`'s pages; returns its seq. The info's heartbeat is long: nothing resnapshots."""
        self.info[table] = {**info, "heartbeat": 3600}
        prev = self.state.get(table, (0, None))[0]
        self.state[table] = (prev + 1, state)
        for ws in list(self.sockets.get(table, [])):
            if ws.closed:
                self.sockets[table].remove(ws)
            else:
                await ws.send_json({"kind": "update", "seq": prev + 1, "prev": prev, "ts": time.time(), "state": state})
        return prev + 1

    async def close(self) -> None:
        for sockets in self.sockets.values():
            for ws in sockets:
                await ws.close()
        if self._runner is not None:
            await self._runner.cleanup()
