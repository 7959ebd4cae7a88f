"""`croupier watch`: follow a table's public or dealer view on the bus, in the terminal (the reference client)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from controller.cli import CliError
from controller.commands.table.endpoints import endpoint_args, key_pair, resolve_endpoints
from controller.commands.table.printing import state_printer

WAIT_NOTICE_S = 30.0  # how often `watch` repeats that it is still waiting for a table that does not answer


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("watch", help="follow a table's public or dealer view in the terminal",
                       description="Snapshot, then follow a table's view on the bus (the reference client).")
    endpoint_args(p)
    p.add_argument("--view", choices=("public", "dealer"), default="public")
    p.add_argument("--count", type=int, default=None, help="stop after this many updates")
    p.add_argument("--json", action="store_true", help="print each state as one JSON line")
    p.add_argument("--key", help="our CURVE key pair (NAME.key_secret, listed in the config): needed when the "
                                 "table's [bus].curve_screens is on")
    p.set_defaults(func=_watch)


def _watch(args: argparse.Namespace) -> int:
    """Follow a table's view. A table that does not answer is waited for (it may be starting, or restarting
    under systemd), with a line on stderr saying so at once and again every WAIT_NOTICE_S; endpoints that
    serve another table are an error."""
    import asyncio

    from controller.bus import BusClient, CommandError

    table_id, endpoints, cfg = resolve_endpoints(args)
    keys = server = None
    if cfg is not None and cfg.bus.curve_screens:
        if not args.key:
            raise CliError("this table sends its views over CURVE ([bus].curve_screens): give --key NAME.key_secret, "
                           "a key listed in its config")
        keys, server = key_pair(args.key, cfg)
    elif args.key:
        raise CliError("--key is for a table whose config has [bus].curve_screens = true")
    seen = 0
    show = state_printer()
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
