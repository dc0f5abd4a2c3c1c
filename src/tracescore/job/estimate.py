"""``backfill --dry-run``: count the traces of a window and estimate the judge calls, tokens and cost, calling nothing
that costs (the source is read; no judge call, no score written, no state changed).

The estimate follows the judge's documented call pattern: one claim-extraction call per answer, then one grounding
call per fetched document with text (all claims of the answer against one document), each document cut to the
passage budget. Token counts are characters / 4; prices come from the judge's price table when it is installed.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tracescore.adapters import Adapter
from tracescore.errors import InputError
from tracescore.sources.base import Source
from tracescore.trace import Trace

__all__ = ["CHARS_PER_TOKEN", "DryRun", "JudgeEstimate", "dry_run", "estimate_trace"]

CHARS_PER_TOKEN = 4
RUBRIC_TOKENS = 900
"""System prompt + instructions of one judge call (the rubric texts in ``scorers/`` are about this long)."""
PASSAGE_CHARS = 6_000
"""What the judge sees of one document at most (top passages, not the whole page)."""
OUTPUT_TOKENS_PER_SENTENCE = 45


@dataclass
class JudgeEstimate:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0

    def add(self, other: JudgeEstimate) -> None:
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens


def estimate_trace(trace: Trace) -> JudgeEstimate:
    """The judge calls and tokens scoring ``trace`` would take (zero when there is no answer or no evidence)."""
    answer = trace.answer or ""
    docs = {(f.url or f.doc_id or ""): f.text or "" for f in trace.fetches if (f.text or "").strip()}
    if not answer.strip():
        return JudgeEstimate()
    sentences = max(1, answer.count(". ") + answer.count("\n") + 1)
    answer_tokens = len(answer) // CHARS_PER_TOKEN + 1
    out = JudgeEstimate(calls=1, input_tokens=RUBRIC_TOKENS + answer_tokens,
                        output_tokens=OUTPUT_TOKENS_PER_SENTENCE * sentences)
    for text in docs.values():
        out.calls += 1
        out.input_tokens += RUBRIC_TOKENS + answer_tokens + min(len(text), PASSAGE_CHARS) // CHARS_PER_TOKEN
        out.output_tokens += OUTPUT_TOKENS_PER_SENTENCE * sentences
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
    out = DryRun(window=window, model=model or _default_model())
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
            out.judge.add(estimate_trace(trace))
    out.cost_usd = _price(out.model, out.judge)
    return out


def _default_model() -> str | None:
    try:
        from tracescore.judge.anthropic import DEFAULT_MODEL  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return str(DEFAULT_MODEL)


def _price(model: str | None, estimate: JudgeEstimate) -> float | None:
    """USD from the judge's price table (None when the judge or the model's price is not known)."""
    if model is None:
        return None
    try:
        from tracescore.judge.anthropic import PRICES_PER_MTOK  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    price = PRICES_PER_MTOK.get(model)
    if price is None:
        return None
    return float(estimate.input_tokens * price[0] / 1e6 + estimate.output_tokens * price[1] / 1e6)
