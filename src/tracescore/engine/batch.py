"""``backfill --judge-batch``: the judge calls of a slice go through the provider's batch API (half the price):
Anthropic's Message Batches or OpenAI's Batch API, each behind ``judge/batches.py``'s ``BatchAPI``.

Before the pipeline scores a slice, ``BatchPrefill`` reads the slice and builds each trace's judge request exactly as
the grounding scorer will (``grounding_call``, and the direct judge's body: the same content key). Then,
with the ledger in the store (``store/batches.py``) as the only memory between runs:

- an intent a killed run left (recorded, created or not, id never learnt) is matched against the API's list of
  batches: none fits, its requests are free; one fits, it is adopted; several, each is watched until it ends and the
  one whose results hold the intent's custom_ids is adopted (OpenAI's batches carry the intent's id in their
  metadata: only the one tagged with it fits). A batch adopted is never submitted again;
- a batch a killed run left ``in_progress`` that holds any of these requests, or belongs to this backfill, is resumed
  (polled, its results read), never submitted again;
- the requests no batch ever held and the cache lacks are submitted as new batches: each recorded as an intent
  before the create call (sent once: the SDK does not retry it), then under its server id;
- an ended batch's results are read: succeeded replies into the judge cache, every one billed at the batch price;
  a request that errored, expired or was canceled is never sent in a batch again: the direct judge answers it once,
  when its trace is scored. The API's ``request_counts``, the results' tally and their cost go into the ledger;
- a batch deleted server-side (404) is re-submitted once (reason in ``judge_batches.resubmitted``); deleted twice,
  its requests are left to the direct judge;
- a batch not ended after ``max_wait_seconds`` is canceled (requests not yet processed come back canceled), polled
  until it ends: no request is in a batch and sent directly at once.

The summary's ``judge_batches``: the ledger's account of this backfill's batches over all its runs (what the API
reported) and what this run did (resumed, recovered, cached, re-submitted, errors); polls sleep via ``sleep``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tracescore.engine.batch_results import RECOVER_SKEW_SECONDS, fitting, take_results
from tracescore.engine.plan import ScorerPlan
from tracescore.engine.requests import judge_request as judge_request, judge_requests as judge_requests
from tracescore.engine.turns import HeldTurns
from tracescore.judge.anthropic_batch import AnthropicBatches
from tracescore.judge.batches import BatchAPI, BatchError, BatchNotFound, BatchTransient, BatchUnsure
from tracescore.judge.pricing import BATCH_DISCOUNT as BATCH_DISCOUNT
from tracescore.judge.protocol import JudgeRequest, JudgeUsage
from tracescore.judge.redact import Redactor
from tracescore.judge.request import MAX_TOKENS
from tracescore.scorers.rubrics import Rubrics
from tracescore.session import Earlier
from tracescore.store.batches import BATCH_ENDED, BATCH_LIVE, BATCH_SUBMITTING, JudgeBatch, JudgeBatches, may_submit
from tracescore.store.db import Store
from tracescore.store.state import from_text, to_text
from tracescore.trace import Trace

_SKEW = timedelta(seconds=RECOVER_SKEW_SECONDS)


@dataclass
class BatchReport:
    """What this run did with batches (the ledger's totals are added to it in the run summary)."""

    already_cached: int = 0
    resumed: int = 0
    recovered: int = 0
    held_by_live_batch: int = 0
    canceled_by_us: int = 0
    resubmitted: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["errors"] = self.errors[:20]
        return out


@dataclass(frozen=True)
class _Watch:
    """A batch being polled; ``intent`` set when it is only a candidate for an unrecorded create."""

    batch: JudgeBatch
    intent: str | None = None


class BatchPrefill:
    """Fills the judge cache for the traces of a slice through a batch API, resumable from the store.

    ``api``: the provider's ``BatchAPI`` (``judge/make.py``'s ``make_batches``; ``close`` closes it); None:
    Anthropic's, on ``client`` (an ``anthropic.Anthropic``; None: one from the environment)."""

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
        redact: Redactor | None = None,
        plan: ScorerPlan | None = None,
        api: BatchAPI | None = None,
    ) -> None:
        self.model, self.rubrics, self.cache, self.usage = model, rubrics or Rubrics(), cache, usage
        self.store_path = Path(store_path)
        self.redact = redact
        self.plan = plan
        self.scope = scope
        self.poll_seconds = poll_seconds
        self.max_wait_seconds = max_wait_seconds
        self.sleep = sleep
        self.report = BatchReport()
        self.summary: dict[str, Any] = {}  # the run summary's judge_batches, updated in place after every slice
        self.api: BatchAPI = api if api is not None else AnthropicBatches(model, client, max_tokens=max_tokens)
        self._resolved: set[str] = set()
        with Store(self.store_path) as store:
            self._refresh(JudgeBatches(store))

    def close(self) -> None:
        """Close the batch API (which closes the SDK client it made; a ``client`` passed in belongs to the caller)."""
        self.api.close()

    def _refresh(self, ledger: JudgeBatches) -> None:
        self.summary.clear()
        self.summary.update(ledger.totals(self.scope) | self.report.as_dict())

    def prefill(
        self,
        traces: Iterable[Trace],
        window: tuple[Any, Any] | None = None,
        earlier: Mapping[str, Earlier] | None = None,
    ) -> None:
        """Judge, in batches, every request of ``traces`` the cache does not hold yet (resuming live batches);
        ``earlier``: by trace id, the evidence of the earlier turns of its session it will be scored with (filled as
        ``traces`` is read)."""
        wanted: dict[str, JudgeRequest] = {}
        carried = earlier if earlier is not None else {}
        for trace in traces:
            for request in judge_requests(trace, self.rubrics, self.redact, self.plan, carried.get(trace.id)):
                wanted.setdefault(request.key(self.model), request)
        pending = {k: r for k, r in wanted.items() if self.cache.judge_cache_get(k) is None}
        self.report.already_cached += len(wanted) - len(pending)
        slice_ = _slice(window)

        def ours(b: JudgeBatch) -> bool:  # only this slice can read it: a reply is cached under its request
            return (b.scope, b.slice) == (self.scope, slice_) or not wanted.keys().isdisjoint(b.keys)

        with Store(self.store_path) as store:
            ledger = JudgeBatches(store)
            intents = [b for b in ledger.batches(self.model) if b.status == BATCH_SUBMITTING and ours(b)]
            watches = self._recover(ledger, intents)
            known = ledger.batches(self.model)
            watched = {w.batch.id for w in watches}
            resumed = [_Watch(b) for b in known if b.status == BATCH_LIVE and b.id not in watched and ours(b)]
            self.report.resumed += len(resumed) + sum(1 for w in watches if w.intent is None)
            watches += resumed
            unresolved = [b for b in known if b.status == BATCH_SUBMITTING]  # of other slices, or the list failed
            held = {k for w in watches for k in w.batch.keys} | {k for b in unresolved for k in b.keys}
            self.report.held_by_live_batch += len(held & pending.keys())
            history: dict[str, dict[str, str]] = {}  # per request key: the status of each batch that held it
            for b in known:
                for k in b.keys:
                    history.setdefault(k, {})[b.id] = b.status
            fresh = [k for k in pending if k not in held and may_submit(history.get(k, {}))]
            try:
                size = self.api.max_requests
                for start in range(0, len(fresh), size):
                    watches += self._submit(ledger, pending, fresh[start : start + size], slice_)
                self._wait(ledger, watches, wanted, history)
            finally:
                self._refresh(ledger)

    # -- submitting -------------------------------------------------------------------------------------------
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
    ) -> list[_Watch]:
        """Record the intent, create the batch (one try: a retried create could make two), record its id."""
        if not keys:
            return []
        intent = JudgeBatch(
            f"{BATCH_SUBMITTING}:{uuid.uuid4().hex}", self.scope, slice_, self.model, tuple(keys), BATCH_SUBMITTING,
            attempt, replaces, reason,
        )
        ledger.record(intent)
        try:
            created = self.api.create(intent.id, [(k, pending[k]) for k in keys])
        except BatchUnsure as exc:
            # the create may have reached the API: look for it before the requests are free again
            self.report.errors.append(f"{exc}; looking it up"[:300])
            (recorded,) = [b for b in ledger.batches(self.model) if b.id == intent.id]
            return self._recover(ledger, [recorded])
        except BatchError as exc:
            ledger.finish(intent.id, "not_submitted", str(exc)[:300])
            self.report.errors.append(f"batch not submitted: {exc}"[:300])
            return []
        ledger.adopt(intent.id, created)
        return [_Watch(replace(intent, id=created, status=BATCH_LIVE))]

    def _recover(self, ledger: JudgeBatches, intents: list[JudgeBatch]) -> list[_Watch]:
        """Intents whose create may have reached the API: the server batch each became, or their requests freed.

        A candidate is a server batch recorded nowhere, created after the intent (less a clock skew) and holding as
        many requests. None: the create never arrived. One: adopted (its results are checked against the intent's
        custom_ids when read). Several: each is watched until it ends; the one whose results hold the intent's
        custom_ids is adopted. When the list cannot be read the intent stays, holding its requests.
        """
        if not intents:
            return []
        since = min(_created(i) for i in intents) - _SKEW
        try:
            server = self.api.listed(since)
        except BatchError as exc:
            self.report.errors.append(str(exc)[:300])
            return []
        taken = ledger.ids()
        watches: list[_Watch] = []
        for intent in intents:
            fits = fitting(server, intent, _created(intent) - _SKEW, taken)
            if not fits:
                ledger.finish(intent.id, "not_submitted", "no server batch fits it: the create never arrived")
            elif len(fits) == 1:
                ledger.adopt(intent.id, fits[0])
                taken.add(fits[0])
                self.report.recovered += 1
                watches.append(_Watch(replace(intent, id=fits[0], status=BATCH_LIVE)))
            else:
                watches += [_Watch(replace(intent, id=f), intent=intent.id) for f in fits]
        return watches

    # -- waiting and reading ----------------------------------------------------------------------------------
    def _wait(
        self,
        ledger: JudgeBatches,
        watches: list[_Watch],
        wanted: dict[str, JudgeRequest],
        history: dict[str, dict[str, str]],
    ) -> None:
        """Poll every watched batch until it ended (read it) or was lost; cancel the ones that outlast the wait."""
        waited, canceled = 0.0, False
        probes = {w.intent for w in watches if w.intent}
        while watches:
            still: list[_Watch] = []
            for watch in watches:
                if watch.intent in self._resolved:
                    continue  # another candidate of the same intent held its requests
                still += self._poll(ledger, watch, wanted, history)
            for intent in probes - self._resolved - {w.intent for w in still}:
                ledger.finish(str(intent), "not_submitted", "no unrecorded server batch of its size holds its requests")
                probes.discard(intent)
            watches = still
            if not watches:
                return
            if waited >= self.max_wait_seconds and not canceled:
                canceled = True
                self._cancel([w for w in watches if w.intent is None], waited)
            elif waited >= 2 * self.max_wait_seconds:
                ids = ", ".join(w.batch.id for w in watches)
                self.report.errors.append(
                    f"batch {ids} not ended {waited:.0f} s after it was due; its traces are judged one by"
                    " one and a later run reads it"
                )
                return
            self.sleep(self.poll_seconds)
            waited += self.poll_seconds

    def _cancel(self, watches: list[_Watch], waited: float) -> None:
        for watch in watches:
            try:
                self.api.cancel(watch.batch.id)
            except BatchError as exc:
                self.report.errors.append(str(exc)[:300])
                continue
            self.report.canceled_by_us += 1
            self.report.errors.append(
                f"batch {watch.batch.id} not ended after {waited:.0f} s: canceled; what it did not process"
                " is judged one by one"
            )

    def _poll(
        self, ledger: JudgeBatches, watch: _Watch, wanted: dict[str, JudgeRequest], history: dict[str, dict[str, str]]
    ) -> list[_Watch]:
        """Poll one batch once: what is still to watch afterwards."""
        batch = watch.batch
        try:
            state = self.api.state(batch.id)
            if not state.ended:
                return [watch]
            items = self.api.results(batch.id, state, batch.keys)
        except BatchNotFound:
            if watch.intent is not None:
                return []  # a candidate gone: nothing of ours to read there
            reason = "deleted server-side (404)"
            ledger.finish(batch.id, "deleted", reason)
            return self._again(ledger, batch, wanted, history, reason)
        except BatchError as exc:
            self.report.errors.append(str(exc)[:300])
            return [watch] if isinstance(exc, BatchTransient) else []  # a run that gives up leaves it for the next
        if {item.custom_id for item in items} != set(batch.keys):
            if watch.intent is None:
                ledger.finish(batch.id, "not_ours", "its results hold other requests than the ones recorded")
                self.report.errors.append(f"batch {batch.id}: its results are not of the requests recorded")
            return []
        if watch.intent is not None:
            ledger.adopt(watch.intent, batch.id)
            self._resolved.add(watch.intent)
            self.report.recovered += 1
        taken = take_results(
            batch, items, state.request_counts, wanted, cache=self.cache, usage=self.usage, model=self.model
        )
        self.report.errors += taken.errors
        ledger.finish(batch.id, BATCH_ENDED, outcome=taken.outcome)
        return []

    def _again(
        self,
        ledger: JudgeBatches,
        lost: JudgeBatch,
        wanted: dict[str, JudgeRequest],
        history: dict[str, dict[str, str]],
        reason: str,
    ) -> list[_Watch]:
        """Submit the requests of a deleted batch again, once (those still wanted and not answered since)."""
        for k in lost.keys:
            history.setdefault(k, {})[lost.id] = "deleted"
        again = [
            k for k in lost.keys
            if k in wanted and self.cache.judge_cache_get(k) is None and may_submit(history.get(k, {}))
        ]
        if not again:
            self.report.errors.append(f"batch {lost.id}: {reason}; its requests are judged one by one")
            return []
        watches = self._submit(
            ledger, wanted, again, lost.slice, attempt=lost.attempt + 1, replaces=lost.id, reason=reason
        )
        if watches:
            ids = ", ".join(w.batch.id for w in watches)
            self.report.resubmitted.append(f"{lost.id}: {reason}; {len(again)} request(s) re-submitted as {ids}")
        return watches


def _created(intent: JudgeBatch) -> datetime:
    return from_text(intent.created_at) if intent.created_at else datetime.now(UTC)


def _slice(window: tuple[Any, Any] | None) -> tuple[str, str] | None:
    if window is None:
        return None
    return to_text(window[0]), to_text(window[1])


def window_prefill(
    prefill: BatchPrefill,
    read: Callable[[Any, Any], Iterable[Any]],
    adapter: Callable[[object], Trace],
    done: Callable[[str], bool],
    judges: Callable[[Trace], bool] | None = None,
    turns: Callable[[], HeldTurns] | None = None,
) -> Callable[[Any, Any], None]:
    """A ``before_window`` hook: read the window, keep the traces not yet done (and, with ``judges``, the ones the
    judged stages will run on: ``[scoring] judge_sample``), prefill their judge replies; ``turns``: sessions' turns
    held as the engine holds them (``HeldTurns.slice_turns``), each judged with its earlier turns' evidence."""

    def before(since: Any, until: Any) -> None:
        earlier: dict[str, Earlier] = {}

        def adapted() -> Iterator[tuple[Trace, Any]]:
            for record in read(since, until):
                try:
                    trace = adapter(record.payload)
                except Exception:  # noqa: BLE001 - reported when the pipeline reads it again
                    continue
                yield trace, record

        chosen = (t for t, _ in adapted() if not done(t.id)) if turns is None else \
            turns().slice_turns(adapted(), since, done, earlier)  # fmt: skip
        prefill.prefill((t for t in chosen if judges is None or judges(t)), (since, until), earlier)

    return before
