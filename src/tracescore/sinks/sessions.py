"""Session scores on their way to a platform: one record per session and name, and the removals a re-score brings.

A session's scores (``SessionScores``) become ``ScoreRecord``s typed and described by the same declarations as trace
scores (the catalog's view of the session scorer), under the ledger key ``session:<id>`` (``session_key``) and a
fixed timestamp: the session's first turn's start time, which a later turn does not change. The record id is
``score_id(session_key, name)``: one id per session and name, so a grown session's scores replace the earlier ones
in place (a platform that upserts by id, name and timestamp). A platform that hangs them on a run instead (its last
turn's root run) adds that run to the id (``on_run``), and the earlier ones are removed once
the new ones are accepted. The removal rules are those of trace scores (``sinks/removals``): a score absent for a
reason that does not apply goes, one not computed this time stays.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from tracescore.catalog import NOT_COMPUTED, Reasons, absence_kind
from tracescore.errors import SinkError
from tracescore.result import TraceResult
from tracescore.scores import Score
from tracescore.sinks.records import ScoreRecord, WriteReport, records_from_result, score_id
from tracescore.store.written import Written, WrittenScores


def session_key(session_id: str) -> str:
    """The ledger's key of a session's scores (never a trace id: a platform trace id has no ``session:`` prefix)."""
    return f"session:{session_id}"


@dataclass(frozen=True)
class SessionScores:
    """One session's scores: its id, its first turn's start time (the scores' fixed timestamp), its turns' trace
    ids oldest first, the scores, and the last turn's result metadata (where a platform without session scores
    finds the run to hang them on: its run and project ids)."""

    session_id: str
    first_at: datetime
    turn_ids: tuple[str, ...]
    scores: Sequence[Score] = field(default_factory=tuple)
    last: Mapping[str, Any] = field(default_factory=dict)

    def line(self) -> dict[str, Any]:
        """The session's result line: ``session_id``, ``turns`` (trace ids), ``scores``, ``missing``, ``comments``."""
        out: dict[str, Any] = {"session_id": self.session_id, "turns": list(self.turn_ids)}
        out["scores"] = {s.name: s.value for s in self.scores if s.value is not None}
        out["missing"] = {s.name: s.reason or "not computed" for s in self.scores if s.value is None}
        comments = {s.name: s.comment for s in self.scores if s.comment}
        return out | ({"comments": comments} if comments else {})


def session_records(
    session: SessionScores,
    *,
    extra_metadata: Mapping[str, Any] | None = None,
    on_run: str | None = None,
    keep_versions: bool = False,
) -> list[ScoreRecord]:
    """The records of ``session``'s present scores (absent ones are never written). ``on_run``: the platform run
    they hang on (part of the id, so a score moved to a later turn is a new one)."""
    key = session_key(session.session_id)
    carrier = TraceResult(key, {s.name: s for s in session.scores}, timestamp=session.first_at)
    records, refused = records_from_result(carrier, extra_metadata=extra_metadata, keep_versions=keep_versions)
    assert not refused  # a key and a timestamp are always given
    out = []
    for r in records:
        rid = score_id(f"{key}\x1f{on_run}" if on_run else key, r.name)
        out.append(ScoreRecord(rid, key, r.name, r.value, r.data_type, r.timestamp, r.comment, r.metadata, r.version,
                               session_id=session.session_id))  # fmt: skip
    return out


def plan_session_removals(
    ledger: WrittenScores, session: SessionScores, records: Sequence[ScoreRecord], accepted: set[str]
) -> list[tuple[Written, str]]:
    """Our live scores on ``session`` to remove now that ``records`` were sent (``accepted``: the ids taken): one
    superseded by an accepted record under another id, one absent for a reason that does not apply, one the scorer
    no longer produces; one not computed this time stays."""
    key = session_key(session.session_id)
    current = {r.score: r for r in records}
    ids = {r.id for r in records}
    scores = {s.name: s for s in session.scores}
    out: list[tuple[Written, str]] = []
    for w in ledger.live([key]):
        if w.score_id in ids:
            continue
        record = current.get(w.score)
        if record is not None:
            if record.id in accepted:
                out.append((w, f"superseded by {record.name} ({record.id})"))
            continue
        found = scores.get(w.score)
        if found is None:
            out.append((w, Reasons.SETUP_DROPPED.text))
        elif found.value is None and absence_kind(found.reason, w.score) != NOT_COMPUTED:
            out.append((w, f"absent: {found.reason}"))
    return out


def settle_session(
    ledger: WrittenScores,
    run_id: str | None,
    session: SessionScores,
    records: Sequence[ScoreRecord],
    accepted: set[str],
    remove: Callable[[Written], str | None],
    report: WriteReport,
    *,
    platform: str,
) -> None:
    """After ``records`` were sent: remove what they superseded or what no longer applies (``remove`` answers None
    when done or already gone), then queue the ledger events; SinkError names a removal that failed."""
    done = []
    for written, why in plan_session_removals(ledger, session, records, accepted):
        problem = remove(written)
        if problem is not None:
            raise SinkError(f"{platform} did not remove our session score {written.name} of session"
                            f" {session.session_id}: {problem}; run again to retry")  # fmt: skip
        done.append((written, why))
        report.removed += 1
    ledger.wrote(written_rows(records, accepted), run_id)
    ledger.removed(done, run_id)


def written_rows(records: Sequence[ScoreRecord], accepted: set[str]) -> list[Written]:
    """The ledger rows of the accepted records."""
    return [Written(r.id, r.trace_id, r.name, r.score, r.version or None) for r in records if r.id in accepted]
