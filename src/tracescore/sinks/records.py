"""Platform-agnostic score records: what every platform sink writes, built once from a ``TraceResult``.

A ``ScoreRecord`` has a deterministic id (uuid5 of platform trace id + score name: one id per trace and name, so a
re-score after a rubric or scorer change overwrites the old value instead of adding a second score) and a fixed
timestamp (the trace's start time, timezone-aware UTC), so re-scoring any window on any day upserts instead of
duplicating. With ``keep_versions`` the name carries the version (``grounding.rate@grounding-1``): old and new side
by side. Absent scores are never written (they are not 0). ``batches`` cuts records into request bodies under a
byte limit; ``WriteReport`` tells the run summary what was accepted, rejected (id, name, reason) and retried.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from tracescore.catalog import entry
from tracescore.result import TraceResult
from tracescore.scorers.diagnosis import DIAGNOSIS
from tracescore.scores import Score

DataType = Literal["NUMERIC", "BOOLEAN", "CATEGORICAL"]
SCORE_ID_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://tracescore.dev/score-id")
COMMENT_LIMIT = 2000
_FIRST_TRACES = 5  # traces named on the line of one reason of rejection
_KINDS = 5  # reasons given a line each; the rest are counted on one more line
_META_KEYS = ("scorer_version", "rubric_version", "judge_model", "k", "agreement")
_SETUP_KEYS = ("judge_model", "agreement")


def score_id(platform_trace_id: str, name: str) -> str:
    """The deterministic id of one score name on one trace: every run and every version writes the same id."""
    return str(uuid.uuid5(SCORE_ID_NAMESPACE, f"{platform_trace_id}\x1f{name}"))


def versioned_score_id(
    platform_trace_id: str, name: str, version: str, setup: Mapping[str, Any] | None = None
) -> str:
    """uuid5 of trace + name + version (+ the judge ``setup``: model and agreement): the LangSmith feedback id. Its
    update cannot change ``source_info``, where version, judge model and agreement live, so a score whose version or
    judge setup changed is a new feedback (the old one removed after), even when its value stayed the same. Without
    a setup (a deterministic score), the id of older releases."""
    key = f"{platform_trace_id}\x1f{name}\x1f{version}"
    if setup:
        key += "\x1f" + json.dumps(dict(setup), sort_keys=True, separators=(",", ":"), default=str)
    return str(uuid.uuid5(SCORE_ID_NAMESPACE, key))


def judge_setup(metadata: Mapping[str, Any]) -> dict[str, Any]:
    """What of a score's metadata names the judge setup beyond its version (model, agreement): part of its
    LangSmith id."""
    return {k: metadata[k] for k in _SETUP_KEYS if metadata.get(k) is not None}


def version_of(name: str, metadata: Mapping[str, Any] | None) -> str:
    """The version that changes a score's meaning: its rubric version, else its scorer version, else the catalog's
    version of its name, else ``"1"`` (a score outside the catalog)."""
    for key in ("rubric_version", "scorer_version"):
        value = (metadata or {}).get(key)
        if value:
            return str(value)
    known = entry(name)
    return known.version if known is not None else "1"


def scorer_version(score: Score) -> str:
    """``version_of`` a score."""
    return version_of(score.name, score.metadata)


@dataclass(frozen=True)
class ScoreRecord:
    """One score, ready for any platform: typed value, actionable comment, metadata and fixed timestamp."""

    id: str
    trace_id: str
    name: str
    value: float | str
    data_type: DataType
    timestamp: datetime
    comment: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    version: str = ""
    session_id: str | None = None  # a session's score (``sinks/sessions``): ``trace_id`` is its ledger key

    @property
    def score(self) -> str:
        """The score's own name (``name`` without a ``@version`` suffix)."""
        return self.name.split("@", 1)[0]

    def to_json(self) -> dict[str, Any]:
        """A plain JSON-able dict (platform sinks rename fields as their API wants)."""
        return {
            "id": self.id,
            "trace_id": self.trace_id,
            "name": self.name,
            "value": self.value,
            "data_type": self.data_type,
            "timestamp": self.timestamp.isoformat(),
            "comment": self.comment,
            "metadata": dict(self.metadata),
        }


def _typed(name: str, value: float | bool | str) -> tuple[float | str, DataType]:
    """The value as the platforms store it, typed by the catalog (by the value for a name outside it)."""
    known = entry(name)
    kind: DataType = known.kind if known is not None else (
        "BOOLEAN" if isinstance(value, bool) else "CATEGORICAL" if isinstance(value, str) else "NUMERIC"
    )
    if kind == "CATEGORICAL":
        return str(value), kind
    if kind == "BOOLEAN":
        return (1.0 if value else 0.0), kind
    return float(value), kind


def _utc(moment: datetime) -> datetime:
    """Timezone-aware UTC; a naive time is taken as UTC (never the machine's local offset)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


DIAGNOSIS_ACTIONS: dict[str, str] = {
    "retrieval_fail": "retrieval missed a required document: fix the search (query, index, ranking) first",
    "ungrounded": "retrieval found the documents but the answer is not grounded in them: fix the prompt/model",
    "grounded": "retrieved and grounded",
    "retrieval_pass": "retrieval found the required documents (grounding not judged)",
}
"""The next step each diagnosis row points to: the one wording of the ``diagnosis`` comment on every platform."""


def _comment(score: Score) -> str | None:
    text = score.comment
    if score.name == DIAGNOSIS and isinstance(score.value, str):
        stage, _, verdict = score.value.partition("/")
        said = f"{score.value}: {DIAGNOSIS_ACTIONS.get(stage, score.value)}; answer {verdict}"
        text = f"{said} ({text})" if text else said
    if not text:
        missing = score.metadata.get("missing")
        if isinstance(missing, list | tuple) and missing:
            text = "missing: " + ", ".join(str(m) for m in missing)
    if text and len(text) > COMMENT_LIMIT:
        text = text[: COMMENT_LIMIT - 1] + "…"
    return text or None


def _metadata(score: Score, version: str, extra: Mapping[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {"scorer_version": version}
    for key in _META_KEYS:
        if key in score.metadata and key != "scorer_version":
            meta[key] = score.metadata[key]
    meta.update(extra)
    return json.loads(json.dumps(meta, default=str))  # type: ignore[no-any-return]


def records_from_result(
    result: TraceResult,
    *,
    platform_trace_id: str | None = None,
    extra_metadata: Mapping[str, Any] | None = None,
    keep_versions: bool = False,
    versioned_ids: bool = False,
) -> tuple[list[ScoreRecord], list[Rejection]]:
    """The records to write for one result (present scores only), and the scores that cannot be written, with why.

    ``platform_trace_id`` defaults to ``result.trace_id``; ``keep_versions`` names each ``<name>@<version>``;
    ``versioned_ids`` gives ``versioned_score_id`` ids (one per trace, name, version and judge setup) instead of
    ``score_id``.
    A result without a start time cannot be written idempotently (a re-run on another day would duplicate it), so
    its scores are refused with that reason.
    """
    trace_id = platform_trace_id or result.trace_id
    present = [s for s in result.scores.values() if s.value is not None]
    if not present:
        return [], []
    if not trace_id:
        return [], [Rejection(None, None, s.name, "result has no trace id") for s in present]
    if result.timestamp is None:
        reason = "trace has no start time: without a fixed timestamp a re-run would duplicate the score"
        return [], [Rejection(None, trace_id, s.name, reason) for s in present]
    moment = _utc(result.timestamp)
    records: list[ScoreRecord] = []
    for s in present:
        assert s.value is not None
        version = scorer_version(s)
        value, data_type = _typed(s.name, s.value)
        name = f"{s.name}@{version}" if keep_versions else s.name
        metadata = _metadata(s, version, extra_metadata or {})
        records.append(
            ScoreRecord(
                id=versioned_score_id(trace_id, name, version, judge_setup(metadata))
                if versioned_ids
                else score_id(trace_id, name),
                trace_id=trace_id,
                name=name,
                value=value,
                data_type=data_type,
                timestamp=moment,
                comment=_comment(s),
                metadata=metadata,
                version=version,
            )
        )
    return records, []


def batches(
    records: Iterable[ScoreRecord],
    *,
    max_bytes: int,
    size: Callable[[ScoreRecord], int],
    report: WriteReport | None = None,
    max_items: int | None = None,
) -> Iterator[list[ScoreRecord]]:
    """Cut ``records`` into lists whose JSON-array body (``[a,b,…]``) stays within ``max_bytes``.

    ``size`` is the encoded size of one record as the platform sends it. A record that alone exceeds the limit is
    refused into ``report`` (or raises ValueError without one) instead of being sent to certain rejection.
    """
    batch: list[ScoreRecord] = []
    used = 2  # the brackets
    for record in records:
        n = size(record)
        if n + 2 > max_bytes:
            if report is None:
                raise ValueError(f"score {record.name!r} of trace {record.trace_id!r} is {n} bytes > {max_bytes}")
            report.reject(record, f"score body is {n} bytes, over the {max_bytes}-byte request limit")
            continue
        extra = n + (1 if batch else 0)
        if batch and (used + extra > max_bytes or (max_items is not None and len(batch) >= max_items)):
            yield batch
            batch, used, extra = [], 2, n
        batch.append(record)
        used += extra
    if batch:
        yield batch


@dataclass(frozen=True)
class Rejection:
    """A score the platform (or we, before sending) refused: which one and why."""

    id: str | None
    trace_id: str | None
    name: str
    reason: str
    retryable: bool = False  # not delivered after the bounded retries (a later run may succeed), not refused

    def __str__(self) -> str:
        return f"trace {self.trace_id} score {self.name} ({self.id}): {self.reason}"


@dataclass
class WriteReport:
    """What a sink did in one run: accepted and rejected scores, retried requests, requests and batches sent, notes."""

    accepted: int = 0
    rejected: list[Rejection] = field(default_factory=list)
    retried: int = 0
    requests: int = 0
    batches: int = 0
    removed: int = 0  # our superseded or vanished scores deleted from the platform (a 404 counts: already gone)
    kept_stale: int = 0  # our scores left standing because this run did not compute them (a judge error, no key)
    notes: list[str] = field(default_factory=list)

    def reject(self, record: ScoreRecord, reason: str, *, retryable: bool = False) -> None:
        self.rejected.append(Rejection(record.id, record.trace_id, record.name, reason, retryable))

    @property
    def undelivered(self) -> list[Rejection]:
        """Scores not delivered after the bounded retries (the platform did not refuse them; a re-run may deliver)."""
        return [r for r in self.rejected if r.retryable]

    def as_dict(self) -> dict[str, Any]:
        """For the run summary (stored with the run and printed)."""
        return {
            "accepted": self.accepted,
            "rejected": len(self.rejected),
            "retried": self.retried,
            "requests": self.requests,
            "batches": self.batches,
            "removed": self.removed,
            "kept_stale": self.kept_stale,
            "notes": list(self.notes),
            "rejections": [
                {"id": r.id, "trace_id": r.trace_id, "name": r.name, "reason": r.reason} for r in self.rejected
            ],
        }


def rejection_lines(rejected: Sequence[Rejection]) -> list[str]:
    """What to print of rejected scores: one line per reason, with how many, on how many traces and the first
    traces (all of them are in the run summary of the store); a reason met once as the rejection itself."""
    groups: dict[str, list[Rejection]] = {}
    for rejection in rejected:
        groups.setdefault(rejection.reason, []).append(rejection)
    lines = []
    for reason, group in list(groups.items())[:_KINDS]:
        if len(group) == 1:
            lines.append(f"rejected: {group[0]}")
            continue
        traces = list(dict.fromkeys(str(r.trace_id) for r in group))
        more = f" and {len(traces) - _FIRST_TRACES} more" if len(traces) > _FIRST_TRACES else ""
        lines.append(
            f"rejected: {len(group)} scores of {len(traces)} trace(s): {reason}"
            f" (traces {', '.join(traces[:_FIRST_TRACES])}{more})"
        )
    rest = [r for reason, group in list(groups.items())[_KINDS:] for r in group]
    if rest:
        lines.append(
            f"rejected: {len(rest)} more scores for {len(groups) - _KINDS} other reasons (listed in the run summary"
            " of the store)"
        )
    return lines
