"""Processes opening one new store at once (two ``tracescore run`` from cron, the job lock not reached yet): each
applies what no other applied while it waited for the write lock, and none fails on "table … already exists"
(on main 27 of 90 such opens failed; ``tests/platforms/langfuse/test_job.py::test_two_runs_at_once…`` exited 4)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from tracescore.store.db import MIGRATIONS, Store


def _open(path: str, barrier: multiprocessing.synchronize.Barrier) -> None:
    barrier.wait()
    Store(path).close()


def test_three_processes_opening_a_new_store_at_once_all_open_it(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    for round_ in range(6):
        path = tmp_path / f"s{round_}.db"
        barrier = context.Barrier(3)
        procs = [context.Process(target=_open, args=(str(path), barrier)) for _ in range(3)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=120)
        assert [p.exitcode for p in procs] == [0, 0, 0], round_
        with Store(path) as store:
            assert store.applied_migrations() == sorted(name for name, _ in MIGRATIONS)
