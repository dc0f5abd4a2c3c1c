"""The fake LangSmith's query backends and its v2 run query, from the ``langsmith`` SDK 0.15 source.

Sources read (``site-packages/langsmith``): ``_internal/_v2_migration_utils.py`` (``get_query_backend``: ``/info``
``instance_flags.ch_query_enabled`` on when absent, ``sdb_query_enabled`` off when absent), ``resources/runs/runs.py``
(``query_v2`` → ``POST /api/v2/runs/query``, the body of ``types/run_query_v2_params.py``), ``types/run.py`` (the
run model), ``types/run_select_field.py`` (``selects``), ``pagination.py`` (``SyncItemsCursorPostPagination``:
``{"items": [...], "next_cursor": ...}``, the next request repeats the body with ``cursor``).

What the fake does, per ``FakeLangSmith.backend``:

- ``clickhouse_only`` — ``/info`` carries no query flags (an older server: both defaults apply); v1 ``POST
  /runs/query`` answers; ``/api/v2/runs/query`` is a 404 (self-hosted servers older than 0.16 lack it);
- ``dual`` — both flags on; v1 and v2 both answer;
- ``smithdb_only`` — ``ch_query_enabled`` off, ``sdb_query_enabled`` on; v1 ``POST /runs/query`` is a 400 (so are
  child-run loading and any other v1 run listing, which go through it).

The v2 query, as the generated docstrings describe it: ``project_ids`` required unless ``reference_dataset_id`` (one
of the two, not both); ``min_start_time`` defaults to one day before now and ``max_start_time`` to now; ``page_size``
defaults to 100 and must be 1..1000; ``selects`` omitted → each run carries its ``id`` only, otherwise exactly the
selected fields (lower-case names); ``is_root``, ``trace_id``, ``ids``, ``run_type``, ``filter``; newest first. A run
comes back in the v2 shape: upper-case ``run_type`` and ``status``, ``parent_run_ids`` from the root down to the
direct parent, ``project_id``, RFC 3339 times ending in ``Z``, ``metadata`` (the v1 ``extra.metadata``) as its own
field, ``feedback_stats`` per key (``n``, ``avg``, ``min``, ``max``, ``values``, ``errors``, ``comments``).

Not known about the vendor, and chosen here: whether the start-time bounds are inclusive (both are, here); the
status and wording of the refusals (400 with a ``detail`` naming the v2 endpoint; 404 for the missing route); whether
v2 ``extra`` repeats the metadata (it does, here, as v1 stores it); the cursor's format (opaque; here an offset that
the same body must come back with); the precision of the times (microseconds kept); how unknown ``selects`` or a bad
``page_size`` are refused (400 here; the real server may say 422).
"""

from __future__ import annotations

from copy import deepcopy
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from tests.fakes.base import Request, Response

if TYPE_CHECKING:  # pragma: no cover
    from tests.fakes.langsmith import FakeLangSmith

__all__ = ["BACKENDS", "SMITHDB_V1_REFUSAL", "V2_QUERY", "handle_v2", "info", "query_path", "v2_run"]

BACKENDS = ("clickhouse_only", "dual", "smithdb_only")
V2_QUERY = "/api/v2/runs/query"
SELECT_FIELDS = frozenset(
    "ID NAME RUN_TYPE STATUS START_TIME END_TIME LATENCY_SECONDS FIRST_TOKEN_TIME ERROR ERROR_PREVIEW EXTRA METADATA "
    "EVENTS INPUTS INPUTS_PREVIEW OUTPUTS OUTPUTS_PREVIEW MANIFEST PARENT_RUN_IDS PROJECT_ID TRACE_ID THREAD_ID "
    "DOTTED_ORDER IS_ROOT REFERENCE_EXAMPLE_ID REFERENCE_DATASET_ID TOTAL_TOKENS PROMPT_TOKENS COMPLETION_TOKENS "
    "TOTAL_COST PROMPT_COST COMPLETION_COST PROMPT_TOKEN_DETAILS COMPLETION_TOKEN_DETAILS PROMPT_COST_DETAILS "
    "COMPLETION_COST_DETAILS PRICE_MODEL_ID TAGS APP_PATH ATTACHMENTS THREAD_EVALUATION_TIME IS_IN_DATASET "
    "LAST_QUEUED_AT SHARE_URL FEEDBACK_STATS LS_USER_ID".split()
)
SMITHDB_V1_REFUSAL = (
    "Run queries through POST /runs/query are not supported on this deployment: ClickHouse query support is disabled "
    "(instance flag ch_query_enabled=false, SmithDB-only backend), so the v1 query endpoint, child-run loading and "
    "every list_runs() call are refused. Query runs with POST /api/v2/runs/query (client.runs.query_v2) and explicit "
    "min_start_time/max_start_time bounds instead. See "
    "https://docs.langchain.com/langsmith/smithdb-sdk-migration-query-runs#runs-query for the migration guide."
)
_FLAGS = {
    "clickhouse_only": {},
    "dual": {"ch_query_enabled": True, "sdb_query_enabled": True},
    "smithdb_only": {"ch_query_enabled": False, "sdb_query_enabled": True},
}


def info(backend: str) -> dict[str, Any]:
    """``GET /info`` of a deployment on ``backend``."""
    body: dict[str, Any] = {
        "version": "0.11.0" if backend == "clickhouse_only" else "0.16.4",
        "batch_ingest_config": {"use_multipart_endpoint": True},
    }
    if _FLAGS[backend]:
        body["instance_flags"] = dict(_FLAGS[backend])
    return body


def query_path(backend: str) -> str:
    """The run query a client that follows the flags sends on ``backend``: v1 on clickhouse_only, v2 elsewhere."""
    return "/runs/query" if backend == "clickhouse_only" else V2_QUERY


def handle_v2(server: FakeLangSmith, request: Request) -> Response | None:
    """Answer ``/info``, the v2 query and the SmithDB-only refusal of v1 queries; None for every other route."""
    path, method, backend = request.path.rstrip("/"), request.method, server.backend
    if backend not in _FLAGS:
        return Response(500, {"detail": f"fake LangSmith has no backend {backend!r}; expected one of {BACKENDS}"})
    if path == "/info" and method == "GET":
        return Response(200, info(backend))
    if path == "/runs/query" and method == "POST" and backend == "smithdb_only":
        return Response(400, {"detail": SMITHDB_V1_REFUSAL})
    if path == V2_QUERY and method == "POST":
        if backend == "clickhouse_only":
            return Response(404, {"detail": "Not Found"})
        return _query(server, request.json() or {})
    return None


def _ts(value: Any) -> datetime:
    parsed = value if isinstance(value, datetime) else datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _z(value: Any) -> str | None:
    return None if value in (None, "") else _ts(value).astimezone(UTC).isoformat().replace("+00:00", "Z")


def _bad(detail: str) -> Response:
    return Response(400, {"detail": detail})


def _query(server: FakeLangSmith, body: dict[str, Any]) -> Response:
    projects, dataset = body.get("project_ids"), body.get("reference_dataset_id")
    if bool(projects) == bool(dataset):
        return _bad("set exactly one of project_ids and reference_dataset_id")
    size = body.get("page_size", 100)
    if not isinstance(size, int) or not 1 <= size <= 1000:
        return _bad(f"page_size must be between 1 and 1000 inclusive, got {size!r}")
    selects = body.get("selects") or ["ID"]
    unknown = [s for s in selects if s not in SELECT_FIELDS]
    if unknown:
        return _bad(f"unknown selects {unknown}; expected RunSelectField values")
    now = datetime.now(UTC)
    try:
        low = _ts(body["min_start_time"]) if body.get("min_start_time") else now - timedelta(days=1)
        high = _ts(body["max_start_time"]) if body.get("max_start_time") else now
        predicate = server._filter(body.get("filter"))
    except ValueError as exc:
        return _bad(str(exc))
    sessions = set(projects or []) or {p["id"] for p in server.projects.values()
                                       if p.get("reference_dataset_id") == dataset}
    ids, root = set(body.get("ids") or []), body.get("is_root")
    rows = [
        r for r in server.runs
        if r["session_id"] in sessions
        and low <= _ts(r["start_time"]) <= high
        and (root is None or (r.get("parent_run_id") is None) == bool(root))
        and (not body.get("trace_id") or r["trace_id"] == body["trace_id"])
        and (not ids or r["id"] in ids)
        and (not body.get("run_type") or str(r.get("run_type")).upper() == body["run_type"])
        and predicate(r)
    ]
    rows.sort(key=lambda r: (_ts(r["start_time"]), r["id"]), reverse=True)
    cursor = str(body.get("cursor") or "c:0")
    if not cursor.startswith("c:") or not cursor[2:].isdigit():
        return _bad(f"invalid cursor {cursor!r}: pass back a next_cursor unmodified")
    offset, size = int(cursor[2:]), min(size, server.page_size)
    page = rows[offset : offset + size]
    by_id = {r["id"]: r for r in server.runs}
    stats = "FEEDBACK_STATS" in selects
    items = [v2_run(r, selects, by_id, server.feedback_of(r["id"]) if stats else []) for r in page]
    more = offset + len(page) < len(rows)
    return Response(200, {"items": items, "next_cursor": f"c:{offset + len(page)}" if more else None})


def _parents(run: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> list[str]:
    chain: list[str] = []
    parent = run.get("parent_run_id")
    while parent is not None and parent not in chain:
        chain.append(parent)
        parent = by_id.get(parent, {}).get("parent_run_id")
    return chain[::-1]


def _stats(feedback: list[dict[str, Any]]) -> dict[str, Any]:
    by_key: dict[str, list[dict[str, Any]]] = {}
    for f in feedback:
        by_key.setdefault(str(f["key"]), []).append(f)
    out: dict[str, Any] = {}
    for key, rows in by_key.items():
        scores = [float(f["score"]) for f in rows if isinstance(f.get("score"), int | float)]
        values: dict[str, int] = {}
        for f in rows:
            if isinstance(f.get("value"), str):
                values[f["value"]] = values.get(f["value"], 0) + 1
        out[key] = {"n": len(rows), "avg": sum(scores) / len(scores) if scores else None,
                    "min": min(scores, default=None), "max": max(scores, default=None), "values": values,
                    "errors": 0, "comments": [f["comment"] for f in rows if f.get("comment")][:5],
                    "contains_thread_feedback": False}
    return out


def v2_run(run: dict[str, Any], selects: list[str], by_id: dict[str, dict[str, Any]],
           feedback: list[dict[str, Any]]) -> dict[str, Any]:
    """One stored (v1-shaped) run as ``/api/v2/runs/query`` returns it: the selected fields only, in the v2 shape."""
    extra = run.get("extra") or {}
    start, end = _ts(run["start_time"]), _ts(run["end_time"]) if run.get("end_time") else None
    status = run.get("status") or ("error" if run.get("error") else "success")
    fields: dict[str, Any] = {
        "ID": run["id"],
        "NAME": run.get("name"),
        "RUN_TYPE": str(run.get("run_type") or "chain").upper(),
        "STATUS": str(status).upper(),
        "START_TIME": _z(start),
        "END_TIME": _z(end),
        "LATENCY_SECONDS": (end - start).total_seconds() if end else None,
        "ERROR": run.get("error"),
        "EXTRA": deepcopy(extra),
        "METADATA": deepcopy(extra.get("metadata")) if isinstance(extra, dict) else None,
        "EVENTS": deepcopy(run.get("events")),
        "INPUTS": deepcopy(run.get("inputs")),
        "OUTPUTS": deepcopy(run.get("outputs")),
        "PARENT_RUN_IDS": _parents(run, by_id),
        "PROJECT_ID": run.get("session_id"),
        "TRACE_ID": run.get("trace_id"),
        "DOTTED_ORDER": run.get("dotted_order"),
        "IS_ROOT": run.get("parent_run_id") is None,
        "REFERENCE_EXAMPLE_ID": run.get("reference_example_id"),
        "TAGS": list(run.get("tags") or []),
        "FEEDBACK_STATS": _stats(feedback) if "FEEDBACK_STATS" in selects else None,
    }
    return {name.lower(): fields.get(name) for name in selects}
