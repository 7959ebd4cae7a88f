"""`croupier meters`: a table's, cabinet's or progressive link's meters, derived from its journal."""

from __future__ import annotations

import argparse
import json
from typing import Any

from controller.commands._common import load
from controller.commands.table.replay import cabinet_replay, journal_args, journal_entries, table_replay

HELP = "show a table's, cabinet's or progressive link's meters, derived from the journal"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("meters", help=HELP, description=HELP[0].upper() + HELP[1:] + ".")
    journal_args(p)
    p.set_defaults(func=_meters)


def money_lines(state: Any) -> list[str]:
    """How the money balances, in credits: what came in (coins, notes, tickets, the operator's credits) less what
    went out (hopper, hand pays, tickets) less what was played plus what was won is what is on the credit meter
    and still owed (a payout under way, a ticket not yet printed)."""
    m = state.meters
    notes = ", ".join(f"{n} x {c / 100:.2f}" for c, n in m.notes_in) or "none"
    return [
        f"in {m.credits_in} = coins {m.drop} + notes {m.notes_credits} ({notes}) + tickets in "
        f"{m.tickets_in_credits} ({m.tickets_in_cashable} cashable, {m.tickets_in_restricted} restricted) + "
        f"operator {m.credits_added}",
        f"out {m.credits_out} = hopper {m.hopper_out} + hand pays {m.cancelled_handpaid} + tickets out "
        f"{m.tickets_out_credits} ({m.tickets_out_cashable} cashable, {m.tickets_out_restricted} restricted)",
        f"played {m.coin_in}, won {m.coin_out} (hand-paid jackpots {m.jackpot_handpaid} apart); on the meter "
        f"{state.credits} ({state.restricted} restricted), owed {state.pending}",
    ]


def _meters(args: argparse.Namespace) -> int:
    from controller.config import CabinetConfig, ProgressiveConfig

    cfg = load(args.config)
    if isinstance(cfg, CabinetConfig):
        from controller.cabinetstate import balance

        state = cabinet_replay(cfg, 1)
        m = state.meters.json()
        held, owed = balance(state)
        m["credits"], m["owed"] = state.credits, state.pending
        m["restricted"] = state.restricted
        m["feature_meters"] = dict(state.slot.meters)
        if args.json:
            print(json.dumps(m, indent=2))
            return 0
        width = max(10, len(str(max(v for v in m.values() if isinstance(v, int)))))
        print(f"cabinet {state.cabinet_id}: {cfg.title.name} at {cfg.denomination} cents a credit "
              f"(meters in credits; {width} digits)")
        for key, value in m.items():
            if isinstance(value, int):
                print(f"    {key.replace('_', ' '):<28} {value:>{width}}")
        for group in ("door_opens", "lockups", "feature_meters"):
            for key, value in m[group].items():
                print(f"    {group.replace('_', ' ')}: {key.replace('_', ' '):<14} {value:>{width}}")
        for key, value in m["features"].items():
            print(f"    feature {key.replace('_', ' ')}: {value['awards']} awards, {value['credits']} credits")
        for line in money_lines(state):
            print(f"    {line}")
        print(f"    balance: credits + owed {held} = in - out - bets + wins {owed}"
              f"{'' if held == owed else '   MISMATCH'}")
        return 0
    if isinstance(cfg, ProgressiveConfig):
        from controller.progressive import link_replay, new_link_state

        link = link_replay(new_link_state(cfg.link_id, cfg.reset_cents), ((e.seq, e.record) for e in journal_entries(cfg)))
        m = link.json()
        if args.json:
            print(json.dumps(m, indent=2))
        else:
            print(f"progressive link {cfg.link_id}: pool {m['pool']} cents (reset {m['reset']}), {m['hits']} hits paid "
                  f"{m['paid']} cents, {m['contributions']} contributions of {m['contributed']} cents")
            for cabinet, c in m["cabinets"].items():
                print(f"    cabinet {cabinet}: last game contributed {c['last_game']}")
        return 0
    state, _ = table_replay(cfg)
    m = state.meters.json()
    if args.json:
        print(json.dumps(m, indent=2))
        return 0
    print(f"table {state.table_id}: {m['rounds']} rounds, {m['voids']} voided, {m['power_ups']} starts, "
          f"{m['refused_commands']} refused commands")
    print(f"    handle {m['handle']}, paid {m['paid']}, house win {m['house_win']}, commission {m['commission']}")
    for spot, sm in m["spots"].items():
        print(f"    spot {spot}: {sm['rounds']} rounds, handle {sm['handle']}, paid {sm['paid']}, "
              f"house win {sm['house_win']}")
    return 0
