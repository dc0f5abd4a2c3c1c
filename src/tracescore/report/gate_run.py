"""What the gate reads from one run: its summary and, per case, the stage verdicts, the trace that shows them, the
cases that broke a citation rule and why some could not be checked. Several traces of one case (``--case-key``
naming a question asked several times, or one trace id written twice) count as one case whose stage passes only if it
passes in every one of them: the last line no longer hides a failing one."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tracescore.report.tally import Summary
from tracescore.report.verdicts import field_value, stage_verdicts
from tracescore.scorers.citations import CITATION_FABRICATED_COUNT, CITATION_UNFETCHED_RATE, NOTHING_CITED

FABRICATED, UNREAD = CITATION_FABRICATED_COUNT, CITATION_UNFETCHED_RATE


@dataclass(frozen=True)
class CaseFailure:
    """A case that broke a rule: its key, the trace that shows it, the stage, and what was seen."""

    case: str
    trace_id: str
    stage: str
    detail: str = ""



@dataclass
class Run:
    """What the gate needs from one run: its Summary and, per case, the stage verdicts and the trace id."""

    summary: Summary = field(default_factory=Summary)
    cases: dict[str, tuple[str, dict[str, bool | None]]] = field(default_factory=dict)
    unreadable: dict[str, tuple[str, str]] = field(default_factory=dict)
    broken: list[CaseFailure] = field(default_factory=list)
    fabricated: list[CaseFailure] = field(default_factory=list)
    unread: list[CaseFailure] = field(default_factory=list)
    judges: set[tuple[str, str]] = field(default_factory=set)
    valued: int = 0  # readable lines with at least one score value
    missing: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # case -> its line's absent reasons
    links: dict[str, str] = field(default_factory=dict)  # trace id -> its ``trace_url`` (lines read from a platform)
    # per citation rule's score: why it could not be checked -> traces (an answer citing nothing counts as checked)
    unchecked: dict[str, Counter[str]] = field(default_factory=lambda: {FABRICATED: Counter(), UNREAD: Counter()})


def fold_run(results: Iterable[Mapping[str, Any]], case_key: str, allow_unread: bool) -> Run:
    """Read one run's result lines for the gate (each line once, streaming)."""
    run = Run()
    for result in results:
        run.summary.add(result)
        tid = str(result.get("trace_id"))
        if isinstance(url := result.get("trace_url"), str) and isinstance(result.get("trace_id"), str):
            run.links[tid] = url
        case = field_value(result, case_key) or tid
        scores = result.get("scores") or {}
        if result.get("errors") and not scores and not result.get("missing"):
            reason = "; ".join(map(str, result["errors"]))[:200]
            if result.get("trace_id") is None:  # not even an id: name it by its line
                run.broken.append(CaseFailure(f"line {result.get('line', '?')}", "", "unreadable", reason))
                continue
            run.unreadable[case] = (tid, reason)
            run.broken.append(CaseFailure(case, tid, "unreadable", reason))
            continue
        verdicts = stage_verdicts(result, unread_fails=not allow_unread)
        if case in run.cases:  # several traces of one case (or one id twice): a stage passes only if it passes in all
            verdicts, tid = _worst(run.cases[case], verdicts, tid)
        run.cases[case] = (tid, verdicts)
        missing = result.get("missing")
        missing = missing if isinstance(missing, Mapping) else {}
        run.missing.setdefault(case, missing)
        run.valued += bool(scores)
        for name in (FABRICATED, UNREAD):
            if not isinstance(scores.get(name), int | float):
                reason = str(missing.get(name) or "not scored")
                if reason not in NOTHING_CITED:
                    run.unchecked[name][reason] += 1
        judge = result.get("judge")
        if isinstance(judge, Mapping) and judge.get("model"):
            run.judges.add((str(judge["model"]), str(judge.get("rubric_version") or "")))
        fabricated = scores.get(FABRICATED)
        if isinstance(fabricated, int | float) and fabricated > 0:
            run.fabricated.append(CaseFailure(case, tid, "citations", f"{fabricated:g} fabricated cited URL(s)"))
        unread = scores.get(UNREAD)
        if isinstance(unread, int | float) and unread > 0:
            run.unread.append(CaseFailure(case, tid, "citations", f"{unread:.0%} of cited URLs never fetched"))
    return run


def _worst(
    seen: tuple[str, dict[str, bool | None]], verdicts: dict[str, bool | None], tid: str
) -> tuple[dict[str, bool | None], str]:
    """The verdicts of two traces of one case merged (fail over pass over undecided), with the trace id that shows
    the worst of them (the earlier one unless only the later fails a stage)."""
    first, old = seen
    merged = {
        stage: False if False in (old.get(stage), v) else True if True in (old.get(stage), v) else None
        for stage, v in verdicts.items()
    }
    newly = any(v is False and old.get(stage) is not False for stage, v in verdicts.items())
    return merged, tid if newly else first
