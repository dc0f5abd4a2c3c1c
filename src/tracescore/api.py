"""The in-process Python API: score traces (``Trace`` objects or dicts) and report on the results, no files needed.

    import tracescore
    results = tracescore.score_traces([{"id": "t1", "question": "…", "steps": [], "answer": "…"}])
    print(tracescore.report(results).overall)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

import msgspec

from tracescore.config import JUDGE_SALT
from tracescore.engine.recipe import Options, build_recipe, command_line, labelled, score_stage
from tracescore.engine.sampling import Sampling
from tracescore.engine.stage import Stage
from tracescore.errors import ConfigError
from tracescore.judge.protocol import Judge
from tracescore.judge.redact import Redactor
from tracescore.platforms.jsonl.platform import adapter
from tracescore.registry import choose
from tracescore.report.summary import Report, build_report
from tracescore.result import TraceResult
from tracescore.scorers.grounding import NO_JUDGE
from tracescore.scorers.rubrics import Rubrics
from tracescore.sources.base import Record
from tracescore.trace import Trace


def score_traces(
    traces: Iterable[Trace | Mapping[str, Any] | str | bytes],
    judge: Judge | None = None,
    k: int | None = None,
    final_answer_prefix: str | None = None,
    *,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    rubrics: Rubrics | None = None,
    max_cost: float | None = None,
    merge_partial: str | None = None,
    store: str | Path | None = None,
    judge_sample: float = 1.0,
    judge_flagged: bool = True,
    judge_salt: str = JUDGE_SALT,
    judge_key: str = "trace_id",
    redact: Redactor | None = None,
    carry_evidence: bool = True,
) -> list[TraceResult]:
    """Score each trace (a ``Trace``, a dict in the canonical format or a JSONL line) with every stage, as
    ``tracescore score`` does (the same recipe and stage: the same result lines); the judged stages run when
    ``judge`` is given (e.g. ``tracescore.judge.anthropic.AnthropicJudge()``) and are absent otherwise.

    ``rubrics`` (default: the bundled ones) is each judged stage's rubric, e.g. ``load_config(path).rubrics``;
    ``max_cost`` (USD) stops judging once the judge's estimated spend reaches it; ``merge_partial`` is
    ``[judge] merge_partial``. ``store`` (a local store, e.g. ``tracescore.db``) brings what ``score --store`` reads
    from it: reviewer-entered required doc ids, the agreement of the judge's latest calibration, and the judge cache.
    ``judge_sample``, ``judge_flagged``, ``judge_salt``, ``judge_key`` are ``[scoring]``'s: the judged stages run on
    the same traces as ``score`` and ``backfill`` choose. ``redact`` is ``[judge] redact``
    (``load_config(path).redactor``): what the judge never sees.

    Every installed scorer runs (a plugin's too), each with its defaults: ``options`` gives options by scorer, as
    ``[scorers.<name>]`` does (``{"retrieval": {"k": 10}}``); ``k`` and ``final_answer_prefix`` are the retrieval and
    answer scorers' (None: their defaults; ``""`` scores the whole reply).

    A dict or line that is not a valid trace gives a result carrying the error (its position as ``line``), never an
    exception.

    The traces of one conversation (the same ``session_id``) are scored as its turns: each with the search hits and
    successful fetches of the turns before it (by timestamp), as ``[sessions] carry_evidence`` does;
    ``carry_evidence=False`` scores each trace alone. ``score_session`` scores a list of one session's turns.
    The results come in the order of ``traces``.
    """
    given = {name: dict(values) for name, values in (options or {}).items()}
    for name, values in command_line(k, final_answer_prefix).items():
        given.setdefault(name, {}).update(values)
    chosen = choose(None, (), given, where="score_traces(options=...)")
    run = Options(scorers=chosen, max_cost=max_cost,
                      merge_partial=merge_partial, rubrics=rubrics or Rubrics(),
                      sampling=Sampling(judge_sample, judge_flagged, judge_salt, judge_key),
                      redact=redact)  # fmt: skip
    # no judge given: absent with the reason, never one built from the environment
    recipe = build_recipe(run if judge is not None else replace(run, judge_off=NO_JUDGE), store, judge=judge)
    stage = Stage(labelled(adapter(), store), recipe.scorers, "", oneshot=True)
    records = (Record(payload=_plain(t), line=n) for n, t in enumerate(traces, start=1))
    try:
        return sorted(score_stage(stage, records, carry=carry_evidence), key=lambda r: r.line or 0)
    finally:
        recipe.close()


def score_session(
    turns: Iterable[Trace | Mapping[str, Any] | str | bytes], session_id: str | None = None, **kwargs: Any
) -> list[TraceResult]:
    """Score the turns of one conversation, each with the search hits and successful fetches of the turns before it
    (``score_traces``' keyword arguments). The order is the turns' timestamps, else the order of ``turns``.
    ``session_id`` names the session for turns that carry none; turns of two sessions are refused (ConfigError)."""
    plain = [_plain(t) for t in turns]
    dicts = [p if isinstance(p, dict) else _decoded(p) for p in plain]
    named = {str(d["session_id"]) for d in dicts if isinstance(d, dict) and d.get("session_id")}
    if session_id is not None:
        named.add(session_id)
    if len(named) > 1:
        raise ConfigError(f"score_session: the turns belong to more than one session ({', '.join(sorted(named))});"
                          " score_traces scores several sessions")  # fmt: skip
    if not named:
        raise ConfigError("score_session: no turn carries a session_id; give session_id='...'")
    only = named.pop()
    given = [{**d, "session_id": only} if isinstance(d, dict) else p for d, p in zip(dicts, plain, strict=True)]
    return score_traces(given, carry_evidence=True, **kwargs)


def _decoded(line: str | bytes) -> dict[str, Any] | str | bytes:
    """A JSON line as its dict (to read its session id), or the line itself when it is not one (its error comes
    back on its result)."""
    try:
        data = msgspec.json.decode(line)
    except msgspec.DecodeError:
        return line
    return data if isinstance(data, dict) else line


def _plain(trace: Trace | Mapping[str, Any] | str | bytes) -> dict[str, Any] | str | bytes:
    """A trace as a canonical dict (a pydantic ``Trace``, the struct ``trace_from_json`` decodes, a mapping) or its
    JSON line, left to the adapter as ``score`` leaves a file's line."""
    if isinstance(trace, str | bytes):
        return trace
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
