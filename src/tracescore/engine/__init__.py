"""The production job: ``tracescore run`` (watermark, lookback, lock) and ``tracescore backfill`` (resumable), over a
concurrent pipeline (bounded queues between reading, scoring and writing). Cursor state lives in the local store.
"""

from __future__ import annotations

from tracescore.engine.core import Engine, JobCounts, Limits, Sink, UsageMeter
from tracescore.engine.estimate import DryRun, JudgeEstimate, dry_run, estimate_trace
from tracescore.engine.runner import GapReport, Outcome, backfill_job, check_gaps, run_job
from tracescore.engine.settings import JobSettings, ScoringSettings, SourceSettings, parse_duration, starter_config
from tracescore.engine.setup import JobSetup, PlatformFactory, build_setup, register_platform

__all__ = [
    "DryRun",
    "Engine",
    "GapReport",
    "JobCounts",
    "JobSettings",
    "JobSetup",
    "JudgeEstimate",
    "Limits",
    "Outcome",
    "PlatformFactory",
    "ScoringSettings",
    "Sink",
    "SourceSettings",
    "UsageMeter",
    "backfill_job",
    "build_setup",
    "check_gaps",
    "dry_run",
    "estimate_trace",
    "parse_duration",
    "register_platform",
    "run_job",
    "starter_config",
]
