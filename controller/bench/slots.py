"""`croupier bench slots`: spins per second through the scalar spin() and the vectorised simulator, per title, and the time of every PAR sheet."""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from controller.progress import Progress

HELP = "slot math speed: spins/s through spin() and the vectorised simulator, and the time of `croupier par --all`"
DEFAULT_SEED = 20261121


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--scalar-spins", type=int, default=100_000,
                        help="spins per title through spin() (default 100,000)")
    parser.add_argument("--spins", type=int, default=5_000_000,
                        help="spins per title through the vectorised simulator (default 5,000,000)")
    parser.add_argument("--machines", type=int, default=10_000,
                        help="cabinets played in lockstep by the simulator (default 10,000)")
    parser.add_argument("--titles", nargs="*", metavar="TITLE", help="titles to measure (default: all)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the draws")


def _scalar(title: Any, spins: int, seed: int) -> tuple[float, float]:
    from controller.rng import SeededRng
    from controller.slots import cash_in, draw_pick, draw_stops, new_state, pick, spin

    rng = SeededRng(seed)
    state = new_state(title)
    bet = title.max_bet
    stops = [draw_stops(state, rng) for _ in range(spins)]
    # spin() alone on pre-drawn stops, free spins and picks played as they come
    t0 = time.perf_counter()
    for s in stops:
        if state.free is not None and state.free.guaranteed:
            s = draw_stops(state, rng)
        state, _ = spin(state, s, state.free.bet if state.free else bet)
        if state.pending:
            state, _ = pick(state, "matador", draw_pick(state, rng))
        elif state.meters.get("free_winning_spins") and state.free is None:
            state, _ = cash_in(state)
    spin_only = spins / (time.perf_counter() - t0)
    # and with the draws, as a cabinet does
    state = new_state(title)
    t0 = time.perf_counter()
    for _ in range(spins):
        state, _ = spin(state, draw_stops(state, rng), state.free.bet if state.free else bet)
        if state.pending:
            state, _ = pick(state, "matador", draw_pick(state, rng))
        elif state.meters.get("free_winning_spins") and state.free is None:
            state, _ = cash_in(state)
    return spin_only, spins / (time.perf_counter() - t0)


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    """The figures, with a progress bar on a terminal; the lines for people go above it (to stdout, as `say`
    would print them)."""
    from controller.cli import CliError
    from controller.progress import progress
    from controller.slots import TitleError, all_titles, get_title

    if args.scalar_spins < 1 or args.spins < 1 or args.machines < 1:
        raise CliError("--scalar-spins, --spins and --machines must be at least 1")
    try:
        titles = [get_title(t) for t in args.titles] if args.titles else all_titles()
    except TitleError as exc:
        raise CliError(str(exc)) from None

    with progress("bench slots", 2 * len(all_titles()) + 1, quiet=args.json is not None) as bar:
        return _run(args, titles, bar, lambda line: bar.say(line))


def _run(args: argparse.Namespace, titles: list[Any], bar: Progress, say: Callable[[str], None]) -> dict[str, Any]:
    from controller.analysis.par import par_sheet
    from controller.batch.slots import simulate, tables
    from controller.slots import all_titles, get_title

    # Every PAR sheet from cold: titles read from disk, tables rebuilt.
    get_title.cache_clear()
    tables.cache_clear()
    t0 = time.perf_counter()
    sheets = []
    for title in all_titles():
        sheets.append(par_sheet(title))
        bar.advance()
    par_seconds = time.perf_counter() - t0
    # and the command itself, as an operator runs it (interpreter start and imports included)
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-m", "controller.cli", "par", "--all", "--json"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    command_seconds = time.perf_counter() - t0
    bar.advance()
    say(f"croupier par --all: {len(sheets)} PAR sheets in {par_seconds:.2f} s; the whole command "
        f"{command_seconds:.2f} s (goal: under 60 s)")
    titles = [get_title(t.id) for t in titles]

    say(f"{'title':<22}{'spin() only':>14}{'draw + spin()':>15}{'vectorised':>14}  (spins per second)")
    rows: dict[str, dict[str, float]] = {}
    bar(bar.done, bar.done + len(titles))  # --titles may name fewer than all
    for title in titles:
        spin_only, with_draws = _scalar(title, args.scalar_spins, args.seed)
        t0 = time.perf_counter()
        result = simulate(title, args.spins, args.seed, machines=args.machines)
        vectorised = result.spins / (time.perf_counter() - t0)
        rows[title.id] = {"scalar_spin": round(spin_only), "scalar_draw_and_spin": round(with_draws),
                          "vectorised": round(vectorised), "features": len(title.features)}
        say(f"{title.id:<22}{spin_only:>14,.0f}{with_draws:>15,.0f}{vectorised:>14,.0f}")
        bar.advance()
    base = [r["vectorised"] for r in rows.values() if not r["features"]]
    if base:
        say(f"goal: at least 1,000,000 spins/s for base-game titles: slowest base-game title {min(base):,.0f}/s")
    return {"seed": args.seed, "scalar_spins": args.scalar_spins, "vectorised_spins": args.spins,
            "machines": args.machines, "par_all_seconds": round(par_seconds, 3),
            "par_all_command_seconds": round(command_seconds, 3), "titles": rows}
