"""`croupier titles`: the slot titles Croupier ships, with denominations, paylines, max coins and features."""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("titles", help="list the slot titles (denominations, lines, max coins, features)",
                       description="List every slot title in controller/slots/titles/.")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=_run)


def find_title(text: str) -> Any:
    """A shipped title by its id or by its name as `croupier titles` shows it, in any case ("Frozen Assets",
    "frozen-assets", "FROZEN ASSETS"); an unknown one raises TitleError listing both."""
    from controller.slots import TitleError, all_titles

    wanted = " ".join(text.split()).casefold()
    for title in all_titles():
        if wanted in (title.id.casefold(), title.name.casefold()):
            return title
    raise TitleError(f"unknown title {text!r} (titles: "
                     f"{', '.join(f'{t.id} ({t.name})' for t in all_titles())})")


def _money(cents: int) -> str:
    return f"${cents / 100:,.2f}" if cents < 100 or cents % 100 else f"${cents // 100:,}"


def describe(title) -> dict:  # noqa: ANN001 - a controller.slots Title
    return {
        "id": title.id, "name": title.name, "denominations": [_money(d) for d in title.denominations],
        "denominations_cents": list(title.denominations), "lines": title.lines, "coins_per_line": title.max_coins,
        "max_coins": title.max_bet.total, "paytables": [p.name for p in title.paytables],
        "wild": title.symbols[title.wild.symbol].name if title.wild else None,
        "features": [f.describe() for f in title.features],
        "progressive_reset": _money(title.progressive.reset_cents) if title.progressive else None,
        "target_rtp": list(title.target_rtp),
    }


def _run(args: argparse.Namespace) -> int:
    from controller.slots import all_titles

    rows = [describe(t) for t in all_titles()]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"{'id':<22}{'title':<22}{'denominations':<32}{'lines':>6}{'max coins':>10}  features")
    for r in rows:
        extras = list(r["features"])
        if r["wild"]:
            extras.insert(0, f"wild {r['wild']}")
        if len(r["paytables"]) > 1:
            extras.append(f"{len(r['paytables'])} paytables")
        if r["progressive_reset"]:
            extras.append(f"progressive from {r['progressive_reset']}")
        print(f"{r['id']:<22}{r['name']:<22}{' '.join(r['denominations']):<32}{r['lines']:>6}{r['max_coins']:>10}  "
              f"{'; '.join(extras) or '-'}")
    return 0
