"""The platform mirrors the latest scoring: after a batch is written, our scores that it superseded or that vanished
are removed, and only ours.

A platform sink hands each written batch to its ``Mirror`` (attached to the run's store). The mirror knows which ids
we wrote (the ``written_scores`` ledger, plus the versioned ids of stores from before it) and plans the removals of a
batch only from what the platform accepted: a superseded score goes once its replacement is accepted (a crash in
between leaves the old value, never a hole); a score absent for a reason that is a fact (``does not apply`` in the
catalog: a label removed, nothing cited, the configuration no longer produces it) goes with that reason recorded; a
score this run could not compute (``not computed``: a judge error, the budget, no key, a scorer that raised) stays
as it is, counted ``kept_stale``. Removing is idempotent (an id already gone counts as done); the ledger events are
queued after every request, so the store's write lock is never held over the network.
With ``[sinks] keep_versions`` the names carry the version and older versions stay side by side.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tracescore.catalog import NOT_COMPUTED, Reasons, absence_kind
from tracescore.errors import SinkError
from tracescore.result import TraceResult
from tracescore.scorers.trajectory import RENAMED
from tracescore.sinks.base import RemovalPreview
from tracescore.sinks.records import (
    ScoreRecord,
    WriteReport,
    score_id,
    scorer_version,
    version_of,
    versioned_score_id,
)
from tracescore.store.db import Store
from tracescore.store.written import Written as Written, WrittenScores

_STALE = "(kept: not computed this time)"


@dataclass(frozen=True)
class Removal:
    """One score of ours to remove from the platform, and why."""

    written: Written
    reason: str


class Mirror:
    """Records what one platform accepted and removes our scores the latest scoring no longer has."""

    def __init__(self, store: Store, platform: str, *, run_id: str | None, keep_versions: bool = False) -> None:
        self.ledger = WrittenScores(store, platform)
        self.run_id = run_id
        self.keep_versions = keep_versions
        self.stale = 0  # scores of ours that plan() left standing because this run did not compute them; finish()
        # counts them into the report

    def ours(self, trace_ids: Sequence[str]) -> dict[str, list[Written]]:
        """Our live ids on these traces, by trace: the ledger's, plus versioned ids of pre-ledger runs not handled."""
        found: dict[str, list[Written]] = {}
        for w in self.ledger.live(trace_ids):
            found.setdefault(w.trace_id, []).append(w)
        old = [
            Written(versioned_score_id(t, n, version_of(n, m)), t, n, n, version_of(n, m))
            for t, n, m in self.ledger.legacy(trace_ids)
        ]
        handled = self.ledger.known([w.score_id for w in old])
        for w in dict.fromkeys(w for w in old if w.score_id not in handled):
            found.setdefault(w.trace_id, []).append(w)
        return found

    def plan(
        self, items: Sequence[tuple[str, TraceResult, list[ScoreRecord]]], accepted: set[str],
        ours: dict[str, list[Written]] | None = None,
    ) -> list[Removal]:
        """What to remove after this batch: ``items`` are (platform trace id, result, its records), ``accepted`` the
        record ids the platform took. The scores left standing as not computed this time are counted in ``stale``."""
        ours = self.ours([t for t, _, _ in items]) if ours is None else ours
        out: list[Removal] = []
        for trace_id, result, records in items:
            current = {r.score: r for r in records}
            ids = {r.id for r in records}
            for w in ours.get(trace_id, []):
                if w.score_id in ids:
                    continue
                name = RENAMED.get(w.score, w.score)  # a score of ours under an old name: as an older version
                reason = self._why(w, name, result, current.get(name), accepted)
                if reason is _STALE:
                    self.stale += 1
                elif reason is not None:
                    out.append(Removal(w, reason))
        return out

    def _why(
        self, w: Written, name: str, result: TraceResult, record: ScoreRecord | None, accepted: set[str]
    ) -> str | None:
        """Why ``w`` goes (None: it stays; ``_STALE``: it stays, not computed this time); ``name``: its score's name
        now (``RENAMED``)."""
        if record is not None:  # the score is present now, under another id
            if self.keep_versions or record.id not in accepted:
                return None  # versions side by side; or the replacement is not on the platform yet
            return f"superseded by {record.name} version {record.version} ({record.id})"
        score = result.scores.get(name)
        if score is None:
            # not produced at all: a scorer failed on this trace (not computed), or the setup no longer has the score
            if result.errors:
                return _STALE
            return None if self.keep_versions else Reasons.SETUP_DROPPED.text
        if score.value is not None:
            return None  # present but not writable (refused before sending): keep the old value
        if self.keep_versions and w.name != f"{w.score}@{scorer_version(score)}":
            return None  # another version: kept side by side
        if absence_kind(score.reason, w.score) == NOT_COMPUTED:
            return _STALE  # a failure is not a verdict: the earlier score stands until a run computes it again
        return f"absent: {score.reason}"

    def finish(
        self,
        accepted: Sequence[ScoreRecord],
        removals: Sequence[Removal],
        remove: Callable[[Written], str | None],
        report: WriteReport,
    ) -> list[tuple[Removal, str]]:
        """Remove each planned score (``remove`` answers None when done or already gone, else why it failed), then
        queue the ledger events of the accepted records and the done removals; returns the failed removals."""
        failed: list[tuple[Removal, str]] = []
        done: list[tuple[Written, str]] = []
        for removal in removals:
            problem = remove(removal.written)
            if problem is None:
                done.append((removal.written, removal.reason))
                report.removed += 1
            else:
                failed.append((removal, problem))
        report.kept_stale, self.stale = report.kept_stale + self.stale, 0
        self.ledger.wrote(
            [Written(r.id, r.trace_id, r.name, r.score, r.version or None) for r in accepted], self.run_id
        )
        self.ledger.removed(done, self.run_id)
        return failed

    def settle(
        self,
        accepted: Sequence[ScoreRecord],
        removals: Sequence[Removal],
        remove: Callable[[Written], str | None],
        report: WriteReport,
        *,
        platform: str,
        scores: str = "scores",
        trace: str = "trace",
    ) -> None:
        """``finish``, then a SinkError naming the first removal that failed (in the platform's words: its name,
        what a score is called there and what it hangs on), so the run stops and a re-run retries."""
        failed = self.finish(accepted, removals, remove, report)
        if failed:
            removal, reason = failed[0]
            raise SinkError(
                f"{platform} did not remove {len(failed)} of our superseded or vanished {scores} (first: {trace}"
                f" {removal.written.trace_id} {removal.written.name}: {reason}); run again to retry"
            )


def preview_removals(
    store: Store, platform: str, trace_ids: Sequence[str], *, keep_versions: bool, versioned_ids: bool = False
) -> RemovalPreview:
    """For ``--dry-run``: our scores on these traces, and those the next write supersedes whatever the new values
    (ids of older releases and, without ``keep_versions``, versioned names), by name. Scores that become absent on
    the re-score for a reason that does not apply, and (with ``versioned_ids``) older versions, are removed too; only
    scoring can tell which."""
    mirror = Mirror(store, platform, run_id=None, keep_versions=keep_versions)
    ours = [w for found in mirror.ours(trace_ids).values() for w in found]
    def superseded(w: Written) -> bool:
        return (w.name != w.score or w.score in RENAMED
                or (not versioned_ids and w.score_id != score_id(w.trace_id, w.score)))  # fmt: skip

    gone = [] if keep_versions else [w for w in ours if superseded(w)]
    return {
        "ours": len(ours),
        "superseded": len(gone),
        "superseded_by_name": dict(sorted(Counter(w.name for w in gone).items())),
    }

