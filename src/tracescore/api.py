"""The in-process Python API: score traces (``Trace`` objects or dicts) and report on the results, no files needed.

    import tracescore
    results = tracescore.score_traces([{"id": "t1", "question": "…", "steps": [], "answer": "…"}])
    print(tracescore.report(results).overall)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

import msgspec

from tracescore.engine.pipeline import score_records
from tracescore.errors import ConfigError
from tracescore.judge.protocol import Judge
from tracescore.platforms.jsonl.platform import adapter
from tracescore.report.summary import Report, build_report
from tracescore.result import TraceResult
from tracescore.scorers import default_scorers
from tracescore.scorers.grounding import NO_JUDGE, grounding_scorer
from tracescore.scorers.rubrics import Rubrics
from tracescore.scorers.semantic import semantic_scorer
from tracescore.scorers.surface import surface_scorer
from tracescore.sources.base import Record
from tracescore.trace import Trace

__all__ = ["report", "score_traces", "to_pandas"]


def score_traces(
    traces: Iterable[Trace | Mapping[str, Any]],
    judge: Judge | None = None,
    k: int = 5,
    final_answer_prefix: str | None = "FINAL ANSWER:",
    *,
    rubrics: Rubrics | None = None,
) -> list[TraceResult]:
    """Score each trace (a ``Trace`` or a dict in the canonical format) with every stage; the judged stages run
    when ``judge`` is given (e.g. ``tracescore.judge.anthropic.AnthropicJudge()``) and are absent otherwise.
    ``rubrics`` (default: the bundled ones) is each judged stage's rubric, e.g. ``load_config(path).rubrics``.

    A dict that is not a valid trace gives a result carrying the error (its position as ``line``), never an exception.
    """
    scorers = default_scorers(k=k, final_answer_prefix=final_answer_prefix or None)
    rubrics = rubrics or Rubrics()
    scorers.append(grounding_scorer(judge=judge, no_judge_reason=NO_JUDGE, rubric=rubrics.grounding))
    scorers.append(surface_scorer(judge=judge, no_judge_reason=NO_JUDGE, rubric=rubrics.surface))
    scorers.append(
        semantic_scorer(
            judge=judge,
            final_answer_prefix=final_answer_prefix or None,
            no_judge_reason=NO_JUDGE,
            rubric=rubrics.semantic,
        )
    )
    records = (Record(payload=_plain(t), line=n) for n, t in enumerate(traces, start=1))
    return list(score_records(records, adapter(), scorers))


def _plain(trace: Trace | Mapping[str, Any]) -> dict[str, Any]:
    """A trace as a canonical dict: a pydantic ``Trace``, the struct ``trace_from_json`` decodes, or a mapping."""
    if isinstance(trace, Trace):
        return trace.model_dump(mode="json")
    if isinstance(trace, msgspec.Struct):
        return cast(dict[str, Any], msgspec.to_builtins(trace))
    return dict(trace)


def report(results: Iterable[TraceResult | Mapping[str, Any]], *, group_by: str | None = None) -> Report:
    """The stage report of results (``TraceResult`` objects or result lines): cells with ids, rates, work queue."""
    lines = [r.to_json() if isinstance(r, TraceResult) else r for r in results]
    return build_report(lines, group_by=group_by, source="python")


def to_pandas(results: Iterable[TraceResult]) -> Any:
    """One row per trace, one column per score (absent scores are NaN); needs ``pip install 'tracescore[pandas]'``."""
    try:
        import pandas as pd  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise ConfigError("to_pandas needs pandas: pip install 'tracescore[pandas]'") from None
    rows = []
    for r in results:
        row: dict[str, Any] = {"trace_id": r.trace_id, "errors": "; ".join(r.errors) or None}
        row.update({name: s.value for name, s in r.scores.items()})
        rows.append(row)
    return pd.DataFrame(rows)
