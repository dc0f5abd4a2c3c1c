"""``backfill --dry-run``: count the traces of a window and estimate the judge calls, tokens and cost, calling nothing
that costs (the source is read; no judge call, no score written, no state changed).

Per trace the judge makes up to three kinds of call: grounding (one per trace with an answer: claims and per-document
verdicts together), the surface oracle (one per trace with a gold answer and a search, a few for very wide traces)
and the semantic match (one when the final answer is not an exact match of the gold answer). The estimate builds
those very requests (the ones the scorers and the batch prefill send) and counts their tokens the judge's way
(``approx_tokens``); the reply is estimated per answer sentence, per URL labelled and per verdict. Prices come from
the judge's price table (``judge/pricing.py``); prompt caching and the judge cache only make the real cost lower.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tracescore.adapters import Adapter
from tracescore.engine.plan import ScorerPlan, answer_prefix
from tracescore.engine.requests import criteria_requests
from tracescore.errors import InputError
from tracescore.judge.passages import approx_tokens
from tracescore.judge.pricing import estimate_cost
from tracescore.judge.protocol import JudgeRequest
from tracescore.judge.redact import Redactor
from tracescore.judge.request import message_params, prompt_texts
from tracescore.scorers.grounding import grounding_call
from tracescore.scorers.rubrics import Rubrics
from tracescore.scorers.semantic import needed_request
from tracescore.scorers.surface import collect_items, oracle_requests
from tracescore.sources.base import Source
from tracescore.trace import Trace

OUTPUT_TOKENS_PER_SENTENCE = 80
"""A claim, its verdict, a verbatim quote and a short reason, per answer sentence."""
OUTPUT_TOKENS_PER_URL = 40
"""An item id, part, label and verbatim quote, per URL the oracle labels (an upper bound: neither is left out)."""
OUTPUT_TOKENS_PER_SEMANTIC = 40
"""A match flag and a one-sentence reason."""


@dataclass
class JudgeEstimate:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    stages: dict[str, int] = field(default_factory=dict)  # calls per judged stage: grounding, surface, semantic

    def add(self, other: JudgeEstimate) -> None:
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        for stage, calls in other.stages.items():
            self.stages[stage] = self.stages.get(stage, 0) + calls

    def count(self, stage: str, request: JudgeRequest, model: str, output_tokens: int) -> None:
        """Add one request the judge would send: its input tokens counted on the very body, its reply estimated."""
        self.calls += 1
        self.stages[stage] = self.stages.get(stage, 0) + 1
        self.input_tokens += sum(approx_tokens(text) for text in prompt_texts(message_params(request, model)))
        self.output_tokens += output_tokens


def estimate_body(trace: Trace, model: str = "") -> dict[str, Any] | None:
    """The Messages API body the judge would send for ``trace`` (None when it would not call the judge)."""
    call = grounding_call(trace)
    return None if isinstance(call, str) else message_params(call.request, model)


def estimate_trace(
    trace: Trace,
    model: str = "",
    *,
    rubrics: Rubrics | None = None,
    plan: ScorerPlan | None = None,
) -> JudgeEstimate:
    """The judge calls scoring ``trace`` would make (grounding, surface oracle, semantic match, ``plan``'s criteria,
    each a stage of its own name) and their tokens, each with the system text of its stage's rubric (``rubrics``:
    default the bundled ones), the answer read with ``plan``'s prefix (None: the answer scorer's default)."""
    rubrics = rubrics or Rubrics()
    out = JudgeEstimate()
    call = grounding_call(trace, rubric=rubrics.grounding)
    if not isinstance(call, str):
        out.count("grounding", call.request, model, OUTPUT_TOKENS_PER_SENTENCE * call.sentences)
    oracle = oracle_requests(trace, rubric=rubrics.surface)
    if oracle:
        per_call = -(-len(collect_items(trace)) // len(oracle))  # the items, spread over the oracle's calls
        for request in oracle:
            out.count("surface", request, model, OUTPUT_TOKENS_PER_URL * per_call)
    semantic = needed_request(trace, final_answer_prefix=answer_prefix(plan), rubric=rubrics.semantic)
    if semantic is not None:
        out.count("semantic", semantic, model, OUTPUT_TOKENS_PER_SEMANTIC)
    for request in criteria_requests(trace, plan):  # a verdict, a quote and a reason: as long as the semantic one
        out.count(request.rubric.name, request, model, OUTPUT_TOKENS_PER_SEMANTIC)
    return out


@dataclass
class DryRun:
    """What a backfill of ``window`` would do."""

    window: tuple[datetime, datetime]
    traces: int = 0
    already_done: int = 0
    unreadable: int = 0
    judge: JudgeEstimate = field(default_factory=JudgeEstimate)
    model: str | None = None
    cost_usd: float | None = None
    not_sampled: int | None = None  # [scoring] judge_sample: traces the judged stages will leave out (None: no sample)

    def as_dict(self) -> dict[str, Any]:
        out = {
            "dry_run": True,
            "window": [self.window[0].isoformat(), self.window[1].isoformat()],
            "traces": self.traces,
            "already_done": self.already_done,
            "unreadable": self.unreadable,
            "judge_calls": self.judge.calls,
            "judge_calls_by_stage": dict(self.judge.stages),
            "judge_input_tokens": self.judge.input_tokens,
            "judge_output_tokens": self.judge.output_tokens,
            "judge_model": self.model,
            "judge_cost_usd": None if self.cost_usd is None else round(self.cost_usd, 4),
        }
        if self.not_sampled is not None:
            out["not_sampled"] = self.not_sampled
        return out


def dry_run(
    source: Source,
    adapter: Adapter,
    windows: Iterable[tuple[datetime, datetime]],
    *,
    window: tuple[datetime, datetime],
    done: Any = None,
    model: str | None = None,
    rubrics: Rubrics | None = None,
    judges: Callable[[Trace], bool] | None = None,
    redact: Redactor | None = None,
    plan: ScorerPlan | None = None,
) -> DryRun:
    """Read every trace of ``windows`` and add up the estimate; ``done(trace_id)`` tells traces already scored,
    ``judges(trace)`` the traces ``[scoring] judge_sample`` judges (the others are counted, not estimated); each
    request is counted as ``redact`` ([judge] redact) leaves its trace."""
    out = DryRun(window=window, model=model, not_sampled=None if judges is None else 0)
    for since, until in windows:
        for record in source.records(since, until):
            try:
                trace = adapter(record.payload)
            except InputError:
                out.unreadable += 1
                continue
            out.traces += 1
            if done is not None and done(trace.id):
                out.already_done += 1
                continue
            if judges is not None and not judges(trace):
                out.not_sampled = (out.not_sampled or 0) + 1
                continue
            judged = redact.trace(trace) if redact is not None else trace
            out.judge.add(estimate_trace(judged, model or "", rubrics=rubrics, plan=plan))
    out.cost_usd = _price(out.model, out.judge)
    return out


def _price(model: str | None, estimate: JudgeEstimate) -> float | None:
    """USD from the judge's price table (None when the model's price is not known)."""
    if not model:
        return None
    return estimate_cost(model, input_tokens=estimate.input_tokens, output_tokens=estimate.output_tokens)
