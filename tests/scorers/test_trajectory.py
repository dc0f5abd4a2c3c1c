"""The trajectory counts (#33 item 3): ``trajectory.search_calls``, ``trajectory.fetch_calls``,
``trajectory.repeated_queries`` and ``trajectory.fetch_chars`` on hand-built traces, each value counted by hand."""

from __future__ import annotations

from typing import Any

from tracescore.catalog import Reasons
from tracescore.engine.plan import deterministic_scorers
from tracescore.scorers.trajectory import (
    FETCH_CALLS,
    FETCH_CHARS,
    FETCH_UNUSED_RATE,
    SEARCH_AFTER_FOUND,
    SEARCH_CALLS,
    SEARCH_QUERY_OVERLAP,
    SEARCH_REPEATED_QUERIES,
    content_words,
    first_query,
    normalise_query,
    trajectory_scorer,
)
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
    assert got[FETCH_CHARS].value == 10.0  # the 404 page's "abcde" was never read (#43 item 4)


def test_fetch_chars_counts_only_the_fetches_that_did_not_fail() -> None:
    """#43 item 4: a fetch with an error status (the one rule, ``fetch_failed``) is not reading; a page read twice
    counts twice."""
    page, not_found, unavailable = "0123456789", "Not Found", "<html><body><h1>503 Service Unavailable</h1></html>"
    steps = [
        _fetch(page, 200),
        _fetch(not_found, 404),
        _fetch(unavailable, 503),
        _fetch(page),
        {**_fetch("timed out"), "status": "timeout"},
        {**_fetch("refused"), "status": False},
    ]
    got = _scores(steps=steps)
    assert got[FETCH_CHARS].value == 20.0 and got[FETCH_CALLS].value == 6.0  # the page twice; the failures called
    got = _scores(steps=[_search("q"), _fetch(not_found, 404), _fetch(unavailable, 503)])
    assert got[FETCH_CHARS].value == 0.0 and got[FETCH_CALLS].value == 2.0  # called twice, read nothing: a count


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


def test_an_unreadable_step_counts_as_one_call_and_leaves_what_it_held_absent() -> None:
    """Every adapter records an unreadable call as its step plus a blind spot naming it: one call, not two (#50)."""
    spots = [{"kind": "search", "tool": "web_search", "reason": "output is str"},
             {"kind": "fetch", "tool": "fetch_url", "reason": "no output recorded"}]  # fmt: skip
    got = _scores(steps=[_search("q"), _fetch("abc")], blind_spots=spots)
    assert (got[SEARCH_CALLS].value, got[FETCH_CALLS].value) == (1.0, 1.0)
    assert "web_search: output is str" in (got[SEARCH_REPEATED_QUERIES].reason or "")
    assert "fetch_url: no output recorded" in (got[FETCH_CHARS].reason or "")
    assert not got[SEARCH_REPEATED_QUERIES].present and not got[FETCH_CHARS].present


def test_normalised_query_and_every_path_scores_the_trajectory() -> None:
    assert normalise_query(" “Acme”   Return\tPolicy?! ") == "acme” return policy"  # only the ends are trimmed
    names = {s.name for scorer in deterministic_scorers() for s in scorer(Trace.model_validate({"id": "t"}))}
    assert {SEARCH_CALLS, FETCH_CALLS, SEARCH_REPEATED_QUERIES, FETCH_CHARS} <= names


# -- #33 item 3, the rest: the first query against the question, pages never cited, searches after the find -------

QUESTION = "How many days do I have to return an item at Acme?"  # content words: days, return, item, acme


def test_query_overlap_counted_by_hand_with_the_queries_named() -> None:
    steps = [_search("acme return window"), _search("acme return days"), _search("")]
    got = _scores(question=QUESTION, steps=steps)[SEARCH_QUERY_OVERLAP]
    assert got.value == 0.5  # acme and return of the four
    assert got.comment == ('first query: "acme return window"; question words not in it: days, item;'
                           ' later queries: "acme return days"')  # fmt: skip
    assert first_query(got.comment) == "acme return window"
    assert content_words(QUESTION) == ["days", "return", "item", "acme"]
    whole = _scores(question=QUESTION, steps=[_search('Acme: return an ITEM, "days"?')])[SEARCH_QUERY_OVERLAP]
    assert whole.value == 1.0 and whole.comment == 'first query: "Acme: return an ITEM, \\"days\\"?"'
    assert first_query(whole.comment) == 'Acme: return an ITEM, "days"?'


def test_query_overlap_absent_without_a_question_a_content_word_or_a_first_query() -> None:
    assert _scores(steps=[_search("q")])[SEARCH_QUERY_OVERLAP].reason == Reasons.NO_QUESTION.text
    only_stop = _scores(question="What is it?", steps=[_search("q")])[SEARCH_QUERY_OVERLAP]
    assert only_stop.reason == Reasons.NO_QUESTION_WORD.text
    unsent = _scores(question=QUESTION, steps=[_search(""), _search("acme")])[SEARCH_QUERY_OVERLAP]
    assert unsent.reason == Reasons.NO_FIRST_QUERY.text and not unsent.present
    assert _scores(question=QUESTION, steps=[_fetch("x")])[SEARCH_QUERY_OVERLAP].reason == Reasons.NO_SEARCH_STEP.text
    spot = [{"kind": "search", "tool": "web_search", "reason": "output is str"}]
    blind = _scores(question=QUESTION, steps=[_search("acme")], blind_spots=spot)[SEARCH_QUERY_OVERLAP]
    assert "web_search: output is str" in (blind.reason or "") and not blind.present
    assert first_query("repeated: 'x'") is None and first_query(None) is None and first_query("first query: 3") is None


def _page(url: str | None, status: int | None = 200, doc_id: str | None = None) -> dict[str, Any]:
    return {"kind": "fetch", "url": url, "doc_id": doc_id, "text": "page", "status": status}


ANSWER = "Returns take 30 days [1]. Shipping is free [2].\n\n[1] https://a.example/1\n[2] https://z.example/never"


def test_unused_rate_counted_by_hand() -> None:
    steps = [_search("acme"), _page("https://a.example/1"), _page("https://b.example/2"), _page("https://B.example/2/"),
             _page("https://c.example/3", 404), _page(None, doc_id="kb-7")]  # fmt: skip
    got = _scores(answer=ANSWER, steps=steps)[FETCH_UNUSED_RATE]
    # pages read: a (cited), b (twice, one page: never cited), kb-7 (never cited); c failed (read nothing); the cited
    # z was never fetched (citation.unfetched_rate's business)
    assert got.value == 2 / 3
    assert got.comment == "fetched, never cited: https://b.example/2; kb-7"
    every = _scores(answer=ANSWER, steps=[_page("https://a.example/1")])[FETCH_UNUSED_RATE]
    assert every.value == 0.0 and every.comment is None
    explicit = _scores(answer="Returns take 30 days.", citations=[{"doc_id": "kb-7"}], steps=steps)[FETCH_UNUSED_RATE]
    assert explicit.value == 2 / 3  # kb-7 cited explicitly; a and b not


def test_unused_rate_absent_when_the_answer_cites_nothing_or_nothing_was_read() -> None:
    steps = [_page("https://a.example/1")]
    assert _scores(answer="Returns take 30 days.", steps=steps)[FETCH_UNUSED_RATE].reason == Reasons.NOTHING_CITED.text
    assert _scores(answer="", steps=steps)[FETCH_UNUSED_RATE].reason == Reasons.EMPTY_ANSWER.text
    failed = _scores(answer=ANSWER, steps=[_page("https://a.example/1", 500)])[FETCH_UNUSED_RATE]
    assert failed.reason == Reasons.NO_PAGE_FETCHED.text
    assert _scores(answer=ANSWER, steps=[_search("q")])[FETCH_UNUSED_RATE].reason == Reasons.NO_PAGE_FETCHED.text
    spot = [{"kind": "fetch", "tool": "fetch_url", "reason": "no output recorded"}]
    blind = _scores(answer=ANSWER, steps=steps, blind_spots=spot)[FETCH_UNUSED_RATE]
    assert "fetch_url: no output recorded" in (blind.reason or "") and not blind.present


def _hits(*ids: str) -> dict[str, Any]:
    return {"kind": "search", "query": "q",
            "hits": [{"doc_id": i} if not i.startswith("http") else {"url": i} for i in ids]}  # fmt: skip


def test_after_found_counted_by_hand_with_groups_and_urls() -> None:
    steps = [_hits("other", "faq"), _hits(), _hits(*[f"n{i}" for i in range(8)], "ship-v2"), _hits("faq"), _hits()]
    required = [["faq", "policy-v4"], "ship-v2"]
    got = _scores(steps=steps, labels={"required_doc_ids": required})[SEARCH_AFTER_FOUND]
    assert got.value == 2.0  # the groups complete in search 3 (ship-v2 at rank 9: any rank counts); 4 and 5 after
    assert got.comment == "every required doc among the hits of search 3 of 5" and got.metadata["found_at"] == 3
    by_url = _scores(steps=[_hits("https://A.example/1"), _hits()], labels={"required_doc_ids": ["https://a.example/1/"]})
    assert by_url[SEARCH_AFTER_FOUND].value == 1.0
    last = _scores(steps=[_hits(), _hits("ship-v2")], labels={"required_doc_ids": ["ship-v2"]})[SEARCH_AFTER_FOUND]
    assert last.value == 0.0 and last.comment is None


def test_after_found_absent_without_the_label_or_the_find() -> None:
    steps = [_hits("faq")]
    never = _scores(steps=steps, labels={"required_doc_ids": [["faq"], ["x", "y"]]})[SEARCH_AFTER_FOUND]
    assert never.reason == Reasons.NOT_ALL_FOUND.format(missing="x or y")
    assert _scores(steps=steps)[SEARCH_AFTER_FOUND].reason == Reasons.NO_REQUIRED_LABEL.text
    refusal = _scores(steps=steps, labels={"required_doc_ids": [], "expect_refusal": True})[SEARCH_AFTER_FOUND]
    assert refusal.reason == Reasons.REFUSAL_RECALL.text
    empty = _scores(steps=steps, labels={"required_doc_ids": [["", "faq"]]})[SEARCH_AFTER_FOUND]
    assert empty.reason == Reasons.EMPTY_REQUIRED_ID.format(required=[["", "faq"]])
    fetch_only = _scores(steps=[_fetch("x")], labels={"required_doc_ids": ["faq"]})[SEARCH_AFTER_FOUND]
    assert fetch_only.reason == Reasons.NO_SEARCH_STEP.text


def test_a_blind_spot_without_a_step_leaves_the_count_absent_not_zero() -> None:
    """A declared built-in search whose calls the output does not show: how many searches ran is not known (#50)."""
    spots = [{"kind": "search", "tool": "web_search", "reason": "declares built-in search but shows no calls"}]
    got = _scores(steps=[_fetch("abc")], blind_spots=spots)
    assert not got[SEARCH_CALLS].present and "shows no calls" in (got[SEARCH_CALLS].reason or "")
    assert got[FETCH_CALLS].value == 1.0
