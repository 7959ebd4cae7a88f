"""A journal replayed read-only for `croupier recall` and `croupier meters`: its entries, a cabinet's state, a table's rounds."""

from __future__ import annotations

import argparse
from typing import Any

from controller.cli import CliError


def journal_args(p: argparse.ArgumentParser) -> None:
    """The options of the commands that read a journal (`recall`, `meters`)."""
    p.add_argument("--config", required=True, help="the table's or cabinet's TOML config (to find its journal)")
    p.add_argument("--json", action="store_true")


def journal_entries(cfg: Any) -> list[Any]:
    """The journal's entries, opened read-only (no file is created or written), after checking its MACs and
    its anchor."""
    from controller.journal import JournalIntegrityError, open_journal

    if not cfg.journal.exists():
        raise CliError(f"no journal at {cfg.journal}: {cfg.table_id} has not run yet")
    try:
        with open_journal(cfg, readonly=True) as journal:
            return list(journal.entries())
    except JournalIntegrityError as exc:
        raise CliError(f"journal integrity check failed: {exc}") from None


def cabinet_replay(cfg: Any, recall: int) -> Any:
    """A cabinet's state replayed from its journal, keeping the last `recall` games for recall."""
    from controller.cabinetstate import new_state, replay

    state = new_state(cfg.cabinet_id, cfg.title, cfg.denomination, cfg.settings, cfg.paytable, recall=max(recall, 1))
    return replay(state, ((e.seq, e.record) for e in journal_entries(cfg)))


def table_replay(cfg: Any) -> tuple[Any, list[dict[str, Any]]]:
    """Replay the journal read-only; return the state and the rounds (events, cards, settlement) in order."""
    from controller.games.base import CardPlaced, Decision, RoundSettled, RoundVoided, StakeChanged, event_from_json
    from controller.games.base import rules_from_mapping
    from controller.tablestate import CardReassigned, new_state, step

    entries = journal_entries(cfg)
    first = next((e.record for e in entries if e.record.get("kind") == "start"), None)
    rules = rules_from_mapping(cfg.game.rules_type, first["rules"]) if first else cfg.rules
    state = new_state(cfg.table_id, cfg.game, rules)
    rounds: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    alerts: dict[int, str] = {}
    for entry in entries:
        record = entry.record
        state, effects = step(state, record)
        kind = record.get("kind")
        if current is not None and current["result"] is None:  # what happened during the round in play
            if kind == "seen" and record["event"]["kind"] in ("card_appeared", "card_moved"):
                seen = record["event"]
                card = seen.get("card")
                what = "face down" if card is None else card + ("" if seen.get("certain") else " (unsure)")
                current["seen"].append(f"{seen.get('zone') or 'off the layout'}: {what}")
            elif kind == "alert":
                alerts[record["alert"]["id"]] = f"{record['alert']['kind']}: {record['alert']['text']}"
                current["alerts"].append(alerts[record["alert"]["id"]])
            elif kind == "resolve":
                reason = f" ({record['reason']})" if record.get("reason") else ""
                if record.get("dealt"):
                    reason += f": {record['dealt']} dealt as the camera saw it (the shoe did not read it)"
                for eff in effects:
                    if isinstance(eff, CardReassigned):
                        # The round's cards as they are now: the dealt card's entry names the true card.
                        swap = {eff.card: eff.becomes, **({eff.becomes: eff.card} if eff.swapped else {})}
                        current["cards"] = [(to, swap.get(c, c), up) for to, c, up in current["cards"]]
                        reason += (f": {eff.card} and {eff.becomes} traded places" if eff.swapped
                                   else f": the shoe's {eff.card} is {eff.becomes}")
                current["alerts"].append(f"{alerts.get(record['alert'], 'alert ' + str(record['alert']))} -> "
                                         f"{record['action']} by {record['by']}{reason}")
        if kind != "game":
            continue
        event = event_from_json(record["event"])
        if event.KIND in ("open_bets", "new_shoe") or current is None or current["result"] is not None:
            # A round runs from open bets to its settlement; a new shoe's burn cards are an entry of their own.
            current = {"kind": "round" if event.KIND == "open_bets" else "shoe", "round": None, "started": entry.time,
                       "bets": {}, "cards": [], "decisions": [], "seen": [], "alerts": [], "result": None}
            rounds.append(current)
        if isinstance(event, Decision):
            current["decisions"].append(f"{event.actor} {event.action}" + (f" {event.amount}" if event.amount else ""))
        for eff in effects:
            if isinstance(eff, StakeChanged):
                current["bets"][f"spot {eff.spot} {eff.box}"] = eff.stake
            elif isinstance(eff, CardPlaced):
                current["cards"].append((eff.to, str(eff.card), eff.up))  # (where, card, face up) until the end
            elif isinstance(eff, RoundSettled):
                current["round"] = eff.round
                current["result"] = eff.settlement.json()
            elif isinstance(eff, RoundVoided):
                current["round"] = eff.round
                current["result"] = {"voided": eff.reason, "returned": eff.returned}
    for r in rounds:
        r["cards"] = [f"{to}: {card}{'' if up else ' (down)'}" for to, card, up in r["cards"]]
    return state, [r for r in rounds if r["bets"] or r["cards"] or r["result"]]
