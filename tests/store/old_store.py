"""A store as an older release left it: every migration before a given one applied, by raw SQL."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tracescore.store.db import MIGRATIONS


def store_before(path: Path, migration: str) -> sqlite3.Connection:
    """An autocommit connection to a new store at ``path`` with the migrations before ``migration`` applied."""
    assert migration in dict(MIGRATIONS), migration
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
    for name, sql in MIGRATIONS:
        if name == migration:
            break
        for statement in sql.split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute("INSERT INTO migrations VALUES (?, 'then')", (name,))
    return db
