"""The search trajectory the agent took, counted: ``search.calls``, ``fetch.calls``, ``search.repeated_queries``
(searches whose normalised query the agent already sent in this trace) and ``fetch.chars`` (characters of fetched
text the agent read: its reading budget).

A step the adapter saw but could not read (``Trace.blind_spots``) still counts as a call; a score resting on what it
held (its query, its text) is absent with that reason. A trace with no search or fetch step at all is not a search
agent's: its counts are absent, not 0.
"""

from __future__ import annotations

import re

from tracescore.catalog import FETCH_CALLS, FETCH_CHARS, SEARCH_CALLS, SEARCH_REPEATED_QUERIES, Reasons
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scores import Score, absent, score
from tracescore.trace import Trace

__all__ = ["normalise_query", "trajectory_scorer"]

_SPACES = re.compile(r"\s+")
_EDGES = "\"'`“”‘’.,;:!?()[]{} "


def normalise_query(query: str) -> str:
    """The query as compared for repeats: case-folded, whitespace collapsed, quotes and punctuation at its ends
    dropped."""
    return _SPACES.sub(" ", query.casefold()).strip(_EDGES)


def _unreadable(trace: Trace, kind: str, what: str) -> str | None:
    spots = [b for b in trace.blind_spots if b.kind == kind]
    if not spots:
        return None
    shown = "; ".join(f"{b.tool or kind}: {b.reason}" for b in spots[:3])
    more = f" (+{len(spots) - 3} more)" if len(spots) > 3 else ""
    return Reasons.STEPS_UNREADABLE.format(kind=kind, steps=shown + more, consequence=what)


def _repeated(trace: Trace, searches: int) -> Score:
    if not searches:
        return absent(SEARCH_REPEATED_QUERIES, Reasons.NO_SEARCH_STEP.text)
    reason = _unreadable(trace, "search", "its query may repeat another")
    if reason is not None:
        return absent(SEARCH_REPEATED_QUERIES, reason)
    sent: set[str] = set()
    repeats: list[str] = []
    for step in trace.searches:
        query = normalise_query(step.query)
        if not query:
            continue  # no query recorded: nothing to compare
        if query in sent:
            repeats.append(step.query)
        sent.add(query)
    comment = "; ".join(f"repeated: {q!r}" for q in repeats[:5]) + (f" (+{len(repeats) - 5} more)"
                                                                    if len(repeats) > 5 else "")  # fmt: skip
    return score(SEARCH_REPEATED_QUERIES, len(repeats), comment=comment or None)


def _chars(trace: Trace, fetches: int) -> Score:
    if not fetches:
        return absent(FETCH_CHARS, Reasons.NO_PAGE_FETCHED.text)
    reason = _unreadable(trace, "fetch", "its text was not counted")
    if reason is not None:
        return absent(FETCH_CHARS, reason)
    return score(FETCH_CHARS, sum(len(step.text) for step in trace.fetches))


def trajectory_scorer() -> Scorer:
    """Scorer factory for the trajectory counts."""
    no_steps = Reasons.NO_TOOL_STEP.text
    none = Scored((absent(SEARCH_CALLS, no_steps), absent(FETCH_CALLS, no_steps),
                   absent(SEARCH_REPEATED_QUERIES, Reasons.NO_SEARCH_STEP.text),
                   absent(FETCH_CHARS, Reasons.NO_PAGE_FETCHED.text)))  # fmt: skip

    def score_trajectory(trace: Trace) -> Scored:
        if not trace.steps and not trace.blind_spots:
            return none
        searches = len(trace.searches) + sum(b.kind == "search" for b in trace.blind_spots)
        fetches = len(trace.fetches) + sum(b.kind == "fetch" for b in trace.blind_spots)
        return Scored((score(SEARCH_CALLS, searches), score(FETCH_CALLS, fetches), _repeated(trace, searches),
                       _chars(trace, fetches)))  # fmt: skip

    return score_trajectory
