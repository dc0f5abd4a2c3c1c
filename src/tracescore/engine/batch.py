"""``backfill --judge-batch``: the judge calls of a slice go through the Message Batches API (half the price).

Before the pipeline scores a slice, ``BatchPrefill`` reads the slice and builds each trace's judge request exactly as
the grounding scorer will (``grounding_call`` and ``message_params``: the same body, so the same content key). Then:

- a batch a killed run left ``in_progress`` in the store that holds any of these requests is resumed (polled, its
  results read), never submitted again;
- the requests no live batch holds and the cache lacks are submitted as new batches, each recorded in the store
  (id, slice, custom_ids, status) before anything polls it;
- a batch deleted server-side (404) or whose requests expired is submitted again once, with the reason in the report;
  a request lost twice, or one that errored, is judged synchronously when its trace is scored.

Every succeeded reply goes into the judge cache; every billed reply (parsed or not) is counted at the batch price.
The slice is read twice (reads are cheap next to judge calls). Polling sleeps through an injectable ``sleep``.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tracescore.judge.pricing import BATCH_DISCOUNT
from tracescore.judge.protocol import JudgeReply, JudgeRequest, JudgeUsage
from tracescore.judge.request import MAX_TOKENS, message_params, reply_text
from tracescore.scorers import semantic, surface
from tracescore.scorers.grounding import grounding_call
from tracescore.scorers.rubrics import Rubrics
from tracescore.store.db import Store
from tracescore.store.state import BATCH_LIVE, BATCH_SUBMITTING, JudgeBatch, JudgeBatches, from_text, to_text
from tracescore.trace import Trace

__all__ = ["BATCH_DISCOUNT", "BatchPrefill", "BatchReport", "judge_request", "judge_requests"]

MAX_REQUESTS = 100_000
"""The API's limit of requests per batch; larger slices are sent as several batches."""
MAX_SUBMISSIONS = 2
"""A request is sent in a batch at most twice: once, and once more if its batch was deleted or expired."""
_LOST = ("deleted", "expired")


def judge_request(trace: Trace, rubrics: Rubrics | None = None) -> JudgeRequest | None:
    """The grounding scorer's judge request for ``trace`` (None when it would not call the judge)."""
    call = grounding_call(trace, rubric=(rubrics or Rubrics()).grounding)
    return None if isinstance(call, str) else call.request


def judge_requests(trace: Trace, rubrics: Rubrics | None = None) -> list[JudgeRequest]:
    """Every judge request scoring ``trace`` will send: grounding, the surface oracle, the semantic match, each with
    its stage's rubric (the same bodies, so the same content keys, as the scorers)."""
    rubrics = rubrics or Rubrics()
    grounding = judge_request(trace, rubrics)
    needed = semantic.needed_request(trace, rubric=rubrics.semantic)
    return [
        *([grounding] if grounding is not None else []),
        *surface.oracle_requests(trace, rubric=rubrics.surface),
        *([needed] if needed is not None else []),
    ]


@dataclass
class BatchReport:
    """What the batches of a backfill did (the run summary's ``judge_batches``)."""

    batches: int = 0
    submitted: int = 0
    succeeded: int = 0
    failed: int = 0
    already_cached: int = 0
    resumed: int = 0
    recovered: int = 0
    held_by_live_batch: int = 0
    resubmitted: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["errors"] = self.errors[:20]
        return out


class BatchPrefill:
    """Fills the judge cache for the traces of a slice through the Message Batches API, resumable from the store."""

    def __init__(
        self,
        *,
        model: str,
        cache: Any,
        usage: JudgeUsage,
        store_path: str | Path,
        scope: str | None = None,
        poll_seconds: float = 30.0,
        max_wait_seconds: float = 24 * 3600,
        client: Any = None,
        max_tokens: int = MAX_TOKENS,
        sleep: Callable[[float], None] = time.sleep,
        rubrics: Rubrics | None = None,
    ) -> None:
        self.model = model
        self.rubrics = rubrics or Rubrics()
        self.cache = cache
        self.usage = usage
        self.store_path = Path(store_path)
        self.scope = scope
        self.poll_seconds = poll_seconds
        self.max_wait_seconds = max_wait_seconds
        self.max_tokens = max_tokens
        self.sleep = sleep
        self.report = BatchReport()
        self._own_client = client is None
        if client is None:
            import anthropic

            client = anthropic.Anthropic(max_retries=3)
        self.client = client

    def close(self) -> None:
        """Close the SDK client this prefill made (a client passed in belongs to the caller)."""
        if self._own_client:
            self.client.close()

    def prefill(self, traces: Iterable[Trace], window: tuple[Any, Any] | None = None) -> None:
        """Judge, in batches, every request of ``traces`` the cache does not hold yet (resuming live batches)."""
        pending: dict[str, JudgeRequest] = {}
        for request in (r for trace in traces for r in judge_requests(trace, self.rubrics)):
            key = request.key(self.model)
            if key in pending:
                continue
            if self.cache.judge_cache_get(key) is not None:
                self.report.already_cached += 1
                continue
            pending[key] = request
        if not pending:
            return
        with Store(self.store_path) as store:
            ledger = JudgeBatches(store)
            known = ledger.batches(self.model)
            for intent in [b for b in known if b.status == BATCH_SUBMITTING]:
                self._recover(ledger, intent, known)
            known = ledger.batches(self.model)
            live = [b for b in known if b.status == BATCH_LIVE and not pending.keys().isdisjoint(b.keys)]
            held = {k for b in live for k in b.keys}
            self.report.resumed += len(live)
            self.report.held_by_live_batch += len(held & pending.keys())
            history: dict[str, list[str]] = {}
            for b in known:
                for k in b.keys:
                    history.setdefault(k, []).append(b.status)
            fresh = [k for k in pending if k not in held and _may_submit(history.get(k, []))]
            slice_ = _slice(window)
            for start in range(0, len(fresh), MAX_REQUESTS):
                batch = self._submit(ledger, pending, fresh[start : start + MAX_REQUESTS], slice_)
                if batch is not None:
                    live.append(batch)
            self._wait(ledger, live, pending, history)

    def _submit(
        self,
        ledger: JudgeBatches,
        pending: dict[str, JudgeRequest],
        keys: list[str],
        slice_: tuple[str, str] | None,
        *,
        attempt: int = 1,
        replaces: str | None = None,
        reason: str | None = None,
    ) -> JudgeBatch | None:
        """Create one batch and record it in the store at once (before anything waits on it)."""
        import anthropic

        if not keys:
            return None
        requests = [{"custom_id": k, "params": message_params(pending[k], self.model, self.max_tokens)} for k in keys]
        intent = f"{BATCH_SUBMITTING}:{uuid.uuid4().hex}"
        ledger.record(
            JudgeBatch(intent, self.scope, slice_, self.model, tuple(keys), BATCH_SUBMITTING, attempt, replaces, reason)
        )
        try:
            created = self.client.messages.batches.create(requests=requests)
        except anthropic.AnthropicError as exc:
            ledger.finish(intent, "not_submitted", f"{type(exc).__name__}: {exc}"[:300])
            self.report.errors.append(f"message batch not submitted: {type(exc).__name__}: {exc}"[:300])
            return None
        ledger.adopt(intent, created.id)
        batch = JudgeBatch(
            created.id, self.scope, slice_, self.model, tuple(keys), BATCH_LIVE, attempt, replaces, reason
        )
        self.report.batches += 1
        self.report.submitted += len(keys)
        return batch

    def _recover(self, ledger: JudgeBatches, intent: JudgeBatch, known: list[JudgeBatch]) -> None:
        """A run killed between sending a batch and learning its id: adopt the one server batch that fits it.

        It fits when it is recorded nowhere else, was created after the intent and holds as many requests; with no
        such batch (the create never arrived) or more than one, the intent is closed and its requests are free.
        """
        import anthropic

        recorded = {b.id for b in known}
        since = from_text(intent.created_at).timestamp() - 5 if intent.created_at else 0.0
        try:
            fits = [
                b.id
                for b in self.client.messages.batches.list(limit=100).data  # newest first: a killed run's is recent
                if b.id not in recorded
                and b.created_at.timestamp() >= since
                and sum(b.request_counts.to_dict().values()) == len(intent.keys)
            ]
        except anthropic.AnthropicError as exc:
            fits = []
            self.report.errors.append(f"cannot list message batches: {type(exc).__name__}: {exc}"[:300])
        if len(fits) == 1:
            ledger.adopt(intent.id, fits[0])
            self.report.recovered += 1
        else:
            ledger.finish(intent.id, "not_submitted", f"{len(fits)} unrecorded server batch(es) fit it")

    def _wait(
        self,
        ledger: JudgeBatches,
        live: list[JudgeBatch],
        pending: dict[str, JudgeRequest],
        history: dict[str, list[str]],
    ) -> None:
        """Poll every live batch until it ended (read it) or was lost (submit its requests again, once)."""
        import anthropic

        transient = (anthropic.APIConnectionError, anthropic.InternalServerError, anthropic.RateLimitError)
        waited = 0.0
        while live:
            still: list[JudgeBatch] = []
            for batch in live:
                try:
                    state = self.client.messages.batches.retrieve(batch.id)
                    if state.processing_status != "ended":
                        still.append(batch)
                        continue
                    expired = self._read(batch, pending)
                except anthropic.NotFoundError:
                    ledger.finish(batch.id, "deleted", "deleted server-side (404)")
                    still += self._again(ledger, batch, pending, history, "deleted server-side (404)", batch.keys)
                    continue
                except anthropic.AnthropicError as exc:
                    self.report.errors.append(f"message batch {batch.id}: {type(exc).__name__}: {exc}"[:300])
                    if isinstance(exc, transient):
                        still.append(batch)  # polled again; a run that gives up leaves it for the next to resume
                    continue
                if expired:
                    reason = f"{len(expired)} request(s) expired before processing"
                    ledger.finish(batch.id, "expired", reason)
                    still += self._again(ledger, batch, pending, history, reason, expired)
                else:
                    ledger.finish(batch.id, "ended")
            live = still
            if not live:
                return
            if waited >= self.max_wait_seconds:
                ids = ", ".join(b.id for b in live)
                self.report.errors.append(
                    f"message batch {ids} not ended after {waited:.0f} s; its traces are judged one by one"
                )
                return
            self.sleep(self.poll_seconds)
            waited += self.poll_seconds

    def _again(
        self,
        ledger: JudgeBatches,
        lost: JudgeBatch,
        pending: dict[str, JudgeRequest],
        history: dict[str, list[str]],
        reason: str,
        keys: Iterable[str],
    ) -> list[JudgeBatch]:
        """Submit the lost requests again once (those still wanted and not answered since)."""
        for k in lost.keys:
            history.setdefault(k, []).append("deleted")
        again = [
            k for k in keys
            if k in pending and self.cache.judge_cache_get(k) is None and _may_submit(history.get(k, []))
        ]
        if not again:
            self.report.errors.append(f"message batch {lost.id}: {reason}; its requests are judged one by one")
            return []
        batch = self._submit(
            ledger, pending, again, lost.slice, attempt=lost.attempt + 1, replaces=lost.id, reason=reason
        )
        if batch is None:
            return []
        self.report.resubmitted.append(f"{lost.id}: {reason}; {len(again)} request(s) re-submitted as {batch.id}")
        return [batch]

    def _read(self, batch: JudgeBatch, pending: dict[str, JudgeRequest]) -> list[str]:
        """Read an ended batch's results into the cache; the keys of its expired requests."""
        expired: list[str] = []
        for item in self.client.messages.batches.results(batch.id):
            kind = item.result.type
            if kind == "expired":
                expired.append(item.custom_id)
            elif kind != "succeeded":
                self.report.failed += 1
                if len(self.report.errors) < 20:
                    self.report.errors.append(f"batch request {item.custom_id[:12]}: {kind}")
            else:
                self._take(item.custom_id, item.result.message, pending.get(item.custom_id))
        return expired

    def _take(self, key: str, message: Any, request: JudgeRequest | None) -> None:
        usage = message.usage
        billed = JudgeReply(
            output=None,
            model=self.model,
            key=key,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_input_tokens or 0,
            cache_write_tokens=usage.cache_creation_input_tokens or 0,
        )
        self.usage.bill(billed, discount=BATCH_DISCOUNT)  # billed, whether or not it parses
        if request is None:  # a request of another slice in a resumed batch: its slice judges it again
            return
        try:
            parsed = request.output.model_validate_json(reply_text(message))
        except ValueError as exc:
            self.report.failed += 1
            self.report.errors.append(f"batch reply {key[:12]} unreadable: {exc}"[:300])
            return
        self.cache.judge_cache_put(
            key,
            model=self.model,
            rubric=request.rubric.version,
            request=json.dumps({"prefix": request.prefix, "content": request.content}, ensure_ascii=False),
            reply=parsed.model_dump_json(),
        )
        self.report.succeeded += 1


def _may_submit(past: list[str]) -> bool:
    """A request another batch answered with an error is judged directly; one lost twice is not sent again."""
    return "ended" not in past and sum(1 for status in past if status in _LOST) < MAX_SUBMISSIONS


def _slice(window: tuple[Any, Any] | None) -> tuple[str, str] | None:
    if window is None:
        return None
    return to_text(window[0]), to_text(window[1])


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

        prefill.prefill(traces(), (since, until))

    return before
