"""Run reads through ``POST /api/v2/runs/query`` (the SDK's generated sync client), in the shape v1 gives them.

Used on the ``dual`` and ``smithdb_only`` backends (see ``backend.py``). The generated client is
``langsmith.Langsmith`` — the sync one: ``Client.runs`` on the hand-written sync ``Client`` is the *async* resource in
SDK 0.15. Every query names the project (``project_ids``), ``is_root`` or ``trace_id``, the ``selects`` the adapter
reads (omitted, the server returns the id alone) and explicit ``min_start_time``/``max_start_time``: the server's
defaults are the last ~24 hours, so a backfill of an older window would silently read nothing. Pages follow
``next_cursor`` (the paginator does it).

A v2 run differs from a v1 run: upper-case ``run_type`` and ``status``, ``parent_run_ids`` (root first) instead of
``parent_run_id``, ``project_id`` instead of ``session_id``, ``metadata`` selectable apart from ``extra``, v2
``feedback_stats`` models. ``v1_row`` maps it to the same plain dict ``list_runs`` yields (through the SDK's public
``schemas.Run``), so a trace scores identically from either backend.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

CHILD_SKEW = timedelta(minutes=5)
"""How far before its root a child run may start (clocks of distributed tracers differ): the children query's
``min_start_time`` is the root's start minus this."""
_SELECTS = {"session_id": ("PROJECT_ID",), "parent_run_id": ("PARENT_RUN_IDS",), "extra": ("EXTRA", "METADATA")}
"""v1 fields whose v2 select has another name (or two: metadata is its own select in v2); the rest upper-cased."""


def v2_selects(fields: Sequence[str]) -> list[str]:
    """The v2 ``selects`` that return the v1 ``fields``."""
    return [select for field in fields for select in _SELECTS.get(field, (field.upper(),))]


def _openapi_base(api_url: str) -> str:
    """The generated client's base URL: the v1 API URL without its ``/api/v1`` or ``/api`` suffix."""
    url = api_url.rstrip("/")
    for suffix in ("/api/v1", "/api"):
        if url.endswith(suffix):
            return url[: -len(suffix)]
    return url


@functools.cache
def _tls() -> Any:
    """One TLS context per process: building one costs ~50 ms, and a listing (a backfill slice) opens a client."""
    import httpx

    return httpx.create_ssl_context()


def make_v2_client(
    client: Any, *, timeout: float = 30.0, retries: int = 4, on_request: Callable[[], None] | None = None
) -> Any:
    """A ``langsmith.Langsmith`` (generated, sync) for the deployment and key of the v1 ``client``.

    It retries 408, 409, 429 (honouring ``Retry-After``), 5xx and connection errors up to ``retries`` times and
    nothing else; ``on_request`` runs before every request sent, retries included (the job's rate limiter).
    """
    from langsmith import DefaultHttpxClient, Langsmith

    hooks: dict[str, list[Callable[..., None]]] = {}
    if on_request is not None:
        hooks["request"] = [lambda _request: on_request()]
    return Langsmith(
        api_key=client.api_key,
        tenant_id=os.environ.get("LANGSMITH_WORKSPACE_ID") or None,
        base_url=_openapi_base(str(client.api_url)),
        timeout=timeout,
        max_retries=retries,
        http_client=DefaultHttpxClient(event_hooks=hooks, timeout=timeout, verify=_tls()),
    )


def query(api: Any, **body: Any) -> Iterator[Any]:
    """The runs of one ``runs.query_v2`` call, every page (the paginator follows ``next_cursor``)."""
    yield from api.runs.query_v2(**body)


def roots_body(
    project_id: str, start: datetime, upper: datetime, fields: Sequence[str], page_size: int
) -> dict[str, Any]:
    """The query of a window's root runs (``max_start_time``'s inclusivity is not documented: the caller filters)."""
    return {
        "project_ids": [project_id],
        "is_root": True,
        "min_start_time": start,
        "max_start_time": upper,
        "selects": v2_selects(fields),
        "page_size": page_size,
    }


def children_body(project_id: str, trace_id: str, root_start: datetime | None, now: datetime,
                  fields: Sequence[str]) -> dict[str, Any]:
    """The query of one trace's child runs: from just before its root started until now."""
    low = (root_start - CHILD_SKEW) if root_start is not None else now - timedelta(days=400)
    return {
        "project_ids": [project_id],
        "trace_id": trace_id,
        "is_root": False,
        "min_start_time": low,
        "max_start_time": now,
        "selects": v2_selects(fields),
        "page_size": 1000,
    }


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def v1_row(run: Any) -> dict[str, Any]:
    """A v2 run (generated model or dict) as the plain dict ``list_runs`` yields for the same run."""
    get: Callable[[str], Any] = run.get if isinstance(run, dict) else lambda name: getattr(run, name, None)
    parents = get("parent_run_ids")
    extra, metadata = get("extra"), get("metadata")
    if metadata is not None:  # whether v2 EXTRA carries the metadata too is not documented: fill it in if not
        extra = dict(extra or {})
        extra.setdefault("metadata", metadata)
    stats = get("feedback_stats")
    fields = {
        "id": get("id"),
        "name": get("name"),
        "run_type": _lower(get("run_type")),
        "start_time": get("start_time"),
        "end_time": get("end_time"),
        "inputs": get("inputs") or None,
        "outputs": get("outputs"),
        "extra": extra,
        "tags": get("tags"),
        "trace_id": get("trace_id"),
        "session_id": get("project_id"),
        "parent_run_id": parents[-1] if parents else None,
        "reference_example_id": get("reference_example_id"),
        "dotted_order": get("dotted_order"),
        "error": get("error"),
        "status": _lower(get("status")),
        "feedback_stats": {k: _plain(v) for k, v in stats.items()} if isinstance(stats, dict) and stats else None,
    }
    from langsmith import schemas

    shaped = schemas.Run(**{k: v for k, v in fields.items() if v is not None})
    data: dict[str, Any] = shaped.model_dump(mode="json", exclude={"attachments", "child_runs"})
    return data


def _plain(stats: Any) -> Any:
    """A v2 ``FeedbackStats`` model as the dict v1 gives (fields that are set only)."""
    dump = getattr(stats, "model_dump", None)
    return dump(exclude_none=True) if callable(dump) else stats
