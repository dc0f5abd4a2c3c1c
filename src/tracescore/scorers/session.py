"""Session scores: one set per conversation, from the scored turns of that session (its traces, oldest first).

A session scorer takes ``turns`` (the turns' ``TraceResult``s, in order) instead of a trace: the registry calls it a
session scorer (stage ``session``), the engine never runs it per trace, and ``tracescore.sessions`` calls it once per
session with the turns' current results. Its scores are built only from the turns' own scores, never from a stage
average, and a turn that could not be decided makes a session score absent with that turn's reason (its class: a
fact about the turn removes an earlier session score, a failure to compute keeps it), never 0.

- ``session.turns``: how many turns the session has.
- ``session.failed_turns``: turns whose diagnosis is not all pass (a cell other than ``grounded/right`` or
  ``retrieval_pass/right``); absent while any turn's diagnosis is undecided.
- ``session.first_failed_turn``: the 1-based number of the first failed turn; absent when a turn before it is
  undecided, and (does not apply) when no turn failed.
- ``session.diagnosis``: the diagnosis cell of the first failed turn (absent as ``first_failed_turn``).
- ``session.fabricated_count``: the sum of the turns' ``citation.fabricated_count`` (must be 0); a turn without an
  answer adds nothing, a turn whose count was not computed makes it absent.
- ``session.grounding_rate``: supported claims / judged claims over every turn (the turns' ``grounding.rate``
  verdict counts); a turn without a claim adds nothing, a turn not judged makes it absent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tracescore.catalog import NOT_COMPUTED, absence_kind
from tracescore.reasons import Reasons
from tracescore.registry import ScoreSpec, reasons, scorer
from tracescore.result import TraceResult
from tracescore.scorers.citations import CITATION_FABRICATED_COUNT
from tracescore.scorers.diagnosis import CELLS, DIAGNOSIS
from tracescore.scorers.grounding import GROUNDING_RATE
from tracescore.scores import Score, absent, score

PREFIX = "session."
"""Every session score's name starts with it (a gate limit on one is checked over the sessions, not the traces)."""
SESSION_TURNS = "session.turns"
SESSION_FAILED = "session.failed_turns"
SESSION_FIRST_FAILED = "session.first_failed_turn"
SESSION_DIAGNOSIS = "session.diagnosis"
SESSION_FABRICATED = "session.fabricated_count"
SESSION_GROUNDING = "session.grounding_rate"
PASSING = frozenset({"grounded/right", "retrieval_pass/right"})
"""The diagnosis cells of a turn that passed every stage it was scored on."""

_WHY = Reasons
_TURN = reasons(_WHY.SESSION_TURN)
SPECS = (
    ScoreSpec(SESSION_TURNS, "numeric", None, 1, definition="turns (traces) of the session"),
    ScoreSpec(SESSION_FAILED, "numeric", "lower", 0, absent=_TURN,
              definition="turns whose diagnosis is not all pass"),
    ScoreSpec(SESSION_FIRST_FAILED, "numeric", None, 1, absent=reasons(_WHY.SESSION_TURN, _WHY.NO_FAILED_TURN),
              definition="number (from 1) of the session's first failed turn"),
    ScoreSpec(SESSION_DIAGNOSIS, "categorical", None, categories=CELLS,
              absent=reasons(_WHY.SESSION_TURN, _WHY.NO_FAILED_TURN),
              definition="the diagnosis cell of the session's first failed turn"),
    ScoreSpec(SESSION_FABRICATED, "numeric", "lower", 0, absent=reasons(_WHY.SESSION_TURN, _WHY.NO_SESSION_ANSWER),
              definition="cited URLs never seen in any search result or fetch, summed over the turns (must be 0)"),
    ScoreSpec(SESSION_GROUNDING, "numeric", "higher", 0, 1, absent=reasons(_WHY.SESSION_TURN, _WHY.NO_SESSION_CLAIM),
              definition="supported claims / judged claims over the session"),
)  # fmt: skip


@scorer(stage="session", version="session-1", scores=SPECS)
def session_scores(*, turns: Sequence[TraceResult]) -> list[Score]:
    """The session scores of ``turns`` (the session's scored turns, oldest first)."""
    return [score(SESSION_TURNS, float(len(turns))), *_failures(turns), _fabricated(turns), _grounding(turns)]


def turn_failed(result: TraceResult) -> bool | None:
    """Whether a scored turn failed (its diagnosis is not all pass); None when its diagnosis is undecided."""
    cell = result.scores.get(DIAGNOSIS)
    if cell is None or cell.value is None:
        return None
    return str(cell.value) not in PASSING


def _why(turn: int, result: TraceResult, name: str) -> str:
    """Why turn ``turn`` (1-based) gives no ``name``: its own absence reason, or that it was not scored."""
    found = result.scores.get(name)
    inner = found.reason if found is not None and found.reason else _WHY.TURN_NOT_SCORED.text
    return _WHY.SESSION_TURN.format(turn=turn, reason=inner)


@dataclass(frozen=True)
class _First:
    """The first failed turn (1-based) and its cell, or the first undecided turn before any failed one."""

    failed: int | None = None
    cell: str | None = None
    undecided: int | None = None


def _failures(turns: Sequence[TraceResult]) -> list[Score]:
    first = _First()
    failed, undecided = 0, None
    for i, result in enumerate(turns, 1):
        verdict = turn_failed(result)
        if verdict is None:
            undecided = undecided or i
            if first.failed is None and first.undecided is None:
                first = _First(undecided=i)
        elif verdict:
            failed += 1
            if first.failed is None and first.undecided is None:
                first = _First(failed=i, cell=str(turns[i - 1].scores[DIAGNOSIS].value))
    out = [absent(SESSION_FAILED, _why(undecided, turns[undecided - 1], DIAGNOSIS)) if undecided is not None
           else score(SESSION_FAILED, float(failed))]  # fmt: skip
    if first.undecided is not None:
        why = _why(first.undecided, turns[first.undecided - 1], DIAGNOSIS)
        return [*out, absent(SESSION_FIRST_FAILED, why), absent(SESSION_DIAGNOSIS, why)]
    if first.failed is None:
        none = _WHY.NO_FAILED_TURN.text
        return [*out, absent(SESSION_FIRST_FAILED, none), absent(SESSION_DIAGNOSIS, none)]
    assert first.cell is not None
    return [*out, score(SESSION_FIRST_FAILED, float(first.failed)),
            score(SESSION_DIAGNOSIS, first.cell, comment=f"turn {first.failed}: {turns[first.failed - 1].trace_id}")]


def _fabricated(turns: Sequence[TraceResult]) -> Score:
    total, counted, where = 0.0, 0, []
    for i, result in enumerate(turns, 1):
        found = result.scores.get(CITATION_FABRICATED_COUNT)
        if found is not None and found.value is not None:
            total += float(found.value)
            counted += 1
            if found.value:
                where.append(f"turn {i} ({result.trace_id}): {found.value:g}")
        elif found is None or absence_kind(found.reason, CITATION_FABRICATED_COUNT) == NOT_COMPUTED:
            return absent(SESSION_FABRICATED, _why(i, result, CITATION_FABRICATED_COUNT))
    if not counted:
        return absent(SESSION_FABRICATED, _WHY.NO_SESSION_ANSWER.text)
    return score(SESSION_FABRICATED, total, comment="; ".join(where) or None)


def _grounding(turns: Sequence[TraceResult]) -> Score:
    supported, judged = 0, 0
    for i, result in enumerate(turns, 1):
        found = result.scores.get(GROUNDING_RATE)
        if found is not None and found.value is not None:
            verdicts = found.metadata.get("verdicts")
            if not isinstance(verdicts, dict):
                why = _WHY.SESSION_TURN.format(turn=i, reason=_WHY.NO_CLAIM_COUNTS.text)
                return absent(SESSION_GROUNDING, why)
            supported += int(verdicts.get("supported", 0))
            judged += sum(int(n) for n in verdicts.values())
        elif found is None or absence_kind(found.reason, GROUNDING_RATE) == NOT_COMPUTED:
            return absent(SESSION_GROUNDING, _why(i, result, GROUNDING_RATE))
    if not judged:
        return absent(SESSION_GROUNDING, _WHY.NO_SESSION_CLAIM.text)
    return score(SESSION_GROUNDING, supported / judged, supported=supported, judged=judged)
