"""The pit page (/pit/<id>): a supervisor's view of a pit's tables (ratings, advantage-play alerts with their plots, paperwork, the shift's figures), behind a token of its own and fed by each table's `pit` command.

    GET /pit/<id>?token=T     checks the pit token (never the dealer's), sets it as an HttpOnly cookie
                              (croupier_pit) and redirects to /pit/<id>; no or another token: 401
    GET /pit/<id>/ws          the page's WebSocket, behind the same token (and the same origin): the bridge asks
                              each table of the pit `pit` with its pit CURVE key (the table answers that command
                              to the pit role only) and sends
                              {"kind": "pit", "pit", "now", "tables": [{"id", "info", "ok", "view" | "error"}]}
                              at once, again after any of those tables publishes a state (alerts are folded as
                              the records are written, so the pit sees one as it is raised), and every
                              `REFRESH_S` seconds (the sessions' times go on). It carries no commands.

Nothing of it reaches another page: the table's views (public, dealer) hold no rating, alert or slip, and the
`pit` answer goes only down this socket.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

from aiohttp import WSCloseCode, WSMsgType, web

from controller.bus import BusEndpoints, CommandClient, CommandError
from controller.screens.pages import Page, render_page
from controller.screens.tokens import refuse_other_origin, token_to_cookie

__all__ = ["PitTable", "PitSettings", "PitPages", "PIT_COOKIE", "PIT_PAGE", "REFRESH_S"]

log = logging.getLogger("croupier.screens")

PIT_COOKIE = "croupier_pit"
REFRESH_S = 5.0
# Not in the page registry: the generic page handlers serve a table's or cabinet's pages by the dealer token.
PIT_PAGE = Page("pit", "/pit/{id}", "pit", "pit.js", "Pit", dealer=True, kind="pit")


@dataclass(frozen=True)
class PitTable:
    """How the bridge asks one table for its pit view."""

    id: str
    endpoints: BusEndpoints
    keys: tuple[bytes, bytes] | None
    server_public: bytes | None


@dataclass(frozen=True)
class PitSettings:
    token: str
    pits: Mapping[str, tuple[str, ...]]                     # pit id -> its tables' ids, in order
    tables: Mapping[str, PitTable] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.token:
            raise ValueError("the pit page needs a token")
        for pit, ids in self.pits.items():
            missing = [t for t in ids if t not in self.tables]
            if missing:
                raise ValueError(f"pit {pit}: no pit key to ask table {', '.join(missing)} with")


class PitPages:
    """The pit page's two routes on a `Bridge` (its sources' info, its feeds' updates, its token limits)."""

    def __init__(self, bridge: Any, settings: PitSettings) -> None:
        self.bridge, self.settings = bridge, settings
        self._digest = hashlib.sha256(settings.token.encode()).digest()
        self._clients: dict[str, tuple[CommandClient, asyncio.Lock]] = {}
        self.sockets: set[web.WebSocketResponse] = set()
        self.sent = 0   # messages sent to pit pages (tests, figures)

    def routes(self, app: web.Application) -> None:
        app.router.add_get("/pit/{id}", self._page)
        app.router.add_get("/pit/{id}/ws", self._socket)

    def _tables(self, request: web.Request) -> tuple[str, tuple[str, ...]]:
        pit = request.match_info["id"]
        tables = self.settings.pits.get(pit)
        if tables is None:
            raise web.HTTPNotFound(text=f"no pit {pit!r} here (pits: {', '.join(self.settings.pits) or 'none'})")
        return pit, tables

    async def _page(self, request: web.Request) -> web.StreamResponse:
        pit, tables = self._tables(request)
        if not self.bridge._authorised(request, f"pit page {request.path}", self._digest, PIT_COOKIE):
            raise web.HTTPUnauthorized(text=f"the pit page needs the pit's token: open {request.path}?token=... (the "
                                            "token is in the config, [screens].pit_token_file)")
        token_to_cookie(request, PIT_COOKIE, "/pit/")
        return web.Response(text=render_page(PIT_PAGE, pit, {"tables": list(tables)}), content_type="text/html")

    async def _socket(self, request: web.Request) -> web.StreamResponse:
        pit, tables = self._tables(request)
        if not self.bridge._authorised(request, "pit WebSocket", self._digest, PIT_COOKIE):
            raise web.HTTPForbidden(text="the pit view needs the pit token")
        refuse_other_origin(request, "pit WebSocket")
        ws = web.WebSocketResponse(compress=False, max_msg_size=4096, autoping=True, heartbeat=None)
        await ws.prepare(request)
        changed = asyncio.Event()
        feeds = [f for (sid, _), f in self.bridge.feeds.items() if sid in tables]
        for feed in feeds:
            feed.watchers.append(changed.set)
        self.sockets.add(ws)
        sender = asyncio.create_task(self._send(ws, pit, tables, changed))
        try:
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    await ws.send_str(json.dumps({"kind": "error", "error": "the pit page sends no commands"}))
        finally:
            sender.cancel()
            await asyncio.gather(sender, return_exceptions=True)
            for feed in feeds:
                feed.watchers.remove(changed.set)
            self.sockets.discard(ws)
        return ws

    async def _send(self, ws: web.WebSocketResponse, pit: str, tables: tuple[str, ...], changed: asyncio.Event) -> None:
        try:
            while not ws.closed:
                changed.clear()
                answers = [await self._ask(t) for t in tables]
                await ws.send_str(json.dumps({"kind": "pit", "pit": pit, "now": time.time(), "tables": answers}))
                self.sent += 1
                try:
                    await asyncio.wait_for(changed.wait(), REFRESH_S)
                except asyncio.TimeoutError:
                    pass
        except (ConnectionError, RuntimeError):
            pass   # the socket closed under us; the handler cleans up

    async def _ask(self, table: str) -> dict[str, Any]:
        source = self.bridge.sources.get(table)
        info = source.info if source is not None else {"id": table}
        out: dict[str, Any] = {"id": table, "info": {k: info.get(k) for k in ("id", "game", "title", "spots")}}
        client, lock = self._client(table)
        try:
            async with lock:   # one request at a time on the DEALER socket, so replies pair up with requests
                reply = await client.send("pit")
        except CommandError as exc:
            return {**out, "ok": False, "error": str(exc)}
        if not reply.get("ok"):
            return {**out, "ok": False, "error": str(reply.get("error", "refused"))}
        return {**out, "ok": True, "view": reply.get("result")}

    def _client(self, table: str) -> tuple[CommandClient, asyncio.Lock]:
        if table not in self._clients:
            t = self.settings.tables[table]
            client = CommandClient(t.endpoints.commands, t.keys, t.server_public, context=self.bridge.context,
                                   table=table)
            self._clients[table] = (client, asyncio.Lock())
        return self._clients[table]

    async def close(self) -> None:
        for ws in list(self.sockets):
            await ws.close(code=WSCloseCode.GOING_AWAY, message=b"bridge stopping")
        for client, _ in self._clients.values():
            client.close()
