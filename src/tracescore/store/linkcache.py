"""The link checker's cache in the local store (``--check-links``): one row per normalised URL, re-checked when old.

Only definitive results (alive, dead) are kept (the checker decides that); a row older than ``max_age`` is treated
as missing, so a page that died or came back is seen within that time. Rows are queued in the store's open
transaction and committed by its next commit (the engine's, with a batch of results; at the latest when it closes).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from datetime import UTC, datetime, timedelta

from tracescore.store.db import Store

MAX_AGE = timedelta(days=7)


def _now() -> datetime:
    return datetime.now(UTC)


class StoreLinkCache(MutableMapping[str, str]):
    """url → ``LinkStatus`` JSON, backed by the store's ``link_cache`` table (the ``LinkChecker`` cache hook)."""

    def __init__(self, store: Store, *, max_age: timedelta = MAX_AGE, now: Callable[[], datetime] = _now) -> None:
        self.store, self.max_age, self.now = store, max_age, now
        self.hits = 0  # lookups answered from the store this run

    def __getitem__(self, url: str) -> str:
        rows = self.store.query("SELECT status, checked_at FROM link_cache WHERE url = ?", (url,))
        if not rows or datetime.fromisoformat(rows[0][1]) < self.now() - self.max_age:
            raise KeyError(url)
        self.hits += 1
        return str(rows[0][0])

    def __setitem__(self, url: str, status: str) -> None:
        self.store.write("INSERT OR REPLACE INTO link_cache VALUES (?, ?, ?)", [(url, status, self.now().isoformat())])

    def __delitem__(self, url: str) -> None:
        self.store.write("DELETE FROM link_cache WHERE url = ?", [(url,)])

    def __iter__(self) -> Iterator[str]:
        return iter([str(row[0]) for row in self.store.query("SELECT url FROM link_cache ORDER BY url")])

    def __len__(self) -> int:
        return int(self.store.query("SELECT COUNT(*) FROM link_cache")[0][0])
