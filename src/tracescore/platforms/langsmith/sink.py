"""LangSmith sink: each score becomes one feedback on the trace's root run, idempotently.

Per score key: ``create_feedback(run_id, key, feedback_id=<deterministic>, session_id=…, start_time=…,
extend_trace_retention=False, …)`` through the synchronous ``POST /feedback`` (errors surface here, unlike the
background multipart queue). The id is ``sinks.records.versioned_score_id`` (uuid5 of root run id + key + scorer
version + judge model and agreement), so a repeated write meets a 409 conflict and becomes ``update_feedback``
(``PATCH /feedback/{id}``): re-runs never duplicate. A new version or judge setup is a new feedback, even with the
same value (a PATCH cannot change ``source_info``, where they live); attached to the run's store (``attach``), the
flush then deletes the superseded one (``delete_feedback``, only after the new one is accepted) and those of scores
that became absent, and only ours (``sinks.removals.Mirror``).

Before the first feedback of a key, its feedback config is created from the score catalog (``configs``), so
LangSmith never makes up a default one from that feedback; an existing config that cannot take our values refuses
that key's feedback with one reason. Retries (429 honouring ``Retry-After``, 5xx, timeouts) happen once, in the
client's HTTP adapter (see ``make_client``); a 4xx other than 408/409/429 is sent once and refused with the server's
full detail (a run that does not exist, 404, is one reason for all of them), and the SDK's traceback of each failed
create is not logged (the failure is reported here). Before writing a batch of traces, the feedback they already
carry is listed once, so unchanged scores are skipped and a re-run costs about one request per 100 traces.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tracescore.platforms.langsmith.configs import FeedbackConfigs, catalog_config, wanted_for
from tracescore.platforms.langsmith.failures import describe, permanent, status_of
from tracescore.result import TraceResult
from tracescore.secrets import RedactLogs
from tracescore.sinks.base import RemovalPreview
from tracescore.sinks.records import Rejection, ScoreRecord, WriteReport, records_from_result
from tracescore.sinks.removals import Mirror, Written, preview_removals
from tracescore.sinks.sessions import SessionScores, session_records, settle_session

if TYPE_CHECKING:  # pragma: no cover
    from langsmith import Client

    from tracescore.store.db import Store

def categorical_config(name: str) -> dict[str, Any] | None:
    """The feedback config of a categorical score, from its scorer's declaration (None: not categorical)."""
    config = catalog_config(name)
    return config if config is not None and config.get("type") == "categorical" else None
"""Feedback configs of the categorical keys: the score sent is the category's value, the label its ``value``."""
NO_SUCH_RUN = "POST /feedback -> 404: no such run in this LangSmith workspace (deleted, or read from another one)"
"""The one reason of every feedback for a run that does not exist, so that they are counted together."""

_SOURCE_KEYS = ("scorer_version", "rubric_version", "judge_model", "k", "agreement")
_STOP_AFTER_ATTEMPT = 1
"""The SDK's own retry loop is not used on top of the HTTP adapter's (which already retries 429/5xx/timeouts)."""
LOOKUP_BATCH = 100
"""Traces whose existing feedback is listed in one lookup before writing (the API's page size is 100)."""
_log = logging.getLogger(__name__)


def feedback_comment(record: ScoreRecord) -> str:
    """What a person reading the feedback can act on: the record's comment (the diagnosis' next step included, worded
    as on every platform), else the value."""
    if record.comment:
        return record.comment
    return f"{record.name} = {record.value:g}" if isinstance(record.value, float) else f"{record.name} = {record.value}"


class SdkLogFilter(RedactLogs):
    """The SDK logs every failed ``create_feedback`` at ERROR with its traceback; the caller catches and reports each
    one itself (one line, or one count for many), so those records are dropped. Others are logged without
    credentials (a traceback may repeat a 401 reply that echoes the API key)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.msg != "Error creating feedback" and super().filter(record)


class LangSmithSink:
    """Writes the present scores of each ``TraceResult`` as feedback on its LangSmith root run.

    Results are buffered up to ``lookup_batch`` traces; a flush first lists the feedback those runs already carry (one
    ``GET /feedback?run=…`` page per 100 feedbacks), then creates only what is missing and patches only what changed,
    so re-scoring an overlapping window costs almost nothing. Call ``flush()`` (or use the sink as a context manager)
    at the end.
    """

    def __init__(
        self,
        client: Client,
        *,
        extend_trace_retention: bool = False,
        feedback_source_type: str = "api",
        lookup_batch: int = LOOKUP_BATCH,
        keep_versions: bool = False,
    ) -> None:
        self.client = client
        self.keep_versions = keep_versions
        self.mirror: Mirror | None = None
        self._items: list[tuple[str, TraceResult, list[ScoreRecord]]] = []
        self.extend_trace_retention = extend_trace_retention
        self.feedback_source_type = feedback_source_type
        self.lookup_batch = lookup_batch
        self.report = WriteReport()
        self.created = 0
        self.updated = 0
        self.unchanged = 0
        self._pending: list[tuple[ScoreRecord, str, str]] = []
        self._pending_runs: set[str] = set()
        self._configs = FeedbackConfigs(client)
        self._filter = SdkLogFilter()
        logging.getLogger("langsmith.client").addFilter(self._filter)

    def close(self) -> None:
        """Flush what is buffered and stop filtering the SDK's conflict logs."""
        try:
            self.flush()
        finally:
            logging.getLogger("langsmith.client").removeFilter(self._filter)

    def __enter__(self) -> LangSmithSink:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def attach(self, store: Store, run_id: str) -> None:
        """Record what is written in ``store`` (run ``run_id``) and remove what the latest scoring superseded."""
        self.mirror = Mirror(store, "langsmith", run_id=run_id, keep_versions=self.keep_versions)

    def preview(self, store: Store, trace_ids: Sequence[str]) -> RemovalPreview:
        """For ``--dry-run``: our feedback on these runs and what the next write supersedes (nothing is sent)."""
        return preview_removals(store, "langsmith", trace_ids, keep_versions=self.keep_versions, versioned_ids=True)

    def write(self, result: TraceResult) -> list[Rejection]:
        """Queue one result's present scores (written at the next flush); returns those refused right away."""
        found = result.metadata.get("langsmith")
        ls: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
        run_id = str(ls.get("run_id") or result.trace_id or "")
        records, refused = records_from_result(
            result, platform_trace_id=run_id or None, keep_versions=self.keep_versions, versioned_ids=True
        )
        self.report.rejected.extend(refused)
        if self.mirror is not None and run_id and not refused:
            self._items.append((run_id, result, records))
            self._pending_runs.add(run_id)
        rejected = list(refused)
        session_id = ls.get("session_id")
        for record in records:
            if not session_id:
                rejected.append(
                    self._reject(
                        record,
                        "trace has no LangSmith session (project) id; LangSmith needs "
                        "it for run feedback: read traces with --source langsmith",
                    )
                )
                continue
            self._pending.append((record, run_id, str(session_id)))
            self._pending_runs.add(run_id)
        if len(self._pending_runs) >= self.lookup_batch:
            rejected += self.flush()
        return rejected

    def flush(self) -> list[Rejection]:
        """Write everything queued: create the missing feedback, patch the changed, skip the unchanged; then (when
        attached) delete our feedback the accepted ones superseded or that vanished."""
        pending, runs, items = self._pending, sorted(self._pending_runs), self._items
        self._pending, self._pending_runs, self._items = [], set(), []
        if not pending and not items:
            return []
        ours = self.mirror.ours(runs) if self.mirror is not None else {}
        keys = {record.name for record, _, _ in pending} | {w.name for found in ours.values() for w in found}
        existing = self._existing(runs, sorted(keys))
        configs = self._config_problems({record.name for record, _, _ in pending})
        rejected = []
        for record, run_id, session_id in pending:
            problem = configs.get(record.name) or self._write_one(record, run_id, session_id, existing)
            if problem:
                rejected.append(self._reject(record, problem, retryable=isinstance(problem, _Undelivered)))
        if self.mirror is not None:
            self._mirror(self.mirror, pending, items, rejected, ours, existing)
        return rejected

    def write_sessions(self, sessions: Sequence[SessionScores]) -> None:
        """LangSmith keeps no feedback a client can write on a thread (SDK 0.15.1: ``create_feedback`` takes a run or
        a trace; thread-level feedback is only read, as ``contains_thread_feedback``), so each session's scores are
        feedback on its last turn's root run; when a later turn arrives they move to it (new ids, the earlier ones
        removed once the new are accepted). Counts into ``report``."""
        for session in sessions:
            found = session.last.get("langsmith")
            ls: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
            run_id = str(ls.get("run_id") or (session.turn_ids[-1] if session.turn_ids else ""))
            records = session_records(session, on_run=run_id, keep_versions=self.keep_versions)
            project = ls.get("session_id")
            if not project or not run_id:
                for record in records:
                    self._reject(record, "the session's last turn has no LangSmith run and project id: read traces"
                                 " with --source langsmith")  # fmt: skip
                continue
            existing = self._existing([run_id], sorted({r.name for r in records}))
            configs = self._config_problems({r.name for r in records})
            refused = set()
            for record in records:
                problem = configs.get(record.name) or self._write_one(record, run_id, str(project), existing)
                if problem:
                    refused.add(self._reject(record, problem, retryable=isinstance(problem, _Undelivered)).id)
            accepted = {r.id for r in records} - refused
            if self.mirror is not None:
                settle_session(self.mirror.ledger, self.mirror.run_id, session, records, accepted,
                               lambda w: self._delete(w.score_id), self.report, platform="LangSmith")  # fmt: skip

    def _mirror(
        self,
        mirror: Mirror,
        pending: list[tuple[ScoreRecord, str, str]],
        items: list[tuple[str, TraceResult, list[ScoreRecord]]],
        rejected: list[Rejection],
        ours: dict[str, list[Written]],
        existing: dict[str, Any] | None,
    ) -> None:
        refused = {r.id for r in rejected}
        accepted = [record for record, _, _ in pending if record.id not in refused]
        removals = mirror.plan(items, {r.id for r in accepted}, ours)

        def remove(written: Written) -> str | None:
            if existing is not None and written.score_id not in existing:
                return None  # not on the platform (already removed, or never delivered): nothing to send
            return self._delete(written.score_id)

        mirror.settle(accepted, removals, remove, self.report, platform="LangSmith", scores="feedback", trace="run")

    def _delete(self, feedback_id: str) -> str | None:
        """``DELETE /feedback/{id}`` (the client's retries); None when done or already gone (404)."""
        from langsmith.utils import LangSmithError, LangSmithNotFoundError

        try:
            self.report.requests += 1
            self.client.delete_feedback(feedback_id)
        except LangSmithNotFoundError:
            return None
        except (LangSmithError, OSError, ValueError) as exc:
            return f"delete_feedback failed: {self._said(exc)}"
        return None

    def summary(self) -> dict[str, Any]:
        """For the run log: created/updated/unchanged counts next to the shared write report (``removed`` in it)."""
        return {"created": self.created, "updated": self.updated, "unchanged": self.unchanged} | self.report.as_dict()

    def _existing(self, run_ids: list[str], keys: list[str]) -> dict[str, Any] | None:
        """Our keys' feedback already on these runs, by id; None when the lookup fails (then every write is a
        create, and a conflict an update)."""
        from langsmith.utils import LangSmithError

        try:
            self.report.requests += 1
            return {str(f.id): f for f in self.client.list_feedback(run_ids=run_ids, feedback_key=keys)}
        except (LangSmithError, OSError, ValueError) as exc:
            _log.warning("cannot list existing LangSmith feedback (%s); writing every score", self._said(exc))
            return None

    def _reject(self, record: ScoreRecord, reason: str, *, retryable: bool = False) -> Rejection:
        self.report.reject(record, reason, retryable=retryable)
        return self.report.rejected[-1]

    def _said(self, exc: BaseException) -> str:
        return describe(exc, secret=getattr(self.client, "api_key", None))

    def _config_problems(self, keys: set[str]) -> dict[str, str]:
        """Each key's feedback config made sure of before its first feedback (listed once, missing ones created
        from the catalog): the reason to refuse the keys whose config cannot take our values. When LangSmith
        cannot be asked, those keys' feedback is undelivered this time (a re-run asks again), or refused when it
        said no (a 4xx other than 408/409/429)."""
        from langsmith.utils import LangSmithError

        before = self._configs.requests
        try:
            return self._configs.ensure(wanted_for(keys))
        except (LangSmithError, OSError, ValueError) as exc:
            text = f"cannot check the feedback configs: {self._said(exc)}"
            return dict.fromkeys(wanted_for(keys), text if permanent(exc) else _Undelivered(text))
        finally:
            self.report.requests += self._configs.requests - before

    def _refusal(self, what: str, exc: BaseException) -> str:
        """Why a write failed: a refusal (sent once, the server's full words) or undelivered after the retries."""
        if status_of(exc) == 404 and what == "create_feedback":
            return NO_SUCH_RUN
        if permanent(exc):
            return f"{what} refused: {self._said(exc)}"
        return _Undelivered(f"{what} failed: {self._said(exc)}")

    def _write_one(
        self, record: ScoreRecord, run_id: str, session_id: str, existing: dict[str, Any] | None
    ) -> str | None:
        from langsmith.utils import LangSmithConflictError, LangSmithError

        score, value = _score_value(record)
        comment = feedback_comment(record)
        stored = existing.get(record.id) if existing is not None else None
        if stored is not None and _same(stored, score, value, comment):
            self.unchanged += 1
            self.report.accepted += 1
            return None
        if stored is None:
            source_info = {k: record.metadata[k] for k in _SOURCE_KEYS if k in record.metadata}
            source_info["tool"] = "tracescore"
            try:
                self.report.requests += 1
                self.client.create_feedback(
                    run_id,
                    record.name,
                    score=score,
                    value=value,
                    comment=comment,
                    feedback_id=record.id,
                    source_info=source_info,
                    feedback_source_type=self.feedback_source_type,
                    session_id=session_id,
                    start_time=record.timestamp,
                    extend_trace_retention=self.extend_trace_retention,
                    stop_after_attempt=_STOP_AFTER_ATTEMPT,
                )
                self.created += 1
                self.report.accepted += 1
                return None
            except LangSmithConflictError:
                pass  # the id exists (our own create retried after a lost answer, or a concurrent run): update it
            except (LangSmithError, OSError, ValueError) as exc:
                return self._refusal("create_feedback", exc)
        try:
            self.report.requests += 1
            self.client.update_feedback(record.id, score=score, value=value, comment=comment)
        except (LangSmithError, OSError, ValueError) as exc:
            return self._refusal("update_feedback", exc)
        self.updated += 1
        self.report.accepted += 1
        return None


class _Undelivered(str):
    """The reason of a feedback not written after the SDK's retries (retryable, unlike a refusal)."""


def _same(stored: Any, score: float | None, value: str | None, comment: str) -> bool:
    """The stored feedback already says this (scores compared as LangSmith stores them: 4 decimals)."""
    have = stored.score
    want = None if score is None else round(score, 4)
    same_score = (have is None and want is None) or (
        have is not None and want is not None and abs(float(have) - want) < 1e-9
    )
    return same_score and stored.value == value and (stored.comment or "") == comment


def _score_value(record: ScoreRecord) -> tuple[float | None, str | None]:
    """(score, value) as LangSmith feedback wants them: numbers as ``score``; a category as its value and label."""
    if isinstance(record.value, str):
        config = categorical_config(record.score)
        if config is not None:
            for category in config["categories"]:
                if category["label"] == record.value:
                    return float(category["value"]), record.value
        return None, record.value
    return float(record.value), None

