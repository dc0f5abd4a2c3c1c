"""Trace links: each record read from Langfuse carries its trace's URL in the UI, built as the SDK's
``Langfuse.get_trace_url`` builds it (``<base>/project/<projectId>/traces/<traceId>``), the project id read once per
run (``GET /api/public/projects``, the project of the API keys). A failed lookup leaves the traces without links and
says so in one note; it never stops the read."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from tracescore.platforms.langfuse.client import describe_error
from tracescore.sources.base import Record

if TYPE_CHECKING:
    from langfuse.api import LangfuseAPI


class TraceLinks:
    """The trace URL of each record, the project id looked up on the first record and kept for the run."""

    def __init__(
        self, client: LangfuseAPI, base_url: str, note: Callable[[str], None], options: dict[str, Any] | None = None
    ) -> None:
        self.client = client
        self.base_url = base_url.rstrip("/")
        self.note = note
        self.options = options
        self._project: str | None = None
        self._looked_up = False

    def project_id(self) -> str | None:
        if not self._looked_up:
            self._looked_up = True
            try:
                projects = self.client.projects.get(request_options=self.options)
            except Exception as exc:  # noqa: BLE001 - links are a convenience: the scores go on without them
                self.note(f"no trace links: the project lookup failed ({describe_error(exc)})")
                return None
            first = projects.data[0].id if projects.data else None
            if not first:
                self.note("no trace links: the API keys name no project (GET /api/public/projects was empty)")
            self._project = str(first) if first else None
        return self._project

    def url(self, trace_id: str) -> str | None:
        project = self.project_id()
        if project is None:
            return None
        return f"{self.base_url}/project/{quote(project, safe='')}/traces/{quote(trace_id, safe='')}"

    def attach(self, records: Iterable[Record]) -> Iterator[Record]:
        """``records`` with ``url`` set from each payload's trace id."""
        for record in records:
            payload = record.payload
            trace_id = payload.get("id") if isinstance(payload, dict) else None
            url = self.url(trace_id) if isinstance(trace_id, str) and trace_id else None
            yield replace(record, url=url) if url else record
