"""tracescore: whose bug is it? Stage-by-stage scores for search-backed agents (retrieval, grounding, citations,
answer), written back as named scores to Langfuse and LangSmith.

Your own scorer is a function declared with ``scorer`` (its scores as ``ScoreSpec``), returning ``score``/``absent``
values, registered as an entry point of group ``tracescore.scorers``: the built-ins are registered the same way.

This module is the one public face: what the README, the docs and the cookbook import comes from here (and from
``tracescore.integrations.langfuse``, ``…langsmith`` and ``…pytest_plugin``); every other module is internal."""

from __future__ import annotations

from tracescore.api import report, score_session, score_traces, to_pandas
from tracescore.engine.pipeline import RunCounts, score_records, score_trace
from tracescore.errors import (
    AdapterError,
    ConfigError,
    InputError,
    InputShapeError,
    Interrupted,
    JudgeError,
    LockError,
    MissingInputError,
    NoResultsError,
    NothingToDoError,
    OutputError,
    SinkError,
    SourceError,
    StoreError,
    TracescoreError,
)
from tracescore.judge.anthropic import AnthropicJudge
from tracescore.judge.openai import OpenAIJudge
from tracescore.judge.protocol import Judge, JudgeReply, JudgeRequest
from tracescore.judge.registry import judge_provider
from tracescore.judge.rubrics import Rubric
from tracescore.registry import ScoreSpec, scorer
from tracescore.report.render import render_html, render_markdown, render_report_terminal
from tracescore.report.summary import Report
from tracescore.result import TraceResult
from tracescore.scores import Score, absent, score
from tracescore.session import Earlier
from tracescore.trace import SCHEMA_VERSION, Citation, FetchStep, Hit, Labels, SearchStep, Trace
from tracescore.version import __version__ as __version__

__all__ = [
    "AdapterError",
    "AnthropicJudge",
    "Citation",
    "ConfigError",
    "Earlier",
    "FetchStep",
    "Hit",
    "InputError",
    "InputShapeError",
    "Interrupted",
    "Judge",
    "JudgeError",
    "JudgeReply",
    "JudgeRequest",
    "Labels",
    "LockError",
    "MissingInputError",
    "NoResultsError",
    "NothingToDoError",
    "OpenAIJudge",
    "OutputError",
    "Report",
    "Rubric",
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
    "judge_provider",
    "render_html",
    "render_markdown",
    "render_report_terminal",
    "report",
    "score",
    "score_records",
    "score_session",
    "score_trace",
    "score_traces",
    "scorer",
    "to_pandas",
]
