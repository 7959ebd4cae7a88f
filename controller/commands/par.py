"""`croupier par TITLE | --all`: the PAR sheet of slot titles (return by bet, hit frequency, volatility, every paytable line and feature)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("par", help="PAR sheet of a slot title (exact enumeration / Markov analysis)",
                       description="Print a slot title's PAR sheet: RTP by bet, hit frequency, volatility, the "
                                   "contribution of every paytable line and feature, top award odds and the "
                                   "progressive figures. The base game is enumerated exactly over every stop "
                                   "combination; persistent meters by their exact Markov chain.")
    p.add_argument("title", nargs="?", help="title id or name (see `croupier titles`), e.g. bank-on-it or \"Bank on It!\"")
    p.add_argument("--all", action="store_true", help="every title")
    p.add_argument("--paytable", type=int, help="headline paytable (titles with several; default the first)")
    p.add_argument("--json", action="store_true", help="print the sheet(s) as JSON")
    p.add_argument("--simulate", type=int, metavar="SPINS",
                   help="instead, a seeded simulation of SPINS max-bet spins with a 95%% interval, beside the exact "
                        "figure (the cross-check)")
    p.add_argument("--seed", type=int, default=1, help="simulation seed (default 1)")
    p.add_argument("--cash-in-at", type=int, default=1, metavar="N",
                   help="simulation: Cash In! when N free winning spins are banked, 0 never (default 1)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    import time

    from controller.analysis.par import par_sheet
    from controller.cli import CliError
    from controller.commands.titles import find_title
    from controller.progress import progress
    from controller.slots import TitleError, all_titles

    if args.all == bool(args.title):
        raise CliError("name one title, or give --all")
    try:
        titles = all_titles() if args.all else [find_title(args.title)]
    except TitleError as exc:
        raise CliError(str(exc)) from None
    if args.paytable is not None and (args.all or not 0 <= args.paytable < len(titles[0].paytables)):
        raise CliError(f"--paytable is 0..{len(titles[0].paytables) - 1} for {titles[0].name}"
                       if not args.all else "--paytable goes with one title")
    if args.simulate is not None:
        return _simulate(args, titles)
    started = time.perf_counter()
    sheets = []
    with progress("PAR sheets", len(titles), quiet=args.json or not args.all) as bar:
        for title in titles:
            sheets.append(par_sheet(title, args.paytable))
            bar.advance()
    seconds = time.perf_counter() - started
    if args.json:
        print(json.dumps(sheets if args.all else sheets[0], indent=2))
    elif args.all:
        _print_summary(sheets)
    else:
        _print(sheets[0])
    print(f"{len(sheets)} PAR sheet(s) in {seconds:.2f} s", file=sys.stderr)
    return 0


def _simulate(args: argparse.Namespace, titles: list) -> int:
    from controller.analysis.par import simulate_sheet
    from controller.cli import CliError

    if args.simulate < 1000 or args.cash_in_at < 0:
        raise CliError("--simulate needs at least 1000 spins and --cash-in-at 0 or more")
    sheets = [simulate_sheet(t, args.simulate, args.seed, paytable=args.paytable or 0, cash_in_at=args.cash_in_at)
              for t in titles]
    if args.json:
        print(json.dumps(sheets if args.all else sheets[0], indent=2))
        return 0
    print(f"{'title':<22}{'spins':>12}{'simulated RTP':>15}{'95% +-':>10}{'exact':>11}{'z':>7}  (jackpot left out)")
    for s in sheets:
        print(f"{s['id']:<22}{s['spins']:>12,}{_pct(s['rtp']):>15}{_pct(s['ci95']):>10}{_pct(s['exact_rtp']):>11}"
              f"{s['z']:>+7.2f}")
    return 0


def _pct(x: float) -> str:
    return f"{x * 100:.4f}%"


def _odds(x: float | None) -> str:
    return f"1 in {x:,.1f}" if x else "never"


def _label(key: str) -> str:
    """A figure's key as words; odds say "1 in N" themselves ("won_one_in" -> "won")."""
    return key.removesuffix("one_in").removesuffix("_").replace("_", " ")


def _figure(key: str, value: Any) -> str:
    """A feature's figure for people: odds as "1 in N", returns as percentages, other numbers rounded (the JSON
    keeps every digit)."""
    if isinstance(value, dict):
        return ", ".join(f"{_label(k)} {_figure(k, v)}".strip() for k, v in value.items())
    if isinstance(value, list):
        return ", ".join(_figure(key, v) for v in value)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if key.endswith("one_in"):
        return _odds(value)
    if key == "rtp" or key.endswith("_rtp"):
        return _pct(value)
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.2f}" if abs(value) >= 1 else f"{value:.4g}"


def _print_summary(sheets: list[dict[str, Any]]) -> None:
    print(f"{'title':<22}{'method':<8}{'RTP':>10}{'target':>16}{'hit freq':>10}{'volatility':>11}")
    for s in sheets:
        low, high = s["target_rtp"]
        print(f"{s['id']:<22}{s['method']:<8}{_pct(s['rtp']):>10}{f'{low:.0%}-{high:.0%}':>16}"
              f"{_pct(s['hit_frequency']):>10}{s['volatility']:>11.2f}")


def _print(s: dict[str, Any]) -> None:
    print(f"{s['title']} ({s['id']}): PAR sheet, method {s['method']}")
    print(f"  {s['lines']} line(s), {s['coins_per_line']} coin(s) per line, max bet {s['max_coins']}; "
          f"denominations {', '.join(f'${d / 100:.2f}' for d in s['denominations'])}")
    print(f"  reels: {s['reels']['physical']} physical stops, {s['reels']['virtual']} virtual; "
          f"cycle {s['cycle']:,} stop combinations")
    exact = f" (exactly {s['rtp_exact']})" if s["rtp_exact"] else ""
    print(f"  RTP at max bet {_pct(s['rtp'])}{exact}; target {_pct(s['target_rtp'][0])} to {_pct(s['target_rtp'][1])}")
    print("  RTP by bet: " + ", ".join(f"{k}: {_pct(v)}" for k, v in s["rtp_by_bet"].items()))
    print(f"  hit frequency {_pct(s['hit_frequency'])} (1 in {1 / s['hit_frequency']:.2f}); "
          f"volatility {s['volatility']:.3f} per coin")
    top = s["top_award"]
    print(f"  top award {top['combo']} = {top['credits']:,} credits, {_odds(top['one_in'])}")
    print(f"  {'combination':<30}{'credits':>9}{'odds':>20}{'RTP':>11}")
    for row in s["lines_table"]:
        print(f"  {row['combo']:<30}{row['credits']:>9,}{_odds(row['one_in']):>20}{_pct(row['rtp']):>11}")
    for name, details in s["features"].items():
        print(f"  feature {name}:")
        for key, value in details.items():
            if key == "policies":
                print("    Cash In! policies (return at each denomination; progressive odds):")
                for policy, p in value.items():
                    by = ", ".join(f"${int(d) / 100:.2f}: {_pct(r)}" for d, r in p["rtp_by_denomination"].items())
                    print(f"      {policy}: {by}; progressive {_odds(p['progressive_one_in'])}")
            else:
                print(f"    {_label(key) or 'odds'}: {_figure(key, value)}")
    if s["progressive"]:
        p = s["progressive"]
        print(f"  progressive: reset ${p['reset_cents'] / 100:,.2f}, contribution {_pct(p['contribution_rate'])} of "
              f"each {p['qualifying_bet']}-coin bet, hit {_odds(p['one_in'])} (at max bet)")
        for denom, d in p["by_denomination"].items():
            print(f"    at ${int(denom) / 100:.2f}: reset {d['reset_credits']:,} credits, base {_pct(d['base_rtp'])} + "
                  f"reset {_pct(d['rtp_reset'])} + contribution = {_pct(d['rtp'])}")
    for name, p in s.get("paytables", {}).items():
        print(f"  paytable {name}: RTP {_pct(p['rtp'])}, hit {_pct(p['hit_frequency'])}, volatility "
              f"{p['volatility']:.3f}; by bet " + ", ".join(f"{k}: {_pct(v)}" for k, v in p["rtp_by_bet"].items()))
