"""#48 item 3, acceptance 1 (the session-score half): generated sessions of real traces, scored by the real scorers,
give session scores equal to a reference computed from the generator's own design (not from our scores); the
absences say why, a session with an undecided turn never gets a 0, and the declaration is the registry's."""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import tracescore
from tracescore import catalog, registry
from tracescore.catalog import DOES_NOT_APPLY, NOT_COMPUTED, absence_kind
from tracescore.engine.plan import ScorerPlan
from tracescore.result import TraceResult
from tracescore.scorers.session import session_scores
from tracescore.scores import absent, score

START = datetime(2026, 11, 20, 9, tzinfo=UTC)


@dataclass(frozen=True)
class Turn:
    """What the generator made a turn be: labelled or not, retrieval found, answer right, fabricated citations."""

    labelled: bool
    found: bool
    right: bool
    fabricated: int


def _trace(session: int, turn: int, design: Turn) -> dict[str, Any]:
    doc, url = f"doc-{session}-{turn}", f"https://docs.example.com/{session}/{turn}"
    fakes = [f"https://nowhere.example.org/{session}/{turn}/{i}" for i in range(design.fabricated)]
    cites = " ".join(f"[{i + 2}]" for i in range(len(fakes)))
    sources = "\n".join([f"[1] {url}", *(f"[{i + 2}] {u}" for i, u in enumerate(fakes))])
    text = f"The limit for case {session}-{turn} is 42 units."
    trace: dict[str, Any] = {
        "schema_version": "1",
        "id": f"s{session}-t{turn}",
        "session_id": f"conv-{session}",
        "timestamp": (START + timedelta(hours=session, minutes=turn)).isoformat(),
        "question": f"What is the limit for case {session}-{turn}?",
        "steps": [
            {"kind": "search", "tool": "web_search", "query": f"limit case {session} {turn}",
             "hits": [{"rank": 1, "doc_id": doc, "url": url, "title": "Limits", "snippet": text}]},
            {"kind": "fetch", "tool": "fetch_page", "url": url, "doc_id": doc, "text": text, "status": 200},
        ],
        "answer": f"The limit is 42 units [1] {cites}.\n\nSources:\n{sources}",
    }  # fmt: skip
    if design.labelled:
        trace["labels"] = {
            "required_doc_ids": [doc if design.found else f"missing-{session}-{turn}"],
            "expected_answer_contains": ["42" if design.right else "99"],
        }
    return trace


def _generate(rng: random.Random, n: int) -> list[list[Turn]]:
    sessions = []
    for _ in range(n):
        turns = []
        for _ in range(rng.randint(1, 5)):
            labelled = rng.random() > 0.15
            turns.append(Turn(labelled, rng.random() > 0.3, rng.random() > 0.3, rng.choice((0, 0, 0, 1, 2))))
        sessions.append(turns)
    return sessions


def _reference(design: list[Turn]) -> dict[str, Any]:
    """The session scores the design calls for, without looking at any score (``None``: absent)."""
    failed = [not (t.found and t.right) if t.labelled else None for t in design]
    first_undecided = next((i for i, f in enumerate(failed) if f is None), None)
    first_failed = next((i for i, f in enumerate(failed) if f), None)
    out: dict[str, Any] = {
        "session.turns": float(len(design)),
        "session.failed_turns": None if first_undecided is not None else float(sum(bool(f) for f in failed)),
        "session.fabricated_count": float(sum(t.fabricated for t in design)),
        "session.grounding_rate": None,  # no judge in this test: not computed
    }
    if first_failed is not None and (first_undecided is None or first_failed < first_undecided):
        t = design[first_failed]
        cell = f"{'retrieval_pass' if t.found else 'retrieval_fail'}/{'right' if t.right else 'wrong'}"
        out |= {"session.first_failed_turn": float(first_failed + 1), "session.diagnosis": cell}
    else:
        out |= {"session.first_failed_turn": None, "session.diagnosis": None}
    return out


def _session(results: list[TraceResult]) -> dict[str, Any]:
    return {s.name: s.value for s in session_scores(turns=results)}


def test_generated_sessions_equal_the_reference() -> None:
    rng = random.Random(48)
    designs = _generate(rng, 60)
    traces = [_trace(s, t, turn) for s, design in enumerate(designs) for t, turn in enumerate(design)]
    results = tracescore.score_traces(traces)
    by_session: dict[str, list[TraceResult]] = {}
    for r in results:
        assert r.session_id is not None
        by_session.setdefault(r.session_id, []).append(r)
    checked = 0
    for s, design in enumerate(designs):
        assert _session(by_session[f"conv-{s}"]) == _reference(design), f"session {s}: {design}"
        checked += 1
    assert checked == 60
    # the generator covered every case the reference distinguishes
    refs = [_reference(d) for d in designs]
    assert any(r["session.failed_turns"] is None for r in refs) and any(r["session.failed_turns"] == 0 for r in refs)
    assert any(r["session.diagnosis"] == "retrieval_fail/wrong" for r in refs)
    assert any(r["session.fabricated_count"] for r in refs) and any(not r["session.fabricated_count"] for r in refs)


def _turn(cell: str | None, fabricated: float | None = 0.0, verdicts: dict[str, int] | None = None,
          grounding_reason: str = "no judge configured") -> TraceResult:  # fmt: skip
    scores = {
        "diagnosis": score("diagnosis", cell) if cell else absent("diagnosis", "answer undecided: no answer label"),
        "citation.fabricated_count": score("citation.fabricated_count", fabricated) if fabricated is not None
        else absent("citation.fabricated_count", "empty answer"),
        "grounding.rate": score("grounding.rate", verdicts["supported"] / sum(verdicts.values()), verdicts=verdicts)
        if verdicts else absent("grounding.rate", grounding_reason),
    }  # fmt: skip
    return TraceResult(f"t-{cell}-{fabricated}", scores)


def test_absences_carry_the_turns_reason_and_its_class_never_a_zero() -> None:
    undecided = session_scores(turns=[_turn("grounded/right"), _turn(None), _turn("grounded/wrong")])
    by = {s.name: s for s in undecided}
    assert by["session.failed_turns"].value is None
    assert by["session.failed_turns"].reason == "turn 2 of the session: answer undecided: no answer label"
    assert absence_kind(by["session.failed_turns"].reason, "session.failed_turns") == DOES_NOT_APPLY
    assert by["session.first_failed_turn"].value is None and by["session.diagnosis"].value is None
    assert by["session.grounding_rate"].reason == "turn 1 of the session: no judge configured"
    assert absence_kind(by["session.grounding_rate"].reason, "session.grounding_rate") == NOT_COMPUTED

    clean = {s.name: s for s in session_scores(turns=[_turn("grounded/right"), _turn("retrieval_pass/right")])}
    assert clean["session.failed_turns"].value == 0.0
    assert clean["session.first_failed_turn"].reason == "no turn of the session failed"
    assert absence_kind(clean["session.diagnosis"].reason, "session.diagnosis") == DOES_NOT_APPLY


def test_grounding_rate_pools_the_claims_of_every_turn() -> None:
    turns = [
        _turn("grounded/right", verdicts={"supported": 3, "partial": 0, "unsupported": 1, "contradicted": 0}),
        _turn("grounded/right", grounding_reason="answer makes no factual claim"),  # does not apply: adds nothing
        _turn("ungrounded/wrong", verdicts={"supported": 1, "partial": 1, "unsupported": 0, "contradicted": 2}),
    ]
    by = {s.name: s for s in session_scores(turns=turns)}
    assert by["session.grounding_rate"].value == pytest.approx(4 / 8)  # not the mean of the turns' rates (0.5625)
    assert by["session.diagnosis"].value == "ungrounded/wrong" and by["session.first_failed_turn"].value == 3.0
    nothing = {s.name: s for s in session_scores(turns=[_turn("grounded/right", None, None, "empty answer")])}
    assert nothing["session.grounding_rate"].reason == "no turn of the session makes a judged claim"
    assert nothing["session.fabricated_count"].reason == "no turn of the session has an answer to check"


def test_the_session_scorer_is_declared_in_the_registry_and_never_run_per_trace() -> None:
    installed = registry.load()["session"]
    assert installed.scorer.per_session and installed.scorer.stages == ("session",)
    assert {e.name for e in catalog.entries() if e.stage == "session"} == {
        "session.turns", "session.failed_turns", "session.first_failed_turn", "session.diagnosis",
        "session.fabricated_count", "session.grounding_rate",
    }  # fmt: skip
    assert catalog.entry("session.diagnosis").kind == "CATEGORICAL"  # type: ignore[union-attr]
    result = tracescore.score_traces([_trace(0, 0, Turn(True, True, True, 0))])[0]
    assert not [n for n in result.scores if n.startswith("session.")]
    assert len(ScorerPlan().session_scorers()) == 1


def test_a_session_scorer_must_take_turns_only_in_stage_session() -> None:
    with pytest.raises(ValueError, match="a session scorer"):
        registry.scorer(stage="answer", version="1", scores=[registry.ScoreSpec("answer.x", "numeric")])(
            lambda *, turns: []
        )
