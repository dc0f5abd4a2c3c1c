"""``backfill --judge-batch``: the judge calls of a slice go through the Message Batches API (half the price).

Before the pipeline scores a slice, ``BatchPrefill`` reads the slice, builds each trace's judge request exactly as the
grounding scorer will (same rubric, content and output schema, so the same content key), submits the ones the judge
cache does not hold as one message batch, polls until it has ended, and stores every succeeded reply in the cache.
Scoring then finds them in the cache; a request the batch could not answer (errored, expired) is simply judged
synchronously when its trace is scored. The slice is read twice (reads are cheap next to judge calls).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tracescore.errors import JudgeError
from tracescore.judge.anthropic import MAX_TOKENS, estimate_cost, message_params
from tracescore.judge.protocol import JudgeRequest, JudgeUsage
from tracescore.scorers.citations import parse_answer
from tracescore.scorers.grounding import collect_evidence, grounding_request
from tracescore.trace import Trace

__all__ = ["BATCH_DISCOUNT", "BatchPrefill", "BatchReport", "judge_request"]

BATCH_DISCOUNT = 0.5
"""Message Batches are billed at half the synchronous price."""
MAX_REQUESTS = 100_000
"""The API's limit of requests per batch; larger slices are sent as several batches."""


def judge_request(trace: Trace) -> JudgeRequest | None:
    """The grounding scorer's judge request for ``trace`` (None when it would not call the judge)."""
    if not trace.answer.strip():
        return None
    sentences = [s.text for s in parse_answer(trace.answer).sentences]
    if not sentences:
        return None
    request, _ = grounding_request(trace, sentences, collect_evidence(trace))
    return request


@dataclass
class BatchReport:
    """What the batches of a backfill did."""

    batches: int = 0
    submitted: int = 0
    succeeded: int = 0
    failed: int = 0
    already_cached: int = 0
    errors: list[str] = field(default_factory=list)


class BatchPrefill:
    """Fills the judge cache for the traces of a slice through the Message Batches API."""

    def __init__(
        self,
        *,
        model: str,
        cache: Any,
        usage: JudgeUsage,
        poll_seconds: float = 30.0,
        max_wait_seconds: float = 24 * 3600,
        client: Any = None,
        max_tokens: int = MAX_TOKENS,
    ) -> None:
        self.model = model
        self.cache = cache
        self.usage = usage
        self.poll_seconds = poll_seconds
        self.max_wait_seconds = max_wait_seconds
        self.max_tokens = max_tokens
        self.report = BatchReport()
        if client is None:
            import anthropic

            client = anthropic.Anthropic(max_retries=3)
        self.client = client

    def prefill(self, traces: Iterable[Trace]) -> None:
        """Judge, in batches, every request of ``traces`` the cache does not hold yet."""
        pending: dict[str, JudgeRequest] = {}
        for trace in traces:
            request = judge_request(trace)
            if request is None:
                continue
            key = request.key(self.model)
            if key in pending:
                continue
            if self.cache.judge_cache_get(key) is not None:
                self.report.already_cached += 1
                continue
            pending[key] = request
        keys = list(pending)
        for start in range(0, len(keys), MAX_REQUESTS):
            self._run({k: pending[k] for k in keys[start : start + MAX_REQUESTS]})

    def _params(self, request: JudgeRequest) -> dict[str, Any]:
        from anthropic.lib._parse._transform import transform_schema  # what messages.parse sends for output_format

        schema = transform_schema(request.output.model_json_schema())
        return message_params(self.model, self.max_tokens, request) | {
            "output_config": {"format": {"type": "json_schema", "schema": schema}}
        }

    def _run(self, requests: dict[str, JudgeRequest]) -> None:
        import anthropic

        try:
            batch = self.client.messages.batches.create(
                requests=[{"custom_id": key, "params": self._params(r)} for key, r in requests.items()]
            )
            self.report.batches += 1
            self.report.submitted += len(requests)
            waited = 0.0
            while batch.processing_status != "ended":
                if waited >= self.max_wait_seconds:
                    raise JudgeError(
                        f"message batch {batch.id} not ended after {waited:.0f} s; its traces are judged one by one"
                    )
                time.sleep(self.poll_seconds)
                waited += self.poll_seconds
                batch = self.client.messages.batches.retrieve(batch.id)
            for item in self.client.messages.batches.results(batch.id):
                self._take(item, requests)
        except anthropic.AnthropicError as exc:
            self.report.errors.append(f"message batch failed: {type(exc).__name__}: {exc}")
        except JudgeError as exc:
            self.report.errors.append(str(exc))

    def _take(self, item: Any, requests: dict[str, JudgeRequest]) -> None:
        request = requests.get(item.custom_id)
        result = item.result
        if request is None or result.type != "succeeded":
            self.report.failed += 1
            if request is not None and len(self.report.errors) < 20:
                self.report.errors.append(f"batch request {item.custom_id[:12]}: {result.type}")
            return
        message = result.message
        try:
            text = "".join(block.text for block in message.content if getattr(block, "type", "") == "text")
            parsed = request.output.model_validate_json(text)
        except ValueError as exc:
            self.report.failed += 1
            self.report.errors.append(f"batch reply {item.custom_id[:12]} unreadable: {exc}"[:300])
            return
        self.cache.judge_cache_put(
            item.custom_id,
            model=self.model,
            rubric=request.rubric.version,
            request=json.dumps({"prefix": request.prefix, "content": request.content}, ensure_ascii=False),
            reply=parsed.model_dump_json(),
        )
        self.report.succeeded += 1
        usage = message.usage
        u = self.usage
        u.calls += 1
        u.input_tokens += usage.input_tokens
        u.output_tokens += usage.output_tokens
        u.cache_read_tokens += usage.cache_read_input_tokens or 0
        u.cache_write_tokens += usage.cache_creation_input_tokens or 0
        cost = estimate_cost(
            self.model,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read=usage.cache_read_input_tokens or 0,
            cache_write=usage.cache_creation_input_tokens or 0,
        )
        u.cost_usd += (cost or 0.0) * BATCH_DISCOUNT


def window_prefill(
    prefill: BatchPrefill,
    read: Callable[[Any, Any], Iterable[Any]],
    adapter: Callable[[object], Trace],
    done: Callable[[str], bool],
) -> Callable[[Any, Any], None]:
    """A ``before_window`` hook: read the window, keep the traces not yet done, prefill their judge replies."""

    def before(since: Any, until: Any) -> None:
        def traces() -> Iterable[Trace]:
            for record in read(since, until):
                try:
                    trace = adapter(record.payload)
                except Exception:  # noqa: BLE001 - reported when the pipeline reads it again
                    continue
                if not done(trace.id):
                    yield trace

        prefill.prefill(traces())

    return before
