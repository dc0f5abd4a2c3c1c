"""The trajectory counts (#33 item 3): ``search.calls``, ``fetch.calls``, ``search.repeated_queries`` and
``fetch.chars`` on hand-built traces, each value counted by hand."""

from __future__ import annotations

from typing import Any

from tracescore.catalog import FETCH_CALLS, FETCH_CHARS, SEARCH_CALLS, SEARCH_REPEATED_QUERIES, Reasons
from tracescore.scorers import default_scorers
from tracescore.scorers.trajectory import normalise_query, trajectory_scorer
from tracescore.scores import Score
from tracescore.trace import Trace


def _scores(**trace: Any) -> dict[str, Score]:
    return {s.name: s for s in trajectory_scorer()(Trace.model_validate({"id": "t", **trace}))}


def _search(query: str) -> dict[str, Any]:
    return {"kind": "search", "query": query, "hits": [{"url": "https://a.example/"}]}


def _fetch(text: str, status: int | None = None) -> dict[str, Any]:
    return {"kind": "fetch", "url": "https://a.example/", "text": text, "status": status}


def test_calls_repeats_and_characters_counted_by_hand() -> None:
    steps = [_search("Acme return policy"), _fetch("0123456789"), _search("  acme   RETURN policy? "),
             _search("acme warranty"), _fetch("abcde", 404), _search('"Acme return policy"'), _search("")]
    got = _scores(steps=steps)
    assert got[SEARCH_CALLS].value == 5.0 and got[FETCH_CALLS].value == 2.0
    assert got[SEARCH_REPEATED_QUERIES].value == 2.0  # the 2nd and the 5th repeat the 1st; the empty one is no query
    repeated = "repeated: '  acme   RETURN policy? '; repeated: '\"Acme return policy\"'"
    assert got[SEARCH_REPEATED_QUERIES].comment == repeated
    assert got[FETCH_CHARS].value == 15.0  # 10 + 5: the error page's text was read too


def test_a_fetch_only_trace_has_zero_searches_and_no_repeat_count() -> None:
    got = _scores(steps=[_fetch("abc")])
    assert (got[SEARCH_CALLS].value, got[FETCH_CALLS].value, got[FETCH_CHARS].value) == (0.0, 1.0, 3.0)
    assert got[SEARCH_REPEATED_QUERIES].reason == Reasons.NO_SEARCH_STEP.text
    got = _scores(steps=[_search("q")])
    assert got[FETCH_CALLS].value == 0.0 and got[FETCH_CHARS].reason == Reasons.NO_PAGE_FETCHED.text
    assert got[SEARCH_REPEATED_QUERIES].value == 0.0


def test_no_tool_step_at_all_is_absent_not_zero() -> None:
    got = _scores(answer="a chat answer")
    assert {s.reason for s in got.values()} == {Reasons.NO_TOOL_STEP.text, Reasons.NO_SEARCH_STEP.text,
                                                Reasons.NO_PAGE_FETCHED.text}  # fmt: skip
    assert not any(s.present for s in got.values())


def test_an_unreadable_step_counts_as_a_call_and_leaves_what_it_held_absent() -> None:
    spots = [{"kind": "search", "tool": "web_search", "reason": "output is str"},
             {"kind": "fetch", "tool": "fetch_url", "reason": "no output recorded"}]  # fmt: skip
    got = _scores(steps=[_search("q"), _fetch("abc")], blind_spots=spots)
    assert (got[SEARCH_CALLS].value, got[FETCH_CALLS].value) == (2.0, 2.0)
    assert "web_search: output is str" in (got[SEARCH_REPEATED_QUERIES].reason or "")
    assert "fetch_url: no output recorded" in (got[FETCH_CHARS].reason or "")
    assert not got[SEARCH_REPEATED_QUERIES].present and not got[FETCH_CHARS].present


def test_normalised_query_and_every_path_scores_the_trajectory() -> None:
    assert normalise_query(" “Acme”   Return\tPolicy?! ") == "acme” return policy"  # only the ends are trimmed
    names = {s.name for scorer in default_scorers() for s in scorer(Trace.model_validate({"id": "t"}))}
    assert {SEARCH_CALLS, FETCH_CALLS, SEARCH_REPEATED_QUERIES, FETCH_CHARS} <= names
