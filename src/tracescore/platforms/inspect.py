"""The mapping report: what an adapter found in one native record and what it skipped, and why.

``tracescore inspect`` (wired in the CLI) prints it for a trace id or a file, so a user whose searches are not found
can fix ``[mapping]`` in minutes instead of reading adapter code: every tool call that was skipped says which glob
it failed, every step that could not be read says what its output looked like.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tracescore.adapters.notes import MappingNote, collect_notes
from tracescore.errors import AdapterError
from tracescore.platforms.registry import get_adapter
from tracescore.trace import BlindSpot, Labels, Trace

_SHOWN_HITS = 3


class MappingReport(BaseModel):
    """What the adapter made of one record: the trace's parts, each decision it took, and hints for ``[mapping]``."""

    model_config = ConfigDict(frozen=True)

    trace_id: str | None = None
    error: str | None = Field(default=None, description="why the record could not be adapted at all")
    question: str = ""
    answer: str = ""
    searches: list[dict[str, Any]] = Field(default_factory=list)
    fetches: list[dict[str, Any]] = Field(default_factory=list)
    labels: dict[str, Any] = Field(default_factory=dict)
    citations: list[str] = Field(default_factory=list)
    blind_spots: list[BlindSpot] = Field(default_factory=list)
    notes: list[MappingNote] = Field(default_factory=list)
    hints: list[str] = Field(default_factory=list)

    @property
    def skipped(self) -> list[MappingNote]:
        """Records the adapter saw as tool calls but did not take, and steps it could not read."""
        return [n for n in self.notes if n.decision in ("skipped", "blind spot")]


def inspect_record(native: object, adapter: Callable[[object], Trace] | str) -> MappingReport:
    """Run ``adapter`` (or the one registered under that name) on ``native`` and report what it found and skipped."""
    if isinstance(adapter, str):
        adapter = get_adapter(adapter)
    with collect_notes() as notes:
        try:
            trace = adapter(native)
        except AdapterError as exc:
            return MappingReport(error=str(exc), notes=list(notes))
        except Exception as exc:  # noqa: BLE001 - a diagnostic command names what failed, never a traceback
            return MappingReport(error=f"the adapter failed on this record: {type(exc).__name__}: {exc}",
                                 notes=list(notes))  # fmt: skip
    return MappingReport(
        trace_id=trace.id,
        question=trace.question,
        answer=trace.answer,
        searches=[
            {
                "tool": s.tool,
                "query": s.query,
                "hits": len(s.hits),
                "urls": [h.url or h.doc_id for h in s.hits[:_SHOWN_HITS]],
            }
            for s in trace.searches
        ],
        fetches=[
            {"tool": f.tool, "url": f.url or f.doc_id, "status": f.status, "chars": len(f.text)} for f in trace.fetches
        ],
        labels=Labels.model_validate(trace.labels, from_attributes=True).model_dump(exclude_none=True),
        citations=[c.url or c.doc_id or "" for c in trace.citations or []],
        blind_spots=[BlindSpot.model_validate(b, from_attributes=True) for b in trace.blind_spots],
        notes=list(notes),
        hints=_hints(trace, list(notes)),
    )


def _hints(trace: Trace, notes: list[MappingNote]) -> list[str]:
    hints: list[str] = []
    if not trace.question:
        hints.append("no question found: add its path to [mapping] question_paths")
    if not trace.answer:
        hints.append("no answer found: add its path to [mapping] answer_paths")
    skipped = [n for n in notes if n.decision == "skipped"]
    if not trace.searches and skipped:
        hints.append(
            "no search found, but tool calls were skipped: if one of them searches, add its name to "
            "[mapping] search_tools (globs)"
        )
    if any(n.decision == "blind spot" for n in notes):
        hints.append("a step could not be read: point [mapping] hits_paths / text_paths at its results")
    return hints


def render_report(report: MappingReport) -> str:
    """The report as plain text for a terminal: found parts first, then skipped records and hints."""
    if report.error is not None:
        return f"could not map this record: {report.error}"
    lines = [f"trace {report.trace_id}"]
    lines.append(f"  question: {_short(report.question) or '(none)'}")
    lines.append(f"  answer:   {_short(report.answer) or '(none)'}")
    lines.append(f"  searches: {len(report.searches)}")
    for s in report.searches:
        lines.append(f"    - {s['tool']} {s['query']!r}: {s['hits']} hits {', '.join(map(str, s['urls']))}".rstrip())
    lines.append(f"  fetches:  {len(report.fetches)}")
    for f in report.fetches:
        status = f" status {f['status']}" if f["status"] is not None else ""
        lines.append(f"    - {f['tool']} {f['url']}{status}: {f['chars']} characters")
    if report.citations:
        lines.append(f"  cited:    {len(report.citations)} ({', '.join(sorted(set(report.citations))[:_SHOWN_HITS])})")
    lines.append(f"  labels:   {', '.join(sorted(report.labels)) or '(none)'}")
    for spot in report.blind_spots:
        lines.append(f"  blind spot ({spot.kind}): {spot.reason}")
    if report.skipped:
        lines.append("  skipped:")
        lines.extend(f"    - {n.record}: {n.reason}" for n in report.skipped)
    lines.extend(f"  hint: {hint}" for hint in report.hints)
    return "\n".join(lines)


def _short(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
