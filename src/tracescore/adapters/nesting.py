"""Tool calls nested in tool calls, for adapters: which calls are steps, and a search read through its nested searches.

A search or fetch call nested inside another one is not a step of its own (the outer call is what the agent made).
One exception keeps what the agent saw readable: LangChain's ``create_retriever_tool`` records a tool call whose
output is the documents' text joined into one string, and below it the retriever call that holds the documents. When
a search call's own output cannot be read but every search nested directly in it was read, the step's hits are those
searches' hits (one step per call, no blind spot), so the trace scores as the JSONL trace of that search does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from tracescore.adapters.notes import MappingNote, collect_notes, note
from tracescore.trace import BlindSpot, Hit, SearchStep

# Builds one search step, appending its blind spot (if any) to the list it is given.
SearchBuilder = Callable[[list[BlindSpot]], SearchStep]


@dataclass
class StepPlan:
    """``inside``: ids of calls nested in a search/fetch call (not steps themselves); ``nested``: for a search call,
    the ids of the search calls nested directly in it (no search/fetch call in between), in call order."""

    inside: set[str] = field(default_factory=set)
    nested: dict[str, list[str]] = field(default_factory=dict)


def plan_steps(calls: Iterable[tuple[str, str | None, str | None]]) -> StepPlan:
    """The plan of ``calls``: ``(id, parent id, role)`` in call order, role ``"search"``, ``"fetch"`` or None.

    A parent that is not among the calls ends the chain; a cycle of parents is walked at most once round.
    """
    calls = list(calls)
    parents = {cid: parent for cid, parent, _ in calls}
    roles = {cid: role for cid, _, role in calls}
    plan = StepPlan()
    for cid, parent, role in calls:
        enclosing: list[str] = []  # ancestors that are searches or fetches, nearest first
        ancestor = parent
        for _ in range(len(calls)):
            if ancestor is None or ancestor not in parents or ancestor == cid:
                break
            if roles[ancestor] is not None:
                enclosing.append(ancestor)
            ancestor = parents[ancestor]
        if not enclosing:
            continue
        plan.inside.add(cid)
        if role == "search" and len(enclosing) == 1 and roles[enclosing[0]] == "search":
            plan.nested.setdefault(enclosing[0], []).append(cid)
    return plan


def search_through_nested(
    label: str, build: SearchBuilder, nested: Sequence[SearchBuilder], blind: list[BlindSpot]
) -> SearchStep:
    """The search step ``build`` makes; when its own output cannot be read (it reports a blind spot) and every search
    call nested in it was read, with those calls' hits instead (several: concatenated, ranked by place) and no blind
    spot. Otherwise the step as built, its blind spot added to ``blind``."""
    own: list[BlindSpot] = []
    with collect_notes() as decisions:  # held back: the blind spot note goes when the nested searches are read
        step = build(own)
    if own and nested:
        read: list[SearchStep] = []
        unread = False
        with collect_notes() as inner_decisions:
            for inner in nested:
                spots: list[BlindSpot] = []
                read.append(inner(spots))
                if spots:
                    unread = True
                    break
        if not unread:
            _replay(inner_decisions)
            hits = _joined([s.hits for s in read])
            tools = ", ".join(repr(s.tool) for s in read)
            note(label, "search", f"{len(hits)} hits read from the search call(s) nested in it ({tools})")
            return step.model_copy(update={"hits": hits})
    _replay(decisions)
    blind.extend(own)
    return step


def _replay(decisions: Iterable[MappingNote]) -> None:
    for decision in decisions:
        note(decision.record, decision.decision, decision.reason)


def _joined(lists: Sequence[list[Hit]]) -> list[Hit]:
    if len(lists) == 1:
        return list(lists[0])
    hits = [hit for found in lists for hit in found]
    return [hit.model_copy(update={"rank": rank}) for rank, hit in enumerate(hits, start=1)]
