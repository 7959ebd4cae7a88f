"""`croupier run` and `croupier progressive`: serve the runtime (table, cabinet or link controller) a config file describes."""

from __future__ import annotations

import argparse
import dataclasses
from typing import TYPE_CHECKING, Any

from controller.cli import CliError
from controller.commands._common import load, setup_logging

if TYPE_CHECKING:  # the commands import their heavy modules when they run: `croupier --help` stays quick
    import zmq


def register(sub: argparse._SubParsersAction) -> None:
    p = _serving(sub, "run", "run a table, slot cabinet or progressive link controller from its config file",
                 "Run a live table (shoe, panel and camera drivers), slot cabinet (panel, reels, hopper) or progressive "
                 "link controller: journal, bus.", "the table's, cabinet's or link's TOML config")
    p.add_argument("--sim", action="store_true", help="swap every driver for its simulation")
    p.add_argument("--sas-pty", metavar="LINK", default=None,
                   help="cabinet with --sim: serve its SAS line on a pseudo-terminal linked at LINK")
    _log_level(p, _run)


def register_progressive(sub: argparse._SubParsersAction) -> None:
    p = _serving(sub, "progressive", "run a progressive link controller (one per link of cabinets)",
                 "Run the controller of a linked progressive: cabinets send contributions and hits over the bus "
                 "(CURVE); it journals them, keeps the pool and publishes it.",
                 "the link's TOML config ([progressive] and [bus])")
    _log_level(p, _progressive)


def _serving(sub: argparse._SubParsersAction, name: str, help: str, description: str,
             config: str) -> argparse.ArgumentParser:
    """The parser of a command that serves a runtime from its config file (`run`, `progressive`)."""
    p: argparse.ArgumentParser = sub.add_parser(name, help=help, description=description)
    p.add_argument("--config", required=True, help=config)
    return p


def _log_level(p: argparse.ArgumentParser, func: Any) -> None:
    p.add_argument("--log-level", default="INFO", help="logging level (default INFO)")
    p.set_defaults(func=func)


def runtime_for(cfg: Any) -> Any:
    """The runtime a config describes: a Table, a Cabinet or a LinkController."""
    from controller.config import CabinetConfig, ProgressiveConfig

    if isinstance(cfg, CabinetConfig):
        from controller.cabinet import Cabinet

        return Cabinet(cfg)
    if isinstance(cfg, ProgressiveConfig) and cfg.engine == "floor":  # no controller: a reader of the stream
        from controller.floor.progressive import PoolReader

        return PoolReader.from_config(cfg)
    if isinstance(cfg, ProgressiveConfig):
        from controller.progressive import LinkController

        return LinkController(cfg)
    from controller.table import Table

    return Table(cfg)


async def serve_runtime(cfg: Any, autoplay: Any = None, on_ready: Any = None) -> None:
    from controller.journal import JournalIntegrityError, JournalKeyError

    table = runtime_for(cfg)
    try:
        await table.start()
    except JournalKeyError as exc:  # exit 2: systemd's RestartPreventExitStatus=2 does not loop on it
        raise CliError(f"{exc}. {cfg.table_id} will not run without its journal key.") from None
    except JournalIntegrityError as exc:
        raise CliError(f"journal integrity check failed: {exc}. {cfg.table_id} will not run on a broken journal: "
                       f"keep the file for the regulator and call the floor supervisor.") from None
    except Exception as exc:
        import zmq

        if not isinstance(exc, zmq.ZMQError):
            raise
        await table.stop()  # the drivers started before the bus
        raise CliError(_bind_error(cfg, exc)) from None
    try:
        if on_ready:
            on_ready(table)
        if autoplay is not None:
            import asyncio

            play = asyncio.create_task(autoplay(table))
            stop = asyncio.create_task(table.run())
            await asyncio.wait({play, stop}, return_when=asyncio.FIRST_COMPLETED)
            for task in (play, stop):
                task.cancel()
            if play.done() and not play.cancelled() and play.exception():
                raise play.exception()  # type: ignore[misc]
        else:
            await table.run()
    finally:
        await table.stop()


def _bind_error(cfg: Any, exc: zmq.ZMQError) -> str:
    """A bus socket that would not bind, as the config key that names it (a port clash, an address not here)."""
    where = str(cfg.path) if cfg.path else "config"
    endpoints = cfg.bus.endpoints
    for key in ("publish", "snapshot", "commands"):
        if f"addr='{getattr(endpoints, key)}'" in str(exc):
            import zmq

            why = str(exc.strerror).split(" (addr=")[0]
            hint = " (another program holds it?)" if getattr(exc, "errno", None) == zmq.EADDRINUSE else ""
            return f"{where}[bus].{key}: cannot bind {getattr(endpoints, key)}: {why}{hint}"
    return f"{where}[bus]: cannot bind the bus: {exc}"


def _run(args: argparse.Namespace) -> int:
    import asyncio

    from controller.config import ConfigError, check_runnable

    setup_logging(args.log_level)
    cfg = load(args.config)
    sim = getattr(args, "sim", False)  # `croupier progressive` has no --sim: a link controller has no drivers
    if sim:
        cfg = cfg.simulated()
    try:
        check_runnable(cfg)
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    if getattr(args, "sas_pty", None) or (sim and getattr(cfg, "sas", None) is not None):
        cfg = sas_pty(cfg, args.sas_pty, sim)
    asyncio.run(serve_runtime(cfg))
    return 0


def sas_pty(cfg: Any, link: str | None, sim: bool) -> Any:
    """The cabinet's SAS line on a pseudo-terminal (linked at `link`) instead of its serial port."""
    from controller.config import CabinetConfig
    from controller.sas import SasConfig

    if not isinstance(cfg, CabinetConfig) or not sim:
        raise CliError("--sas-pty: a slot cabinet's config, with --sim")
    sas = cfg.sas or SasConfig(port="pty", accounting_denomination=cfg.denomination)
    return dataclasses.replace(cfg, sas=dataclasses.replace(sas, port="pty", pty_link=link))


def _progressive(args: argparse.Namespace) -> int:
    from controller.config import ProgressiveConfig

    cfg = load(args.config)
    if not isinstance(cfg, ProgressiveConfig):
        raise CliError(f"{args.config} is not a progressive link's config (it has no [progressive] section)")
    return _run(args)
