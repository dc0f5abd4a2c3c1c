"""tracescore: whose bug is it? Stage-by-stage scores for search-backed agents (retrieval, grounding, citations,
answer), written back as named scores to Langfuse and LangSmith.

Your own scorer is a function declared with ``scorer`` (its scores as ``ScoreSpec``), returning ``score``/``absent``
values, registered as an entry point of group ``tracescore.scorers``: the built-ins are registered the same way."""

from __future__ import annotations

from tracescore.api import report, score_session, score_traces, to_pandas
from tracescore.engine.pipeline import RunCounts, score_records, score_trace
from tracescore.errors import (
    AdapterError,
    ConfigError,
    InputError,
    JudgeError,
    LockError,
    SinkError,
    SourceError,
    StoreError,
    TracescoreError,
)
from tracescore.judge.protocol import Judge
from tracescore.registry import ScoreSpec, scorer
from tracescore.result import TraceResult
from tracescore.scores import Score, absent, score
from tracescore.session import Earlier
from tracescore.trace import SCHEMA_VERSION, Citation, FetchStep, Hit, Labels, SearchStep, Trace
from tracescore.version import __version__ as __version__

__all__ = [
    "AdapterError",
    "Citation",
    "ConfigError",
    "Earlier",
    "FetchStep",
    "Hit",
    "InputError",
    "Judge",
    "JudgeError",
    "Labels",
    "LockError",
    "RunCounts",
    "SCHEMA_VERSION",
    "Score",
    "ScoreSpec",
    "SearchStep",
    "SinkError",
    "SourceError",
    "StoreError",
    "Trace",
    "TraceResult",
    "TracescoreError",
    "absent",
    "report",
    "score",
    "score_records",
    "score_session",
    "score_trace",
    "score_traces",
    "scorer",
    "to_pandas",
]
