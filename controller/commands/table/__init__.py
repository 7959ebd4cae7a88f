"""Runtime commands for tables, slot cabinets and progressive links: `croupier run`, `demo`, `watch`, `command`, `recall`, `meters` and `progressive`.

One set of commands for every journaled runtime: `run` starts whatever the config file describes
([table], [cabinet] or [progressive]), `recall` and `meters` replay its journal. Each command lives in a module
of its own; this package registers them in the order `croupier --help` lists them.
"""

from __future__ import annotations

import argparse

from controller.commands.table import command, demo, meters, recall, run, watch


def register(sub: argparse._SubParsersAction) -> None:
    run.register(sub)
    demo.register(sub)
    watch.register(sub)
    command.register(sub)
    recall.register(sub)
    meters.register(sub)
    run.register_progressive(sub)
