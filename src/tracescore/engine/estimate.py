"""``backfill --dry-run``: count the traces of a window and estimate the judge calls, tokens and cost, calling nothing
that costs (the source is read; no judge call, no score written, no state changed).

The judge makes one call per trace with an answer (claims and per-document verdicts together). The estimate builds
that very request (rubric, question, numbered sentences, the selected passages of every document) and counts its
tokens the judge's way (``approx_tokens``); the reply is estimated per answer sentence. Prices come from the judge's
price table (``judge/pricing.py``); prompt caching and the judge cache only make the real cost lower.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tracescore.adapters import Adapter
from tracescore.errors import InputError
from tracescore.judge.passages import approx_tokens
from tracescore.judge.pricing import estimate_cost
from tracescore.judge.request import message_params, prompt_texts
from tracescore.scorers.grounding import grounding_call
from tracescore.sources.base import Source
from tracescore.trace import Trace

__all__ = ["OUTPUT_TOKENS_PER_SENTENCE", "DryRun", "JudgeEstimate", "dry_run", "estimate_body", "estimate_trace"]

OUTPUT_TOKENS_PER_SENTENCE = 80
"""A claim, its verdict, a verbatim quote and a short reason, per answer sentence."""


@dataclass
class JudgeEstimate:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, other: JudgeEstimate) -> None:
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens


def estimate_body(trace: Trace, model: str = "") -> dict[str, Any] | None:
    """The Messages API body the judge would send for ``trace`` (None when it would not call the judge)."""
    call = grounding_call(trace)
    return None if isinstance(call, str) else message_params(call.request, model)


def estimate_trace(trace: Trace, model: str = "") -> JudgeEstimate:
    """The judge call scoring ``trace`` would make, and its tokens (none when the answer has no sentence)."""
    call = grounding_call(trace)
    if isinstance(call, str):
        return JudgeEstimate()
    tokens = sum(approx_tokens(text) for text in prompt_texts(message_params(call.request, model)))
    return JudgeEstimate(calls=1, input_tokens=tokens, output_tokens=OUTPUT_TOKENS_PER_SENTENCE * call.sentences)


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

    def as_dict(self) -> dict[str, Any]:
        return {
            "dry_run": True,
            "window": [self.window[0].isoformat(), self.window[1].isoformat()],
            "traces": self.traces,
            "already_done": self.already_done,
            "unreadable": self.unreadable,
            "judge_calls": self.judge.calls,
            "judge_input_tokens": self.judge.input_tokens,
            "judge_output_tokens": self.judge.output_tokens,
            "judge_model": self.model,
            "judge_cost_usd": None if self.cost_usd is None else round(self.cost_usd, 4),
        }


def dry_run(
    source: Source,
    adapter: Adapter,
    windows: Iterable[tuple[datetime, datetime]],
    *,
    window: tuple[datetime, datetime],
    done: Any = None,
    model: str | None = None,
) -> DryRun:
    """Read every trace of ``windows`` and add up the estimate; ``done(trace_id)`` tells traces already scored."""
    out = DryRun(window=window, model=model)
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
            out.judge.add(estimate_trace(trace, model or ""))
    out.cost_usd = _price(out.model, out.judge)
    return out


def _price(model: str | None, estimate: JudgeEstimate) -> float | None:
    """USD from the judge's price table (None when the model's price is not known)."""
    if not model:
        return None
    return estimate_cost(model, input_tokens=estimate.input_tokens, output_tokens=estimate.output_tokens)
