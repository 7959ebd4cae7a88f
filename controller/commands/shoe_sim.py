"""`croupier shoe-sim`: run the simulated card shoe and shuffler on a pseudo-terminal or TCP port, driven by commands."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "shoe-sim", help="simulated card shoe/shuffler on a pty or TCP port, with fault switches",
        description="Serve a simulated card shoe and shuffler that speaks the shoe wire protocol. The first line on "
                    "stdout is the port for the host (a pty path or socket://127.0.0.1:PORT). Control commands are "
                    "read one per line from stdin (and from --control PORT); `help` lists them.")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--pty", nargs="?", const="", metavar="LINK",
                       help="serve on a pseudo-terminal (the default); with LINK, keep a symlink LINK pointing at it, "
                            "so the host's port survives unplug/replug")
    where.add_argument("--tcp", type=int, metavar="PORT", help="serve on 127.0.0.1:PORT instead (0: any free port)")
    p.add_argument("--seed", type=int, help="seed of the shuffles (simulation only; default: the system's CSPRNG)")
    p.add_argument("--decks", type=int, default=1, help="decks per shoe (default 1)")
    p.add_argument("--jokers", type=int, default=0, help="jokers per deck (default 0)")
    p.add_argument("--cards", metavar="CARDS", help="deal this scripted list instead, e.g. 'AS KD 7H'")
    p.add_argument("--cut", type=int, help="cut card position (cards dealt before the cut card comes out)")
    p.add_argument("--shoe-id", type=int, default=1, help="shoe id in every message (default 1)")
    p.add_argument("--serial", default="SIM-0001", help="serial number the device reports")
    p.add_argument("--control", type=int, metavar="PORT",
                   help="also take control commands on 127.0.0.1:PORT (one per line); then stdin's end does not stop "
                        "the simulator (SIGINT/SIGTERM or `quit` on stdin do)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import signal
    import socketserver
    import sys
    import threading

    from controller.cards import parse_cards, shoe
    from controller.cli import CliError
    from controller.rng import SeededRng, system_rng
    from drivers.shoe.sim import ShoeSim

    if not 1 <= args.decks <= 255 or args.jokers < 0:
        raise CliError("--decks must be 1..255 and --jokers 0 or more")
    if not 0 <= args.shoe_id <= 255:
        raise CliError("--shoe-id must be 0..255")
    rng = SeededRng(args.seed) if args.seed is not None else system_rng()

    def new_order(decks: int) -> list:
        return rng.shuffled(shoe(decks, args.jokers))

    try:
        cards = list(parse_cards(args.cards)) if args.cards is not None else new_order(args.decks)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    try:
        sim = ShoeSim(cards, decks=args.decks, jokers=args.jokers, shoe_id=args.shoe_id, serial=args.serial,
                      cut=args.cut, new_order=new_order)
        url = sim.listen_tcp(args.tcp) if args.tcp is not None else sim.open_pty(args.pty or None)
    except (OSError, ValueError) as exc:
        raise CliError(f"cannot start the simulated shoe: {exc}") from None
    sim.start()
    print(url, flush=True)
    say = lambda line: print(line, file=sys.stderr, flush=True)  # noqa: E731
    say(f"shoe-sim: {len(cards)} cards ({'scripted' if args.cards else f'{args.decks} deck(s), seed {args.seed}'}); "
        f"host port {url}; type `help` for commands")

    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    server = None
    if args.control is not None:
        class Control(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                for raw in self.rfile:
                    line = raw.decode("utf-8", "replace").strip()
                    if line in ("quit", "exit"):
                        return
                    self.wfile.write((sim.command(line) + "\n").encode())

        socketserver.ThreadingTCPServer.allow_reuse_address = True
        try:
            server = socketserver.ThreadingTCPServer(("127.0.0.1", args.control), Control)
        except OSError as exc:
            sim.stop()
            raise CliError(f"cannot listen for control commands on port {args.control}: {exc}") from None
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        say(f"shoe-sim: control commands on 127.0.0.1:{server.server_address[1]}")

    def read_stdin() -> None:
        for raw in sys.stdin:
            line = raw.strip()
            if line in ("quit", "exit"):
                break
            print(sim.command(line), flush=True)
        else:
            if server is not None:
                return  # stdin closed, the control port carries on
        done.set()

    threading.Thread(target=read_stdin, daemon=True).start()
    try:
        done.wait()
    except KeyboardInterrupt:
        pass
    finally:
        if server is not None:
            server.shutdown()
        sim.stop()
    return 0
