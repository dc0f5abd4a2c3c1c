"""tracescore's stage scores as Langfuse experiment evaluators, for ``Langfuse.run_experiment`` /
``dataset.run_experiment`` (SDK 5).

    from langfuse import get_client
    from tracescore.integrations import langfuse as ts

    get_client().run_experiment(name="search-agent", data=items, task=agent,
                                evaluators=ts.evaluators(), run_evaluators=[ts.run_evaluator()])

An item evaluator takes the keyword arguments ``input, output, expected_output, metadata``. The task's ``output`` is
the agent's trace: a ``Trace`` or a dict in the trace format (with ``steps``); or, from ``mapper(...)`` in
``run_batched_evaluation``, a trace stored in Langfuse (``{"id", "observations"}``, read through the Langfuse
adapter and its ``[mapping]``, labels from the root's metadata, as ``score --source langfuse`` reads it). For a
trace of the task, the labels come from ``expected_output`` over ``metadata`` (``required_doc_ids``,
``expected_answer_contains``, ``gold_answer``, ``expect_refusal``; a text ``reference``, ``answer`` or
``expected``, or a text ``expected_output``, is the gold answer) over the trace's own. It returns one
``Evaluation`` per present catalog score, with the catalog's ``data_type`` (a BOOLEAN as 1/0) and the result line's
comment; an absent score has none of its own: one ``tracescore.absent`` evaluation of type TEXT lists the absent
names with their reasons.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from tracescore.catalog import entry
from tracescore.config import Config
from tracescore.errors import ConfigError
from tracescore.integrations.scoring import USAGE_FIELDS, Scoring, label_fields
from tracescore.judge.protocol import Judge
from tracescore.platforms.jsonl.platform import adapter
from tracescore.platforms.langfuse.adapter import langfuse_adapter
from tracescore.platforms.langfuse.source import FIELDS, MAX_PAGE_SIZE
from tracescore.result import TraceResult
from tracescore.scorers.diagnosis import CELLS, DIAGNOSIS
from tracescore.trace import Trace

__all__ = [
    "ABSENT_KEY", "UNDECIDED", "USAGE_KEY", "Experiment", "evaluations", "evaluators", "mapper",
    "run_evaluator", "stored_trace", "usage_evaluations",
]  # fmt: skip

ABSENT_KEY = "tracescore.absent"
USAGE_KEY = "tracescore.judge"  # the run's judge spend: tracescore.judge.calls, .input_tokens, …, .cost_usd
UNDECIDED = "undecided"  # the run evaluator's cell for items whose diagnosis is absent
_NOT_A_TRACE = (
    "the task output is not a trace (a tracescore Trace or a dict in the trace format, with 'steps'): return the"
    " agent's trace from the task"
)


_LABELS = ("required_doc_ids", "expected_answer_contains", "gold_answer", "expect_refusal")


def _evaluation_class() -> Any:
    try:
        from langfuse.experiment import Evaluation
    except ImportError as exc:
        raise ConfigError(f"the Langfuse evaluators need the langfuse SDK 5 ({exc}): pip install 'tracescore[langfuse]'"
                          ) from exc  # fmt: skip
    return Evaluation


def _trace(output: Any, expected_output: Any, metadata: Any) -> dict[str, Any] | None:
    """The canonical trace dict of the task's output with the item's labels (a stored Langfuse trace as it is), or
    None when it is no trace."""
    if _stored(output):
        return dict(output)
    if isinstance(output, Trace):
        plain: dict[str, Any] = output.model_dump(mode="json")
    elif isinstance(output, Mapping) and "steps" in output:
        plain = dict(output)
    else:
        return None
    expected = {"gold_answer": expected_output} if isinstance(expected_output, str) else expected_output
    given = label_fields(metadata, expected)
    known = {k: v for k, v in given.items() if k in _LABELS and v is not None}
    if known:
        plain["labels"] = {**(plain.get("labels") or {}), **known}
    return plain



def _stored(output: Any) -> bool:
    return isinstance(output, Mapping) and "observations" in output and "id" in output


def _adapter(config: Config | None) -> Callable[[object], Trace]:
    """The trace format's adapter, or the Langfuse adapter (``[mapping]``) for a stored trace."""
    canonical, stored = adapter(), langfuse_adapter(config.mapping if config is not None else None)
    return lambda payload: stored(payload) if _stored(payload) else canonical(payload)


def stored_trace(api: Any, trace_id: str) -> dict[str, Any]:
    """The Langfuse record of one stored trace (``{"id", "observations": [v2 rows]}``, as ``score --source
    langfuse`` reads it), through ``api`` (a ``LangfuseAPI``, e.g. ``Langfuse().api``): its observations by trace id,
    cursor paged."""
    rows: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = api.observations.get_many(trace_id=trace_id, fields=",".join(FIELDS), limit=MAX_PAGE_SIZE,
                                         **({"cursor": cursor} if cursor else {}))  # fmt: skip
        rows += [o.dict(by_alias=True) for o in page.data]
        cursor = page.meta.cursor
        if not cursor or not page.data:
            return {"id": trace_id, "observations": rows}


def mapper(api: Any) -> Callable[..., Any]:
    """A mapper for ``run_batched_evaluation(mapper=..., evaluators=evaluators())``: each observation it is given
    (filter on ``isRootObservation`` for one per trace) becomes its whole trace, read by trace id through ``api``
    (``Langfuse().api``); the scores land on that observation."""
    try:
        from langfuse.batch_evaluation import EvaluatorInputs
    except ImportError as exc:
        raise ConfigError(f"the Langfuse mapper needs the langfuse SDK 5 ({exc}): pip install 'tracescore[langfuse]'"
                          ) from exc  # fmt: skip

    def tracescore_trace(*, item: Any, **_: Any) -> Any:
        return EvaluatorInputs(input=item.input, output=stored_trace(api, item.trace_id), expected_output=None,
                               metadata={"trace_id": item.trace_id})  # fmt: skip

    return tracescore_trace


def evaluations(scoring: Scoring, result: TraceResult, evaluation: Any) -> list[Any]:
    """The ``Evaluation``s of one trace's result: one per present score, then ``tracescore.absent`` (TEXT)."""
    if result.errors and not result.scores:
        return [evaluation(name=ABSENT_KEY, value="trace not scored: " + "; ".join(result.errors), data_type="TEXT")]
    out: list[Any] = []
    present, absent = scoring.reported(result)
    for s in present:
        found = entry(s.name)
        kind = found.kind if found is not None else s.data_type
        value = (1.0 if s.value else 0.0) if kind == "BOOLEAN" else s.value
        out.append(evaluation(name=s.name, value=value, comment=s.comment, data_type=kind))
    if absent:
        out.append(evaluation(name=ABSENT_KEY, value="\n".join(absent), data_type="TEXT"))
    return out


class Experiment:
    """One experiment's scoring: the item evaluator and the run evaluator share its recipe and judge (its cache in
    ``store``, its budget ``[scoring] max_cost``); the run evaluator adds the contingency cells and, with a judge,
    what it spent over the whole run."""

    def __init__(
        self,
        judge: Judge | None = None,
        k: int | None = None,
        stages: Iterable[str] | None = None,
        config: Config | None = None,
        store: str | Path | None = None,
    ) -> None:
        evaluation = _evaluation_class()
        scoring = Scoring(_adapter(config), judge=judge, k=k, stages=stages, config=config, store=store)
        cells = run_evaluator()

        def tracescore(*, input: Any, output: Any, expected_output: Any = None, metadata: Any = None,  # noqa: A002
                       **_: Any) -> list[Any]:  # fmt: skip
            plain = _trace(output, expected_output, metadata)
            if plain is None:
                return [evaluation(name=ABSENT_KEY, value=f"trace not scored: {_NOT_A_TRACE}", data_type="TEXT")]
            return evaluations(scoring, scoring.score(plain), evaluation)

        def tracescore_run(*, item_results: Iterable[Any], **rest: Any) -> list[Any]:
            return cells(item_results=item_results, **rest) + usage_evaluations(scoring, evaluation)

        def tracescore_session(*, outputs: Sequence[Any], expected_outputs: Sequence[Any] | None = None,
                               metadata: Sequence[Any] | None = None, session_id: str | None = None) -> list[list[Any]]:
            """The turns of one session (each item's output: a trace, in the conversation's order or with
            timestamps): one list of evaluations per turn, each scored with the evidence of the turns before it."""
            n = len(outputs)
            plain = [_trace(o, e, m) for o, e, m in zip(outputs, expected_outputs or [None] * n, metadata or [None] * n,
                                                        strict=True)]  # fmt: skip
            readable = [p for p in plain if p is not None]
            scored = iter(scoring.score_session(readable, session_id))
            return [evaluations(scoring, next(scored), evaluation) if p is not None else
                    [evaluation(name=ABSENT_KEY, value=f"trace not scored: {_NOT_A_TRACE}", data_type="TEXT")]
                    for p in plain]  # fmt: skip

        self.scoring = scoring
        self.evaluators: list[Callable[..., list[Any]]] = [tracescore]
        self.session_evaluator = tracescore_session
        self.run_evaluators: list[Callable[..., list[Any]]] = [tracescore_run]


def usage_evaluations(scoring: Scoring, evaluation: Any) -> list[Any]:
    """The judge's spend so far, one NUMERIC evaluation per figure (``tracescore.judge.<field>``, the whole line as
    the comment); none without a judge."""
    total, line = scoring.spent()
    if total is None:
        return []
    return [evaluation(name=f"{USAGE_KEY}.{name}", value=float(total[name]), comment=line, data_type="NUMERIC")
            for name in USAGE_FIELDS]  # fmt: skip


def evaluators(
    judge: Judge | None = None, k: int | None = None, stages: Iterable[str] | None = None, config: Config | None = None
) -> list[Callable[..., list[Any]]]:
    """Item evaluators for ``run_experiment``: one that scores each item's trace with every stage (``stages``: only
    those) through the recipe of ``config`` (None: the defaults) and returns all its evaluations at once."""
    return Experiment(judge, k, stages, config).evaluators


def run_evaluator() -> Callable[..., list[Any]]:
    """A run evaluator for ``run_experiment(..., run_evaluators=[...])``: the experiment's contingency cells from
    the items' ``diagnosis`` evaluations, one NUMERIC evaluation per cell (``diagnosis:<cell>``, its count), plus
    ``diagnosis:undecided`` for the items without one."""
    evaluation = _evaluation_class()

    def tracescore_cells(*, item_results: Iterable[Any], **_: Any) -> list[Any]:
        cells: Counter[str] = Counter()
        for item in item_results:
            said = [e.value for e in item.evaluations if e.name == DIAGNOSIS]
            cells[str(said[0]) if said else UNDECIDED] += 1
        return [evaluation(name=f"{DIAGNOSIS}:{cell}", value=float(cells[cell]), data_type="NUMERIC")
                for cell in (*CELLS, UNDECIDED)]  # fmt: skip

    return tracescore_cells
