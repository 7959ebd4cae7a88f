"""`croupier screens`: serve the player, spot and dealer pages of tables and the screen and attendant pages of slot cabinets (the web bridge to their bus)."""

from __future__ import annotations

import argparse

from controller.commands._common import load, print_urls, setup_logging


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("screens", help="serve the screens of tables and slot cabinets (web bridge to their bus)",
                       description="Serve the player pages (/table/ID, /table/ID/spot/N), the dealer page "
                                   "(/dealer/ID, behind a token), a cabinet's screen (/cabinet/ID) and its attendant's "
                                   "page (/cabinet/ID/attendant, behind the token) and /healthz, following each bus. "
                                   "Settings: the [screens] section of the (first) config.")
    p.add_argument("--config", action="append", required=True, metavar="FILE",
                   help="a table's or cabinet's TOML config (repeat for several, mixed)")
    p.add_argument("--listen", default=None, metavar="HOST:PORT", help="override [screens].listen (default 0.0.0.0:8080)")
    p.add_argument("--four-colour", action="store_true", default=None, help="four-colour deck by default")
    p.add_argument("--log-level", default="INFO", help="logging level (default INFO)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import asyncio
    import logging
    import signal

    from controller.cli import CliError
    from controller.config import CabinetConfig, ConfigError, TableConfig
    from controller.screens import serve

    setup_logging(args.log_level)
    configs = [load(path) for path in args.config]
    for path, cfg in zip(args.config, configs):
        if not isinstance(cfg, (TableConfig, CabinetConfig)):
            raise CliError(f"{path}: screens are for tables and cabinets (a link controller's pool is shown on the "
                           f"screens of its cabinets)")

    async def main() -> None:
        try:
            bridge, settings = await serve(configs, listen=args.listen, four_colour=args.four_colour)
        except ConfigError as exc:
            raise CliError(str(exc)) from None
        except OSError as exc:
            raise CliError(f"cannot listen: {exc.strerror or exc}") from None
        if settings.token_generated:
            logging.getLogger("croupier.screens").warning(
                "no [screens].dealer_token_file: a fresh dealer token for this run only (the dealer URL below)")
        print_urls(bridge, settings)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        try:
            await stop.wait()
        finally:
            await bridge.close()

    asyncio.run(main())
    return 0
