"""Sessions in reports and gates: the result lines of one run grouped by ``session_id``, each session with its turns
(oldest first) and its session scores, computed by the installed session scorers from the turns' lines.

``SessionTap`` passes the lines through to the report or gate that reads them (one streaming pass) and keeps those
of turns; ``sections`` then gives one ``SessionView`` per session. A result line carries no per-score metadata, so a
session's ``grounding_rate`` (which pools the turns' claim verdicts) is absent with that reason unless ``metadata``
gives them (the store's, for a ``run:`` spec). ``session_lines`` are the session scores as result lines: what the
gate's thresholds read for a ``session.*`` limit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from tracescore.engine.plan import ScorerPlan
from tracescore.engine.session_job import score_session
from tracescore.report.tally import Summary
from tracescore.result import TraceResult, result_from_line
from tracescore.scorers.diagnosis import DIAGNOSIS
from tracescore.scorers.session import PREFIX
from tracescore.store.session_state import ordered

_L = TypeVar("_L", bound=Mapping[str, Any])

SESSION = PREFIX
GROUP_BY_SESSION = "session"
"""``report --group-by session``: the sessions with their turns, besides the report."""


@dataclass(frozen=True)
class Turn:
    """One turn as a session shows it: its trace, its diagnosis cell (or why it has none), its link."""

    trace_id: str
    cell: str | None
    why: str | None
    url: str | None


@dataclass(frozen=True)
class SessionView:
    """One session: its id, its session scores as a result line (``scores``, ``missing``, ``comments``) and turns."""

    session_id: str
    line: dict[str, Any]
    turns: tuple[Turn, ...]


class SessionTap:
    """Keeps the lines of turns (those with a ``session_id``) while they stream to a report or a gate."""

    def __init__(self, metadata: Callable[[str], Mapping[str, Any]] | None = None) -> None:
        self.lines: dict[str, list[dict[str, Any]]] = {}
        self.metadata = metadata

    def tap(self, lines: Iterable[_L]) -> Iterator[_L]:
        for line in lines:
            session = line.get("session_id")
            if isinstance(session, str) and session:
                self.lines.setdefault(session, []).append(dict(line))
            yield line

    def sections(self) -> list[SessionView]:
        """Every session seen, in order of its first turn."""
        scorers = ScorerPlan().session_scorers()
        views = []
        for session_id, lines in self.lines.items():
            turns = ordered([self._result(line) for line in _latest(lines)])
            scored = score_session(session_id, turns, scorers)
            views.append(SessionView(session_id, scored.line(), tuple(_turn(t) for t in turns)))
        return sorted(views, key=lambda v: (v.turns[0].trace_id if v.turns else "", v.session_id))

    def session_lines(self) -> list[dict[str, Any]]:
        """The session scores of every session as result lines (``trace_id``: ``session:<id>``)."""
        return [view.line | {"trace_id": f"session:{view.session_id}"} for view in self.sections()]

    def _result(self, line: dict[str, Any]) -> TraceResult:
        trace_id = line.get("trace_id")
        meta = dict(self.metadata(str(trace_id))) if self.metadata is not None and trace_id else None
        return result_from_line(line, meta)


def _latest(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per trace: the last one read (a file with a trace twice: its later result)."""
    return list({str(line.get("trace_id")): line for line in lines}.values())


def _turn(result: TraceResult) -> Turn:
    cell = result.scores.get(DIAGNOSIS)
    value = str(cell.value) if cell is not None and cell.value is not None else None
    why = None if value else (cell.reason if cell is not None else "; ".join(result.errors) or "not scored")
    return Turn(str(result.trace_id), value, why, result.trace_url)


def session_summary(tap: SessionTap) -> Summary:
    """The stats of the session scores over every session the tap saw (what a gate limit on one reads)."""
    summary = Summary()
    for line in tap.session_lines():
        summary.add(line)
    return summary


def sessions_to_json(views: Iterable[SessionView]) -> list[dict[str, Any]]:
    """The sessions as JSON: the session's line plus its turns (trace id, cell or why none)."""
    return [view.line | {"turns": [{"trace_id": t.trace_id, "cell": t.cell, "why": t.why} for t in view.turns]}
            for view in views]  # fmt: skip
