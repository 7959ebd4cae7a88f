"""The floor page (aiohttp, the screens' stack): every table and cabinet with status, meters, alerts and lockups, replication lag and link pools, behind a token per role.

Link pools: a link controller's (a machine journaling its link) from its journal's fold; a floor-engine link's
(no controller: controller/floor/progressive_fold.py) from the fold of its messages on the progressive stream,
with its last hit and whether its arithmetic balances (contributions + seed = pool + paid).

    GET /floor?token=T          the page (HTML, refreshes itself every 5 s): the token is checked, set as an
                                HttpOnly cookie and the address bar loses it (a redirect to /floor);
                                `?day=YYYY-MM-DD`: that gaming day's meters (default: the current one)
    GET /floor.json             the same as JSON (cookie, ?token= or `Authorization: Bearer T`; `?day=` too)
    GET /report/<YYYY-MM-DD>.csv  the meters report of a gaming day (the accounting role only)
    GET /healthz                200 {"ok": true, ...} while the service reads the floor; no token

Roles (service.ROLES): `supervisor` opens the page, `accounting` the page and the report. No token or a wrong
one: 401; a token of a role that does not open what was asked: 403. Wrong tokens are limited per address and
overall as the dealer page's are (screens.tokens.TokenTries: 429 with Retry-After).
"""

from __future__ import annotations

import hashlib
import hmac
import html
import logging
import re
from datetime import datetime, tzinfo
from typing import Any, Mapping

from aiohttp import web

from controller.floor.progressive_fold import PoolState
from controller.floor.report import report_csv
from controller.floor.summary import (MachineSummary, alerts_of, day_meters, gaming_day, machine_status,
                                      meter_set)
from controller.screens.bridge import serve_app
from controller.screens.tokens import TokenTries, offered_digest, token_to_cookie

__all__ = ["floor_view", "link_pool_view", "FloorPage", "COOKIE"]

log = logging.getLogger("croupier.floor")
COOKIE = "croupier_floor"
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")


def _when(ts_ns: int, tz: tzinfo | None) -> str:
    return datetime.fromtimestamp(ts_ns // 1_000_000_000, tz).isoformat(timespec="seconds")


def link_pool_view(state: PoolState, tz: tzinfo | None = None) -> dict[str, Any]:
    """A floor-engine link as the page shows it (pure): its pool and meters in cents, its last hit (the cabinet's
    time of it in `tz`), and whether the fold's balance holds: contributions + seed = pool + paid."""
    last = state.last_hit
    return {"link": state.link, "seq": state.seq, "pool": state.pool, "reset": state.reset_cents,
            "seeded": state.seeded, "contributions": state.contributions, "contributed": state.contributed,
            "hits": state.hits, "paid": state.paid, "duplicates": state.duplicates, "refused": state.refused,
            "last_hit": None if last is None else {
                "hit": last.hit, "cabinet": last.cabinet, "game": last.game, "award": last.cents,
                "denomination": last.denomination, "seq": last.seq, "time": _when(last.ts_ns, tz)},
            "balanced": state.contributed + state.seeded == state.pool + state.paid}


def floor_view(summaries: Mapping[str, MachineSummary], held: Mapping[str, int], broken: Mapping[str, str],
               pools: Mapping[str, int] | None, now_ns: int, offline_after: float, day: str,
               tz: tzinfo | None = None, link_pools: Mapping[str, PoolState] | None = None) -> dict[str, Any]:
    """What the page shows (pure): a line per machine, the links' pools (link controllers' in `links`, floor-engine
    links' folded from the progressive stream in `floor_links`), the pool stream's subjects; times in `tz` (None:
    this machine's local time)."""
    machines = []
    links = []
    for machine in sorted(set(summaries) | set(held) | set(broken)):
        s = summaries.get(machine) or MachineSummary(machine)
        today = day_meters(s, day)
        on_floor = max(held.get(machine, 0), s.seq)
        machines.append({
            "machine": machine, "kind": s.kind, "what": s.what, "denomination": s.denomination,
            "status": machine_status(s, now_ns, offline_after),
            "last_row": _when(s.last_ts_ns, tz) if s.seq else None,
            "age_s": round((now_ns - s.last_ts_ns) / 1e9, 1) if s.seq else None,
            "floor_seq": s.seq, "held": on_floor, "lag_rows": on_floor - s.seq,
            "chain": "broken: " + broken[machine] if machine in broken else "ok",
            "alerts": list(alerts_of(s)), "error": s.error,
            "today": today.json() if today else None, "meters": meter_set(s).json(),
        })
        if s.kind == "link" and s.state is not None:
            links.append({"link": machine, "pool": s.state.pool, "reset": s.state.reset_cents, "hits": s.state.hits,
                          "paid": s.state.paid, "contributed": s.state.contributed})
    return {"gaming_day": day, "machines": machines, "links": links,
            "floor_links": [link_pool_view(state, tz) for _, state in sorted((link_pools or {}).items())],
            "pool_stream": None if pools is None else dict(sorted(pools.items()))}


def _age(seconds: float) -> str:
    """A row's age as people read it: 42 s, 7 min, 3 h 5 min, 12 d 4 h."""
    s = int(seconds)
    if s < 120:
        return f"{seconds:g} s"
    if s < 3600:
        return f"{s // 60} min"
    if s < 86400:
        return f"{s // 3600} h {s % 3600 // 60} min"
    return f"{s // 86400} d {s % 86400 // 3600} h"


def _money(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100:,}.{abs(cents) % 100:02d}"


def render_floor(view: dict[str, Any], role: str) -> str:
    """The page's HTML for a view (pure)."""
    rows = []
    for m in view["machines"]:
        t = m["today"] or {}
        cells = [m["machine"], m["kind"], m["what"], m["status"], m["last_row"] or "never",
                 f"{m['floor_seq']}", f"{m['lag_rows']}", "" if m["age_s"] is None else _age(m["age_s"]),
                 f"{t.get('games', 0)}", _money(t.get("handle", 0)), _money(t.get("paid", 0)), _money(t.get("win", 0)),
                 _money(t.get("drop", 0)) if m["kind"] == "cabinet" else "",
                 "; ".join(m["alerts"]) or "", m["chain"] if m["chain"] != "ok" else (m["error"] or "ok")]
        cls = " ".join(filter(None, [m["status"], "alert" if m["alerts"] else "", "bad" if m["chain"] != "ok" or
                                     m["error"] else ""]))
        rows.append(f'<tr class="{cls}" data-machine="{html.escape(m["machine"])}">'
                    + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    head = ["machine", "kind", "game / title", "status", "last row", "floor seq", "rows behind", "last row age",
            "games", "handle", "paid", "win", "drop", "alerts and lockups", "chain"]
    links = "".join(f"<li>{html.escape(p['link'])}: pool {_money(p['pool'])} (reset {_money(p['reset'])}), "
                    f"{p['hits']} hits paid {_money(p['paid'])}</li>" for p in view["links"])
    floor_links = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in (
            p["link"], _money(p["pool"]), "" if p["reset"] is None else _money(p["reset"]), f"{p['hits']}",
            "none" if p["last_hit"] is None else
            f"{p['last_hit']['cabinet']} game {p['last_hit']['game']}: {_money(p['last_hit']['award'])} at "
            f"{p['last_hit']['time']}",
            f"{p['contributions']}", _money(p["contributed"]), _money(p["paid"]),
            "balanced" if p["balanced"] else "NOT BALANCED")) + "</tr>" for p in view.get("floor_links", ()))
    floor_html = "" if not floor_links else (
        "<h2>Floor-engine link pools</h2><table><thead><tr>" + "".join(f"<th>{h}</th>" for h in (
            "link", "pool", "reset", "hits", "last hit", "contributions", "contributed", "paid", "balance"))
        + f"</tr></thead><tbody>{floor_links}</tbody></table>")
    link_list = f"<ul>{links}</ul>" if links else "" if floor_links else "<ul><li>none on the floor</li></ul>"
    stream = view["pool_stream"]
    stream_html = "" if stream is None else "<h2>Progressive stream</h2><ul>" + "".join(
        f"<li>{html.escape(s)}: {n} messages</li>" for s, n in stream.items()) + "</ul>"
    report = (f'<p><a href="/report/{view["gaming_day"]}.csv">meters report of {view["gaming_day"]} (CSV)</a></p>'
              if role == "accounting" else "")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="5">
<meta name="viewport" content="width=device-width,initial-scale=1"><title>Croupier floor</title>
<style>body{{font-family:sans-serif;margin:1em}}table{{border-collapse:collapse}}td,th{{border:1px solid #999;
padding:2px 6px;text-align:right}}td:nth-child(-n+5),td:nth-last-child(-n+2){{text-align:left}}
tr.offline{{color:#777}}tr.alert{{background:#fff3c4}}tr.bad{{background:#f8c0c0}}</style></head>
<body><h1>Floor: gaming day {html.escape(view["gaming_day"])}</h1>
<p>{len(view["machines"])} machines ({sum(m["status"] == "online" for m in view["machines"])} online); amounts in
currency units, the gaming day's meters (another day: <code>?day=YYYY-MM-DD</code>); signed in as
{html.escape(role)}</p>{report}
<table><thead><tr>{"".join(f"<th>{h}</th>" for h in head)}</tr></thead><tbody>
{"".join(rows)}
</tbody></table>
<h2>Link pools</h2>{link_list}{floor_html}{stream_html}
</body></html>
"""


class FloorPage:
    """The page's web server over a FloorService. `await start()`, then `port` is bound; `await close()`."""

    def __init__(self, service: Any, host: str = "0.0.0.0", port: int = 8090,
                 token_tries: TokenTries | None = None) -> None:
        self.service = service
        self.host, self.port = host, port
        # Compared as digests: the same length whatever is offered, so timing tells nothing of a token.
        self._digests = {role: hashlib.sha256(token.encode()).digest() for role, token in service.cfg.tokens.items()}
        self.tries = token_tries or TokenTries()
        self._runner: web.AppRunner | None = None
        self.app = web.Application()
        self.app.router.add_get("/", self._root)
        self.app.router.add_get("/floor", self._page)
        self.app.router.add_get("/floor.json", self._json)
        self.app.router.add_get(r"/report/{day}.csv", self._report)
        self.app.router.add_get("/healthz", self._health)
        self.app.on_response_prepare.append(self._headers)

    async def start(self) -> None:
        self._runner, self.port = await serve_app(self.app, self.host, self.port)

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @staticmethod
    async def _headers(request: web.Request, response: web.StreamResponse) -> None:
        response.headers.setdefault("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; "
                                                               "frame-ancestors 'none'")
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "no-referrer")
        response.headers.setdefault("Cache-Control", "no-store")

    def _role(self, request: web.Request, need: str) -> str:
        """The role of the request's token, if it opens `need`; raises 429, 401 or 403 otherwise."""
        peer, digest = offered_digest(request, self.tries, COOKIE, "floor")
        role = None
        for name, expected in self._digests.items():  # every role compared: no early exit to time
            if hmac.compare_digest(digest, expected):
                role = name
        if role is None:
            limited = self.tries.failed(peer)
            log.warning("floor page: %s from %s refused: no or wrong token%s", request.path, peer,
                        f" ({limited}: 429 until the window passes)" if limited else "")
            raise web.HTTPUnauthorized(text=f"the floor page needs a role's token: open {request.path}?token=... "
                                            f"(the tokens are in the floor config, [service.tokens])")
        from controller.floor.service import ROLES

        if need not in ROLES[role]:
            log.warning("floor page: %s refused to %s: the %s role does not open the %s", request.path, peer, role,
                        need)
            raise web.HTTPForbidden(text=f"the {role} role does not open the {need}")
        return role

    def _view(self, day: str | None = None) -> dict[str, Any]:
        svc = self.service
        now = svc.now_ns()
        day = day or gaming_day(now, svc.cfg.start_hour, svc.cfg.tz)
        return floor_view(svc.summaries, svc.held, svc.broken, svc.pools, now, svc.cfg.offline_after, day, svc.cfg.tz,
                          svc.link_pools)

    async def _root(self, request: web.Request) -> web.Response:
        raise web.HTTPFound("/floor")

    async def _page(self, request: web.Request) -> web.Response:
        role = self._role(request, "page")
        day = request.query.get("day")
        if day is not None and not _DAY.fullmatch(day):
            raise web.HTTPBadRequest(text=f"gaming day {day!r}: expected YYYY-MM-DD")
        token_to_cookie(request, COOKIE, "/", "/floor" + (f"?day={day}" if day is not None else ""))
        return web.Response(text=render_floor(self._view(day), role), content_type="text/html")

    async def _json(self, request: web.Request) -> web.Response:
        self._role(request, "page")
        day = request.query.get("day")
        if day is not None and not _DAY.fullmatch(day):
            raise web.HTTPBadRequest(text=f"gaming day {day!r}: expected YYYY-MM-DD")
        return web.json_response(self._view(day))

    async def _report(self, request: web.Request) -> web.Response:
        self._role(request, "report")
        day = request.match_info["day"]
        if not _DAY.fullmatch(day):
            raise web.HTTPBadRequest(text=f"gaming day {day!r}: expected YYYY-MM-DD")
        text = report_csv(self.service.summaries.values(), day, self.service.link_days)
        return web.Response(text=text, content_type="text/csv",
                            headers={"Content-Disposition": f'attachment; filename="meters-{day}.csv"'})

    async def _health(self, request: web.Request) -> web.Response:
        svc = self.service
        ok = svc.refreshed.is_set()
        return web.json_response({"ok": ok, "machines": len(svc.summaries), "rows": svc.checker.checked,
                                  "broken": len(svc.broken)}, status=200 if ok else 503)
