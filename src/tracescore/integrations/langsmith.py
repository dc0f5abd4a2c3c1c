"""tracescore's stage scores as LangSmith evaluators, for ``evaluate`` / ``aevaluate`` / ``evaluate_existing``.

    from langsmith import evaluate
    from tracescore.integrations import langsmith as ts

    evaluate(agent, data="search-agent-cases", evaluators=ts.evaluators(), summary_evaluators=[ts.summary_evaluator()])

Each evaluator takes ``(run, example)``: the root run with the child runs the SDK hands over (a ``RunTree`` in
``evaluate``, a ``Run`` loaded with its children in ``evaluate_existing``, or plain run dicts) becomes a ``Trace``
through the LangSmith adapter and its ``[mapping]``; the labels come from the example's ``outputs`` over its
``metadata`` (``required_doc_ids``, ``expected_answer_contains``, ``gold_answer``, ``expect_refusal``; a text
``reference``, ``answer`` or ``expected`` is the gold answer when ``gold_answer`` is not given). It returns one result
per present catalog score, ``key`` the catalog name, ``score`` (NUMERIC, BOOLEAN) or ``value`` (CATEGORICAL) and
the score's comment, as in the result line. An absent score has no result of its own (an experiment's averages never
mix absences in): one result ``tracescore.absent`` with no score lists the absent names with their reasons.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from tracescore.catalog import DIAGNOSIS, entry
from tracescore.config import Config
from tracescore.integrations.scoring import Scoring, label_fields
from tracescore.judge.protocol import Judge
from tracescore.platforms.langsmith.adapter import langsmith_adapter
from tracescore.result import TraceResult
from tracescore.scorers.diagnosis import CELLS

__all__ = ["ABSENT_KEY", "UNDECIDED", "evaluators", "feedback", "summary_evaluator", "to_record"]

ABSENT_KEY = "tracescore.absent"
UNDECIDED = "undecided"  # the summary's cell for runs whose diagnosis is absent
_RUN_FIELDS = (
    "id", "name", "run_type", "start_time", "end_time", "inputs", "outputs", "extra", "error", "status", "tags",
    "parent_run_id", "trace_id", "dotted_order", "session_id", "reference_example_id",
)  # fmt: skip  # the RunBase fields of langsmith.schemas (Run and RunTree) the adapter reads
Result = dict[str, Any]
Evaluator = Callable[[Any, Any], dict[str, list[Result]]]


def _field(obj: Any, name: str) -> Any:
    return obj.get(name) if isinstance(obj, Mapping) else getattr(obj, name, None)


def _plain_run(run: Any) -> dict[str, Any]:
    plain = {name: _field(run, name) for name in _RUN_FIELDS}
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


def evaluators(
    judge: Judge | None = None, k: int = 5, stages: Iterable[str] | None = None, config: Config | None = None
) -> list[Evaluator]:
    """Evaluators for ``evaluate`` / ``aevaluate`` / ``evaluate_existing``: one that scores each ``(run, example)``
    with every stage (``stages``: only those, e.g. ``["retrieval", "answer"]``) through the recipe of ``config``
    (its ``[scoring]``, ``[judge]`` and ``[mapping]``; None: the defaults) and returns all its results at once."""
    scoring = Scoring(langsmith_adapter(config.mapping if config is not None else None), judge=judge, k=k,
                      stages=stages, config=config)  # fmt: skip

    def tracescore(run: Any, example: Any) -> dict[str, list[Result]]:
        return {"results": feedback(scoring, scoring.score(to_record(run, example)))}

    return [tracescore]


def summary_evaluator(
    judge: Judge | None = None, k: int = 5, config: Config | None = None
) -> Callable[[Sequence[Any], Sequence[Any]], dict[str, list[Result]]]:
    """A summary evaluator for ``evaluate(..., summary_evaluators=[...])``: the experiment's contingency cells, one
    result per ``diagnosis`` cell (key ``diagnosis:<cell>``, its count as the score), plus ``diagnosis:undecided``
    for the runs whose diagnosis is absent. Scores each run again with the same recipe (deterministic)."""
    scoring = Scoring(langsmith_adapter(config.mapping if config is not None else None), judge=judge, k=k,
                      stages=None, config=config)  # fmt: skip

    def tracescore_cells(runs: Sequence[Any], examples: Sequence[Any]) -> dict[str, list[Result]]:
        cells: Counter[str] = Counter()
        for run, example in zip(runs, examples, strict=False):
            cells[scoring.score(to_record(run, example)).diagnosis or UNDECIDED] += 1
        return {"results": [{"key": f"{DIAGNOSIS}:{cell}", "score": cells[cell]} for cell in (*CELLS, UNDECIDED)]}

    return tracescore_cells
