"""The one engine: ``score``, ``run`` and ``backfill`` stream a source through adapter, scorers and sinks with
bounded queues between reading, scoring and writing (local executor). Cursor state lives in the local store.
"""

from __future__ import annotations

from tracescore.engine.core import Engine, JobCounts, Limits, Sink, UsageMeter
from tracescore.engine.estimate import DryRun, JudgeEstimate, dry_run, estimate_trace
from tracescore.engine.gaps import GapReport, check_gaps
from tracescore.engine.runner import Outcome, backfill_job, run_job
from tracescore.engine.setup import JobSetup, build_setup

__all__ = [
    "DryRun",
    "Engine",
    "GapReport",
    "JobCounts",
    "JobSetup",
    "JudgeEstimate",
    "Limits",
    "Outcome",
    "Sink",
    "UsageMeter",
    "backfill_job",
    "build_setup",
    "check_gaps",
    "dry_run",
    "estimate_trace",
    "run_job",
]
