"""LangSmith source: the root runs of one project in a time window, each with its child runs and reference example.

Reads through the sync ``langsmith.Client`` (imported lazily): root runs with ``list_runs(project_id=…, is_root=True,
start_time=…, filter='lt(start_time, "…")', select=[…])`` in pages of at most 100 (a larger page size is an HTTP
400), the reference examples of a page in one ``list_examples(example_ids=…)`` call, then one
``list_runs(trace_id=…)`` per trace for its children (never ``read_run(load_child_runs=True)``, limited to 30/min).
The SDK retries 429 (honouring ``Retry-After``), 5xx and timeouts; on top of that a failed root page is resumed from
the last start time seen (runs come newest first; ids already yielded are skipped), and a trace whose children cannot
be read is yielded with the error so the pipeline reports it and goes on.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import islice
from typing import TYPE_CHECKING, Any

from tracescore.errors import ConfigError, SourceError
from tracescore.secrets import redact
from tracescore.sources.base import Record

if TYPE_CHECKING:  # pragma: no cover
    from langsmith import Client

__all__ = [
    "CHILD_FIELDS",
    "LangSmithProject",
    "LangSmithSource",
    "MAX_PAGE_SIZE",
    "ROOT_FIELDS",
    "make_client",
]

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


class LangSmithSource:
    """Yields one ``Record`` per root run of ``project`` that started in ``[start, end)``, newest first.

    ``payload`` = ``{"id", "project", "root", "runs", "example", "error"}`` (plain dicts), for the LangSmith adapter.
    """

    def __init__(
        self,
        client: Client,
        *,
        project: str | None = None,
        project_id: str | None = None,
        page_size: int = MAX_PAGE_SIZE,
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
                raise SourceError(f"cannot read LangSmith project {self._project_name or self._project_id!r}: "
                                  f"{_short(exc)}") from exc
            dataset = found.reference_dataset_id
            self._project = LangSmithProject(str(found.id), found.name, str(dataset) if dataset else None)
        return self._project

    # -- records -------------------------------------------------------------------------------------------------
    def records(self, start: datetime, end: datetime | None = None, *, limit: int | None = None) -> Iterator[Record]:
        """One record per root run started in ``[start, end)`` (newest first, as LangSmith returns them)."""
        start = _utc(start, "--from")
        end = _utc(end, "--to") if end is not None else None
        if end is not None and end <= start:
            raise ConfigError(f"empty window: --to {_iso(end)} is not after --from {_iso(start)}")
        project = self.project()
        roots = self._roots(project, start, end)
        if limit is not None:
            roots = islice(roots, limit)
        while True:
            chunk = list(islice(roots, self.page_size))
            if not chunk:
                return
            examples = self._examples(chunk)
            for root in chunk:
                yield self._record(project, root, examples)

    def _roots(self, project: LangSmithProject, start: datetime, end: datetime | None) -> Iterator[dict[str, Any]]:
        """Root runs, deduplicated by id; a listing that fails is resumed below the last start time seen."""
        from langsmith.utils import LangSmithError

        seen: set[str] = set()
        upper, inclusive = end, False
        resumes = 0
        while True:
            bound = None if upper is None else f'{"lte" if inclusive else "lt"}(start_time, "{_iso(upper)}")'
            try:
                for run in self._list_runs(project_id=project.id, is_root=True, start_time=start, filter=bound,
                                           select=list(ROOT_FIELDS), limit=None):
                    row = _as_dict(run)
                    rid = str(row["id"])
                    if rid in seen:
                        continue  # a repeated page or the overlap of a resumed listing
                    seen.add(rid)
                    upper, inclusive = datetime.fromisoformat(str(row["start_time"])), True
                    yield row
                return
            except (LangSmithError, OSError, ValueError) as exc:
                resumes += 1
                if resumes > ROOT_RESUMES:
                    raise SourceError(
                        f"listing root runs of LangSmith project {project.name or project.id!r} failed "
                        f"{resumes} times, last: {_short(exc)}; {len(seen)} traces were read, re-run the same "
                        "window to finish (scores are upserted, nothing is duplicated)"
                    ) from exc

    def _list_runs(self, **kwargs: Any) -> Iterator[Any]:
        """``Client.list_runs`` with its deprecation warning silenced at this one call (it fires at call time)."""
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"list_runs\(\) is deprecated", category=DeprecationWarning)
            runs: Iterator[Any] = self.client.list_runs(**kwargs)
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
            return dict.fromkeys(ids, f"cannot read reference example: {_short(exc)}")

    def _children(self, project: LangSmithProject, trace_id: str) -> list[dict[str, Any]]:
        from langsmith.utils import LangSmithError

        last: Exception | None = None
        for _ in range(CHILD_ATTEMPTS):
            try:
                rows: dict[str, dict[str, Any]] = {}
                for run in self._list_runs(project_id=project.id, trace_id=trace_id, is_root=False,
                                           select=list(CHILD_FIELDS)):
                    row = _as_dict(run)
                    rows[str(row["id"])] = row
                return list(rows.values())
            except (LangSmithError, OSError, ValueError) as exc:
                last = exc
        raise SourceError(f"cannot read the child runs of trace {trace_id}: {_short(last)}")

    def _record(
        self, project: LangSmithProject, root: dict[str, Any], examples: dict[str, dict[str, Any] | str]
    ) -> Record:
        trace_id = str(root.get("trace_id") or root["id"])
        payload: dict[str, Any] = {
            "id": str(root["id"]),
            "project": {"id": project.id, "name": project.name, "reference_dataset_id": project.reference_dataset_id},
            "root": root,
            "runs": [],
            "example": None,
            "error": None,
        }
        try:
            payload["runs"] = self._children(project, trace_id)
        except SourceError as exc:
            payload["error"] = redact(str(exc))
        example = examples.get(str(root.get("reference_example_id")))
        if isinstance(example, str):
            payload["error"] = payload["error"] or example
        else:
            payload["example"] = example
        return Record(payload=payload)


def _short(exc: BaseException | None) -> str:
    """An SDK error in one line, without the request echo the SDK appends."""
    text = f"{type(exc).__name__}: {exc}" if exc is not None else "unknown error"
    return redact(text.splitlines()[0][:300])
