"""The page registry: each screen page's route, the view its WebSocket carries, its script, and whether it is behind the dealer token.

A page is a small HTML shell (below) that loads the shared scripts (`screen.js`: the WebSocket client;
`cards.js`: the SVG cards; `felt.js`: the felt and the small DOM helpers), a table page's game layouts
(`games/<game>.js`, one module per game over felt.js's frame) and its own. Another kind of
screen is added with `register_page(Page(...))` and a script in `static/`, plus a `Source` for its bus in
the bridge: nothing else changes. The cabinet screen and the attendant's page (`cabinet.js`) are such.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Page", "PAGES", "register_page", "render_page", "GAME_LAYOUTS"]

# Each game's layout module, by game name (static/games/<game>.js): a table page loads them all.
GAME_LAYOUTS = {p.stem: p.name for p in sorted((Path(__file__).with_name("static") / "games").glob("*.js"))}


@dataclass(frozen=True)
class Page:
    name: str              # "table", "spot", "dealer", ...
    route: str             # aiohttp route, with {id} for the table (or cabinet) id
    view: str              # the bus view its WebSocket carries: "public" for anyone, others need the dealer token
    script: str            # its script in static/
    title: str
    dealer: bool = False   # behind the dealer token; its WebSocket may send dealer commands
    kind: str = "table"    # what it shows: a "table" or a "cabinet" (a page of one is no page of the other)

    def __post_init__(self) -> None:
        if self.dealer != (self.view != "public"):
            raise ValueError(f"page {self.name}: only the public view is open; every other view is behind the token")


PAGES: dict[str, Page] = {}


def register_page(page: Page) -> Page:
    if page.name in PAGES or any(p.route == page.route for p in PAGES.values()):
        raise ValueError(f"page {page.name} ({page.route}) is registered already")
    PAGES[page.name] = page
    return page


register_page(Page("table", "/table/{id}", "public", "table.js", "Table"))
register_page(Page("spot", "/table/{id}/spot/{spot:[0-9]+}", "public", "table.js", "Spot"))
register_page(Page("dealer", "/dealer/{id}", "dealer", "dealer.js", "Dealer", dealer=True))
register_page(Page("cabinet", "/cabinet/{id}", "public", "cabinet.js", "Cabinet", kind="cabinet"))
register_page(Page("attendant", "/cabinet/{id}/attendant", "dealer", "cabinet.js", "Attendant", dealer=True,
                   kind="cabinet"))

_SHELL = """<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="/static/screens.css">
</head>
<body class="page-{name}" data-screen='{config}'>
<main id="app"><p class="connecting">connecting to {table}&hellip;</p></main>
<div id="status" class="status" hidden></div>
<script src="/static/cards.js"></script>
<script src="/static/screen.js"></script>
<script src="/static/felt.js"></script>
{games}{script}
</body></html>
"""


def render_page(page: Page, table: str, params: dict[str, Any]) -> str:
    """The HTML shell of `page` for one table; `params` (spot, ...) reach the script as data-screen JSON."""
    config = {"page": page.name, "table": table, "view": page.view, **params}
    script = "" if page.script == "felt.js" else f'<script src="/static/{page.script}"></script>'
    games = "".join(f'<script src="/static/games/{name}"></script>\n' for name in GAME_LAYOUTS.values()) \
        if page.kind == "table" else ""
    return _SHELL.format(title=html.escape(f"{page.title} {table}"), name=html.escape(page.name),
                         config=html.escape(json.dumps(config), quote=True), table=html.escape(table), script=script,
                         games=games)
