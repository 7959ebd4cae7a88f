"""`croupier panel-test`: the technician's diagnostics in a terminal: walk every lamp and display, report inputs."""

from __future__ import annotations

import argparse
import asyncio
import sys
import threading
from pathlib import Path
from typing import Any, Callable

from controller.cli import CliError

SIM_HELP = """\
commands (one a line; end of input quits):
  press NAME | release NAME | tap NAME | hold NAME     a button
  open NAME | close NAME                              a door (or on/off for a key switch)
  coin NAME [COUNT]                                   valid pulses on a coin or coin-out line
  show DISPLAY VALUE | light LAMP LOOK | tower CONDITION on|off
  status | help | quit"""


def register(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "panel-test", help="walk every lamp and display of a panel and report each input as it is used",
        description="Diagnostics for a table's or cabinet's panel: lights each lamp, tower tier and display in "
                    "turn, then prints every input event (button, door, switch, coin pulse) until interrupted. "
                    "With --sim the pins are simulated and inputs are typed on standard input.",
        epilog=SIM_HELP, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--config", required=True, metavar="PATH",
                        help="a pin map (e.g. deploy/config/panel-blackjack-7spot.toml), or a table's or cabinet's "
                             "config: the pin map its [panel] names")
    parser.add_argument("--sim", action="store_true", help="simulated pins (no GPIO needed); read inputs from stdin")
    parser.add_argument("--step", type=float, default=0.5, metavar="SECONDS",
                        help="how long each lamp and display is lit during the walk (default 0.5)")
    parser.add_argument("--no-walk", action="store_true", help="skip the walk, only report inputs")
    parser.add_argument("--outputs", action="store_true",
                        help="also pulse the plain outputs once (hopper motor, meters): only with the hopper empty")
    parser.add_argument("--seconds", type=float, default=None,
                        help="stop reporting inputs after this long (default: until Ctrl-C, or end of input with --sim)")
    parser.add_argument("--wiring", action="store_true", help="print the pin map's wiring table (Markdown) and exit")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from drivers.panel import PanelConfigError, load_panel_config, wiring_markdown

    if args.step < 0:
        raise CliError("--step must not be negative")
    pin_map, sim = _pin_map(args.config)
    try:
        config = load_panel_config(pin_map)
    except PanelConfigError as exc:
        raise CliError(str(exc)) from None
    if args.wiring:
        print(f"Wiring of {config.name or pin_map}\n")
        print(wiring_markdown(config), end="")
        return 0
    if args.sim or sim:
        config = config.simulated()
    return asyncio.run(_diagnostics(config, args))


def _pin_map(path: str) -> tuple[Path, bool]:
    """The pin map --config names: the file itself, or the one a table's or cabinet's config names in its
    `[panel] file = ...` (relative to that config; its `driver = "sim"` means simulated pins)."""
    import tomllib

    config = Path(path)
    try:
        panel = tomllib.loads(config.read_text()).get("panel")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return config, False  # load_panel_config says what is wrong with it
    if not isinstance(panel, dict) or "file" not in panel:
        return config, False
    if not isinstance(panel["file"], str) or set(panel) - {"file", "driver"}:
        raise CliError(f"{config}[panel]: a pin map file (file = \"PATH\", driver = \"gpio\" or \"sim\") or the "
                       "pin map itself, not both")
    pin_map = config.parent / panel["file"]
    if not pin_map.is_file():
        raise CliError(f"{config}[panel].file: no such file {pin_map}")
    return pin_map, panel.get("driver") == "sim"


def say(line: str) -> None:
    print(line, flush=True)


async def _diagnostics(config: Any, args: argparse.Namespace) -> int:
    from drivers.panel import PanelError, open_panel

    try:
        panel = open_panel(config)
    except PanelError as exc:
        raise CliError(str(exc)) from None
    changed = asyncio.Event()
    seen: list[Any] = []
    started = panel.clock.now()

    def on_event(event: Any) -> None:
        say(f"input  {event.at - started:8.3f}s  {event}")
        seen.append(event)
        changed.set()

    with panel:
        say(f"panel: {config.name or args.config} ({'simulated pins' if panel.simulated else 'GPIO'}); "
            f"{len(config.buttons)} buttons, {len(config.switches)} doors/switches, {len(config.pulses)} pulse lines, "
            f"{len(config.lamps)} lamps, {len(config.outputs)} outputs, "
            f"{len(config.tower.tiers) if config.tower else 0} tower tiers, "
            f"{len(config.displays.displays) if config.displays else 0} displays")
        panel.start(on_event)
        if not args.no_walk:
            await _walk(panel, config, args)
        if panel.simulated:
            await _sim_console(panel, changed, seen, args.seconds)
        else:
            say("press buttons, open doors, drop coins: each input is reported here (Ctrl-C to stop)")
            try:
                await asyncio.sleep(args.seconds if args.seconds is not None else float("inf"))
            except asyncio.CancelledError:
                pass
    return 0


async def _walk(panel: Any, config: Any, args: argparse.Namespace) -> None:
    from drivers.panel.config import pin_label

    step = args.step
    sim = panel.sim if panel.simulated else None
    for lamp in config.lamps:
        panel.light(lamp.name, "on")
        reads = f" (pin reads {sim.lamp(lamp.name):g})" if sim else ""
        say(f"lamp    {lamp.name:<16} {pin_label(lamp.pin)}: on{reads}")
        await asyncio.sleep(step)
        panel.light(lamp.name, "off")
    if config.tower:
        for condition, looks in config.tower.conditions:
            panel.tower_light(condition, True)
            say(f"tower   {condition:<16} " + ", ".join(f"{tier} {how}" for tier, how in looks))
            await asyncio.sleep(step * 2)
            panel.tower_light(condition, False)
    if args.outputs:
        for output in config.outputs:
            panel.pulse_output(output.name, 1)
            say(f"output  {output.name:<16} {pin_label(output.pin)}: one pulse of {output.pulse:g}s")
            await asyncio.sleep(max(step, output.pulse + output.gap))
    elif config.outputs:
        say(f"outputs {', '.join(o.name for o in config.outputs)}: not driven (give --outputs)")
    if config.displays:
        for display in config.displays.displays:
            panel.show(display.name, "8." * display.digits)
            reads = f"; reads {sim.display(display.name).shown!r}" if sim else ""
            say(f"display {display.name:<16} chip {display.position + 1} of {len(config.displays.displays)}: all "
                f"segments{reads}")
            await asyncio.sleep(step)
            panel.show(display.name, display.position + 1)
        await asyncio.sleep(step)
        for display in config.displays.displays:
            panel.show(display.name, None)
    say("walk done")


async def _until(changed: asyncio.Event, done: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Wait for panel events until `done()` holds (or time runs out)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not done():
        changed.clear()
        left = deadline - loop.time()
        if left <= 0:
            return False
        try:
            await asyncio.wait_for(changed.wait(), left)
        except asyncio.TimeoutError:
            return done()
    return True


async def _sim_console(panel: Any, changed: asyncio.Event, seen: list[Any], seconds: float | None) -> None:
    from drivers.panel import ButtonHeld, PanelError

    say("simulated inputs: type commands ('help' lists them)")
    loop = asyncio.get_running_loop()
    sim = panel.sim
    deadline = None if seconds is None else loop.time() + seconds
    lines: asyncio.Queue[str] = asyncio.Queue()

    def read() -> None:  # a daemon thread, so a pending read never holds up the exit
        try:
            for text in iter(sys.stdin.readline, ""):
                loop.call_soon_threadsafe(lines.put_nowait, text)
            loop.call_soon_threadsafe(lines.put_nowait, "")
        except RuntimeError:
            pass  # the loop closed first: the test is over

    threading.Thread(target=read, name="panel-test stdin", daemon=True).start()
    while True:
        timeout = None if deadline is None else max(0.0, deadline - loop.time())
        try:
            line = await asyncio.wait_for(lines.get(), timeout)
        except asyncio.TimeoutError:
            return
        if not line:
            return
        words = line.split()
        if not words:
            continue
        verb, rest = words[0], words[1:]
        try:
            if verb in ("quit", "exit"):
                return
            if verb == "help":
                say(SIM_HELP)
            elif verb == "status":
                for key, state in panel.status().items():
                    say(f"status  {key}: {state}")
            elif verb in ("press", "open", "release", "close", "tap", "hold") and len(rest) == 1:
                name = rest[0]
                if verb in ("press", "open", "tap", "hold"):
                    start = len(seen)
                    sim.press(name)
                    if not await _until(changed, lambda: panel.is_active(name)):
                        say(f"error   {name} did not settle active")
                    if verb == "hold":
                        await _until(changed, lambda: any(isinstance(e, ButtonHeld) and e.name == name
                                                          for e in seen[start:]))
                if verb in ("release", "close", "tap", "hold"):
                    sim.release(name)
                    if not await _until(changed, lambda: not panel.is_active(name)):
                        say(f"error   {name} did not settle inactive")
            elif verb == "coin" and len(rest) in (1, 2):
                name, count = rest[0], int(rest[1]) if len(rest) == 2 else 1
                before = sum(panel.pulse_count(name))
                seconds_needed = sim.coins(name, count)
                await _until(changed, lambda: sum(panel.pulse_count(name)) >= before + count, seconds_needed + 2)
            elif verb == "show" and len(rest) == 2:
                value: int | str = int(rest[1]) if rest[1].isdigit() else rest[1]
                panel.show(rest[0], value)
                say(f"display {rest[0]:<16} reads {sim.display(rest[0]).shown!r}")
            elif verb == "light" and len(rest) == 2:
                panel.light(rest[0], rest[1])
                say(f"lamp    {rest[0]:<16} {rest[1]}")
            elif verb == "tower" and len(rest) == 2 and rest[1] in ("on", "off"):
                panel.tower_light(rest[0], rest[1] == "on")
                say(f"tower   {', '.join(sorted(panel.tower_conditions)) or 'no condition'}")
            else:
                say(f"error   not a command: {line.strip()!r} ('help' lists them)")
        except (PanelError, ValueError) as exc:
            say(f"error   {exc}")
