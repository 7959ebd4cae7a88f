"""Screens: the web bridge from a table's or cabinet's bus to the browsers beside it (player, spot, dealer, cabinet and attendant pages).

- `bridge.Bridge(sources, dealer_token=..., host=..., port=...)`: the aiohttp server (`await start()`,
  `await close()`); its module docstring documents the routes and the WebSocket messages.
- `bridge.source_for_table(table_config, ...)`, `bridge.source_for_cabinet(cabinet_config, ...)`: what the
  bridge follows for one table or cabinet (a cabinet's linked progressive too: `<link-id>/public`).
- `config.screens_config(table_config)`: the validated [screens] section (listen, dealer token, dealer key).
- `pages.register_page(Page(...))`: the extension point for further screens: register its page and script,
  and give the bridge a `Source` for its bus (its views and info); the WebSocket, snapshot, gap and
  reconnect handling are shared. The cabinet screen (`/cabinet/<id>`) and the attendant's page
  (`/cabinet/<id>/attendant`) plug in so.
- `serve(configs, ...)`: start a bridge for table and cabinet configs, mixed (used by `croupier screens`
  and `croupier demo`).

The pages are plain HTML, CSS and JavaScript in `static/` (no build step, nothing from the network):
`screen.js` keeps one WebSocket per page in step with its view, `cards.js` draws the cards as SVG (with
an optional four-colour deck), `felt.js` draws a table's felt, bets, results, roads and paytables,
`table.js` and `dealer.js` are the table's pages, `cabinet.js` the cabinet's (its reel symbols are SVG too).
"""

from __future__ import annotations

from typing import Any

__all__ = ["serve"]


async def serve(configs: list[Any], *, listen: str | None = None, four_colour: bool | None = None,
                context: Any = None) -> tuple[Any, Any]:
    """Start a bridge for these table and cabinet configs; returns (bridge, screens config of the first).

    The listen address, the dealer token and the dealer key are those of the first config's [screens]
    (a bridge serving several uses one token); each table's (or cabinet's) own key signs its commands.
    """
    from controller.config import CabinetConfig, ConfigError
    from controller.screens.bridge import Bridge, source_for_cabinet, source_for_table
    from controller.screens.config import screens_config

    if not configs:
        raise ConfigError("no table to serve")
    overrides = {"listen": listen, "four_colour": four_colour}
    settings = [screens_config(cfg, overrides) for cfg in configs]
    ids = [cfg.table_id for cfg in configs]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"the same table or cabinet id twice: {', '.join(ids)}")
    sources = [source_for_cabinet(cfg, s.dealer_keys, s.server_public, s.commands) if isinstance(cfg, CabinetConfig)
               else source_for_table(cfg, s.dealer_keys, s.server_public, s.commands, s.four_colour)
               for cfg, s in zip(configs, settings)]
    first = settings[0]
    bridge = Bridge(sources, dealer_token=first.dealer_token, host=first.host, port=first.port,
                    heartbeat=min(cfg.bus.heartbeat for cfg in configs), context=context,
                    pit=pit_settings(configs, settings))
    await bridge.start()
    return bridge, first


def pit_settings(configs: list[Any], settings: list[Any]) -> Any:
    """The pit pages of these configs (a table's [screens].pit_token_file: /pit/<its id>, showing it and its
    pit_tables), or None when none has one. One token for the bridge, the first config's that names one."""
    from controller.config import ConfigError
    from controller.screens.pit import PitSettings, PitTable

    token = next((s.pit_token for s in settings if s.pit_token), None)
    if token is None:
        return None
    ids = {cfg.table_id for cfg in configs}
    pits: dict[str, tuple[str, ...]] = {}
    for cfg, s in zip(configs, settings):
        if s.pit_token:
            unknown = [t for t in s.pit_tables if t not in ids]
            if unknown:
                raise ConfigError(f"{cfg.path or 'config'}[screens].pit_tables: {', '.join(unknown)} not served here")
            pits[cfg.table_id] = tuple(dict.fromkeys((cfg.table_id, *s.pit_tables)))
    tables = {cfg.table_id: PitTable(cfg.table_id, cfg.bus.endpoints, s.pit_keys, s.server_public)
              for cfg, s in zip(configs, settings) if s.pit_keys is not None}
    try:
        return PitSettings(token, pits, tables)
    except ValueError as exc:
        raise ConfigError(f"[screens].pit_tables: {exc} (set its [screens].pit_key)") from None
