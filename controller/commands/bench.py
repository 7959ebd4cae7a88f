"""`croupier bench NAME`: measure speed and print the figures an issue asks for; `--json` also writes them."""

from __future__ import annotations

import argparse
import importlib
import json
import pkgutil
import platform
import sys
import time
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    import controller.bench as benches

    parser = sub.add_parser("bench", help="measure speed (figures are reported, never asserted)",
                            description="Run a benchmark, print its figures and optionally write them as JSON.")
    sub_benches = parser.add_subparsers(dest="bench", metavar="NAME", required=True)
    for info in sorted(pkgutil.iter_modules(benches.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"controller.bench.{info.name}")
        p = sub_benches.add_parser(info.name, help=module.HELP, description=module.HELP)
        p.add_argument("--json", nargs="?", const="", default=None, metavar="PATH",
                       help=f"also write the figures as JSON (default path: bench-{info.name}.json)")
        module.add_arguments(p)
        p.set_defaults(func=_run, bench_module=module)


def _run(args: argparse.Namespace) -> int:
    module = args.bench_module
    started = time.time()
    figures = module.run(args, lambda line: print(line, flush=True))
    report = {
        "bench": args.bench,
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "seconds": round(time.time() - started, 3),
        "machine": {"python": platform.python_version(), "platform": platform.platform(),
                    "machine": platform.machine(), "cpus": _cpus()},
        **figures,
    }
    if args.json is not None:
        path = Path(args.json or f"bench-{args.bench}.json")
        path.write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _cpus() -> int:
    import os

    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
