"""Where result lines come from for ``report`` and ``gate``: a result file, or a run kept in the local store.

A spec is a path to a JSONL result file (``-`` for stdin), or ``run:ID`` (an id or unique prefix), ``run:latest``
or ``run:latest~N`` (the N-th run before the latest) in the store. A result line that is not JSON becomes a result
carrying only its error, so one bad line never stops a report.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tracescore.errors import InputError
from tracescore.sources.jsonl import read_jsonl
from tracescore.store.db import Store

__all__ = ["read_results", "resolve_run", "results_from"]

RUN_PREFIX = "run:"


def read_results(path: str | Path) -> Iterator[dict[str, Any]]:
    """The result lines of a JSONL file; a bad line yields ``{"trace_id": None, "errors": ["line N: …"]}``."""
    for record in read_jsonl(path):
        try:
            data = json.loads(record.payload)  # type: ignore[arg-type]
        except ValueError as exc:
            yield {"trace_id": None, "errors": [f"{path}: line {record.line}: not JSON ({exc})"], "line": record.line}
            continue
        if not isinstance(data, dict) or not isinstance(data.get("scores", {}), dict):
            yield {"trace_id": None, "errors": [f"{path}: line {record.line}: not a result line"], "line": record.line}
            continue
        yield data


def resolve_run(store: Store, spec: str) -> str:
    """The run id a ``run:`` spec names; the message lists what exists when it names none or several."""
    wanted = spec.removeprefix(RUN_PREFIX)
    runs = [r for r in store.runs() if r["status"] == "done"]
    if wanted.startswith("latest"):
        back = wanted.removeprefix("latest").removeprefix("~") or "0"
        if not back.isdigit():
            raise InputError(f"bad run spec {spec!r}; expected run:latest or run:latest~N")
        if int(back) >= len(runs):
            raise InputError(f"{spec!r}: the store {str(store.path)!r} holds only {len(runs)} finished run(s)")
        return str(runs[-1 - int(back)]["id"])
    matches = [r["id"] for r in runs if str(r["id"]).startswith(wanted)]
    if len(matches) != 1:
        known = ", ".join(str(r["id"])[:8] for r in runs[-5:]) or "none"
        what = "no finished run" if not matches else f"{len(matches)} runs"
        raise InputError(f"{spec!r} matches {what} in {str(store.path)!r}; latest runs: {known}")
    return str(matches[0])


def _is_sqlite(path: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(16) == b"SQLite format 3\x00"


def results_from(spec: str, store_path: str | Path) -> tuple[str, Iterator[dict[str, Any]]]:
    """A label and the result lines for a spec (a result file, or ``run:…`` in the store at ``store_path``)."""
    if not spec.startswith(RUN_PREFIX):
        if spec != "-" and not Path(spec).is_file():
            raise InputError(f"no result file {spec!r}; give a results JSONL file (from --out) or run:latest")
        if spec != "-" and _is_sqlite(spec):
            raise InputError(f"{spec!r} is a store, not a result file; use run:latest --store {spec}")
        return spec, read_results(spec)
    if not Path(store_path).is_file():
        raise InputError(f"no store {str(store_path)!r} to read {spec!r} from; pass --store PATH")
    store = Store(store_path)
    run_id = resolve_run(store, spec)

    def lines() -> Iterator[dict[str, Any]]:
        try:
            yield from store.results(run_id)
        finally:
            store.close()

    return f"run {run_id[:12]}", lines()
