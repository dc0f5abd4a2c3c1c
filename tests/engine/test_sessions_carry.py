"""#48 acceptance 1 (the evidence half): generated conversations scored with the evidence of their earlier turns,
against a reference computed plainly by the generator (tests/engine/sessions_gen.py).

Turn 2 cites a page fetched in turn 1 → fetched (neither unfetched nor fabricated); a page fetched only in a later
turn → unfetched; a page of another session → fabricated; a number stated only on turn 1's page → stated in turn 3;
``carry_evidence = false`` gives the scores of each turn alone (today's).
"""

from __future__ import annotations

from typing import Any

import pytest

import tracescore
from tests.engine.sessions_gen import Turn, generate, reference
from tracescore.result import TraceResult
from tracescore.urls import normalize_url


@pytest.fixture(scope="module")
def generated() -> tuple[list[Turn], list[dict[str, Any]]]:
    turns, dicts = generate()
    assert all(normalize_url(p.url) == p.url for t in turns for _, p in t.cited)  # the reference compares as written
    return turns, dicts


def _check(results: list[TraceResult], turns: list[Turn], *, carry: bool) -> None:
    expected = reference(turns, carry=carry)
    assert {r.trace_id for r in results} == set(expected)
    for r in results:
        want = expected[r.trace_id]
        unfetched = r.scores["citation.unfetched_rate"]
        assert unfetched.value == pytest.approx(len(want.unfetched) / len(want.cited)), r.trace_id
        assert set(unfetched.metadata["unfetched"]) == want.unfetched, r.trace_id
        fabricated = r.scores["citation.fabricated_count"]
        assert fabricated.value == len(want.fabricated), (r.trace_id, fabricated.comment)
        assert set(fabricated.metadata["fabricated"]) == want.fabricated, r.trace_id
        assert r.scores["grounding.numbers_checked"].value == len(want.numbers), r.trace_id
        numbers = r.scores["grounding.unsupported_numbers"]
        assert numbers.value == len(want.unsupported_numbers), (r.trace_id, numbers.comment)


def test_every_turn_is_scored_with_its_sessions_earlier_evidence_as_the_reference_says(
    generated: tuple[list[Turn], list[dict[str, Any]]],
) -> None:
    turns, dicts = generated
    results = tracescore.score_traces(dicts)
    assert [r.trace_id for r in results] == [d["id"] for d in dicts]  # in the order given
    _check(results, turns, carry=True)
    # the generator made every case the acceptance names, and more than once
    categories = [c for t in turns for c, _ in t.cited]
    for case in ("earlier_fetch", "fetched_later", "other_session", "earlier_hit", "only_later", "own_failed"):
        assert categories.count(case) >= 5, case


def test_the_cases_of_the_acceptance_one_by_one(generated: tuple[list[Turn], list[dict[str, Any]]]) -> None:
    turns, dicts = generated
    results = {r.trace_id: r for r in tracescore.score_traces(dicts)}
    by_id = {t.trace_id: t for t in turns}
    checked = {"earlier_fetch": 0, "fetched_later": 0, "other_session": 0, "number": 0}
    for trace_id, turn in by_id.items():
        r = results[trace_id]
        rows = {row.normalized: row for row in r.citations}
        for case, page in turn.cited:
            row = rows[page.url]
            if case == "earlier_fetch":  # a page fetched in an earlier turn: fetched, and the comment says where
                assert row.fetched and row.seen
                origin = next(t for t in turns if t.session == turn.session and page in t.fetched)
                assert page.url not in r.scores["citation.unfetched_rate"].metadata["unfetched"]
                where = r.scores["citation.unfetched_rate"].metadata["carried"][page.url]
                assert where.startswith("fetched in turn ") and origin.trace_id in where
                assert origin.index < turn.index
                checked["earlier_fetch"] += 1
            elif case == "fetched_later" and not any(
                page in t.fetched for t in turns if t.session == turn.session and t.index < turn.index
            ):  # listed before, fetched only in a later turn: unfetched, not fabricated
                assert not row.fetched and row.seen
                assert page.url in r.scores["citation.unfetched_rate"].metadata["unfetched"]
                checked["fetched_later"] += 1
            elif case == "other_session":  # another conversation's page: fabricated
                assert not row.fetched and not row.seen
                assert page.url in r.scores["citation.fabricated_count"].metadata["fabricated"]
                checked["other_session"] += 1
        if turn.index == 3:
            first = next(t for t in turns if t.session == turn.session and t.index == 1)
            for case, page in turn.cited:
                if case == "earlier_fetch" and page in first.fetched:  # a number stated only on turn 1's page
                    comment = r.scores["grounding.unsupported_numbers"].comment or ""
                    assert f'"{page.number}" stated on page' in comment and first.trace_id in comment
                    assert f'"{page.number}" not in any evidence' not in comment
                    checked["number"] += 1
    assert all(n >= 2 for n in checked.values()), checked


def test_carry_evidence_false_gives_each_turn_alone_as_today(
    generated: tuple[list[Turn], list[dict[str, Any]]],
) -> None:
    turns, dicts = generated
    alone = tracescore.score_traces(dicts, carry_evidence=False)
    _check(alone, turns, carry=False)
    # exactly what the same traces without a session score (today's scoring of a trace on its own)
    no_session = tracescore.score_traces([{k: v for k, v in d.items() if k != "session_id"} for d in dicts])
    assert [r.to_json()["scores"] for r in alone] == [r.to_json()["scores"] for r in no_session]
    # and carrying changes them: the check above can fail
    carried = tracescore.score_traces(dicts)
    assert [r.to_json()["scores"] for r in carried] != [r.to_json()["scores"] for r in alone]


def test_a_turn_without_session_id_or_the_first_turn_scores_as_alone(
    generated: tuple[list[Turn], list[dict[str, Any]]],
) -> None:
    turns, dicts = generated
    firsts = [d for d in dicts if d["id"].endswith("-turn1")]
    carried = tracescore.score_traces(dicts)
    alone = tracescore.score_traces(dicts, carry_evidence=False)
    pairs = {r.trace_id: r for r in alone}
    for r in carried:
        if r.trace_id in {d["id"] for d in firsts}:
            assert r.to_json()["scores"] == pairs[r.trace_id].to_json()["scores"]


def test_score_session_takes_the_turns_of_one_conversation_and_refuses_two(
    generated: tuple[list[Turn], list[dict[str, Any]]],
) -> None:
    turns, dicts = generated
    one = [d for d in dicts if d["session_id"] == "s3"]
    results = tracescore.score_session(one)
    _check(results, [t for t in turns if t.session == "s3"], carry=True)
    # the same turns without their session id, named by the caller
    bare = [{k: v for k, v in d.items() if k != "session_id"} for d in one]
    assert [r.values for r in tracescore.score_session(bare, "s3")] == [r.values for r in results]
    with pytest.raises(tracescore.ConfigError, match="more than one session"):
        tracescore.score_session([d for d in dicts if d["session_id"] in ("s1", "s2")])
    with pytest.raises(tracescore.ConfigError, match="no turn carries a session_id"):
        tracescore.score_session(bare)
