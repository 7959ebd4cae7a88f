"""`croupier journal verify|migrate`: check a journal's MAC chain and anchor read-only, or key an old unkeyed journal once."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("journal", help="verify a table's, cabinet's or link's journal (MACs and anchor)",
                       description="Check a journal against its machine key and its anchor, read-only.")
    which = p.add_subparsers(dest="journal_command", metavar="ACTION", required=True)
    v = which.add_parser("verify", help="check every row's MAC and the anchor; exit 0 good, 2 bad",
                         description="Open the journal the config names read-only (no file is created or written), "
                                     "check every row's HMAC-SHA-256 link under the journal key and that no row "
                                     "its anchor recorded is missing; print the rows and the last seq.")
    v.add_argument("--config", required=True, help="the table's, cabinet's or link's TOML config")
    v.set_defaults(func=_verify)
    m = which.add_parser("migrate", help="key an unkeyed (schema 1) journal to this machine, once",
                         description="Verify a schema 1 journal's SHA-256 chain, then rewrite its chain as "
                                     "HMAC-SHA-256 under this machine's journal key and make its anchor. Stop the "
                                     "service first and keep a copy of the file: whoever migrates vouches for it.")
    m.add_argument("--config", required=True, help="the table's, cabinet's or link's TOML config")
    m.set_defaults(func=_migrate)


def _verify(args: argparse.Namespace) -> int:
    from controller.cli import CliError
    from controller.commands._common import load
    from controller.journal import JournalIntegrityError, open_journal

    cfg = load(args.config)
    if not cfg.journal.exists():
        raise CliError(f"no journal at {cfg.journal}: {cfg.table_id} has not run yet")
    try:
        with open_journal(cfg, readonly=True) as journal:
            rows, anchored, key_id = journal.last_seq, journal.anchored_seq, journal.key_id
            anchor = journal.anchor_path
    except JournalIntegrityError as exc:
        raise CliError(f"journal {cfg.journal} does NOT verify: {exc}") from None
    print(f"journal {cfg.journal} of {cfg.table_id}: {rows} rows, last seq {rows}; every MAC verifies under journal "
          f"key {key_id}; anchor {anchor} at seq {anchored}: no committed row is missing")
    return 0


def _migrate(args: argparse.Namespace) -> int:
    from controller.cli import CliError
    from controller.commands._common import load
    from controller.journal import JournalIntegrityError, default_anchor, migrate

    cfg = load(args.config)
    anchor = cfg.journal_anchor or default_anchor(cfg.journal)
    if anchor.exists():
        raise CliError(f"anchor {anchor} exists: {cfg.journal} is keyed already")
    try:
        rows = migrate(cfg.journal, cfg.table_id, key_file=cfg.journal_key, anchor=anchor)
    except JournalIntegrityError as exc:
        raise CliError(str(exc)) from None
    except OSError as exc:
        raise CliError(f"cannot migrate {cfg.journal}: {exc}") from None
    print(f"journal {cfg.journal}: {rows} rows keyed to this machine's journal key; anchor {anchor}")
    return 0
