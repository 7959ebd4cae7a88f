"""`croupier command`: send one dealer, player, attendant or operator command over the bus and print the reply."""

from __future__ import annotations

import argparse
import json
from typing import Any

from controller.cli import CliError
from controller.commands.table.endpoints import endpoint_args, key_pair, resolve_endpoints



def arg_value(text: str) -> int | str:
    """A KEY=VALUE argument's value: a whole number where it is one the bus carries exactly (JSON's safe integers,
    no leading zeros), else the text itself: a ticket's 18-digit validation number "00..." stays its digits."""
    digits = text[1:] if text.startswith("-") else text
    if digits.isdigit() and (digits == "0" or not digits.startswith("0")) and abs(int(text)) <= 2**53 - 1:
        return int(text)
    return text

def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("command", help="send a dealer, player, attendant or operator command to a table or cabinet",
                       description="Send a command over the bus, e.g. `croupier command --config t.toml --key "
                                   "keys/dealer.key_secret resolve alert=3 action=void reason=misdeal`.")
    endpoint_args(p)
    p.add_argument("--key", help="our CURVE key pair (NAME.key_secret); the server key comes from the config's keys")
    p.add_argument("--list", action="store_true",
                   help="list the commands a table, a cabinet and a progressive link take (roles, what each does)")
    p.add_argument("name", nargs="?", help="command, e.g. open_bets, place_bet, spin, clear, hit (--list lists them; "
                                           "their args: controller/bus.md)")
    p.add_argument("args", nargs="*", metavar="KEY=VALUE", help="arguments, e.g. spot=3 box=main amount=25")
    p.set_defaults(func=_command)


def _command(args: argparse.Namespace) -> int:
    import asyncio

    from controller.bus import CommandClient, CommandError

    if args.list:
        print(_listing())
        return 0
    if not args.name:
        raise CliError("name a command (croupier command --list lists them)")
    table_id, endpoints, cfg = resolve_endpoints(args)
    values: dict[str, Any] = {}
    for item in args.args:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise CliError(f"arguments are KEY=VALUE, got {item!r}")
        values[key] = arg_value(value)
    keys = server = None
    if args.key:
        if cfg is None or cfg.bus.keys is None:
            raise CliError("--key needs --config with [bus].keys (the table's public key lives there)")
        keys, server = key_pair(args.key, cfg)

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


def _listing() -> str:
    """Every runtime's commands, as their handlers declare them (controller/runtimecommands.py)."""
    from controller.cabinet import Cabinet
    from controller.progressive import LinkController
    from controller.runtimecommands import commands_text
    from controller.table import Table

    return "\n".join(f"{what}:\n{commands_text(runtime.COMMANDS)}" for what, runtime in
                     (("table", Table), ("slot cabinet", Cabinet), ("progressive link", LinkController)))
