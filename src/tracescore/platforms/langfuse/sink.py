"""Langfuse sink: each score as its own named Langfuse score on the trace, idempotently, in few requests.

Scores go to ``POST /api/public/scores`` as a JSON list, in batches under the body limit (about 1 MiB), each with a
deterministic id and the trace's start time as timestamp, so a re-run on any later day overwrites instead of
duplicating (Langfuse upserts on id + name + calendar date of the timestamp). A 207 answer is read per score: every
rejection lands in the ``WriteReport`` with its id, name and reason. Failed requests are retried (bounded, honouring
Retry-After; re-sending the same ids is safe); a batch that still fails is recorded as rejected, never dropped. Each
score references the score config its scorer's declaration makes (``score_config``: type, range, categories; a
plugin's scores alike), found among the project's configs (listed once per run) or created once.

Attached to the run's store (``attach``), each flush then removes our scores it superseded or that vanished
(``sinks.removals.Mirror``): ``DELETE /api/public/scores/{id}`` per score (Langfuse has no batch delete), through
the same limiter and retries as the writes; a 404 means already gone. The ids carry no version (one per trace and
name), so a re-score after a version change overwrites in place and needs no removal at all.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tracescore.catalog import entry
from tracescore.platforms.langfuse.client import classify_error, describe_error, request_options, retry_policy
from tracescore.platforms.langfuse.settings import LangfuseSettings
from tracescore.result import TraceResult
from tracescore.retry import Verdict, call_with_retries
from tracescore.sinks.base import RemovalPreview
from tracescore.sinks.records import Rejection, ScoreRecord, WriteReport, batches, records_from_result
from tracescore.sinks.removals import Mirror, Written, preview_removals
from tracescore.sinks.sessions import SessionScores, session_records, settle_session

if TYPE_CHECKING:
    from collections.abc import Callable

    from langfuse.api import LangfuseAPI

    from tracescore.store.db import Store


def score_config(name: str) -> dict[str, Any] | None:
    """The Langfuse score config a score's declaration asks for (a versioned ``x@v`` as ``x``): its ``dataType``
    (NUMERIC, BOOLEAN, CATEGORICAL), a numeric's range (``minValue``/``maxValue``, where finite), a categorical's
    categories; None for a name outside the catalog (or a categorical declaring none: Langfuse needs them)."""
    found = entry(name.split("@", 1)[0])
    if found is None or (found.kind == "CATEGORICAL" and not found.categories):
        return None
    want: dict[str, Any] = {"dataType": found.kind}
    if found.kind == "CATEGORICAL":
        want["categories"] = list(found.categories)
    elif found.kind == "NUMERIC":
        want |= {key: float(v) for key, v in (("minValue", found.low), ("maxValue", found.high)) if math.isfinite(v)}
    return want


def _fits(config: Any, want: Mapping[str, Any]) -> bool:
    """An existing config takes every value the declaration allows: same type, range containing ours (or none),
    every category of ours."""
    if str(config.data_type) != want["dataType"] or config.is_archived:
        return False
    if want["dataType"] == "CATEGORICAL":
        return {c.label for c in (config.categories or [])} >= set(want["categories"])
    low, high = config.min_value, config.max_value
    return (low is None or ("minValue" in want and low <= want["minValue"])) and (
        high is None or ("maxValue" in want and high >= want["maxValue"])
    )


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_INDEX = re.compile(r"\[(\d+)\]")


def score_body(record: ScoreRecord, *, config_id: str | None = None, environment: str | None = None) -> dict[str, Any]:
    """The JSON object Langfuse expects for one score (camelCase, timezone-aware ISO timestamp)."""
    body: dict[str, Any] = {
        "id": record.id,
        **({"sessionId": record.session_id} if record.session_id else {"traceId": record.trace_id}),
        "name": record.name,
        "value": record.value,
        "dataType": record.data_type,
        "timestamp": record.timestamp.isoformat(),
        "metadata": dict(record.metadata),
    }
    if record.comment:
        body["comment"] = record.comment
    if config_id:
        body["configId"] = config_id
    if environment:
        body["environment"] = environment
    return body


class LangfuseScoreSink:
    """Buffers score records of many traces and sends them in as few requests as the body limit allows."""

    def __init__(
        self,
        client: LangfuseAPI,
        settings: LangfuseSettings | None = None,
        *,
        report: WriteReport | None = None,
        extra_metadata: Mapping[str, Any] | None = None,
        sleep: Callable[[float], None] | None = None,
        keep_versions: bool = False,
    ) -> None:
        self.client = client
        self.keep_versions = keep_versions
        self.mirror: Mirror | None = None
        self._written: list[tuple[str, TraceResult, list[ScoreRecord]]] = []  # since the last removal pass
        self._sent: list[ScoreRecord] = []
        self._unsure: set[str] = set()  # ids of batches the server refused in part without naming which
        self.settings = settings or LangfuseSettings()
        self.report = report if report is not None else WriteReport()
        self._rejected_from = len(self.report.rejected)
        self.extra_metadata = dict(extra_metadata or {})
        self._buffer: list[ScoreRecord] = []
        self._buffered_bytes = 2
        self._config_ids: dict[str, str | None] = {}
        self._configs: list[Any] | None = None  # the project's score configs, listed once
        self._policy = retry_policy(self.settings.max_attempts, self.settings.backoff)
        self._options = request_options(self.settings.timeout)
        self._sleep = {"sleep": sleep} if sleep is not None else {}

    # -- public -------------------------------------------------------------------------------------------------
    def attach(self, store: Store, run_id: str) -> None:
        """Record what is written in ``store`` (run ``run_id``) and remove what the latest scoring superseded."""
        self.mirror = Mirror(store, "langfuse", run_id=run_id, keep_versions=self.keep_versions)

    def preview(self, store: Store, trace_ids: Sequence[str]) -> RemovalPreview:
        """For ``--dry-run``: our scores on these traces and those the next write supersedes (nothing is sent)."""
        return preview_removals(store, "langfuse", trace_ids, keep_versions=self.keep_versions)

    def write(self, result: TraceResult) -> None:
        """Queue the present scores of one result; full batches are sent as they fill."""
        records, refused = records_from_result(
            result, extra_metadata=self.extra_metadata, keep_versions=self.keep_versions
        )
        self.report.rejected.extend(refused)
        if self.mirror is not None and result.trace_id and not refused:
            self._written.append((result.trace_id, result, records))
        for record in records:
            size = self._size(record)
            if self._buffer and self._buffered_bytes + size + 1 > self.settings.batch_bytes:
                self._send_buffer()
            self._buffer.append(record)
            self._buffered_bytes += size + 1

    def flush(self) -> None:
        """Send everything buffered, then remove what the accepted scores superseded (when attached)."""
        self._send_buffer()
        if self.mirror is not None:
            self._mirror(self.mirror)

    def _send_buffer(self) -> None:
        pending, self._buffer, self._buffered_bytes = self._buffer, [], 2
        if self.mirror is not None:
            self._sent += pending
        for batch in batches(pending, max_bytes=self.settings.batch_bytes, size=self._size, report=self.report):
            self._send(batch)

    def _mirror(self, mirror: Mirror) -> None:
        """After a flush: plan the removals from what was accepted, delete them, queue the ledger events."""
        items, sent, self._written, self._sent = self._written, self._sent, [], []
        refused = self.report.rejected[self._rejected_from :]
        self._rejected_from = len(self.report.rejected)
        refused_ids = {r.id for r in refused if r.id}
        refused_traces = {r.trace_id for r in refused if r.id is None}
        unsure, self._unsure = self._unsure, set()
        accepted = [
            r for r in sent if r.id not in refused_ids and r.id not in unsure and r.trace_id not in refused_traces
        ]
        removals = mirror.plan(items, {r.id for r in accepted})
        mirror.settle(accepted, removals, self._remove, self.report, platform="Langfuse")

    def _remove(self, written: Written) -> str | None:
        """``DELETE /api/public/scores/{id}`` with the writes' retries; None when done or already gone (404)."""
        from langfuse.api.core.api_error import ApiError

        try:
            self._call(lambda: self.client.scores.delete(written.score_id, request_options=self._options))
        except ApiError as exc:
            return None if exc.status_code == 404 else describe_error(exc)
        except Exception as exc:  # noqa: BLE001 - reported with the run's stop, never a traceback
            return describe_error(exc)
        return None

    def write_sessions(self, sessions: Sequence[SessionScores]) -> None:
        """Write each session's scores as Langfuse session scores (``sessionId``, no trace; one id per session and
        name: a grown session's scores are replaced in place), then, when attached, remove our earlier ones that do
        not apply any more and record what was written. Counts into ``report``."""
        for session in sessions:
            records = session_records(session, extra_metadata=self.extra_metadata, keep_versions=self.keep_versions)
            before = len(self.report.rejected)
            for batch in batches(records, max_bytes=self.settings.batch_bytes, size=self._size, report=self.report):
                self._send(batch)
            refused = self.report.rejected[before:]
            unsure, self._unsure = self._unsure, set()
            if any(r.id is None for r in refused):
                unsure |= {r.id for r in records}
            accepted = {r.id for r in records} - {r.id for r in refused} - unsure
            if self.mirror is not None:
                settle_session(self.mirror.ledger, self.mirror.run_id, session, records, accepted, self._remove,
                               self.report, platform="Langfuse")  # fmt: skip

    def close(self) -> WriteReport:
        """Flush and return the report for the run summary."""
        self.flush()
        return self.report

    # -- internals ----------------------------------------------------------------------------------------------
    def _body(self, record: ScoreRecord) -> dict[str, Any]:
        config_id = self._config_id(record.name)
        return score_body(record, config_id=config_id, environment=self.settings.score_environment)

    def _size(self, record: ScoreRecord) -> int:
        # an upper bound of what the SDK sends: ASCII-escaped JSON with spaces, plus room for a config id
        return len(json.dumps(score_body(record, environment=self.settings.score_environment))) + 64

    def _call(self, fn: Callable[[], Any]) -> Any:
        def on_retry(attempt: int, verdict: Verdict) -> None:
            self.report.retried += 1

        def counted() -> Any:
            self.report.requests += 1
            return fn()

        return call_with_retries(
            counted, classify=classify_error, policy=self._policy, on_retry=on_retry, **self._sleep
        )

    def _send(self, batch: Sequence[ScoreRecord]) -> None:
        from langfuse.api import CreateScoreRequest

        self.report.batches += 1
        bodies = [self._body(r) for r in batch]
        request = [CreateScoreRequest.model_validate(b) for b in bodies]
        before = self.report.requests
        try:
            response = self._call(
                lambda: self.client.scores.with_raw_response.create(request=request, request_options=self._options)
            )
        except Exception as exc:
            sent = self.report.requests - before  # a 401 is not retried: one request, not max_attempts
            reason = f"not delivered after {sent} attempt{'s' if sent != 1 else ''}: {describe_error(exc)}"
            for record in batch:
                self.report.reject(record, reason, retryable=True)
            return
        data = response.data
        if getattr(data, "rejected", None) is not None:  # the 207 shape: {accepted, rejected, errors}
            self._partial(batch, data)
        else:
            self.report.accepted += len(batch)

    def _partial(self, batch: Sequence[ScoreRecord], data: Any) -> None:
        """A 207: attribute each error to its score by id (or list index) in the message; never drop one."""
        errors = list(getattr(data, "errors", None) or [])
        by_id = {r.id: r for r in batch}
        rejected: set[str] = set()
        unattributed: list[str] = []
        for error in errors:
            message = str(getattr(error, "message", error))
            extra = error.model_extra if hasattr(error, "model_extra") and error.model_extra else {}
            record = by_id.get(str(extra.get("id"))) if extra.get("id") else None
            if record is None:
                record = next((by_id[m] for m in _UUID.findall(message) if m in by_id), None)
            if record is None and (match := _INDEX.search(message)) and int(match.group(1)) < len(batch):
                record = batch[int(match.group(1))]
            if record is None or record.id in rejected:
                unattributed.append(message)
                continue
            rejected.add(record.id)
            self.report.reject(record, message)
        count = int(getattr(data, "rejected", len(errors)) or 0)
        if unattributed or count > len(rejected):
            # the server refused more than it named: say so for the whole batch rather than guess (and remove nothing
            # these scores would supersede: any of them may be the one missing)
            self._unsure.update(r.id for r in batch)
            names = ", ".join(sorted({r.name for r in batch if r.id not in rejected}))
            reason = "; ".join(unattributed) or "rejected without a message"
            self.report.rejected.append(
                Rejection(
                    None,
                    batch[0].trace_id if batch else None,
                    names or "?",
                    f"{count - len(rejected)} score(s) of this batch rejected, not named: {reason}",
                )
            )
        self.report.accepted += max(0, len(batch) - max(count, len(rejected)))

    def _config_id(self, name: str) -> str | None:
        """The id of the score config for ``name`` made from its declaration: an existing one that fits, else
        created once; without one (outside the catalog, or Langfuse refused) the scores still go out."""
        if name in self._config_ids:
            return self._config_ids[name]
        want = score_config(name)
        config_id = None
        if want is not None:
            try:
                config_id = self._find_config(name, want) or self._create_config(name, want)
            except Exception as exc:  # without a config the scores still go out; Langfuse infers the type
                self.report.notes.append(f"score config {name!r} unavailable: {describe_error(exc)}")
        self._config_ids[name] = config_id
        return config_id

    def _find_config(self, name: str, want: Mapping[str, Any], *, again: bool = False) -> str | None:
        """An existing config of ``name`` that fits ``want``, from the project's configs listed once per sink."""
        if self._configs is None or again:
            self._configs = self._list_configs()
        return next((str(c.id) for c in self._configs if c.name == name and _fits(c, want)), None)

    def _list_configs(self) -> list[Any]:
        found: list[Any] = []
        page = 1
        while True:

            def list_page(current: int = page) -> Any:
                return self.client.score_configs.get(page=current, limit=100, request_options=self._options)

            listing = self._call(list_page)
            found += listing.data
            if page >= (listing.meta.total_pages or 1):
                return found
            page += 1

    def _create_config(self, name: str, want: Mapping[str, Any]) -> str:
        """Create the config; a retry first looks again, since a timed-out create may have been stored."""
        from langfuse.api import ConfigCategory, ScoreConfigDataType

        attempts = 0

        def create() -> str:
            nonlocal attempts
            attempts += 1
            if attempts > 1:
                found = self._find_config(name, want, again=True)
                if found:
                    return found
            self.report.requests += 1
            given: dict[str, Any] = {"min_value": want.get("minValue"), "max_value": want.get("maxValue")}
            if "categories" in want:
                labels = want["categories"]
                given["categories"] = [ConfigCategory(label=c, value=float(n)) for n, c in enumerate(labels)]
            created = self.client.score_configs.create(
                name=name,
                data_type=ScoreConfigDataType(want["dataType"]),
                description=_description(name),
                request_options=self._options,
                **{k: v for k, v in given.items() if v is not None},
            )
            return str(created.id)

        def on_retry(attempt: int, verdict: Verdict) -> None:
            self.report.retried += 1

        return call_with_retries(create, classify=classify_error, policy=self._policy, on_retry=on_retry, **self._sleep)


def _description(name: str) -> str:
    found = entry(name.split("@", 1)[0])
    return f"tracescore: {found.definition}" if found is not None and found.definition else f"tracescore: {name}"
