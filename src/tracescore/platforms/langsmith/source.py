"""LangSmith source: the root runs of one project in a time window, each with its child runs and reference example.

The deployment's query backend is read from ``/info`` once (``backend.py``). On ``dual`` and ``smithdb_only`` runs
are read through ``POST /api/v2/runs/query`` with the generated sync client (``query_v2.py``): the window's root runs
with explicit start-time bounds, then one query per trace for its children. On ``clickhouse_only`` (older
self-hosted servers) through the v1 ``Client.list_runs`` — deprecated by the SDK, removed after 2027-01-31, and
said so in the run's notes: root runs with ``list_runs(project_id=…, is_root=True, start_time=…,
filter='lt(start_time, "…")', select=[…])`` in pages of at most 100 (a larger page size is an HTTP 400), then one
``list_runs(trace_id=…)`` per trace (never ``read_run(load_child_runs=True)``: limited to 30/min, refused on
SmithDB). The reference examples of a page of roots come in one ``list_examples(example_ids=…)`` call.

The clients retry 429 (honouring ``Retry-After``), 5xx and timeouts; on top of that a failed root listing is resumed
from the last start time seen (runs come newest first; ids already yielded are skipped), and a trace whose children
cannot be read is yielded with the error so the pipeline reports it and goes on. A request the server refused with a
4xx other than 408/409/429 is never sent again: the read stops with the endpoint, the status and the server's detail.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from typing import TYPE_CHECKING, Any

from tracescore.errors import ConfigError, SourceError
from tracescore.platforms.langsmith import query_v2
from tracescore.platforms.langsmith.backend import (
    CLICKHOUSE_ONLY,
    V1_API,
    V2_API,
    ReadStats,
    deprecation_note,
    detect_backend,
    http_failure,
    read_errors,
)
from tracescore.platforms.langsmith.failures import reach_line
from tracescore.platforms.langsmith.links import run_url
from tracescore.secrets import redact
from tracescore.sources.base import Record

if TYPE_CHECKING:  # pragma: no cover
    from langsmith import Client

MAX_PAGE_SIZE = 100
"""The largest page ``/runs/query`` accepts (langsmith-sdk issue #3455: more is an HTTP 400)."""
ROOT_RESUMES = 3
"""How many times a failed root listing is resumed (after the SDK's own retries) before the run gives up."""
CHILD_ATTEMPTS = 3
"""Attempts at reading one trace's child runs (after the SDK's own retries) before the trace is reported failed."""
ROOT_FIELDS = (
    "id", "name", "run_type", "start_time", "inputs", "outputs", "extra", "tags", "trace_id", "session_id",
    "parent_run_id", "reference_example_id",
)
"""What the adapter reads from a root run (``select``); everything else stays on the server."""
CHILD_FIELDS = (
    "id", "name", "run_type", "start_time", "end_time", "inputs", "outputs", "trace_id", "parent_run_id",
    "dotted_order", "error", "status", "extra",
)
"""What the adapter reads from a child run."""
_DEFAULT_TIMEOUT_MS = 30_000
HTTP_RETRIES = 4
"""Retries per request in the client's HTTP adapter (429 honouring ``Retry-After``, 5xx, timeouts): the one layer
that retries, so attempts are bounded once instead of multiplied by the SDK's own loop."""
HTTP_BACKOFF = 0.5
"""Exponential backoff factor between retries, in seconds (``Retry-After`` wins when the server sends it)."""


def make_client(
    *,
    api_key: str | None = None,
    endpoint: str | None = None,
    timeout_ms: int | None = None,
    retries: int = HTTP_RETRIES,
    backoff: float = HTTP_BACKOFF,
) -> Client:
    """A sync ``langsmith.Client`` from ``LANGSMITH_API_KEY`` / ``LANGSMITH_ENDPOINT`` (or the given values).

    Tracing is off for this client (no background thread) and sampling is 1.0, so no feedback is silently dropped.
    """
    key = api_key or os.environ.get("LANGSMITH_API_KEY") or os.environ.get("LANGCHAIN_API_KEY")
    if not key:
        raise ConfigError("LANGSMITH_API_KEY is not set; export your LangSmith API key to read or write LangSmith")
    url = endpoint or os.environ.get("LANGSMITH_ENDPOINT") or os.environ.get("LANGCHAIN_ENDPOINT") or None
    from langsmith import Client
    from langsmith.utils import LangSmithRetry

    retry = LangSmithRetry(
        total=retries,
        status_forcelist=[408, 425, 429, 500, 502, 503, 504],
        backoff_factor=backoff,
        raise_on_redirect=False,
        raise_on_status=False,
        respect_retry_after_header=True,
        allowed_methods=None,  # POST/PATCH too: a feedback id is deterministic, a repeat is a conflict, not a copy
    )
    return Client(
        api_url=url,
        api_key=key,
        auto_batch_tracing=False,
        tracing_sampling_rate=1.0,
        timeout_ms=timeout_ms or _DEFAULT_TIMEOUT_MS,
        retry_config=retry,
    )


@dataclass(frozen=True)
class LangSmithProject:
    """The project (session) being read: its id, name, and the dataset behind it when it is an experiment."""

    id: str
    name: str | None
    reference_dataset_id: str | None = None
    tenant_id: str | None = None  # the workspace, for trace links


def _utc(value: datetime, what: str) -> datetime:
    if value.tzinfo is None:
        raise ConfigError(f"{what} {value.isoformat()!r} has no timezone; give it in UTC, e.g. 2026-11-20T00:00:00Z")
    return value.astimezone(UTC)


def _iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _as_dict(run: Any) -> dict[str, Any]:
    """A ``langsmith.schemas.Run`` (or dict) as plain JSON-ready data, only the fields that came back."""
    if isinstance(run, dict):
        return run
    data: dict[str, Any] = run.model_dump(mode="json", exclude={"attachments", "child_runs"})
    return data


def _start_of(row: dict[str, Any]) -> datetime:
    moment = datetime.fromisoformat(str(row["start_time"]).replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


class _Refused(SourceError):
    """A read the server refused for good (a 4xx other than 408/409/429): the whole read stops, nothing is resent."""


class LangSmithSource:
    """Yields one ``Record`` per root run of ``project`` that started in ``[start, end)``, newest first (the root's
    start time is the record's ``timestamp``: a backfill cuts its slices from one listing, ``engine.slices``).

    ``payload`` = ``{"id", "project", "root", "runs", "example", "error"}`` (plain dicts, v1 run shape whatever the
    backend), for the LangSmith adapter. ``v2_client`` builds the generated client (default: from ``client``'s
    endpoint and key); ``now`` is the clock of the v2 queries' upper bounds.
    """

    def __init__(
        self,
        client: Client,
        *,
        project: str | None = None,
        project_id: str | None = None,
        page_size: int = MAX_PAGE_SIZE,
        v2_client: Callable[[], Any] | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        if not project and not project_id:
            raise ConfigError("a LangSmith source needs a project: pass --project NAME (or a project id)")
        if not 1 <= page_size <= MAX_PAGE_SIZE:
            raise ConfigError(f"page size {page_size} is out of range; LangSmith accepts 1..{MAX_PAGE_SIZE}")
        self.client = client
        self._project_name = project
        self._project_id = project_id
        self.page_size = page_size
        self._project: LangSmithProject | None = None
        self._make_v2 = v2_client or (lambda: query_v2.make_v2_client(client))
        self._v2: Any = None
        self._now = now
        self.stats = ReadStats()

    # -- backend -------------------------------------------------------------------------------------------------
    @property
    def backend(self) -> str:
        """``clickhouse_only``, ``dual`` or ``smithdb_only``, from ``/info`` (read once)."""
        if self.stats.backend is None:
            backend, note = detect_backend(self.client)
            self.stats.backend = backend
            self.stats.api = V1_API if backend == CLICKHOUSE_ONLY else V2_API
            if note:
                self.stats.note(note)
        return self.stats.backend

    def _api(self) -> Any:
        if self._v2 is None:
            self._v2 = self._make_v2()
        return self._v2

    def close(self) -> None:
        """Close the generated client's connections (the v1 client is its owner's to close)."""
        api, self._v2 = self._v2, None
        if api is not None and callable(getattr(api, "close", None)):
            api.close()

    # -- project -------------------------------------------------------------------------------------------------
    def project(self) -> LangSmithProject:
        """The project, looked up once (by id when known, else by name)."""
        if self._project is None:
            from langsmith.utils import LangSmithError, LangSmithNotFoundError

            try:
                if self._project_id:
                    found = self.client.read_project(project_id=self._project_id)
                else:
                    found = self.client.read_project(project_name=self._project_name)
            except LangSmithNotFoundError as exc:
                which = self._project_id or self._project_name
                raise SourceError(f"LangSmith project {which!r} not found; check the name or id (and the API key's "
                                  "workspace)") from exc
            except (LangSmithError, OSError, ValueError) as exc:
                failure = reach_line(exc, self.client.api_url) or http_failure(exc) or _short(exc)
                raise SourceError(f"cannot read LangSmith project {self._project_name or self._project_id!r}: "
                                  f"{failure}") from exc
            dataset = found.reference_dataset_id
            tenant = str(found.tenant_id) if found.tenant_id else None
            self._project = LangSmithProject(str(found.id), found.name, str(dataset) if dataset else None, tenant)
        return self._project

    # -- records -------------------------------------------------------------------------------------------------
    def records(self, start: datetime, end: datetime | None = None, *, limit: int | None = None) -> Iterator[Record]:
        """One record per root run started in ``[start, end)`` (newest first, as LangSmith returns them)."""
        start = _utc(start, "--from")
        end = _utc(end, "--to") if end is not None else None
        if end is not None and end <= start:
            raise ConfigError(f"empty window: --to {_iso(end)} is not after --from {_iso(start)}")
        project = self.project()
        _ = self.backend
        roots = self._roots(project, start, end)
        if limit is not None:
            roots = islice(roots, limit)
        try:
            while True:
                chunk = list(islice(roots, self.page_size))
                if not chunk:
                    return
                examples = self._examples(chunk)
                for root in chunk:
                    yield self._record(project, root, examples)
        finally:
            self.close()  # the generated client's connections end with the listing (the next one opens its own)

    def _roots(self, project: LangSmithProject, start: datetime, end: datetime | None) -> Iterator[dict[str, Any]]:
        """Root runs, deduplicated by id; a listing that fails is resumed below the last start time seen."""
        errors = read_errors()
        seen: set[str] = set()
        upper, inclusive = end, False
        resumes = 0
        while True:
            try:
                for row in self._list_roots(project, start, upper, inclusive):
                    rid = str(row["id"])
                    if rid in seen:
                        continue  # a repeated page or the overlap of a resumed listing
                    seen.add(rid)
                    upper, inclusive = _start_of(row), True
                    yield row
                return
            except errors as exc:
                which = project.name or project.id
                failure = http_failure(exc)
                if failure is not None and failure.permanent:
                    raise _Refused(
                        f"LangSmith refused to list the root runs of project {which!r}: {failure} (sent once: the "
                        f"same request gets the same answer; {len(seen)} traces were read before it)"
                    ) from exc
                resumes += 1
                if resumes > ROOT_RESUMES:
                    raise SourceError(
                        f"listing root runs of LangSmith project {which!r} failed {resumes} times, last: "
                        f"{failure if failure is not None else _short(exc)}; {len(seen)} traces were read, re-run "
                        "the same window to finish (scores are upserted, nothing is duplicated)"
                    ) from exc

    def _list_roots(
        self, project: LangSmithProject, start: datetime, upper: datetime | None, inclusive: bool
    ) -> Iterator[dict[str, Any]]:
        """Root runs started in ``[start, upper)`` (``[start, upper]`` when ``inclusive``), newest first."""
        if self.backend == CLICKHOUSE_ONLY:
            bound = None if upper is None else f'{"lte" if inclusive else "lt"}(start_time, "{_iso(upper)}")'
            for run in self._list_runs(project_id=project.id, is_root=True, start_time=start, filter=bound,
                                       select=list(ROOT_FIELDS), limit=None):
                yield _as_dict(run)
            return
        top = upper if upper is not None else self._now()
        body = query_v2.roots_body(project.id, start, top, ROOT_FIELDS, self.page_size)
        for run in query_v2.query(self._api(), **body):
            row = query_v2.v1_row(run)
            moment = _start_of(row)
            if moment < start or (upper is not None and (moment > upper or (moment == upper and not inclusive))):
                continue  # how the server treats its bounds is its business; the window is ours
            yield row

    def _list_runs(self, **kwargs: Any) -> Iterator[Any]:
        """``Client.list_runs``; its deprecation warning (fired at call time) goes to the run's notes, once."""
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DeprecationWarning)
            runs: Iterator[Any] = self.client.list_runs(**kwargs)
        for warning in caught:
            if issubclass(warning.category, DeprecationWarning) and "list_runs" in str(warning.message):
                self.stats.note(deprecation_note(str(warning.message)))
            else:  # not ours to swallow
                warnings.warn_explicit(warning.message, warning.category, warning.filename, warning.lineno)
        return runs

    def _examples(self, roots: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any] | str]:
        """Reference examples of a page of roots in one request; on failure, each id maps to the error text."""
        ids = sorted({str(r["reference_example_id"]) for r in roots if r.get("reference_example_id")})
        if not ids:
            return {}
        from langsmith.utils import LangSmithError

        try:
            return {str(e.id): {"id": str(e.id), "inputs": e.inputs, "outputs": e.outputs, "metadata": e.metadata}
                    for e in self.client.list_examples(example_ids=ids)}
        except (LangSmithError, OSError, ValueError) as exc:
            failure = http_failure(exc)
            return dict.fromkeys(ids, f"cannot read reference example: {failure or _short(exc)}")

    def _children(self, project: LangSmithProject, root: dict[str, Any]) -> list[dict[str, Any]]:
        trace_id = str(root.get("trace_id") or root["id"])
        errors = read_errors()
        last: BaseException | None = None
        for _ in range(CHILD_ATTEMPTS):
            try:
                rows: dict[str, dict[str, Any]] = {}
                for row in self._list_children(project, trace_id, root):
                    rows[str(row["id"])] = row
                return list(rows.values())
            except errors as exc:
                failure = http_failure(exc)
                if failure is not None and failure.permanent:
                    raise _Refused(f"LangSmith refused to list the child runs of trace {trace_id}: {failure} (sent "
                                   "once: the same request gets the same answer)") from exc
                last = exc
        failure = http_failure(last)
        raise SourceError(f"cannot read the child runs of trace {trace_id}: {failure or _short(last)}")

    def _list_children(
        self, project: LangSmithProject, trace_id: str, root: dict[str, Any]
    ) -> Iterator[dict[str, Any]]:
        if self.backend == CLICKHOUSE_ONLY:
            for run in self._list_runs(project_id=project.id, trace_id=trace_id, is_root=False,
                                       select=list(CHILD_FIELDS)):
                yield _as_dict(run)
            return
        body = query_v2.children_body(project.id, trace_id, _start_of(root), self._now(), CHILD_FIELDS)
        for run in query_v2.query(self._api(), **body):
            yield query_v2.v1_row(run)

    def _record(
        self, project: LangSmithProject, root: dict[str, Any], examples: dict[str, dict[str, Any] | str]
    ) -> Record:
        payload: dict[str, Any] = {
            "id": str(root["id"]),
            "project": {"id": project.id, "name": project.name, "reference_dataset_id": project.reference_dataset_id},
            "root": root,
            "runs": [],
            "example": None,
            "error": None,
        }
        try:
            payload["runs"] = self._children(project, root)
        except _Refused:
            raise
        except SourceError as exc:
            payload["error"] = redact(str(exc))
        example = examples.get(str(root.get("reference_example_id")))
        if isinstance(example, str):
            payload["error"] = payload["error"] or example
        else:
            payload["example"] = example
        url = run_url(self.client.api_url, project.tenant_id, project.id, root.get("id"))
        return Record(payload=payload, timestamp=_start_of(root), url=url)


def _short(exc: BaseException | None) -> str:
    """An SDK error in one line, without the request echo the SDK appends."""
    text = f"{type(exc).__name__}: {exc}" if exc is not None else "unknown error"
    return redact(text.splitlines()[0][:300])
