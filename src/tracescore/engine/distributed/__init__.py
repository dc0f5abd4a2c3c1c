"""The distributed executor (``--engine ray``): shards scored in Ray tasks, the judge in an actor pool behind one
cluster-wide rate limiter, results and judge cache as Parquet beside each other, resumable per shard."""

from __future__ import annotations

from tracescore.engine.distributed.cache import ParquetJudgeCache, compact
from tracescore.engine.distributed.driver import RayRun, RaySettings, ShardOutcome, score_shards
from tracescore.engine.distributed.judging import JudgeSpec, JudgeWorker, RemoteJudge
from tracescore.engine.distributed.limiter import LimiterActor, TokenBucket

__all__ = [
    "JudgeSpec",
    "JudgeWorker",
    "LimiterActor",
    "ParquetJudgeCache",
    "RayRun",
    "RaySettings",
    "RemoteJudge",
    "ShardOutcome",
    "TokenBucket",
    "compact",
    "score_shards",
]
