"""The local store: SQLite with migrations (db), job state (watermarks, backfills), the run lock and the runs kept.

Not a sink: every command keeps its runs and results here, whatever it writes elsewhere.
"""

from __future__ import annotations

from tracescore.store.db import MIGRATIONS, Store

__all__ = ["MIGRATIONS", "Store"]
