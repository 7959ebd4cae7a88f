"""`croupier analytics`: a table's analytics (per gaming day and shift) and its advantage-play alerts, from its journal."""

from __future__ import annotations

import argparse
import json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("analytics", help="a table's analytics per gaming day and shift, and its advantage-play alerts",
                       description="Replay a table's journal read-only: rounds per hour per dealer, handle, win and "
                                   "hold, dealer errors, camera/shoe disagreements, time in each state, per gaming "
                                   "day and shift; and the advantage-play alerts the pit would have seen (pit only).")
    p.add_argument("--config", required=True, help="the table's TOML config (to find its journal)")
    p.add_argument("--json", action="store_true", help="print the whole report as JSON")
    p.add_argument("--day-start", default="06:00", help="local time the gaming day starts (default 06:00)")
    p.add_argument("--shifts", default="06:00,14:00,22:00", help="shift starts, local HH:MM (default 06:00,14:00,22:00)")
    p.add_argument("--utc-offset", type=int, default=0, metavar="MINUTES", help="local time's offset from UTC")
    p.set_defaults(func=_analytics)


def _analytics(args: argparse.Namespace) -> int:
    from controller import apalerts
    from controller.cli import CliError
    from controller.commands._common import load
    from controller.commands.table.replay import journal_entries
    from controller.config import TableConfig
    from controller.games.base import IllegalEvent, rules_from_mapping
    from controller.records import RecordError
    from controller.tableanalytics import Periods, analyse
    from controller.tablestate import new_state

    try:
        periods = Periods(args.day_start, tuple(s.strip() for s in args.shifts.split(",") if s.strip()), args.utc_offset)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    cfg = load(args.config)
    if not isinstance(cfg, TableConfig):
        raise CliError(f"{args.config} is not a table's config: analytics are for tables")
    entries = journal_entries(cfg)
    first = next((e.record for e in entries if e.record.get("kind") == "start"), None)
    rules = rules_from_mapping(cfg.game.rules_type, first["rules"]) if first else cfg.rules
    try:
        report = analyse(cfg.table_id, cfg.game, rules, ((e.time, e.record) for e in entries), periods)
        report["advantage_play"] = None   # the Hi-Lo count and its tests are blackjack's
        if cfg.game.name == "blackjack":
            ap = apalerts.replay(new_state(cfg.table_id, cfg.game, rules), (e.record for e in entries))
            report["advantage_play"] = apalerts.pit_view(ap, cfg.table_id)
    except (RecordError, IllegalEvent) as exc:
        raise CliError(f"journal {cfg.journal} does not replay: {exc}") from None
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    t = report["total"]
    print(f"table {cfg.table_id}: {t['rounds']} rounds, handle {t['handle']}, win {t['win']}, hold {t['hold']}; "
          f"dealer errors {t['dealer_errors']['total']} ({t['dealer_errors']['per_100_rounds']} per 100 rounds), "
          f"camera/shoe disagreements {t['camera_shoe_disagreements']}")
    for day, d in report["days"].items():
        print(f"  gaming day {day}: {d['rounds']} rounds, win {d['win']}, hold {d['hold']}")
        for shift, s in d["shifts"].items():
            dealers = ", ".join(f"{k} {v['rounds_per_hour']}/h" for k, v in s["dealers"].items())
            print(f"    shift {shift}: {s['rounds']} rounds, win {s['win']}; dealers: {dealers or '-'}; "
                  f"time: {', '.join(f'{k} {v:.0f}s' for k, v in s['seconds_in_state'].items())}")
    if report["advantage_play"] is None:
        return 0
    alerts = report["advantage_play"]["alerts"]
    print(f"  advantage-play alerts (pit only): {len(alerts)}")
    for a in alerts:
        print(f"    shoe {a['shoe']}, spot {a['spot']}: {a['kind']}: {a['text']}")
    return 0
