"""The scheduled job's session step: after a run's traces are stored, write the scores of each session that is done.

No platform says when a conversation ended, so a session is done once it has been idle ``[sessions] idle`` (no turn
started since), and done again when a later turn arrives (``store/session_state``: due). Its scores are computed by the
session scorers from its turns as last scored (``store.sessions.turn_results``: read from the store, never by
reading the platform's window again), written through the run's sink (``Sink.write_sessions``), and only then marked
written, in one transaction with the ledger of what the sink wrote: a crash or SIGKILL before the mark writes the
same ids again on the next run (an upsert: nothing duplicated), a crash after it writes nothing more.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol, TypeVar

from tracescore.engine.interrupt import listening, received
from tracescore.engine.setup import JobSetup
from tracescore.errors import Interrupted
from tracescore.result import TraceResult
from tracescore.scores import Score
from tracescore.sinks.base import Sink
from tracescore.sinks.sessions import SessionScores
from tracescore.store.db import Store
from tracescore.store.session_state import Session, Sessions, turn_results

CHUNK = 50
"""Sessions written (and marked) per transaction."""

SessionScorer = Callable[[Sequence[TraceResult]], list[Score]]


def score_session(session_id: str, turns: Sequence[TraceResult], scorers: Sequence[SessionScorer]) -> SessionScores:
    """The scores of one session from its turns (oldest first)."""
    stamps = [t.timestamp for t in turns if t.timestamp is not None]
    first = min(stamps) if stamps else datetime.fromtimestamp(0, UTC)
    scores = [s for scorer in scorers for s in scorer(turns)]
    last = dict(turns[-1].metadata) if turns else {}
    return SessionScores(session_id, first, tuple(str(t.trace_id) for t in turns), scores, last)


def write_sessions(
    store: Store,
    source_key: str,
    scorers: Sequence[SessionScorer],
    sink: Sink | None,
    *,
    now: datetime,
    idle: timedelta,
) -> dict[str, Any]:
    """Fold the stored turns into the sessions table, then score and write every due session; what it did, for the
    run summary (``sessions``: due, written, waiting, the session scores accepted and removed)."""
    sessions = Sessions(store, source_key)
    sessions.fold()
    store.commit()
    due = sessions.due(now, idle)
    written = accepted = removed = 0
    for start in range(0, len(due), CHUNK):
        if (signum := received()) is not None:
            raise Interrupted(signum)
        chunk: list[tuple[Session, SessionScores]] = [
            (s, score_session(s.session_id, turn_results(store, source_key, s.session_id), scorers))
            for s in due[start : start + CHUNK]
        ]
        if sink is not None:
            report = sink.write_sessions([scored for _, scored in chunk])  # SinkError: nothing marked, the next run
            if report is not None:  # writes the same ids again
                accepted, removed = accepted + report.accepted, removed + report.removed
        for session, scored in chunk:
            sessions.written(session, scored.line(), now)
        store.commit()  # the ledger the sink queued and the marks: one transaction
        written += len(chunk)
    return {"sessions": {"due": len(due), "written": written, "waiting": sessions.waiting(now, idle),
                         "scores_written": accepted, "scores_removed": removed}}  # fmt: skip


class Ran(Protocol):
    """What a finished run gives the session step: its id, its summary (stored again with the step's counts)."""

    run_id: str
    status: str
    summary: dict[str, Any]


R = TypeVar("R", bound=Ran)


def session_step(setup: JobSetup, store: Store, ran: R, *, now: datetime) -> R:
    """A scheduled run's session step (``write_sessions`` with the run's session scorers and sink), its counts added
    to the run's stored summary; a failure (the sink, a signal) is recorded there too, then raised."""
    plan = setup.scorer_plan
    scorers = plan.session_scorers() if plan is not None else []
    said = ran.summary.setdefault("sessions", {})  # a backfill's says what it carried: the step's counts join it
    try:
        with listening(threading.Event()):
            said |= write_sessions(store, setup.source_key, scorers, setup.sink, now=now,
                                   idle=setup.session_idle)["sessions"]  # fmt: skip
    except BaseException as exc:
        said |= {"error": str(exc) or type(exc).__name__}
        raise
    finally:
        store.finish_run(ran.run_id, ran.summary, status=ran.status)
    return ran
