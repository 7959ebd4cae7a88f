"""Seeded simulations in chunks on up to two processes, results in job order, so a report never depends on how many processes ran."""

from __future__ import annotations

import os
from typing import Callable, Iterator, Sequence, TypeVar

__all__ = ["map_chunks"]

J = TypeVar("J")
R = TypeVar("R")


def map_chunks(work: Callable[[J], R], jobs: Sequence[J], processes: int | None = None) -> Iterator[R]:
    """`work(job)` for every job, in order: in this process for one, else on up to two forked workers
    (the machine is a Raspberry Pi; more would starve the table)."""
    procs = min(processes or os.cpu_count() or 1, 2, len(jobs))
    if procs <= 1:
        yield from map(work, jobs)
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    with ProcessPoolExecutor(max_workers=procs, mp_context=ctx) as pool:
        yield from pool.map(work, jobs)
