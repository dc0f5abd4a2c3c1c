"""tracescore: whose bug is it? Stage-by-stage scores for search-backed agents (retrieval, grounding, citations,
answer), written back as named scores to Langfuse and LangSmith."""

from __future__ import annotations

from tracescore.api import report, score_traces, to_pandas
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
from tracescore.result import TraceResult
from tracescore.scorers import answer_scorer, citation_scorer, default_scorers, diagnose, retrieval_scorer
from tracescore.scores import Score, absent, score
from tracescore.trace import SCHEMA_VERSION, Citation, FetchStep, Hit, Labels, SearchStep, Trace
from tracescore.version import __version__ as __version__

__all__ = [
    "AdapterError",
    "Citation",
    "ConfigError",
    "FetchStep",
    "Hit",
    "InputError",
    "JudgeError",
    "Labels",
    "LockError",
    "RunCounts",
    "SCHEMA_VERSION",
    "Score",
    "SearchStep",
    "SinkError",
    "SourceError",
    "StoreError",
    "Trace",
    "TraceResult",
    "TracescoreError",
    "absent",
    "answer_scorer",
    "citation_scorer",
    "default_scorers",
    "diagnose",
    "report",
    "retrieval_scorer",
    "score",
    "score_records",
    "score_trace",
    "score_traces",
    "to_pandas",
]
