"""`croupier floor restore ID`: write a replacement machine's journal from the floor (needs `pip install -e '.[floor]'`)."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("floor", help="the floor (NATS JetStream): restore a machine's journal from it",
                       description="Journals replicated to a NATS JetStream floor (the config's [floor] section).")
    which = p.add_subparsers(dest="floor_command", metavar="ACTION", required=True)
    r = which.add_parser("restore", help="write a replacement machine's journal and anchor from the floor",
                         description="Read every row the floor holds for machine ID, check the chain, write them "
                                     "to the journal the config names (it must not exist), verify every MAC under "
                                     "the config's journal key (the replaced machine's key, from its backup) and "
                                     "make the anchor. `croupier run` then resumes the machine exactly.")
    r.add_argument("machine", metavar="ID", help="the machine whose journal to restore (the config's id)")
    r.add_argument("--config", required=True, help="the replacement machine's config (with its [floor] section)")
    r.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for the floor (default 30)")
    r.set_defaults(func=_restore)


def _restore(args: argparse.Namespace) -> int:
    import asyncio

    from controller.cli import CliError
    from controller.commands._common import load
    from controller.journal import JournalIntegrityError, default_anchor, default_key_file

    cfg = load(args.config)
    if cfg.floor is None:
        raise CliError(f"{args.config}: no [floor] section: which floor holds {args.machine}'s journal?")
    if args.machine != cfg.floor.machine:
        raise CliError(f"{args.config} is the config of {cfg.floor.machine}, not {args.machine}: restore a machine "
                       f"with its own config")
    try:
        from controller.floor.anchor import restore_journal
        from controller.floor.ingest import floor_rows
        from controller.floor.server import connect
    except ImportError as exc:
        raise CliError(f"the floor needs nats-py: pip install -e '.[floor]' ({exc})") from None

    async def fetch() -> list:
        nc = await connect(cfg.floor.servers, credentials=cfg.floor.credentials, name=f"croupier-restore-{args.machine}",
                           max_reconnect_attempts=3)
        try:
            return [row for _, row in await floor_rows(nc.jetstream(timeout=args.timeout), args.machine,
                                                          timeout=args.timeout)]
        finally:
            await nc.close()

    try:
        rows = asyncio.run(asyncio.wait_for(fetch(), args.timeout))
    except Exception as exc:  # noqa: BLE001 - no server, no stream, a timeout: one line, exit 2
        raise CliError(f"cannot read {args.machine}'s journal from the floor {', '.join(cfg.floor.servers)}: "
                       f"{type(exc).__name__}: {exc}") from None
    anchor = cfg.journal_anchor or default_anchor(cfg.journal)
    try:
        count = restore_journal(rows, args.machine, cfg.journal, cfg.journal_key or default_key_file(), anchor)
    except (JournalIntegrityError, FileExistsError) as exc:
        raise CliError(str(exc)) from None
    print(f"journal {cfg.journal} of {args.machine}: {count} rows restored from the floor, every MAC verified under "
          f"its journal key; anchor {anchor} at seq {count}")
    return 0
