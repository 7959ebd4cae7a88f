"""`croupier bench vision`: milliseconds per 1280x720 frame with 8 cards, single thread, p50/p99, and peak memory."""

from __future__ import annotations

import argparse
import resource
import time
from typing import Any, Callable

HELP = "card recognition speed: ms per 1280x720 frame with 8 cards (single thread), p50/p99, peak memory"
DEFAULT_SEED = 20261121
PI4_FACTOR = (4, 6)  # a Raspberry Pi 4 runs this kind of code roughly 4-6x slower than a desktop core


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--frames", type=int, default=300, help="frames timed (default 300, after 20 warm-up)")
    parser.add_argument("--cards", type=int, default=8, help="cards on the table (default 8)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the frames' noise and cards")
    parser.add_argument("--threads", type=int, default=1, help="OpenCV threads (default 1)")
    parser.add_argument("--models", default=None, help="folder with the models (default: the shipped ones)")
    parser.add_argument("--enrol", action="store_true",
                        help="also time enrolling the simulated camera's deck from a spread (`croupier vision enrol`) "
                             "and the frames read with the enrolled model")


def _pct(values: list[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q / 100 * (len(s) - 1))))]


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    import numpy as np

    from controller.cards import deck
    from controller.cli import CliError
    from controller.rng import SeededRng
    from drivers.camera.sim import SimulatedCamera
    from vision.recognise import Recogniser

    if args.frames < 1 or not 1 <= args.cards <= 20:
        raise CliError("--frames must be at least 1 and --cards 1..20")
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rng = SeededRng(args.seed)
    gen = rng.numpy()
    cam = SimulatedCamera(rng=gen, noise=3.0)
    zones = [z.name for z in cam.zones]
    for card in rng.shuffled(list(deck()))[:args.cards]:
        # Spread over the spots, dealer and community, as during a round.
        cam.place(card, zones[rng.randbelow(len(zones))])
    frames = [cam.read() for _ in range(8)]  # a few noise patterns, cycled
    rec = Recogniser(args.models, threads=args.threads)
    seen = rec.identify(frames[0])
    right = sorted(str(d.card) for d in seen if d.card is not None)
    truth = sorted(str(c.card) for c in cam.cards)
    for i in range(20):
        rec.identify(frames[i % len(frames)])
    total, det_ms, cpu_ms = [], [], []
    for i in range(args.frames):
        frame = frames[i % len(frames)]
        c0 = time.thread_time()
        t0 = time.perf_counter()
        rec.identify(frame)  # everything the runtime does per frame
        t1 = time.perf_counter()
        cpu_ms.append((time.thread_time() - c0) * 1000)
        total.append((t1 - t0) * 1000)
        t2 = time.perf_counter()
        rec.detect(frame)  # the detector's share, timed again on its own
        det_ms.append((time.perf_counter() - t2) * 1000)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    p50, p99 = _pct(total, 50), _pct(total, 99)
    say(f"frame 1280x720 with {args.cards} cards, {args.threads} thread(s), {args.frames} frames")
    say(f"  per frame: p50 {p50:.2f} ms, p99 {_pct(total, 99):.2f} ms, mean {np.mean(total):.2f} ms (goal < 15 ms)")
    # On a shared machine wall time includes waiting for a core; the thread's CPU time does not.
    say(f"  CPU time of the thread per frame: p50 {_pct(cpu_ms, 50):.2f} ms, p99 {_pct(cpu_ms, 99):.2f} ms")
    say(f"  of which the detector (with rectangle sharpening and index turning): p50 {_pct(det_ms, 50):.2f} ms; "
        f"{len(seen)} cards and markers detected per frame")
    say(f"  Raspberry Pi 4 estimate ({PI4_FACTOR[0]}-{PI4_FACTOR[1]}x slower): p50 {p50 * PI4_FACTOR[0]:.0f}-"
        f"{p50 * PI4_FACTOR[1]:.0f} ms ({1000 / (p50 * PI4_FACTOR[1]):.0f}-{1000 / (p50 * PI4_FACTOR[0]):.0f} frames/s)")
    say(f"  peak memory (max RSS of this process): {peak_kb / 1024:.0f} MB ({rss_before / 1024:.0f} MB before "
        "loading the models and rendering)")
    say(f"  cards read in the first frame: {len(right)}/{len(truth)} "
        f"({'all right' if right == truth else 'got ' + ' '.join(right) + ' of ' + ' '.join(truth)})")
    enrolled = _enrol(args, rec, frames, say) if args.enrol else {}
    return {
        **enrolled,
        "frame": [1280, 720], "cards": args.cards, "threads": args.threads, "frames": args.frames, "seed": args.seed,
        "ms_p50": round(p50, 3), "ms_p99": round(p99, 3),
        "cpu_ms_p50": round(_pct(cpu_ms, 50), 3), "cpu_ms_p99": round(_pct(cpu_ms, 99), 3), "ms_mean": round(float(np.mean(total)), 3),
        "detector_ms_p50": round(_pct(det_ms, 50), 3), "detections_per_frame": len(seen),
        "pi4_estimate_ms_p50": [round(p50 * PI4_FACTOR[0], 1), round(p50 * PI4_FACTOR[1], 1)],
        "peak_rss_mb": round(peak_kb / 1024, 1), "rss_before_mb": round(rss_before / 1024, 1),
        "first_frame_right": right == truth,
    }


def _enrol(args: argparse.Namespace, rec: Any, frames: list[Any], say: Callable[[str], None]) -> dict[str, Any]:
    """Enrolment's time: the simulated camera's deck spread in Bicycle's order over one frame (four rows of 13),
    its cards found, described and checked against the base readers; then the frames read with the model."""
    import tempfile
    from pathlib import Path

    import cv2

    from vision.enrol import enrol, factory_order, spread_examples
    from vision.recognise import Recogniser
    from vision.render import TableCard, render_table

    order = factory_order("bicycle")
    frame = render_table([TableCard(c, 80 + 80 * (i % 13), 90 + 110 * (i // 13)) for i, c in enumerate(order)],
                         markers=False)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "spread.png"
        cv2.imwrite(str(path), frame)
        c0, t0 = time.thread_time(), time.perf_counter()
        model = enrol(spread_examples([path], order), rec, "bench")
        seconds, cpu = time.perf_counter() - t0, time.thread_time() - c0
    mine = Recogniser(args.models, threads=args.threads, enrolled=model)
    for i in range(10):
        mine.identify(frames[i % len(frames)])
    total, cpu_ms, new_cpu_ms = [], [], []
    for i in range(args.frames):
        c1, t0 = time.thread_time(), time.perf_counter()
        mine.identify(frames[i % len(frames)])
        total.append((time.perf_counter() - t0) * 1000)
        cpu_ms.append((time.thread_time() - c1) * 1000)
        # The same frame with every card new to the enrolled model (cards just dealt): none of its readings reused.
        mine._enrolled_seen = []
        c1 = time.thread_time()
        mine.identify(frames[i % len(frames)])
        new_cpu_ms.append((time.thread_time() - c1) * 1000)
    p50 = _pct(total, 50)
    hb = model.meta["held_back"]
    say(f"  enrolment from a spread of 52 cards: {seconds:.2f} s ({cpu:.2f} s CPU of the thread; Raspberry Pi 4 "
        f"estimate {seconds * PI4_FACTOR[0]:.0f}-{seconds * PI4_FACTOR[1]:.0f} s); held back {hb['corners']} corners: "
        f"enrolled {hb['enrolled_right']}, base readers {hb['base_right']} right")
    say(f"  per frame with the enrolled model (the cards lying still): p50 {p50:.2f} ms, p99 {_pct(total, 99):.2f} ms; "
        f"CPU time of the thread p50 {_pct(cpu_ms, 50):.2f} ms; every card new to it: {_pct(new_cpu_ms, 50):.2f} ms "
        "(numpy's BLAS on one thread: OPENBLAS_NUM_THREADS=1, as on a Pi)")
    return {"enrol_s": round(seconds, 3), "enrol_cpu_s": round(cpu, 3),
            "enrol_pi4_estimate_s": [round(seconds * PI4_FACTOR[0], 1), round(seconds * PI4_FACTOR[1], 1)],
            "enrolled_ms_p50": round(p50, 3), "enrolled_ms_p99": round(_pct(total, 99), 3),
            "enrolled_cpu_ms_p50": round(_pct(cpu_ms, 50), 3),
            "enrolled_new_cpu_ms_p50": round(_pct(new_cpu_ms, 50), 3),
            "enrol_accepted": bool(model.meta["accepted"])}
