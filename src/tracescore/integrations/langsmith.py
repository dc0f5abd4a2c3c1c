"""tracescore's stage scores as LangSmith evaluators, for ``evaluate`` / ``aevaluate`` / ``evaluate_existing``.

    from langsmith import evaluate
    from tracescore.integrations import langsmith as ts

    evaluate(agent, data="search-agent-cases", evaluators=ts.evaluators(), summary_evaluators=[ts.summary_evaluator()])

Each evaluator takes ``(run, example)``: the root run with the child runs the SDK hands over (a ``RunTree`` in
``evaluate``, a ``Run`` loaded with its children in ``evaluate_existing``, or plain run dicts; their inputs, outputs
and extra read as the JSON the SDK posts) becomes a ``Trace`` through the LangSmith adapter and its ``[mapping]``;
the labels come from the example's ``outputs`` over its ``metadata`` (``required_doc_ids``,
``expected_answer_contains``, ``gold_answer``, ``expect_refusal``; a text ``reference``, ``answer`` or ``expected``
is the gold answer when ``gold_answer`` is not given). It returns one result per present catalog score, ``key`` the
catalog name, ``score`` (NUMERIC, BOOLEAN) or ``value`` (CATEGORICAL) and the score's comment, as in the result line.
An absent score has no result of its own (an experiment's averages never mix absences in): one result
``tracescore.absent`` with no score lists the absent names with their reasons.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tracescore.catalog import entry
from tracescore.config import Config
from tracescore.integrations.scoring import USAGE_FIELDS, Scoring, label_fields
from tracescore.judge.protocol import Judge
from tracescore.platforms.langsmith.adapter import THREAD_KEYS, langsmith_adapter
from tracescore.result import TraceResult
from tracescore.scorers.diagnosis import CELLS, DIAGNOSIS, cell_of

__all__ = [
    "ABSENT_KEY", "UNDECIDED", "USAGE_KEY", "Experiment", "evaluators", "feedback",
    "summary_evaluator", "to_record", "usage_feedback",
]  # fmt: skip

ABSENT_KEY = "tracescore.absent"
USAGE_KEY = "tracescore.judge"  # the summary's judge spend: tracescore.judge.calls, .input_tokens, …, .cost_usd
UNDECIDED = "undecided"  # the summary's cell for runs whose diagnosis is absent
_RUN_FIELDS = (
    "id", "name", "run_type", "start_time", "end_time", "inputs", "outputs", "extra", "error", "status", "tags",
    "parent_run_id", "trace_id", "dotted_order", "session_id", "reference_example_id",
)  # fmt: skip  # the RunBase fields of langsmith.schemas (Run and RunTree) the adapter reads
Result = dict[str, Any]
Evaluator = Callable[[Any, Any], dict[str, list[Result]]]


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


def _as_stored(value: Any) -> Any:
    """A run's free-form ``value`` as LangSmith stores it: the JSON the SDK posts, through the SDK's own serializer
    (a ``RunTree`` in ``evaluate`` holds what the target returned: pydantic models, dataclasses, LangChain
    ``Document`` objects, which the server only ever sees as their JSON)."""
    if value is None:
        return None
    try:
        from langsmith._internal._serde import dumps_json
    except ImportError:  # no SDK (plain run dicts), or one that moved it: its objects as the JSON encoder can
        return json.loads(json.dumps(value, default=str))
    return json.loads(dumps_json(value))


def _plain_run(run: Any) -> dict[str, Any]:
    plain = {name: _field(run, name) for name in _RUN_FIELDS}
    for name in ("inputs", "outputs", "extra"):
        plain[name] = _as_stored(plain[name])
    for name in ("id", "parent_run_id", "trace_id", "session_id", "reference_example_id"):
        plain[name] = str(plain[name]) if plain[name] is not None else None
    return plain


def _descendants(run: Any) -> list[Any]:
    found, todo = [], list(_field(run, "child_runs") or [])
    while todo:
        child = todo.pop(0)
        found.append(child)
        todo.extend(_field(child, "child_runs") or [])
    return found


def to_record(run: Any, example: Any = None) -> dict[str, Any]:
    """The LangSmith record the adapter reads (``{"root", "runs", "example", "project"}``) of a run tree and its
    example (None: the labels come from the root run's metadata, as ``score --source langsmith`` reads them)."""
    labels = None
    if example is not None:  # the example's outputs over its metadata
        fields = label_fields(_field(example, "metadata"), _field(example, "outputs"))
        labels = {"id": str(_field(example, "id")), "outputs": fields}
    return {"root": _plain_run(run), "runs": [_plain_run(c) for c in _descendants(run)], "example": labels,
            "project": None}  # fmt: skip


def feedback(scoring: Scoring, result: TraceResult) -> list[Result]:
    """The evaluation results of one trace's result: one per present score, then ``tracescore.absent``."""
    if result.errors and not result.scores:
        return [{"key": ABSENT_KEY, "comment": "trace not scored: " + "; ".join(result.errors)}]
    out: list[Result] = []
    present, absent = scoring.reported(result)
    for s in present:
        found = entry(s.name)
        item: Result = {"key": s.name, "comment": s.comment}
        if found is not None and found.kind == "CATEGORICAL":
            item["value"] = s.value
        else:
            item["score"] = s.value
        out.append(item)
    if absent:
        out.append({"key": ABSENT_KEY, "comment": "\n".join(absent)})
    return out


class Experiment:
    """One experiment's scoring: the evaluator and the summary evaluator share its recipe and judge (its cache in
    ``store``, its budget ``[scoring] max_cost``), so the summary counts the cells of the runs the evaluator scored
    without scoring them again, and says once what the judge spent."""

    def __init__(
        self,
        judge: Judge | None = None,
        k: int | None = None,
        stages: Iterable[str] | None = None,
        config: Config | None = None,
        store: str | Path | None = None,
    ) -> None:
        scoring = Scoring(langsmith_adapter(config.mapping if config is not None else None), judge=judge, k=k,
                          stages=stages, config=config, store=store)  # fmt: skip
        cells: dict[str, str] = {}  # run id -> its diagnosis cell, as the evaluator scored it

        def tracescore(run: Any, example: Any) -> dict[str, list[Result]]:
            result = scoring.score(to_record(run, example))
            cells[str(_field(run, "id"))] = cell_of(result) or UNDECIDED
            return {"results": feedback(scoring, result)}

        def tracescore_cells(runs: Sequence[Any], examples: Sequence[Any]) -> dict[str, list[Result]]:
            counted: Counter[str] = Counter()
            for run, example in zip(runs, examples, strict=False):
                cell = cells.get(str(_field(run, "id")))
                counted[cell or cell_of(scoring.score(to_record(run, example))) or UNDECIDED] += 1
            results = [{"key": f"{DIAGNOSIS}:{cell}", "score": counted[cell]} for cell in (*CELLS, UNDECIDED)]
            return {"results": results + usage_feedback(scoring)}

        def tracescore_thread(runs: Sequence[Any], examples: Sequence[Any] | None = None) -> dict[str, list[Result]]:
            """The turns of one thread (root runs, each with its example or None): each scored with the evidence of
            the turns before it; every result names its turn's run (``target_run_id``)."""
            pairs = list(zip(runs, examples if examples is not None else [None] * len(runs), strict=True))
            thread = next((str(t) for r, _ in pairs if (t := _thread_of(r))), str(_field(runs[0], "id")))
            results = scoring.score_session([to_record(r, e) for r, e in pairs], thread)
            out: list[Result] = []
            for (run, _), result in zip(pairs, results, strict=True):
                cells[str(_field(run, "id"))] = cell_of(result) or UNDECIDED
                out += [item | {"target_run_id": str(_field(run, "id"))} for item in feedback(scoring, result)]
            return {"results": out}

        self.scoring = scoring
        self.evaluators: list[Evaluator] = [tracescore]
        self.summary_evaluators = [tracescore_cells]
        self.thread_evaluator = tracescore_thread


def _thread_of(run: Any) -> Any:
    """The thread key of a root run's metadata (``session_id``, ``conversation_id``, ``thread_id``), if any."""
    extra = _field(run, "extra") or {}
    meta = (extra.get("metadata") if isinstance(extra, Mapping) else None) or {}
    return next((meta[k] for k in THREAD_KEYS if meta.get(k)), None)


def usage_feedback(scoring: Scoring) -> list[Result]:
    """The judge's spend so far, one result per figure (``tracescore.judge.<field>``, the total as the score, the
    whole line as the comment); none without a judge."""
    total, line = scoring.spent()
    if total is None:
        return []
    return [{"key": f"{USAGE_KEY}.{name}", "score": total[name], "comment": line} for name in USAGE_FIELDS]


def evaluators(
    judge: Judge | None = None, k: int | None = None, stages: Iterable[str] | None = None, config: Config | None = None
) -> list[Evaluator]:
    """Evaluators for ``evaluate`` / ``aevaluate`` / ``evaluate_existing``: one that scores each ``(run, example)``
    with every stage (``stages``: only those, e.g. ``["retrieval", "answer"]``) through the recipe of ``config``
    (its ``[scoring]``, ``[judge]`` and ``[mapping]``; None: the defaults) and returns all its results at once."""
    return Experiment(judge, k, stages, config).evaluators


def summary_evaluator(
    judge: Judge | None = None, k: int | None = None, config: Config | None = None
) -> Callable[[Sequence[Any], Sequence[Any]], dict[str, list[Result]]]:
    """A summary evaluator for ``evaluate(..., summary_evaluators=[...])``: the experiment's contingency cells, one
    result per ``diagnosis`` cell (key ``diagnosis:<cell>``, its count as the score), plus ``diagnosis:undecided``
    for the runs whose diagnosis is absent. On its own it scores each run again with the same recipe; from
    ``Experiment(...)`` it counts what the evaluator scored, and adds the judge's spend."""
    return Experiment(judge, k, None, config).summary_evaluators[0]
