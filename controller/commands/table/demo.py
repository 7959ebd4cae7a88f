"""`croupier demo`: a simulated table or slot cabinet, played by an autoplay, with its config and journal in a folder of its own."""

from __future__ import annotations

import argparse
import fcntl
import json
import logging
import math
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable

from controller.cli import CliError
from controller.commands._common import print_urls
from controller.commands.table.endpoints import DEMO_PORTS
from controller.commands.table.printing import print_state, state_printer
from controller.commands.table.run import sas_pty, serve_runtime


def register(sub: argparse._SubParsersAction) -> None:
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
    p.add_argument("--ticket-system", action="store_true", help="cabinet: a simulated ticket validation system "
                   "polls its SAS line (it is then the line's host): validation numbers for the tickets it prints, "
                   "and the redemption of tickets inserted (each once)")
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


def _check_demo_args(args: argparse.Namespace) -> None:
    """Counts of rounds or games are 1 or more, the pace a finite number of seconds, the ports real ports."""
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

    from controller.autoplay import Autoplay
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
    pin_map = Path(__file__).resolve().parents[3] / "deploy" / "config" / "panel-blackjack-7spot.toml"
    if pin_map.is_file():
        data["panel"] = {"file": str(pin_map), "driver": "sim"}
    try:
        cfg = config_from_mapping(data, state_dir / "demo.toml")
    except ConfigError as exc:
        raise CliError(f"{exc} (games: {', '.join(game_names())})") from None
    rng = SeededRng(args.seed) if args.seed is not None else system_rng()

    def ready(table: Any) -> None:
        (state_dir / "demo.toml").write_text(to_toml(data))
        print(f"demo table {table_id} ({cfg.game.title}) is dealing; journal {cfg.journal}")
        print(f"watch it:   croupier watch --table {table_id}            (players' view)")
        print(f"            croupier watch --table {table_id} --view dealer")
        if cfg.camera.on:
            print(f"camera:     simulated, {cfg.camera.fps:g} frames/s (what it sees, and its alerts, are on the "
                  "dealer's view)")
        _print_afterwards(state_dir)
        if not args.quiet:
            show = state_printer(compact=True)
            table.on_publish = _unless_piped_away(lambda views: show(views[1]["public"]))

    return _play_demo(args, cfg, ready, lambda table: Autoplay(table, rng, pace=args.pace, rounds=args.rounds))


def _demo_cabinet(args: argparse.Namespace) -> int:
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
    source = Path(__file__).resolve().parents[3] / "deploy" / "config" / "panel-cabinet-3reel-mechanical.toml"
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
                    "commands": f"tcp://127.0.0.1:{cmd}"},
            # notes and tickets: a simulated validator and printer (cash out prints a ticket)
            "validator": {"port": "sim"}, "printer": {"port": "sim", "venue": "Croupier demo"}}
    if args.sas_pty or args.ticket_system:
        data["sas"] = {"port": "pty", "address": 1}
    else:  # no SAS host to number the tickets: the demo cabinet's own validation id (a stand-alone site)
        cabinet["tito"] = {"validation_id": 1}
    try:
        cfg = cabinet_config_from_mapping(data, state_dir / "demo.toml")
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    if args.sas_pty or args.ticket_system:
        cfg = sas_pty(cfg, args.sas_pty, True)
    rng = SeededRng(args.seed) if args.seed is not None else system_rng()

    def ready(cab: Any) -> None:
        print(f"demo cabinet {cabinet_id} ({title.name}, {cfg.denomination} cents a credit) is playing; journal "
              f"{cfg.journal}")
        print(f"watch it:   croupier watch --table {cabinet_id}            (the player's view)")
        print(f"            croupier watch --table {cabinet_id} --view dealer   (the attendant's)")
        if cab.sas is not None and args.ticket_system:
            from controller.ticketsystem import serve_tickets

            serve_tickets(cab.sas.pty[2], echo=None if args.quiet else print)
            print(f"SAS:        address 1 on {cab.sas.pty[2]}, polled by the demo's ticket system")
        elif cab.sas is not None:
            print(f"SAS:        address 1 on {args.sas_pty} ({cab.sas.pty[2]}): croupier sas-host {args.sas_pty}")
        print(f"a note:     croupier command --table {cabinet_id} insert_note cents=2000   (or the attendant "
              "page's buttons; cash out prints a ticket)")
        (state_dir / "demo.toml").write_text(to_toml(data))
        _print_afterwards(state_dir)
        if not args.quiet:
            last = {"game": cab.state.games, "seq": 0}

            def show(views: Any) -> None:
                state = views[1]["dealer"]
                if state["game"] != last["game"] or state["status"] not in ("play", "idle", "free_spins", "pick"):
                    if (state["game"], state["status"]) != (last["game"], last.get("status")):
                        print_state(state, compact=True)
                    last.update(game=state["game"], status=state["status"])

            cab.on_publish = _unless_piped_away(show)

    return _play_demo(args, cfg, ready,
                      lambda cab: _notes_autoplay()(cab, rng, pace=args.pace, spins=args.spins, coins=True,
                                                    buttons=True))


def _notes_autoplay() -> type:
    from controller.autoplay import CabinetAutoplay

    class NotesAutoplay(CabinetAutoplay):
        """The demo's player also feeds the simulated validator a note now and then (cash outs print tickets)."""

        async def step(self) -> bool:
            cab = self.cabinet
            sim, st = getattr(cab, "_validator_sim", None), cab.state
            if sim is not None and not st.lockups and st.escrow is None and st.credits < 40 and \
                    self.rng.randbelow(4) == 0 and sim.phase == "idle":
                try:
                    sim.insert_note((500, 1000, 2000)[self.rng.randbelow(3)])
                except Exception:  # noqa: BLE001 - the simulated validator busy or inhibited: a coin instead
                    return await super().step()
                await cab.wait_change(st.seq, 2.0)
                return True
            return await super().step()

    return NotesAutoplay



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

    folder = cfg.journal.parent
    with open(folder / ".lock", "w") as lock:
        try:  # one demo at a time on a folder's journal; the lock goes with the process, however it ends
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CliError(f"another demo is running on {folder} (stop it, or give this one --dir)") from None
        try:
            asyncio.run(serve_runtime(cfg, play, ready))
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


def to_toml(data: dict[str, Any]) -> str:
    """The demo's config as TOML, so recall and meters can read it (tables of strings, numbers, booleans; a JSON
    string is a valid TOML basic string)."""

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
