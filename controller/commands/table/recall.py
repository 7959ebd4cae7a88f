"""`croupier recall`: the last rounds of a table or games of a cabinet in full, from its journal."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from controller.cli import CliError
from controller.commands._common import load
from controller.commands.table.replay import cabinet_replay, journal_args, table_replay

HELP = "show the last rounds (a table) or games (a cabinet) in full, from the journal"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("recall", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    journal_args(p)
    p.add_argument("--last", type=int, default=10, help="how many rounds or games (default 10)")
    p.set_defaults(func=_recall)


def _recall(args: argparse.Namespace) -> int:
    from controller.config import CabinetConfig, TableConfig

    cfg = load(args.config)
    if isinstance(cfg, CabinetConfig):
        return _cabinet_recall(cfg, args)
    if not isinstance(cfg, TableConfig):
        raise CliError(f"{args.config}: recall is for tables and cabinets (a link controller's games are its "
                       f"cabinets'); try croupier meters")
    state, entries = table_replay(cfg)
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
        for key, lead in (("cards", "card"), ("decisions", "decision"), ("seen", "camera saw"), ("alerts", "alert")):
            for line in r[key]:
                print(f"    {lead} {line}")
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
    state = cabinet_replay(cfg, args.last)
    games = [e for e in state.recall if e.get("kind") == "spin"][-args.last:] if args.last > 0 else []
    first = games[0]["game"] if games else state.games + 1
    shown = [e for e in state.recall if e.get("game", e.get("after_game", 0) + 1) >= first]
    if args.json:
        print(json.dumps(shown, indent=2))
        return 0
    title = cfg.title
    for e in shown:
        for line in money_lines(e.get("money", ())):
            print(line)
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
    if state.money_since:
        print(f"after game {state.games}:")
        for line in money_lines(state.money_since):
            print(line)
    return 0


def money_lines(entries: Any) -> list[str]:
    """The notes and tickets that came in or went out before a game (recalled with it)."""
    out = []
    for m in entries:
        amount = f"{m['cents'] / 100:.2f} ({m['credits']} credits{', restricted' if m.get('restricted') else ''})"
        if m["kind"] == "note":
            out.append(f"  note in {amount}")
        elif m["kind"] == "ticket_in":
            out.append(f"  ticket in {m['validation']} {amount}")
        else:
            out.append(f"  ticket out #{m['number']} {m['validation']} {amount}")
    return out
