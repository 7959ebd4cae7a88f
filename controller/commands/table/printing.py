"""A table's, cabinet's or link's view as lines in the terminal, for `croupier watch` and `croupier demo`."""

from __future__ import annotations

from typing import Any, Callable


def print_state(state: dict[str, Any], compact: bool = False) -> None:
    if "cabinet" in state:
        return _print_cabinet(state)
    if "link" in state:
        last = state.get("last_hit") or {}
        print(f"[{state['link']} #{state['seq']}] pool {state['pool'] / 100:.2f}, {state['hits']} hits"
              + (f", last by {last['cabinet']} game {last['game']}: {last['award'] / 100:.2f}" if last else ""),
              flush=True)
        return None
    print("\n".join(_table_lines(state, compact)), flush=True)


def state_printer(compact: bool = False) -> Callable[[dict[str, Any]], None]:
    """`print_state` for the stream of one table's views: an update that would print what the one before it
    printed, but for its seq (a record that changed nothing shown here: what the camera saw, the shoe's
    status), is left out, so the terminal shows the table's progress rather than every record."""
    last: list[str] = []
    shown_round: list[Any] = [None]  # the last round whose settlement was printed

    def show(state: dict[str, Any]) -> None:
        if "cabinet" in state or "link" in state:
            return print_state(state, compact)
        lines = _table_lines(state, compact)
        history = state.get("history") or []
        if history and history[-1].get("round") != shown_round[0]:
            # a round settled and the next one opened in one update: its settlement is printed all the same
            shown_round[0] = history[-1].get("round")
            settled = _settled_lines(history[-1])
            if settled and settled[0] not in lines:
                lines.insert(1, settled[0])
        seen = [lines[0].partition("] ")[2], *lines[1:]]
        if seen != last:
            last[:] = seen
            print("\n".join(lines), flush=True)
        return None

    return show


def _print_cabinet(state: dict[str, Any]) -> None:
    reels = state.get("reels") or {}
    window = reels.get("window")
    line = " ".join(window[1]) if window else "-- -- --"
    last = (state.get("history") or [{}])[-1]
    text = (f"[{state['cabinet']} #{state['seq']}] game {state['game']}: {line:<9} "
            f"{'won ' + str(last.get('won', 0)) if last.get('game') == state['game'] else '':<9} "
            f"credits {state['credits']:>6}  bet {state['bet_credits']}")
    if state.get("free_spins"):
        text += f"  free spins {state['free_spins']}"
    progressive = state.get("progressive") or {}
    if progressive.get("pool") is not None:
        text += f"  progressive {progressive['pool']}"
    if state.get("message") and state.get("status") not in ("play", "idle"):
        text += f"  [{state['message']}]"
    print(text, flush=True)


def _table_lines(state: dict[str, Any], compact: bool) -> list[str]:
    game = state.get("game", {})
    exp = state.get("expected", {})
    # NEXT names the step the table waits for, as the dealer page labels it
    head = (f"[{state.get('table')} #{state.get('seq')}] round {game.get('round')} {game.get('phase')}  "
            f"NEXT: {exp.get('text')}")
    lines = [head]
    cards: list[tuple[str, list[str]]] = []
    _cards_in(game, "", cards)
    for where, shown in cards:
        lines.append(f"    {where:<28} {' '.join(shown)}")
    bets = game.get("bets") or []
    if bets:
        lines.append("    bets: " + ", ".join(f"spot {b['spot']} {b['box']} {b['amount']}" for b in bets))
    history = state.get("history") or []
    settled = _settled_lines(history[-1]) if history and game.get("phase") == "idle" else []
    lines.extend(settled)
    alerts = (state.get("dealer_only") or {}).get("alerts") or []
    for a in alerts:
        which = f"; reassign card= one of {', '.join(a['reassign'])}" if a.get("reassign") else ""
        lines.append(f"    ALERT {a['id']}: {a['text']} (resolve: {', '.join(a['options'])}{which})")
    # compact (the demo): a view without cards is one line, but a round's settlement always shows
    return [head, *settled] if compact and not cards else lines


def _settled_lines(last: dict[str, Any]) -> list[str]:
    """A round of the view's history as one line: its stakes, what was paid and the players' net, or its void."""
    if "results" in last:
        net = sum(r["returned"] - r["stake"] for r in last["results"])
        return [f"    round {last['round']} settled: stakes {last['stakes']}, paid {last['returned']}, "
                f"players {'+' if net >= 0 else ''}{net}"]
    if "voided" in last:
        return [f"    round {last['round']} voided: {last['voided']}"]
    return []


def _cards_in(node: Any, path: str, out: list[tuple[str, list[str]]]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("bets", "history", "shoe", "dealer_only"):
                continue
            _cards_in(value, f"{path}.{key}" if path else key, out)
    elif isinstance(node, list):
        if node and all(isinstance(x, dict) and "card" in x and "up" in x for x in node):
            out.append((path, [_card_text(x) for x in node]))
        else:
            for i, value in enumerate(node):
                label = value.get("spot") if isinstance(value, dict) and "spot" in value else i + 1
                _cards_in(value, f"{path}[{label}]", out)


def _card_text(c: dict[str, Any]) -> str:
    if c["card"] is None:
        return "##"
    from controller.cards import parse_card

    return parse_card(c["card"]).symbol
