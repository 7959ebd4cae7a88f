"""The screens bridge: a Clone client of each table's (or cabinet's) bus that serves the pages and one WebSocket per screen.

Browsers cannot speak ZeroMQ. The bridge subscribes to a table's `public` and `dealer` views with
`controller.bus.BusClient` (snapshot, then updates in seq order; a gap or silence means a new snapshot)
and fans each view out to the screens bound to it:

    GET /table/<id>, /table/<id>/spot/<n>     player pages (public view)
    GET /dealer/<id>?token=T                  the dealer page: checks the token, sets it as an HttpOnly
                                              cookie and redirects to /dealer/<id>
    GET /cabinet/<id>                         a slot cabinet's screen (public view)
    GET /cabinet/<id>/attendant?token=T       the attendant's page (dealer view), behind the same token
    GET /pit/<id>?token=T, /pit/<id>/ws       the pit page and its socket, behind a token of its own (pit.py)
    GET /ws/<id>/<view>                       a screen's WebSocket; any view but public needs the token (wrong
                                              tokens limited per address and overall: TokenTries, then 429)
    GET /healthz                              200 {"ok": true, ...} once every table has been heard recently
    GET /static/...                           the pages' CSS and scripts (no build step, no CDN)

WebSocket messages (JSON text), bridge to screen:
    {"kind": "snapshot", "seq", "ts", "now", "info", "state"}  first on connect; again after the bridge's
                                               own resnapshot (a gap on the bus): the screen starts over
    {"kind": "update", "seq", "prev", "ts", "state"}  the next state: `prev` is the seq of the state before
    {"kind": "heartbeat", "seq", "now", "stale"} every heartbeat; `seq` is the latest
    {"kind": "reply", "id", "ok", "error"|"result"}   the answer to a dealer page's command
    {"kind": "side", "name", "state"}          another bus's public state a page shows beside its own view (a
                                               cabinet's progressive: name "link"); the snapshot's "side": {name: state}
    {"kind": "error", "error"}                 a message the bridge refused
A screen that sees an update whose `prev` is not its seq, a heartbeat with another seq, or three heartbeats of
silence reconnects for a fresh snapshot; one that falls behind (its queue fills) is disconnected and does the same.
`ts` is the table's publish time, `now` the bridge's clock: a screen counts down `bets_close_at` on the table's.

Screen to bridge, dealer views only: {"id": 1, "command": "resolve", "args": {"alert": 4, "action": "discard"}}.
The bridge forwards it as a `CommandClient` command signed with its dealer CURVE key (from the config): the table
checks the role and journals it like any dealer command. Each source names the commands its staff pages may send
(DEALER_PAGE_COMMANDS, ATTENDANT_PAGE_COMMANDS). A player page's WebSocket carries no commands: it is refused.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import struct
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from aiohttp import WSCloseCode, WSMsgType, web

from controller.bus import BusClient, BusEndpoints, CommandClient, CommandError
from controller.screens.pages import PAGES, Page, render_page
from controller.screens.tokens import TokenTries, offered_digest, refuse_other_origin, token_to_cookie

__all__ = ["Source", "Bridge", "serve_app", "DEALER_PAGE_COMMANDS", "ATTENDANT_PAGE_COMMANDS", "COOKIE", "source_for_table",
           "source_for_cabinet", "TokenTries"]

log = logging.getLogger("croupier.screens")

STATIC = Path(__file__).with_name("static")
COOKIE = "croupier_dealer"
# What a dealer page may ask the table for. The table checks the dealer role again; the bridge never
# forwards anything else (no bets, no cards, no audit) whatever a page sends.
DEALER_PAGE_COMMANDS = ("resolve", "void", "open_bets", "close_bets", "settle", "shuffle", "manual_entry")
# What an attendant's page may ask a cabinet for: clear a lockup (the cabinet checks who may clear which).
ATTENDANT_PAGE_COMMANDS = ("clear",)
# ... and, at a cabinet with a simulated validator (the demo's), put a note or ticket into it.
SIM_VALIDATOR_PAGE_COMMANDS = ("insert_note", "insert_ticket")
QUEUE = 64            # messages a screen may lag behind before it is told to resnapshot
MAX_MESSAGE = 4096    # bytes of a command from a dealer page


async def serve_app(app: web.Application, host: str, port: int) -> tuple[web.AppRunner, int]:
    """Serve an aiohttp app on host:port (0: any free port): its runner and the port it got; an OSError if the port
    is taken, with nothing left running (the screens' bridge and the floor's page)."""
    runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    site = web.TCPSite(runner, host, port, reuse_address=True)
    try:
        await site.start()
    except OSError:
        await runner.cleanup()
        raise
    return runner, port or runner.addresses[0][1]


@dataclass
class Source:
    """One table or cabinet the bridge follows: its bus and what its pages need to know."""

    id: str
    endpoints: BusEndpoints
    info: dict[str, Any]                          # static facts for the pages: game, title, rules, spots
    views: tuple[str, ...] = ("public", "dealer")
    dealer_keys: tuple[bytes, bytes] | None = None
    server_public: bytes | None = None
    commands: bool = True                          # dealer pages may send commands
    kind: str = "table"                            # "table" or "cabinet": which pages serve it
    page_commands: tuple[str, ...] = DEALER_PAGE_COMMANDS   # what its staff pages may send
    link: tuple[str, BusEndpoints] | None = None   # a linked progressive: its id and bus (`<link-id>/public`)
    curve_screens: bool = False                    # follow the views over CURVE, with dealer_keys


def source_for_table(cfg: Any, dealer_keys: tuple[bytes, bytes] | None = None, server_public: bytes | None = None,
                     commands: bool = True, four_colour: bool = False) -> Source:
    """A Source from a table config (controller.config.TableConfig)."""
    rules = cfg.rules.to_json()
    info = {"id": cfg.table_id, "game": cfg.game.name, "title": cfg.game.title, "boxes": list(cfg.game.boxes),
            "spots": rules.get("spots"), "rules": rules, "four_colour": four_colour, "heartbeat": cfg.bus.heartbeat,
            "commands": list(DEALER_PAGE_COMMANDS) if commands else []}
    return Source(cfg.table_id, cfg.bus.endpoints, info, dealer_keys=dealer_keys, server_public=server_public,
                  commands=commands, curve_screens=cfg.bus.curve_screens)


def source_for_cabinet(cfg: Any, dealer_keys: tuple[bytes, bytes] | None = None, server_public: bytes | None = None,
                       commands: bool = True) -> Source:
    """A Source from a cabinet config (controller.config.CabinetConfig): the title's symbols, reel strips,
    paylines and paytables for the cabinet screen, the attendant page's commands, the link to follow."""
    from controller.slots.title import LINES

    t = cfg.title
    link = cfg.link
    sim_validator = bool(getattr(cfg.validator, "simulated", False))
    page_commands = ATTENDANT_PAGE_COMMANDS + (SIM_VALIDATOR_PAGE_COMMANDS if sim_validator else ())
    info = {"id": cfg.cabinet_id, "kind": "cabinet", "title": t.name, "title_id": t.id,
            "denomination": cfg.denomination, "lines": t.lines, "max_coins": t.max_coins,
            "paylines": [list(rows) for rows in LINES[:t.lines]],
            "symbols": {code: {"name": s.name, "blank": s.blank} for code, s in t.symbols.items()},
            "strips": [[r.stops[p] for p in range(r.size)] for r in t.reels],
            "paytables": [{"name": p.name, "color": p.color, "rows": [_pay_row(row) for row in p.rows]}
                          for p in t.paytables],
            "wild": {"symbol": t.wild.symbol, "multiplier": t.wild.multiplier} if t.wild else None,
            "features": [{"kind": f.kind, "text": f.describe()} for f in t.features],
            "reels": cfg.reels, "spin_seconds": cfg.spin_seconds,
            "progressive": cfg.settings.progressive, "link": link.link_id if link else None,
            "heartbeat": cfg.bus.heartbeat, "commands": list(page_commands) if commands else [],
            "validator": "sim" if sim_validator else bool(cfg.validator),
            "printer": "sim" if getattr(cfg.printer, "simulated", False) else bool(cfg.printer)}
    return Source(cfg.cabinet_id, cfg.bus.endpoints, info, dealer_keys=dealer_keys, server_public=server_public,
                  commands=commands, kind="cabinet", page_commands=page_commands,
                  curve_screens=cfg.bus.curve_screens,
                  link=(link.link_id, link.endpoints) if link and link.endpoints else None)


def _pay_row(row: Any) -> dict[str, Any]:
    """A paytable row for the cabinet screen: per reel the symbols that make it (or `count` of some anywhere)."""
    pattern = row.pattern

    def cell(m: Any) -> dict[str, Any]:
        return {"symbols": sorted(m.symbols), "any": m.is_any, "text": m.text}

    out: dict[str, Any] = {"text": row.text, "pays": list(row.pays)}
    if pattern.positions is not None:
        out["cells"] = [cell(m) for m in pattern.positions]
    else:
        out["anywhere"] = cell(pattern.anywhere)
        out["count"] = pattern.count
    return out


async def _no_content(request: web.Request) -> web.Response:
    return web.Response(status=204)


_LAST_FRAME: list[Any] = [None, b""]   # the last message pushed and its frame


def _frame(text: str) -> bytes:
    """`text` as an unmasked WebSocket text frame (RFC 6455 5.2). A feed pushes the same message object to
    every screen, so the last one's frame is kept: it is encoded once per update, not once per screen."""
    if text is _LAST_FRAME[0]:
        return _LAST_FRAME[1]
    payload = text.encode()
    n = len(payload)
    header = bytes((0x81, n)) if n < 126 else struct.pack("!BBH", 0x81, 126, n) if n < 65536 \
        else struct.pack("!BBQ", 0x81, 127, n)
    _LAST_FRAME[:] = [text, header + payload]
    return _LAST_FRAME[1]


class _Screen:
    """One connected screen: a bounded queue and a task that writes it to the socket in order.

    While the screen keeps up (nothing queued, nothing unsent in its transport) a message is written to the
    transport at once as a prebuilt frame: with 500 screens a queue and a task wake-up per screen and update
    were most of the bridge's CPU (`croupier bench screens --fanout`). A screen that lags goes through the
    queue, whose sender waits for the socket to drain, and past QUEUE messages is told to resnapshot."""

    def __init__(self, ws: web.WebSocketResponse, peer: str, transport: asyncio.Transport | None = None) -> None:
        self.ws, self.peer, self.transport = ws, peer, transport
        self.queue: asyncio.Queue[str] = asyncio.Queue(QUEUE)
        self.task = asyncio.create_task(self._send())
        self.dropped = False
        self.sending = False   # the sender holds a message it has not finished writing

    def push(self, text: str) -> None:
        if self.dropped:
            return
        transport = self.transport
        if transport is not None and not self.sending and self.queue.empty() and not self.ws.closed \
                and not transport.is_closing() and not transport.get_write_buffer_size():
            transport.write(_frame(text))
            return
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            # It would miss updates: tell it to start over from a snapshot rather than show a wrong table.
            self.dropped = True
            log.info("screen %s fell %d messages behind: disconnected to resnapshot", self.peer, QUEUE)
            asyncio.get_running_loop().create_task(self.ws.close(code=WSCloseCode.TRY_AGAIN_LATER,
                                                                 message=b"behind: resnapshot"))

    async def _send(self) -> None:
        try:
            while True:
                text = await self.queue.get()
                self.sending = True
                await self.ws.send_str(text)
                self.sending = False
        except (ConnectionError, RuntimeError):
            pass  # the socket closed under us; the handler cleans up

    def stop(self) -> None:
        self.task.cancel()


@dataclass
class _Feed:
    """One view of one source: the bus client, the latest state, the screens bound to it."""

    source: Source
    view: str
    heartbeat: float
    context: Any
    seq: int = -1
    ts: float | None = None
    state: dict[str, Any] | None = None
    screens: set[_Screen] = field(default_factory=set)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    sides: dict[str, _Feed] = field(default_factory=dict)     # other feeds its pages show beside (name -> feed)
    followers: list[tuple[str, _Feed]] = field(default_factory=list)  # feeds whose screens show this one as a side
    watchers: list[Callable[[], None]] = field(default_factory=list)   # told of each state (the pit pages)
    bus_latency: deque[float] = field(default_factory=lambda: deque(maxlen=20_000))  # bus publish -> here, s
    # (seq, s) from the bus publish to the update handed to the last of its screens (bench screens --fanout)
    fanout_latency: deque[tuple[int, float]] = field(default_factory=lambda: deque(maxlen=20_000))

    def __post_init__(self) -> None:
        curve = self.source.curve_screens
        self.client = BusClient(self.source.id, self.view, self.source.endpoints, self._on_state,
                                heartbeat_s=self.heartbeat, context=self.context,
                                client_keys=self.source.dealer_keys if curve else None,
                                server_public=self.source.server_public if curve else None)

    def _on_state(self, seq: int, state: dict[str, Any]) -> None:
        prev, follows = self.seq, self.client.linked
        self.seq, self.state, self.ts = seq, state, self.client.ts
        if self.ts is not None:
            self.bus_latency.append(time.time() - self.ts)
        self.ready.set()
        for watcher in self.watchers:
            watcher()
        if self.followers:
            for name, feed in self.followers:
                if feed.screens:
                    side = json.dumps({"kind": "side", "name": name, "state": state})
                    for screen in feed.screens:
                        screen.push(side)
        if not self.screens:
            return
        text = json.dumps({"kind": "update", "seq": seq, "prev": prev, "ts": self.ts, "state": state}) if follows \
            else self.snapshot()
        for screen in self.screens:
            screen.push(text)
        if self.ts is not None:
            self.fanout_latency.append((seq, time.time() - self.ts))

    def snapshot(self) -> str:
        return json.dumps({"kind": "snapshot", "seq": self.seq, "ts": self.ts, "now": time.time(),
                           "table": self.source.id, "view": self.view, "info": self.source.info, "state": self.state,
                           "side": {name: feed.state for name, feed in self.sides.items()}})

    def stale(self) -> bool:
        return time.monotonic() - self.client.heard > 3 * self.heartbeat


class Bridge:
    """The web server. `await start()`, then `port` is bound; `await close()` stops it."""

    def __init__(self, sources: list[Source], *, dealer_token: str, host: str = "0.0.0.0", port: int = 8080,
                 heartbeat: float = 1.0, context: Any = None, pages: dict[str, Page] | None = None,
                 token_tries: TokenTries | None = None, pit: Any = None) -> None:
        if not dealer_token:
            raise ValueError("the dealer pages need a token")
        self.sources = {s.id: s for s in sources}
        self.dealer_token = dealer_token
        # Compared as digests: the same length whatever is offered, so the time taken tells nothing of the token.
        self._token_digest = hashlib.sha256(dealer_token.encode()).digest()
        self.token_tries = token_tries or TokenTries()
        self.host, self.port = host, port
        self.heartbeat = heartbeat
        self.context = context
        self.pages = PAGES if pages is None else pages
        self.feeds = {(s.id, view): _Feed(s, view, heartbeat, context) for s in sources for view in s.views}
        # Linked progressives: one feed per link (cabinets of a link share it), shown beside each cabinet's views.
        self.links: dict[str, _Feed] = {}
        for s in sources:
            if s.link is not None:
                link_id, endpoints = s.link
                if link_id not in self.links:
                    self.links[link_id] = _Feed(Source(link_id, endpoints, {}, views=("public",), kind="link"),
                                                "public", heartbeat, context)
                for view in s.views:
                    self.feeds[(s.id, view)].sides["link"] = self.links[link_id]
                    self.links[link_id].followers.append(("link", self.feeds[(s.id, view)]))
        self._commanders: dict[str, tuple[CommandClient, asyncio.Lock]] = {}
        self._tasks: list[asyncio.Task[Any]] = []
        self._runner: web.AppRunner | None = None
        from controller.screens.pit import PitPages
        self.pit = PitPages(self, pit) if pit is not None else None   # pit: a screens.pit.PitSettings
        self.app = self._make_app()

    # ------------------------------------------------------------------------------------------ life cycle

    def _make_app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_MESSAGE)
        app.router.add_get("/", self._index)
        app.router.add_get("/healthz", self._health)
        app.router.add_get("/favicon.ico", _no_content)
        app.router.add_get("/ws/{id}/{view}", self._websocket)
        for page in self.pages.values():
            app.router.add_get(page.route, self._page_handler(page))
        if self.pit is not None:
            self.pit.routes(app)
        app.router.add_static("/static/", STATIC, append_version=False)
        app.on_response_prepare.append(self._headers)
        return app

    async def start(self) -> None:
        """Bind (an OSError if the port is taken, with nothing left running), then follow the buses."""
        self._runner, self.port = await serve_app(self.app, self.host, self.port)
        for feed in [*self.feeds.values(), *self.links.values()]:
            self._tasks.append(asyncio.create_task(self._follow(feed)))
        self._tasks.append(asyncio.create_task(self._heartbeats()))

    async def close(self) -> None:
        if self.pit is not None:
            await self.pit.close()
        for feed in self.feeds.values():
            for screen in list(feed.screens):
                await screen.ws.close(code=WSCloseCode.GOING_AWAY, message=b"bridge stopping")
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self._tasks.clear()
        if self._runner is not None:
            await self._runner.cleanup()
        for client, _ in self._commanders.values():
            client.close()

    async def _follow(self, feed: _Feed) -> None:
        while True:
            try:
                await feed.client.run()
            except asyncio.CancelledError:
                raise
            except Exception:  # a refused snapshot or a garbled message: log, wait a beat, follow again
                log.exception("bus client for %s/%s failed; retrying", feed.source.id, feed.view)
                await asyncio.sleep(self.heartbeat)

    async def _heartbeats(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat)
            now = time.time()
            for feed in self.feeds.values():
                if feed.seq < 0 or not feed.screens:
                    continue
                text = json.dumps({"kind": "heartbeat", "seq": feed.seq, "now": now, "stale": feed.stale()})
                for screen in feed.screens:
                    screen.push(text)

    # ------------------------------------------------------------------------------------------ HTTP

    @staticmethod
    async def _headers(request: web.Request, response: web.StreamResponse) -> None:
        # The pages load nothing from elsewhere and are never framed by another site.
        response.headers.setdefault("Content-Security-Policy",
                                    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                                    "frame-ancestors 'none'")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        if request.path.startswith("/static/"):
            response.headers.setdefault("Cache-Control", "no-cache")

    def _authorised(self, request: web.Request, what: str, digest: bytes | None = None, cookie: str = COOKIE) -> bool:
        """Whether the request carries the dealer token (cookie, ?token= or Bearer), or `digest`'s in `cookie` (the pit's).
        A wrong or missing one is counted against its address; past the limits 429, without a comparison."""
        tries = self.token_tries
        peer, offered = offered_digest(request, tries, cookie, "dealer")
        if hmac.compare_digest(offered, digest or self._token_digest):
            return True
        limited = tries.failed(peer)
        if limited:
            log.warning("dealer token: %s is refused (429) until the window has passed (the last at the %s)",
                        limited, what)
        else:
            log.warning("%s refused to %s: no or wrong token", what, peer)
        return False

    def _page_handler(self, page: Page) -> Callable[[web.Request], Any]:
        async def handler(request: web.Request) -> web.StreamResponse:
            table = request.match_info["id"]
            source = self.sources.get(table)
            if source is None or source.kind != page.kind:
                here = [sid for sid, s in self.sources.items() if s.kind == page.kind]
                raise web.HTTPNotFound(text=f"no {page.kind} {table!r} here ({page.kind}s: {', '.join(here) or 'none'})")
            if page.dealer:
                if not self._authorised(request, f"dealer page {request.path}"):
                    raise web.HTTPUnauthorized(text=f"the {page.name} screen needs its token: open {request.path}?token=... "
                                                    "(the token is in the config, [screens].dealer_token_file)")
                token_to_cookie(request, COOKIE, "/")
            params = {k: int(v) if v.isdigit() else v for k, v in request.match_info.items() if k != "id"}
            deck = request.query.get("deck")
            if deck in ("2", "4"):
                params["four_colour"] = deck == "4"
            return web.Response(text=render_page(page, table, params), content_type="text/html")

        return handler

    async def _index(self, request: web.Request) -> web.Response:
        rows = []
        for sid, source in self.sources.items():
            links = " ".join(f'<a href="{p.route.split("{spot")[0].replace("{id}", sid).rstrip("/")}">{p.name}</a>'
                             for p in self.pages.values() if "{spot" not in p.route and p.kind == source.kind)
            rows.append(f"<li>{sid}: {links}</li>")
        return web.Response(text=f"<!doctype html><title>Croupier screens</title><ul>{''.join(rows)}</ul>",
                            content_type="text/html")

    async def _health(self, request: web.Request) -> web.Response:
        tables: dict[str, Any] = {}
        ok = True
        for (sid, view), feed in self.feeds.items():
            entry = tables.setdefault(sid, {"views": {}})
            live = feed.seq >= 0 and not feed.stale()
            entry["views"][view] = {"seq": feed.seq, "live": live, "screens": len(feed.screens)}
            ok = ok and live
        # A silent link is reported, not fatal: the cabinet says so on its screen (status link_down).
        links = {lid: {"seq": f.seq, "live": f.seq >= 0 and not f.stale()} for lid, f in self.links.items()}
        return web.json_response({"ok": ok, "tables": tables, **({"links": links} if links else {})},
                                 status=200 if ok else 503)

    # ------------------------------------------------------------------------------------------ WebSockets

    async def _websocket(self, request: web.Request) -> web.StreamResponse:
        sid, view = request.match_info["id"], request.match_info["view"]
        feed = self.feeds.get((sid, view))
        if feed is None:
            raise web.HTTPNotFound(text=f"no view {view!r} of {sid!r} here")
        dealer = view != "public"
        if dealer:
            if not self._authorised(request, "dealer WebSocket"):
                raise web.HTTPForbidden(text="the dealer view needs the dealer token")
            refuse_other_origin(request, "dealer WebSocket")
        ws = web.WebSocketResponse(compress=False, max_msg_size=MAX_MESSAGE, autoping=True, heartbeat=None)
        await ws.prepare(request)
        if not feed.ready.is_set():
            # The table has not been heard yet: hold the screen (it shows "connecting") until it is, or
            # until the screen goes away.
            waiter = asyncio.create_task(feed.ready.wait())
            reader = asyncio.create_task(ws.receive())
            await asyncio.wait({waiter, reader}, return_when=asyncio.FIRST_COMPLETED)
            for task in (waiter, reader):
                task.cancel()
            await asyncio.gather(waiter, reader, return_exceptions=True)
            if not feed.ready.is_set() or ws.closed:
                await ws.close()
                return ws
        screen = _Screen(ws, str(request.remote), request.transport)
        screen.push(feed.snapshot())   # no await between this and joining: no update can slip in between
        feed.screens.add(screen)
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                if not dealer:
                    screen.push(json.dumps({"kind": "error", "error": "player screens send no commands"}))
                    continue
                screen.push(json.dumps(await self._command(feed.source, msg.data, str(request.remote))))
        finally:
            feed.screens.discard(screen)
            screen.stop()
        return ws

    async def _command(self, source: Source, data: str, peer: str) -> dict[str, Any]:
        req_id: Any = None
        try:
            req = json.loads(data)
            if not isinstance(req, dict):
                raise ValueError("expected a JSON object")
            req_id = req.get("id")
            command, args = req.get("command"), req.get("args", {})
            if command not in source.page_commands or not isinstance(args, dict):
                who = "an attendant" if source.kind == "cabinet" else "a dealer"
                raise ValueError(f"{who} screen sends {', '.join(source.page_commands)} with an args object")
            if not source.commands:
                raise ValueError("this bridge holds no dealer key ([screens].dealer_key): the dealer screen "
                                 "can only look")
        except ValueError as exc:
            return {"kind": "reply", "id": req_id, "ok": False, "error": f"refused by the bridge: {exc}"}
        log.info("dealer screen %s: %s %s", peer, command, json.dumps(args))
        client, lock = self._commander(source)
        try:
            async with lock:  # one request at a time on the DEALER socket, so replies pair up with requests
                reply = await client.send(command, **args)
        except CommandError as exc:
            return {"kind": "reply", "id": req_id, "ok": False, "error": str(exc)}
        except TypeError as exc:   # args that are not keywords
            return {"kind": "reply", "id": req_id, "ok": False, "error": f"refused by the bridge: {exc}"}
        out = {"kind": "reply", "id": req_id, "ok": bool(reply.get("ok"))}
        if reply.get("ok"):
            out["result"] = reply.get("result")
        else:
            out["error"] = reply.get("error", "refused")
        return out

    def _commander(self, source: Source) -> tuple[CommandClient, asyncio.Lock]:
        if source.id not in self._commanders:
            client = CommandClient(source.endpoints.commands, source.dealer_keys, source.server_public,
                                   context=self.context, table=source.id)  # any other table refuses it
            self._commanders[source.id] = (client, asyncio.Lock())
        return self._commanders[source.id]

    # ------------------------------------------------------------------------------------------ figures

    def screens(self) -> int:
        return sum(len(f.screens) for f in self.feeds.values())
