"""The ledger of judge batches (``backfill --judge-batch``: Anthropic's Message Batches, OpenAI's Batch API) in
the local store.

A batch is written here before it exists: its request keys (the custom_ids) are recorded as an intent
(``submitting``), then the batch is created, then the intent takes the server's id (``in_progress``). A run killed in
between leaves the intent, which the next run matches against the API's list of batches. Every write commits at once.

Statuses: ``submitting`` (intent; the create may or may not have reached the API), ``in_progress`` (created, results
not read yet), ``ended`` (results read; ``outcome`` holds the API's ``request_counts``, what the results held and what
their replies billed), ``deleted`` (gone server-side before its results were read), ``not_submitted`` (the create
never reached the API), ``not_ours`` (a server batch taken for an intent whose results turned out to hold other
requests).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from tracescore.judge.batches import RESULT_TYPES as RESULT_TYPES
from tracescore.store.db import Store
from tracescore.store.state import to_text

BATCH_SUBMITTING = "submitting"
"""Keys about to be sent as a batch (recorded before the create call, so a kill right after it can be recovered)."""
BATCH_LIVE = "in_progress"
"""A submitted batch whose results have not been read yet (a restart resumes polling it)."""
BATCH_ENDED = "ended"
_CREATED = (BATCH_LIVE, BATCH_ENDED, "deleted")
"""The statuses of a batch that exists (or existed) server-side as ours."""
MAX_SUBMISSIONS = 2
"""A request is sent in a batch at most twice: once, and once more if its batch was deleted server-side."""
_FREE = ("not_submitted", "not_ours", "deleted")
"""Statuses that leave a request free to be submitted (its batch never existed, or is gone unread)."""
BILLED = ("calls", "input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "cost_usd")
"""What an ended batch's outcome keeps of its succeeded replies' cost (``JudgeUsage`` fields)."""


@dataclass(frozen=True)
class JudgeBatch:
    """One Message Batch: its id, the slice it serves, the request keys (custom_ids) it holds, its status."""

    id: str
    scope: str | None
    slice: tuple[str, str] | None
    model: str
    keys: tuple[str, ...]
    status: str
    attempt: int = 1
    replaces: str | None = None
    reason: str | None = None
    created_at: str | None = None


def may_submit(past: Mapping[str, str]) -> bool:
    """Whether a request may go in a new batch, given the statuses of the batches that held it: each never existed
    or was deleted unread, fewer than ``MAX_SUBMISSIONS`` times (one that ended, whatever its result, is answered or
    left to the direct judge)."""
    statuses = list(past.values())  # batch id -> status
    return all(status in _FREE for status in statuses) and statuses.count("deleted") < MAX_SUBMISSIONS


def _now() -> str:
    return to_text(datetime.now(UTC))


class JudgeBatches:
    """Reads and writes the ledger; every write commits at once (a batch is recorded before any wait)."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def record(self, batch: JudgeBatch) -> None:
        """Keep a batch (an intent, before its create call), durably."""
        now = _now()
        start, stop = batch.slice or (None, None)
        self.store.write(
            "INSERT OR REPLACE INTO judge_batches (id, scope, slice_start, slice_stop, model, keys, status, attempt,"
            " replaces, reason, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(batch.id, batch.scope, start, stop, batch.model, json.dumps(list(batch.keys)), batch.status,
              batch.attempt, batch.replaces, batch.reason, now, now)],
        )
        self.store.commit()

    def adopt(self, intent_id: str, batch_id: str) -> None:
        """The batch an intent became: recorded under its server id, live."""
        self.store.write(
            "UPDATE judge_batches SET id = ?, status = ?, updated_at = ? WHERE id = ?",
            [(batch_id, BATCH_LIVE, _now(), intent_id)],
        )
        self.store.commit()

    def finish(
        self, batch_id: str, status: str, reason: str | None = None, outcome: dict[str, Any] | None = None
    ) -> None:
        """Close a batch (``ended`` with its outcome, or why it is ``deleted``, ``not_submitted``, ``not_ours``)."""
        self.store.write(
            "UPDATE judge_batches SET status = ?, reason = coalesce(?, reason), outcome = coalesce(?, outcome),"
            " updated_at = ? WHERE id = ?",
            [(status, reason, json.dumps(outcome) if outcome is not None else None, _now(), batch_id)],
        )
        self.store.commit()

    def batches(self, model: str) -> list[JudgeBatch]:
        """Every batch of ``model``, oldest first."""
        rows = self.store.query(
            "SELECT id, scope, slice_start, slice_stop, model, keys, status, attempt, replaces, reason, created_at"
            " FROM judge_batches WHERE model = ? ORDER BY created_at, rowid",
            (model,),
        )
        return [
            JudgeBatch(str(r[0]), r[1], (str(r[2]), str(r[3])) if r[2] else None, str(r[4]),
                       tuple(json.loads(r[5])), str(r[6]), int(r[7]), r[8], r[9], r[10])
            for r in rows
        ]

    def ids(self) -> set[str]:
        """The id of every recorded batch, of any model."""
        return {str(r[0]) for r in self.store.query("SELECT id FROM judge_batches")}

    def totals(self, scope: str | None) -> dict[str, Any]:
        """What the API reported for the batches of ``scope`` (a backfill), over every run of it.

        ``submitted``: requests in batches created; the four result types: the ``request_counts`` of the ended ones;
        ``processing``: requests in batches not read yet; ``deleted``: requests in batches gone before they were
        read; ``unreadable``: succeeded replies that did not parse; ``billed``: what the succeeded replies cost.
        """
        out: dict[str, Any] = dict.fromkeys(("batches", "submitted", *RESULT_TYPES, "processing", "deleted"), 0)
        out |= {"unreadable": 0, "unresolved": 0, "billed": dict.fromkeys(BILLED, 0)}
        rows = self.store.query("SELECT status, keys, outcome FROM judge_batches WHERE scope IS ?", (scope,))
        for status, keys, outcome in rows:
            n = len(json.loads(keys))
            if status == BATCH_SUBMITTING:
                out["unresolved"] += n
            if status not in _CREATED:
                continue
            out["batches"] += 1
            out["submitted"] += n
            if status == BATCH_LIVE:
                out["processing"] += n
            elif status == "deleted":
                out["deleted"] += n
            if outcome:
                found = json.loads(outcome)
                for kind in RESULT_TYPES:
                    out[kind] += int(found["request_counts"].get(kind, 0))
                out["unreadable"] += int(found["read"].get("unreadable", 0))
                for name in BILLED:
                    out["billed"][name] += found["billed"].get(name, 0)
        out["billed"]["cost_usd"] = round(out["billed"]["cost_usd"], 6)
        return out
