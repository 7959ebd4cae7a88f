"""`croupier math GAME`: a game's probabilities and house edge for its configured rules, exact or simulated."""

from __future__ import annotations

import argparse
import json


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("math", help="probabilities and house edge of a game (exact or seeded simulation)",
                       description="Print a game's probabilities and house edge for its configured rules: exact by "
                                   "enumeration where the space allows, else a seeded simulation with a 95% interval.")
    p.add_argument("game", help=f"a game with a math report: {', '.join(reports())}")
    p.add_argument("--rules", metavar="FILE", help="TOML file with the game's rules (its [rules] table, or the top level)")
    p.add_argument("--decks", type=int, help="number of decks (overrides the rules)")
    p.add_argument("--rounds", type=int, help="rounds to simulate (simulated games; default per game)")
    p.add_argument("--seed", type=int, default=1, help="simulation seed (default 1)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_run)


def reports() -> list[str]:
    """The games with a math report (a module of controller/analysis/ named after the game), hyphenated."""
    import pkgutil

    import controller.analysis
    from controller.games import game_names

    games = set(game_names())
    names = (m.name.replace("_", "-") for m in pkgutil.iter_modules(controller.analysis.__path__))
    return sorted(name for name in names if name in games)


def _run(args: argparse.Namespace) -> int:
    import importlib
    import inspect
    import sys
    import tomllib

    from controller.cli import CliError
    from controller.games import get_game
    from controller.games.base import RulesError, rules_from_mapping
    from controller.progress import progress

    try:
        game = get_game(args.game)
    except ValueError:
        raise CliError(f"unknown game {args.game!r} (math reports: {', '.join(reports())})") from None
    if game.name not in reports():
        raise CliError(f"no math report for {game.name} (math reports: {', '.join(reports())})")
    analysis = importlib.import_module(f"controller.analysis.{game.name.replace('-', '_')}")
    data: dict = {}
    if args.rules:
        try:
            with open(args.rules, "rb") as fh:
                loaded = tomllib.load(fh)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            raise CliError(f"cannot read rules {args.rules}: {exc}") from None
        data = dict(loaded.get("rules", loaded))
    if args.decks is not None:
        data["decks"] = args.decks
    if args.rounds is not None and args.rounds < 2:
        raise CliError("--rounds must be at least 2")
    try:
        rules = rules_from_mapping(game.rules_type, data, where=f"{game.name} rules")
    except RulesError as exc:
        raise CliError(str(exc)) from None
    bar = progress(f"{game.name}: rounds", quiet=args.json)
    with bar:
        def say(line: str) -> None:
            bar.say(line, sys.stderr if args.json else sys.stdout)

        simulates = "progress" in inspect.signature(analysis.analyse).parameters
        result = analysis.analyse(rules, args.rounds, args.seed, say, **({"progress": bar} if simulates else {}))
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _print(result)
    return 0


def _print(r: dict) -> None:
    rounds = f", {r['rounds']:,} rounds" if r.get("rounds") else ""
    print(f"{r['game']} ({r['method']}{rounds})")
    print("rules: " + ", ".join(f"{k}={v}" for k, v in r["rules"].items()))
    print("probabilities:")
    for name, p in r["probabilities"].items():
        print(f"  {name:<28}{p:>14.8f}")
    # The reports hold the player's expectation (negative: the player loses); people read a house edge.
    print("house edge (the house's expected win per unit of the initial wager; positive: the house wins, "
          "negative: the player does):")
    for name, edge in r["house_edge"].items():
        ci = f"  ± {r['ci95'][name] * 100:.4f}% (95%)" if r.get("ci95") and name in r["ci95"] else ""
        print(f"  {name:<28}{_percent(-edge):>10}{ci}")
    if r.get("by_decks"):
        print("house edge by decks (the same rules, each with its best raises):")
        for decks, edge in r["by_decks"].items():
            print(f"  {decks + (' deck' if decks == '1' else ' decks'):<28}{_percent(-edge):>10}")


def _percent(x: float) -> str:
    return f"{x * 100:.4f}%"
