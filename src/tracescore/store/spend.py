"""What the judge spent per UTC day, by run (migration 0017): the ledger of ``[job] max_cost_per_day``.

Each run keeps one row per UTC day it judged on (its cost and calls that day so far, overwritten as they grow), so
the spend of a day is the sum over its runs, however many ran and however each ended: a run killed mid-way counts
what it recorded last (at most one trace's calls late).
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any, Protocol


class _Store(Protocol):  # ``store.db.Store``, which imports this module's migration
    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]: ...

    def write(self, sql: str, rows: list[tuple[Any, ...]]) -> None: ...

    def commit(self) -> None: ...


JUDGE_SPEND_MIGRATION = """
    CREATE TABLE judge_spend (
        day TEXT NOT NULL, run TEXT NOT NULL, cost_usd REAL NOT NULL, calls INTEGER NOT NULL,
        updated_at TEXT NOT NULL, PRIMARY KEY (day, run)
    )
"""


def day_spent(store: _Store, day: date, *, besides: str | None = None) -> tuple[float, int]:
    """(USD, calls) the judge spent on ``day`` (UTC), over every run but ``besides``."""
    rows = store.query(
        "SELECT coalesce(sum(cost_usd), 0), coalesce(sum(calls), 0) FROM judge_spend WHERE day = ? AND run != ?",
        (day.isoformat(), besides or ""),
    )
    return float(rows[0][0]), int(rows[0][1])


def record_spend(store: _Store, day: date, run: str, cost_usd: float, calls: int) -> None:
    """Keep what ``run`` has spent on ``day`` so far (replacing its earlier figure), committed at once."""
    store.write(
        "INSERT INTO judge_spend (day, run, cost_usd, calls, updated_at) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT(day, run) DO UPDATE SET cost_usd = excluded.cost_usd, calls = excluded.calls,"
        " updated_at = excluded.updated_at",
        [(day.isoformat(), run, cost_usd, calls, datetime.now(UTC).isoformat())],
    )
    store.commit()
