"""Runtime commands for tables, slot cabinets and progressive links: `croupier run`, `demo`, `watch`, `command`, `recall`, `meters` and `progressive`.

One set of commands for every journaled runtime: `run` starts whatever the config file describes
([table], [cabinet] or [progressive]), `recall` and `meters` replay its journal.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:  # the commands import their heavy modules when they run: `croupier --help` stays quick
    import zmq

DEMO_PORTS = (5550, 5551, 5552)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run a table, slot cabinet or progressive link controller from its config file",
                       description="Run a live table (shoe, panel and camera drivers), slot cabinet (panel, reels, "
                                   "hopper) or progressive link controller: journal, bus.")
    p.add_argument("--config", required=True, help="the table's, cabinet's or link's TOML config")
    p.add_argument("--sim", action="store_true", help="swap every driver for its simulation")
    p.add_argument("--sas-pty", metavar="LINK", default=None,
                   help="cabinet with --sim: serve its SAS line on a pseudo-terminal linked at LINK")
    p.add_argument("--log-level", default="INFO", help="logging level (default INFO)")
    p.set_defaults(func=_run)

    p = sub.add_parser("demo", help="a complete simulated table or slot cabinet on this machine, run by an autoplay",
                       description="Start a simulated table (shoe over a pty, rendered camera, mock panel pins) with "
                                   "an autoplay that bets, deals, decides and settles, or with --cabinet a simulated "
                                   "slot cabinet (mock panel pins, stepper reels, coin acceptor and hopper) with a "
                                   "player who feeds coins, spins and cashes out; watch it with `croupier watch`.")
    from controller.games import game_names

    p.add_argument("--game", default="blackjack", metavar="GAME",
                   help=f"game to deal (default blackjack): {', '.join(game_names())}")
    p.add_argument("--cabinet", metavar="TITLE", default=None,
                   help="run a slot cabinet of this title instead: its id or its name, e.g. frozen-assets or "
                        "\"Frozen Assets\" (croupier titles lists them)")
    p.add_argument("--spins", type=int, default=None, help="cabinet: stop after this many games")
    p.add_argument("--sas-pty", metavar="LINK", default=None, help="cabinet: serve its SAS line (address 1) on a "
                   "pseudo-terminal linked at LINK, for any SAS host (croupier sas-host LINK)")
    p.add_argument("--dir", default=None, help="the demo's folder: its journal and its config, demo.toml, for croupier "
                   "recall and meters (default: ~/.local/state/croupier/demo/ID, or under $XDG_STATE_HOME; each run "
                   "carries on its journal)")
    p.add_argument("--seed", type=int, default=None, help="seed the shoe and players (default: random)")
    p.add_argument("--rounds", type=int, default=None, help="stop after this many rounds (default: run until Ctrl-C)")
    p.add_argument("--pace", type=float, default=0.4, help="seconds between the autoplay's actions (default 0.4)")
    p.add_argument("--ports", type=int, nargs=3, default=DEMO_PORTS, metavar=("PUB", "SNAP", "CMD"),
                   help="bus ports on localhost (default 5550 5551 5552)")
    p.add_argument("--quiet", action="store_true", help="do not print the table as it is dealt")
    p.add_argument("--screens", default="127.0.0.1:8080", metavar="HOST:PORT",
                   help="serve the screens (a table's player and dealer pages, a cabinet's screen and attendant page) here "
                        "(default 127.0.0.1:8080; a free port if taken)")
    p.add_argument("--no-screens", action="store_true", help="no screens bridge")
    p.add_argument("--no-camera", dest="camera", action="store_false",
                   help="a table without the simulated camera over the felt (by default it watches every card as "
                        "the shoe's second witness: 4 frames/s, each ~55 ms of a core to render and ~17 ms to read)")
    p.set_defaults(func=_demo)

    p = sub.add_parser("watch", help="follow a table's public or dealer view in the terminal",
                       description="Snapshot, then follow a table's view on the bus (the reference client).")
    _endpoint_args(p)
    p.add_argument("--view", choices=("public", "dealer"), default="public")
    p.add_argument("--count", type=int, default=None, help="stop after this many updates")
    p.add_argument("--json", action="store_true", help="print each state as one JSON line")
    p.add_argument("--key", help="our CURVE key pair (NAME.key_secret, listed in the config): needed when the "
                                 "table's [bus].curve_screens is on")
    p.set_defaults(func=_watch)

    p = sub.add_parser("command", help="send a dealer, player, attendant or operator command to a table or cabinet",
                       description="Send a command over the bus, e.g. `croupier command --config t.toml --key "
                                   "keys/dealer.key_secret resolve alert=3 action=void reason=misdeal`.")
    _endpoint_args(p)
    p.add_argument("--key", help="our CURVE key pair (NAME.key_secret); the server key comes from the config's keys")
    p.add_argument("name", help="command: open_bets, close_bets, place_bet, decision, settle, void, resolve, "
                                "shuffle, status, meters, audit, card, remove_bet; at a cabinet add_credits, clear, "
                                "recall; at a progressive link contribute, hit (controller/bus.md)")
    p.add_argument("args", nargs="*", metavar="KEY=VALUE", help="arguments, e.g. spot=3 box=main amount=25")
    p.set_defaults(func=_command)

    for name, helptext in (("recall", "show the last rounds (a table) or games (a cabinet) in full, from the journal"),
                           ("meters", "show a table's, cabinet's or progressive link's meters, derived from the "
                                      "journal")):
        p = sub.add_parser(name, help=helptext, description=helptext[0].upper() + helptext[1:] + ".")
        p.add_argument("--config", required=True, help="the table's or cabinet's TOML config (to find its journal)")
        p.add_argument("--json", action="store_true")
        if name == "recall":
            p.add_argument("--last", type=int, default=10, help="how many rounds or games (default 10)")
        p.set_defaults(func=_recall if name == "recall" else _meters)

    p = sub.add_parser("progressive", help="run a progressive link controller (one per link of cabinets)",
                       description="Run the controller of a linked progressive: cabinets send contributions and hits "
                                   "over the bus (CURVE); it journals them, keeps the pool and publishes it.")
    p.add_argument("--config", required=True, help="the link's TOML config ([progressive] and [bus])")
    p.add_argument("--log-level", default="INFO", help="logging level (default INFO)")
    p.set_defaults(func=_progressive)


def _endpoint_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", help="the table's TOML config (endpoints and table id)")
    p.add_argument("--table", help="table id (without --config)")
    p.add_argument("--host", default="127.0.0.1", help="host of the demo's bus (without --config)")
    p.add_argument("--ports", type=int, nargs=3, default=DEMO_PORTS, metavar=("PUB", "SNAP", "CMD"))


def _load(path: str) -> Any:
    from controller.cli import CliError
    from controller.config import ConfigError, load_config

    try:
        return load_config(path)
    except ConfigError as exc:
        raise CliError(str(exc)) from None


def _setup_logging(level: str) -> None:
    import logging

    logging.basicConfig(level=getattr(logging, level.upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def _runtime(cfg: Any) -> Any:
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


async def _serve(cfg: Any, autoplay: Any = None, on_ready: Any = None) -> None:
    from controller.cli import CliError
    from controller.journal import JournalIntegrityError, JournalKeyError

    table = _runtime(cfg)
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

    from controller.cli import CliError
    from controller.config import ConfigError, check_runnable

    _setup_logging(args.log_level)
    cfg = _load(args.config)
    sim = getattr(args, "sim", False)  # `croupier progressive` has no --sim: a link controller has no drivers
    if sim:
        cfg = cfg.simulated()
    try:
        check_runnable(cfg)
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    if getattr(args, "sas_pty", None) or (sim and getattr(cfg, "sas", None) is not None):
        cfg = _sas_pty(cfg, args.sas_pty, sim)
    asyncio.run(_serve(cfg))
    return 0


def _sas_pty(cfg: Any, link: str | None, sim: bool) -> Any:
    """The cabinet's SAS line on a pseudo-terminal (linked at `link`) instead of its serial port."""
    import dataclasses

    from controller.cli import CliError
    from controller.config import CabinetConfig
    from controller.sas import SasConfig

    if not isinstance(cfg, CabinetConfig) or not sim:
        raise CliError("--sas-pty: a slot cabinet's config, with --sim")
    sas = cfg.sas or SasConfig(port="pty", accounting_denomination=cfg.denomination)
    return dataclasses.replace(cfg, sas=dataclasses.replace(sas, port="pty", pty_link=link))


def _progressive(args: argparse.Namespace) -> int:
    from controller.cli import CliError
    from controller.config import ProgressiveConfig

    cfg = _load(args.config)
    if not isinstance(cfg, ProgressiveConfig):
        raise CliError(f"{args.config} is not a progressive link's config (it has no [progressive] section)")
    return _run(args)


def _check_demo_args(args: argparse.Namespace) -> None:
    """Counts of rounds or games are 1 or more, the pace a finite number of seconds, the ports real ports."""
    import math

    from controller.cli import CliError

    for name, value in (("--rounds", args.rounds), ("--spins", args.spins)):
        if value is not None and value < 1:
            raise CliError(f"{name}: 1 or more (leave it out to run until Ctrl-C), got {value}")
    if not math.isfinite(args.pace) or args.pace < 0:
        raise CliError(f"--pace: seconds between the autoplay's actions, 0 or more, got {args.pace:g}")
    if args.cabinet is None and args.spins is not None:
        raise CliError("--spins counts a cabinet's games (with --cabinet); a table counts --rounds")
    if args.cabinet is not None and args.rounds is not None:
        raise CliError("--rounds counts a table's rounds; a cabinet (--cabinet) counts --spins")
    if not all(1 <= port <= 65535 for port in args.ports):
        raise CliError(f"--ports: three ports 1..65535, got {' '.join(map(str, args.ports))}")


def _demo(args: argparse.Namespace) -> int:
    _check_demo_args(args)
    if args.cabinet is not None:
        return _demo_cabinet(args)
    import logging

    from controller.autoplay import Autoplay
    from controller.cli import CliError
    from controller.config import ConfigError, config_from_mapping
    from controller.games import game_names, get_game
    from controller.rng import SeededRng, system_rng

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("croupier.table").setLevel(logging.ERROR)  # the demo is unauthenticated on purpose
    try:
        game = get_game(args.game)
    except ValueError as exc:
        raise CliError(f"--game: {exc}") from None
    table_id = f"demo-{game.name}".replace("_", "-")
    state_dir = _state_dir(args.dir, table_id)
    pub, snap, cmd = args.ports
    demo_key = _demo_key()
    data: dict[str, Any] = {
        "table": {"id": table_id, "game": game.name, "journal": f"{table_id}.journal", "journal_key": demo_key},
        "shoe": {"port": "sim", **({"seed": args.seed} if args.seed is not None else {})},
        "bus": {"publish": f"tcp://127.0.0.1:{pub}", "snapshot": f"tcp://127.0.0.1:{snap}",
                "commands": f"tcp://127.0.0.1:{cmd}"},
    }
    if args.camera:
        data["camera"] = {"source": "sim"}
    pin_map = Path(__file__).resolve().parents[2] / "deploy" / "config" / "panel-blackjack-7spot.toml"
    if pin_map.is_file():
        data["panel"] = {"file": str(pin_map), "driver": "sim"}
    try:
        cfg = config_from_mapping(data, state_dir / "demo.toml")
    except ConfigError as exc:
        raise CliError(f"{exc} (games: {', '.join(game_names())})") from None
    rng = SeededRng(args.seed) if args.seed is not None else system_rng()

    def ready(table: Any) -> None:
        (state_dir / "demo.toml").write_text(_toml(data))
        print(f"demo table {table_id} ({cfg.game.title}) is dealing; journal {cfg.journal}")
        print(f"watch it:   croupier watch --table {table_id}            (players' view)")
        print(f"            croupier watch --table {table_id} --view dealer")
        if cfg.camera.on:
            print(f"camera:     simulated, {cfg.camera.fps:g} frames/s (what it sees, and its alerts, are on the "
                  "dealer's view)")
        _print_afterwards(state_dir)
        if not args.quiet:
            show = _printer(compact=True)
            table.on_publish = _unless_piped_away(lambda views: show(views[1]["public"]))

    return _play_demo(args, cfg, ready, lambda table: Autoplay(table, rng, pace=args.pace, rounds=args.rounds))


def _demo_cabinet(args: argparse.Namespace) -> int:
    import logging
    import re

    from controller.autoplay import CabinetAutoplay
    from controller.cli import CliError
    from controller.config import ConfigError, cabinet_config_from_mapping
    from controller.rng import SeededRng, system_rng
    from controller.commands.titles import find_title
    from controller.slots import TitleError

    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("croupier.cabinet").setLevel(logging.ERROR)  # unauthenticated and locked up on purpose
    try:
        title = find_title(args.cabinet)
    except TitleError as exc:
        raise CliError(str(exc)) from None
    cabinet_id = f"demo-{title.id}"
    state_dir = _state_dir(args.dir, cabinet_id)
    pub, snap, cmd = args.ports
    # The mechanical-reel pin map, with reel strips of this title's length (a simulated cabinet built for it).
    source = Path(__file__).resolve().parents[2] / "deploy" / "config" / "panel-cabinet-3reel-mechanical.toml"
    pin_map = state_dir / "panel.toml"
    pin_map.write_text(re.sub(r"^stops = \d+", f"stops = {title.reels[0].size}", source.read_text(), flags=re.M))
    cabinet: dict[str, Any] = {"id": cabinet_id, "title": title.id, "journal": f"{cabinet_id}.journal",
                               "journal_key": _demo_key(),
                               "reels": "mechanical", "coin_cents": title.denominations[0] * 4, "attract_seconds": 10,
                               "hand_pay_limit_cents": 300 * title.denominations[0] * 4, "spin_seconds": 0.0}
    if args.seed is not None:
        cabinet["seed"] = args.seed
    if title.progressive is not None:
        cabinet["progressive"] = {"mode": "standalone"}
    data = {"cabinet": cabinet, "panel": {"file": pin_map.name, "driver": "sim"},
            "bus": {"publish": f"tcp://127.0.0.1:{pub}", "snapshot": f"tcp://127.0.0.1:{snap}",
                    "commands": f"tcp://127.0.0.1:{cmd}"}}
    if args.sas_pty:
        data["sas"] = {"port": "pty", "address": 1}
    try:
        cfg = cabinet_config_from_mapping(data, state_dir / "demo.toml")
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    if args.sas_pty:
        cfg = _sas_pty(cfg, args.sas_pty, True)
    rng = SeededRng(args.seed) if args.seed is not None else system_rng()

    def ready(cab: Any) -> None:
        print(f"demo cabinet {cabinet_id} ({title.name}, {cfg.denomination} cents a credit) is playing; journal "
              f"{cfg.journal}")
        print(f"watch it:   croupier watch --table {cabinet_id}            (the player's view)")
        print(f"            croupier watch --table {cabinet_id} --view dealer   (the attendant's)")
        if cab.sas is not None:
            print(f"SAS:        address 1 on {args.sas_pty} ({cab.sas.pty[2]}): croupier sas-host {args.sas_pty}")
        (state_dir / "demo.toml").write_text(_toml(data))
        _print_afterwards(state_dir)
        if not args.quiet:
            last = {"game": cab.state.games, "seq": 0}

            def show(views: Any) -> None:
                state = views[1]["dealer"]
                if state["game"] != last["game"] or state["status"] not in ("play", "idle", "free_spins", "pick"):
                    if (state["game"], state["status"]) != (last["game"], last.get("status")):
                        _print_state(state, compact=True)
                    last.update(game=state["game"], status=state["status"])

            cab.on_publish = _unless_piped_away(show)

    return _play_demo(args, cfg, ready,
                      lambda cab: CabinetAutoplay(cab, rng, pace=args.pace, spins=args.spins, coins=True, buttons=True))


def _play_demo(args: argparse.Namespace, cfg: Any, ready: Any, autoplay: Any) -> int:
    """Serve the demo table or cabinet with its screens bridge beside it while `autoplay(runtime)` plays it,
    until the autoplay ends or Ctrl-C."""
    import asyncio

    async def play(runtime: Any) -> None:
        bridge = None if args.no_screens else await _demo_screens(cfg, args.screens)
        try:
            await autoplay(runtime).run()
        finally:
            if bridge is not None:
                await bridge.close()

    import fcntl

    from controller.cli import CliError

    folder = cfg.journal.parent
    with open(folder / ".lock", "w") as lock:
        try:  # one demo at a time on a folder's journal; the lock goes with the process, however it ends
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CliError(f"another demo is running on {folder} (stop it, or give this one --dir)") from None
        try:
            asyncio.run(_serve(cfg, play, ready))
        except KeyboardInterrupt:
            pass
        except CliError as exc:
            if str(exc).startswith("journal integrity check failed"):
                raise CliError(f"the demo's journal in {folder} does not check out ({str(exc).split('. ')[0]}): "
                               f"delete the folder to start this demo afresh") from None
            if "cannot bind" in str(exc):  # another demo's bus, most likely
                raise CliError(f"{exc}; give this demo other --ports") from None
            raise
    return 0


def _unless_piped_away(show: Callable[[Any], None]) -> Callable[[Any], None]:
    """A demo's printer that goes quiet once its reader has gone (`croupier demo | head`): it runs inside the
    runtime's publish, where a BrokenPipeError would stop the table, not the printing."""
    gone = [False]

    def printer(views: Any) -> None:
        if gone[0]:
            return
        try:
            show(views)
        except BrokenPipeError:
            gone[0] = True
            import os
            import sys

            # stdout's buffer still holds what could not be written; point it at nothing so exit does not fail on it
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())

    return printer


def _print_afterwards(folder: Path) -> None:
    """The demo's last lines: the commands that read its journal, kept with its config in its folder."""
    config = folder / "demo.toml"
    print(f"recall:     croupier recall --config {config}   (its journal and config stay in {folder})")
    print(f"meters:     croupier meters --config {config}")
    print("stop it:    Ctrl-C", flush=True)


def _state_dir(given: str | None, ident: str) -> Path:
    """The demo's folder, holding its journal and its config (demo.toml), so recall and meters work on it after the
    demo stops: --dir, or one folder per demo table or cabinet in the user's state folder
    ($XDG_STATE_HOME/croupier/demo/ID, by default ~/.local/state/croupier/demo/ID), which each run of that demo
    carries on (its rounds and meters add up) rather than leaving a new temporary folder behind every time."""
    import os

    from controller.cli import CliError

    if given:
        path, where = Path(given), "--dir"
    else:
        base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
        path, where = Path(base) / "croupier" / "demo" / ident, "the demo's state folder"
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CliError(f"{where} {path}: cannot make the folder ({exc.strerror}); give --dir FOLDER") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise CliError(f"{where} {path}: not writable by this user; give --dir FOLDER")
    return path.resolve()


def _demo_key() -> str:
    """The journal key a demo's written config names: the one this run uses, so that recall and meters read the
    demo's journal from any shell, whatever its XDG_STATE_HOME."""
    from controller.journal import default_key_file

    return str(default_key_file())


def _toml(data: dict[str, Any]) -> str:
    """The demo's config as TOML, so recall and meters can read it (tables of strings, numbers, booleans; a JSON
    string is a valid TOML basic string)."""
    import json

    lines: list[str] = []

    def table(name: str, d: dict[str, Any]) -> None:
        lines.append(f"[{name}]")
        lines.extend(f"{k} = {json.dumps(v)}" for k, v in d.items() if not isinstance(v, dict))
        for k, v in d.items():
            if isinstance(v, dict):
                table(f"{name}.{k}", v)

    for name, section in data.items():
        table(name, section)
    return "\n".join(lines) + "\n"


async def _demo_screens(cfg: Any, listen: str) -> Any:
    """The demo's screens bridge, in the demo's process, following the demo table (or cabinet) over its bus."""
    from controller.cli import CliError
    from controller.commands.screens import print_urls
    from controller.config import ConfigError
    from controller.screens import serve
    from controller.screens.config import parse_listen

    try:
        host, port = parse_listen(listen, "--screens")
        try:
            bridge, settings = await serve([cfg], listen=f"{host}:{port}")
        except OSError:   # the port is taken (another demo?): any free one will do, the URL is printed
            bridge, settings = await serve([cfg], listen=f"{host}:0")
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    print_urls(bridge, settings, lead="screens:   ")
    return bridge


def _endpoints(args: argparse.Namespace) -> tuple[str, Any, Any]:
    from controller.bus import BusEndpoints
    from controller.cli import CliError

    if args.config:
        cfg = _load(args.config)
        return cfg.table_id, cfg.bus.endpoints, cfg
    if not args.table:
        raise CliError("give --config FILE, or --table ID (and --host/--ports for a table not on this machine)")
    pub, snap, cmd = args.ports
    return args.table, BusEndpoints(f"tcp://{args.host}:{pub}", f"tcp://{args.host}:{snap}",
                                    f"tcp://{args.host}:{cmd}"), None


def _key_pair(path: str, cfg: Any) -> tuple[tuple[bytes, bytes], bytes]:
    """Our CURVE key pair from `path` and the table's public key from its config's keys folder."""
    from controller.bus import load_public_key, load_secret_keys
    from controller.cli import CliError

    try:
        return load_secret_keys(path), load_public_key(cfg.bus.keys / "server.key")
    except (OSError, ValueError) as exc:
        raise CliError(f"--key: {exc}") from None


def _watch(args: argparse.Namespace) -> int:
    """Follow a table's view. A table that does not answer is waited for (it may be starting, or restarting
    under systemd), with a line on stderr saying so at once and again every WAIT_NOTICE_S; endpoints that
    serve another table are an error."""
    import asyncio
    import json
    import sys
    import time

    from controller.bus import BusClient, CommandError
    from controller.cli import CliError

    table_id, endpoints, cfg = _endpoints(args)
    keys = server = None
    if cfg is not None and cfg.bus.curve_screens:
        if not args.key:
            raise CliError("this table sends its views over CURVE ([bus].curve_screens): give --key NAME.key_secret, "
                           "a key listed in its config")
        keys, server = _key_pair(args.key, cfg)
    elif args.key:
        raise CliError("--key is for a table whose config has [bus].curve_screens = true")
    seen = 0
    show = _printer()
    waiting: dict[str, float] = {}  # "since", "told": while the table does not answer

    def note(text: str) -> None:
        print(f"croupier watch: {text}", file=sys.stderr, flush=True)

    def on_waiting(seconds: float) -> None:
        now = time.monotonic()
        if not waiting:
            waiting.update(since=now - seconds, told=now)
            note(f"waiting for table {table_id} at {endpoints.snapshot}: no answer yet (is it running?). "
                 f"Ctrl-C to stop.")
        elif now - waiting["told"] >= WAIT_NOTICE_S:
            waiting["told"] = now
            note(f"still waiting for table {table_id} at {endpoints.snapshot}: no answer for "
                 f"{now - waiting['since']:.0f} s")

    def on_alive() -> None:
        if waiting:
            note(f"table {table_id} answered after {time.monotonic() - waiting['since']:.0f} s")
            waiting.clear()

    def on_silence() -> None:
        note(f"table {table_id} fell silent at {endpoints.publish}; asking it for a snapshot")

    async def main() -> None:
        done = asyncio.Event()

        def on_state(seq: int, state: dict[str, Any]) -> None:
            nonlocal seen
            seen += 1
            if args.json:
                print(json.dumps({"seq": seq, "state": state}), flush=True)
            else:
                show(state)
            if args.count is not None and seen >= args.count:
                done.set()

        client = BusClient(table_id, args.view, endpoints, on_state, client_keys=keys, server_public=server,
                           heartbeat_s=cfg.bus.heartbeat if cfg is not None else 1.0,
                           on_waiting=on_waiting, on_alive=on_alive, on_silence=on_silence)
        task = asyncio.create_task(client.run())
        waiter = asyncio.create_task(done.wait())
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        task.cancel()
        waiter.cancel()
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]

    try:
        asyncio.run(main())
    except CommandError as exc:  # the endpoints serve another table, or it refused the request
        raise CliError(str(exc)) from None
    except KeyboardInterrupt:
        pass
    return 0


WAIT_NOTICE_S = 30.0  # how often `watch` repeats that it is still waiting for a table that does not answer


def _cards_in(node: Any, path: str, out: list[tuple[str, list[str]]]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("bets", "history", "shoe", "dealer_only"):
                continue
            _cards_in(value, f"{path}.{key}" if path else key, out)
    elif isinstance(node, list):
        if node and all(isinstance(x, dict) and "card" in x and "up" in x for x in node):
            out.append((path, [_card_text(x) for x in node]))
        else:
            for i, value in enumerate(node):
                label = value.get("spot") if isinstance(value, dict) and "spot" in value else i + 1
                _cards_in(value, f"{path}[{label}]", out)


def _card_text(c: dict[str, Any]) -> str:
    if c["card"] is None:
        return "##"
    from controller.cards import parse_card

    return parse_card(c["card"]).symbol


def _print_cabinet(state: dict[str, Any]) -> None:
    reels = state.get("reels") or {}
    window = reels.get("window")
    line = " ".join(window[1]) if window else "-- -- --"
    last = (state.get("history") or [{}])[-1]
    text = (f"[{state['cabinet']} #{state['seq']}] game {state['game']}: {line:<9} "
            f"{'won ' + str(last.get('won', 0)) if last.get('game') == state['game'] else '':<9} "
            f"credits {state['credits']:>6}  bet {state['bet_credits']}")
    if state.get("free_spins"):
        text += f"  free spins {state['free_spins']}"
    progressive = state.get("progressive") or {}
    if progressive.get("pool") is not None:
        text += f"  progressive {progressive['pool']}"
    if state.get("message") and state.get("status") not in ("play", "idle"):
        text += f"  [{state['message']}]"
    print(text, flush=True)


def _print_state(state: dict[str, Any], compact: bool = False) -> None:
    if "cabinet" in state:
        return _print_cabinet(state)
    if "link" in state:
        last = state.get("last_hit") or {}
        print(f"[{state['link']} #{state['seq']}] pool {state['pool'] / 100:.2f}, {state['hits']} hits"
              + (f", last by {last['cabinet']} game {last['game']}: {last['award'] / 100:.2f}" if last else ""),
              flush=True)
        return None
    print("\n".join(_table_lines(state, compact)), flush=True)


def _printer(compact: bool = False) -> Callable[[dict[str, Any]], None]:
    """`_print_state` for the stream of one table's views: an update that would print what the one before it
    printed, but for its seq (a record that changed nothing shown here: what the camera saw, the shoe's
    status), is left out, so the terminal shows the table's progress rather than every record."""
    last: list[str] = []
    shown_round: list[Any] = [None]  # the last round whose settlement was printed

    def show(state: dict[str, Any]) -> None:
        if "cabinet" in state or "link" in state:
            return _print_state(state, compact)
        lines = _table_lines(state, compact)
        history = state.get("history") or []
        if history and history[-1].get("round") != shown_round[0]:
            # a round settled and the next one opened in one update: its settlement is printed all the same
            shown_round[0] = history[-1].get("round")
            settled = _settled_lines(history[-1])
            if settled and settled[0] not in lines:
                lines.insert(1, settled[0])
        seen = [lines[0].partition("] ")[2], *lines[1:]]
        if seen != last:
            last[:] = seen
            print("\n".join(lines), flush=True)
        return None

    return show


def _table_lines(state: dict[str, Any], compact: bool) -> list[str]:
    game = state.get("game", {})
    exp = state.get("expected", {})
    # NEXT names the step the table waits for, as the dealer page labels it
    head = (f"[{state.get('table')} #{state.get('seq')}] round {game.get('round')} {game.get('phase')}  "
            f"NEXT: {exp.get('text')}")
    lines = [head]
    cards: list[tuple[str, list[str]]] = []
    _cards_in(game, "", cards)
    for where, shown in cards:
        lines.append(f"    {where:<28} {' '.join(shown)}")
    bets = game.get("bets") or []
    if bets:
        lines.append("    bets: " + ", ".join(f"spot {b['spot']} {b['box']} {b['amount']}" for b in bets))
    history = state.get("history") or []
    settled = _settled_lines(history[-1]) if history and game.get("phase") == "idle" else []
    lines.extend(settled)
    alerts = (state.get("dealer_only") or {}).get("alerts") or []
    for a in alerts:
        which = f"; reassign card= one of {', '.join(a['reassign'])}" if a.get("reassign") else ""
        lines.append(f"    ALERT {a['id']}: {a['text']} (resolve: {', '.join(a['options'])}{which})")
    # compact (the demo): a view without cards is one line, but a round's settlement always shows
    return [head, *settled] if compact and not cards else lines


def _settled_lines(last: dict[str, Any]) -> list[str]:
    """A round of the view's history as one line: its stakes, what was paid and the players' net, or its void."""
    if "results" in last:
        net = sum(r["returned"] - r["stake"] for r in last["results"])
        return [f"    round {last['round']} settled: stakes {last['stakes']}, paid {last['returned']}, "
                f"players {'+' if net >= 0 else ''}{net}"]
    if "voided" in last:
        return [f"    round {last['round']} voided: {last['voided']}"]
    return []


def _command(args: argparse.Namespace) -> int:
    import asyncio
    import json

    from controller.bus import CommandClient, CommandError
    from controller.cli import CliError

    table_id, endpoints, cfg = _endpoints(args)
    values: dict[str, Any] = {}
    for item in args.args:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CliError(f"arguments are KEY=VALUE, got {item!r}")
        values[key] = int(value) if value.lstrip("-").isdigit() else value
    keys = server = None
    if args.key:
        if cfg is None or cfg.bus.keys is None:
            raise CliError("--key needs --config with [bus].keys (the table's public key lives there)")
        keys, server = _key_pair(args.key, cfg)

    async def main() -> dict[str, Any]:
        client = CommandClient(endpoints.commands, keys, server, table=table_id)  # another table refuses it
        try:
            return await client.send(args.name, **values)
        finally:
            client.close()

    try:
        reply = asyncio.run(main())
    except CommandError as exc:
        raise CliError(str(exc)) from None
    print(json.dumps(reply, indent=2))
    return 0 if reply.get("ok") else 1


def _entries(cfg: Any) -> list[Any]:
    """The journal's entries, opened read-only (no file is created or written), after checking its MACs and
    its anchor."""
    from controller.cli import CliError
    from controller.journal import JournalIntegrityError, open_journal

    if not cfg.journal.exists():
        raise CliError(f"no journal at {cfg.journal}: {cfg.table_id} has not run yet")
    try:
        with open_journal(cfg, readonly=True) as journal:
            return list(journal.entries())
    except JournalIntegrityError as exc:
        raise CliError(f"journal integrity check failed: {exc}") from None


def _cabinet_replay(cfg: Any, recall: int) -> Any:
    """A cabinet's state replayed from its journal, keeping the last `recall` games for recall."""
    from controller.cabinetstate import new_state, replay

    state = new_state(cfg.cabinet_id, cfg.title, cfg.denomination, cfg.settings, cfg.paytable, recall=max(recall, 1))
    return replay(state, ((e.seq, e.record) for e in _entries(cfg)))


def _replay(args: argparse.Namespace) -> tuple[Any, list[dict[str, Any]]]:
    """Replay the journal read-only; return the state and the rounds (events, cards, settlement) in order."""
    from controller.games.base import CardPlaced, Decision, RoundSettled, RoundVoided, StakeChanged, event_from_json
    from controller.games.base import rules_from_mapping
    from controller.tablestate import CardReassigned, new_state, step

    cfg = _load(args.config)
    entries = _entries(cfg)
    first = next((e.record for e in entries if e.record.get("kind") == "start"), None)
    rules = rules_from_mapping(cfg.game.rules_type, first["rules"]) if first else cfg.rules
    state = new_state(cfg.table_id, cfg.game, rules)
    rounds: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    alerts: dict[int, str] = {}
    for entry in entries:
        record = entry.record
        state, effects = step(state, record)
        kind = record.get("kind")
        if current is not None and current["result"] is None:  # what happened during the round in play
            if kind == "seen" and record["event"]["kind"] in ("card_appeared", "card_moved"):
                seen = record["event"]
                card = seen.get("card")
                what = "face down" if card is None else card + ("" if seen.get("certain") else " (unsure)")
                current["seen"].append(f"{seen.get('zone') or 'off the layout'}: {what}")
            elif kind == "alert":
                alerts[record["alert"]["id"]] = f"{record['alert']['kind']}: {record['alert']['text']}"
                current["alerts"].append(alerts[record["alert"]["id"]])
            elif kind == "resolve":
                reason = f" ({record['reason']})" if record.get("reason") else ""
                if record.get("dealt"):
                    reason += f": {record['dealt']} dealt as the camera saw it (the shoe did not read it)"
                for eff in effects:
                    if isinstance(eff, CardReassigned):
                        # The round's cards as they are now: the dealt card's entry names the true card.
                        swap = {eff.card: eff.becomes, **({eff.becomes: eff.card} if eff.swapped else {})}
                        current["cards"] = [(to, swap.get(c, c), up) for to, c, up in current["cards"]]
                        reason += (f": {eff.card} and {eff.becomes} traded places" if eff.swapped
                                   else f": the shoe's {eff.card} is {eff.becomes}")
                current["alerts"].append(f"{alerts.get(record['alert'], 'alert ' + str(record['alert']))} -> "
                                         f"{record['action']} by {record['by']}{reason}")
        if kind != "game":
            continue
        event = event_from_json(record["event"])
        if event.KIND in ("open_bets", "new_shoe") or current is None or current["result"] is not None:
            # A round runs from open bets to its settlement; a new shoe's burn cards are an entry of their own.
            current = {"kind": "round" if event.KIND == "open_bets" else "shoe", "round": None, "started": entry.time,
                       "bets": {}, "cards": [], "decisions": [], "seen": [], "alerts": [], "result": None}
            rounds.append(current)
        if isinstance(event, Decision):
            current["decisions"].append(f"{event.actor} {event.action}" + (f" {event.amount}" if event.amount else ""))
        for eff in effects:
            if isinstance(eff, StakeChanged):
                current["bets"][f"spot {eff.spot} {eff.box}"] = eff.stake
            elif isinstance(eff, CardPlaced):
                current["cards"].append((eff.to, str(eff.card), eff.up))  # (where, card, face up) until the end
            elif isinstance(eff, RoundSettled):
                current["round"] = eff.round
                current["result"] = eff.settlement.json()
            elif isinstance(eff, RoundVoided):
                current["round"] = eff.round
                current["result"] = {"voided": eff.reason, "returned": eff.returned}
    for r in rounds:
        r["cards"] = [f"{to}: {card}{'' if up else ' (down)'}" for to, card, up in r["cards"]]
    return state, [r for r in rounds if r["bets"] or r["cards"] or r["result"]]


def _recall(args: argparse.Namespace) -> int:
    import json
    import time

    from controller.config import CabinetConfig, TableConfig

    cfg = _load(args.config)
    if isinstance(cfg, CabinetConfig):
        return _cabinet_recall(cfg, args)
    if not isinstance(cfg, TableConfig):
        from controller.cli import CliError

        raise CliError(f"{args.config}: recall is for tables and cabinets (a link controller's games are its "
                       f"cabinets'); try croupier meters")
    state, entries = _replay(args)
    # --last counts rounds; the shoe changes between them are shown too
    starts = [i for i, r in enumerate(entries) if r["kind"] == "round"]
    first = starts[-args.last] if 0 < args.last <= len(starts) else (0 if args.last > 0 else len(entries))
    last = entries[first:]
    if args.json:
        print(json.dumps(last, indent=2))
        return 0
    for r in last:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r["started"]))
        if r["kind"] == "shoe":
            print(f"new shoe  {when}")
        else:
            print(f"round {r['round'] or '(in progress)'}  {when}")
        for box, stake in r["bets"].items():
            print(f"    bet {box}: {stake}")
        for card in r["cards"]:
            print(f"    card {card}")
        for d in r["decisions"]:
            print(f"    decision {d}")
        for seen in r["seen"]:
            print(f"    camera saw {seen}")
        for alert in r["alerts"]:
            print(f"    alert {alert}")
        res = r["result"]
        if res and "results" in res:
            for row in res["results"]:
                print(f"    spot {row['spot']} {row['box']}: stake {row['stake']} {row['outcome']} -> "
                      f"{row['returned']} ({row['line']})")
            print(f"    stakes {res['stakes']}, paid {res['returned']}, commission {res['commission']}, "
                  f"house {res['house_win']}")
        elif res:
            print(f"    voided: {res['voided']} (returned {res['returned']})")
    return 0


def _cabinet_recall(cfg: Any, args: argparse.Namespace) -> int:
    import json

    state = _cabinet_replay(cfg, args.last)
    games = [e for e in state.recall if e.get("kind") == "spin"][-args.last:] if args.last > 0 else []
    first = games[0]["game"] if games else state.games + 1
    shown = [e for e in state.recall if e.get("game", e.get("after_game", 0) + 1) >= first]
    if args.json:
        print(json.dumps(shown, indent=2))
        return 0
    title = cfg.title
    for e in shown:
        if e["kind"] != "spin":
            changes = ", ".join(f"{m['meter']} {m['before']} -> {m['after']}" for m in e["meters"])
            print(f"{e['kind'].replace('_', ' ')} after game {e['after_game']}: {changes or 'no change'}")
            continue
        bet = e["bet"]
        print(f"game {e['game']}: bet {bet['coins']} coin(s) x {bet['lines']} line(s)"
              f"{' (free spin)' if e['free_spin'] else ''}, credits {e['credits_before']} -> {e['credits_after']}"
              f"{'' if e['complete'] else ' (in progress)'}")
        print(f"    stops {' '.join(map(str, e['stops']))} (physical {' '.join(map(str, e['physical']))}), "
              f"paytable {title.paytables[e['paytable']].name}")
        for row in e["window"]:
            print("    | " + " | ".join(f"{title.symbols[c].name if c in title.symbols else c:^12}" for c in row) + " |")
        for w in e["line_wins"]:
            print(f"    line {w['line']}: {' '.join(w['symbols'])} = {w['combo']} x{w['multiplier']}: {w['credits']}")
        for a in e["awards"]:
            print(f"    {a['feature'].replace('_', ' ')}: {a['what']}: {a['credits']}")
        for m in e["meters"]:
            print(f"    meter {m['meter']}: {m['before']} -> {m['after']} ({m['why']})")
        if e.get("pick"):
            print(f"    pick: {e['pick']['choice']} (draw {e['pick']['draw']})")
        prog = e.get("progressive") or {}
        if prog.get("contribution") or prog.get("hit"):
            print(f"    progressive: contributed {prog.get('contribution', 0)}"
                  + (f", HIT, won {prog.get('won', 0)}" if prog.get("hit") else ""))
        paid = f"won {e['won']}" + (f" (hand-paid jackpot {e['jackpot']})" if e["jackpot"] else "")
        print(f"    {paid}")
    return 0


def _meters(args: argparse.Namespace) -> int:
    import json

    from controller.config import CabinetConfig, ProgressiveConfig

    cfg = _load(args.config)
    if isinstance(cfg, CabinetConfig):
        from controller.cabinetstate import balance

        state = _cabinet_replay(cfg, 1)
        m = state.meters.json()
        held, owed = balance(state)
        m["credits"], m["owed"] = state.credits, state.owed
        m["feature_meters"] = dict(state.slot.meters)
        if args.json:
            print(json.dumps(m, indent=2))
            return 0
        width = max(10, len(str(max(v for v in m.values() if isinstance(v, int)))))
        print(f"cabinet {state.cabinet_id}: {cfg.title.name} at {cfg.denomination} cents a credit "
              f"(meters in credits; {width} digits)")
        for key, value in m.items():
            if isinstance(value, int):
                print(f"    {key.replace('_', ' '):<28} {value:>{width}}")
        for group in ("door_opens", "lockups", "feature_meters"):
            for key, value in m[group].items():
                print(f"    {group.replace('_', ' ')}: {key.replace('_', ' '):<14} {value:>{width}}")
        for key, value in m["features"].items():
            print(f"    feature {key.replace('_', ' ')}: {value['awards']} awards, {value['credits']} credits")
        print(f"    balance: credits + owed {held} = in - out - bets + wins {owed}"
              f"{'' if held == owed else '   MISMATCH'}")
        return 0
    if isinstance(cfg, ProgressiveConfig):
        from controller.progressive import link_replay, new_link_state

        link = link_replay(new_link_state(cfg.link_id, cfg.reset_cents), ((e.seq, e.record) for e in _entries(cfg)))
        m = link.json()
        if args.json:
            print(json.dumps(m, indent=2))
        else:
            print(f"progressive link {cfg.link_id}: pool {m['pool']} cents (reset {m['reset']}), {m['hits']} hits paid "
                  f"{m['paid']} cents, {m['contributions']} contributions of {m['contributed']} cents")
            for cabinet, c in m["cabinets"].items():
                print(f"    cabinet {cabinet}: last game contributed {c['last_game']}")
        return 0
    state, _ = _replay(args)
    m = state.meters.json()
    if args.json:
        print(json.dumps(m, indent=2))
        return 0
    print(f"table {state.table_id}: {m['rounds']} rounds, {m['voids']} voided, {m['power_ups']} starts, "
          f"{m['refused_commands']} refused commands")
    print(f"    handle {m['handle']}, paid {m['paid']}, house win {m['house_win']}, commission {m['commission']}")
    for spot, sm in m["spots"].items():
        print(f"    spot {spot}: {sm['rounds']} rounds, handle {sm['handle']}, paid {sm['paid']}, "
              f"house win {sm['house_win']}")
    return 0
