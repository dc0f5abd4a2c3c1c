"""Multi-hop labels (#34 item 2): hand-built traces with hand-computed ``retrieval.hops_found`` /
``retrieval.hop_order``, the per-hop first rank, the diagnosis of a multi-hop case, and no hop score without a
``hops`` label (so every other result line stays as it was)."""

from __future__ import annotations

from typing import Any

from tracescore.scorers.diagnosis import diagnose
from tracescore.scorers.hops import RETRIEVAL_HOP_ORDER, RETRIEVAL_HOPS_FOUND
from tracescore.scorers.retrieval import retrieval_scorer
from tracescore.scores import Score, score
from tracescore.trace import FetchStep, Hit, Labels, SearchStep, Trace


def _search(*docs: str) -> SearchStep:
    return SearchStep(query="q", hits=[Hit(doc_id=d) for d in docs])


def _trace(*steps: SearchStep | FetchStep, **labels: Any) -> Trace:
    return Trace(id="t", steps=list(steps), labels=Labels(**labels))


def _hops(trace: Trace) -> dict[str, Score]:
    return {s.name: s for s in retrieval_scorer(k=5)(trace) if s.name in (RETRIEVAL_HOPS_FOUND, RETRIEVAL_HOP_ORDER)}


def test_every_hop_found_in_order() -> None:
    """B at rank 1 of search 1, B fetched, A at rank 3 of search 2 (its mirror at rank 2 of search 3)."""
    trace = _trace(
        _search("doc-b", "x"), FetchStep(doc_id="doc-b"), _search("y", "z", "doc-a"), _search("w", "doc-a-mirror"),
        hops=[["doc-b"], ["doc-a", "doc-a-mirror"]],
    )
    found, order = _hops(trace).values()
    assert found.value == 1.0 and found.metadata["hop_ranks"] == [1, 2] and found.metadata["missing"] == []
    assert found.comment is None
    assert order.value is True


def test_a_hop_that_came_back_before_the_hop_before_was_fetched_is_out_of_order() -> None:
    """A came back in search 1, before B (also in search 1) was fetched: the agent did not need B to find A."""
    trace = _trace(_search("doc-b", "doc-a"), FetchStep(doc_id="doc-b"), hops=["doc-b", "doc-a"])
    found, order = _hops(trace).values()
    assert found.value == 1.0 and found.metadata["hop_ranks"] == [1, 2]
    assert order.value is False and order.metadata["early"] == ["doc-a"]
    assert order.comment == "came back before the hop before was fetched: doc-a"


def test_a_hop_found_without_the_hop_before_ever_fetched_is_out_of_order() -> None:
    # B and A both came back, B was never (successfully) fetched: a failed fetch read nothing
    trace = _trace(
        _search("doc-b"), FetchStep(doc_id="doc-b", status=404), _search("doc-a"), hops=[["doc-b"], ["doc-a"]]
    )
    assert [s.value for s in _hops(trace).values()] == [1.0, False]


def test_a_hop_never_found() -> None:
    """Three hops, the second never came back: 2 of 3 found; the order is undecided, not false."""
    trace = _trace(
        _search("x", "c1"), FetchStep(doc_id="c1"), _search("y", "z", "w", "doc-c"),
        hops=[["c1", "c2"], ["doc-b", "doc-b2"], "doc-c"],
    )
    found, order = _hops(trace).values()
    assert found.value == 2 / 3 and found.metadata["hop_ranks"] == [2, None, 4]
    assert found.metadata["missing"] == ["doc-b or doc-b2"] and found.comment == "hops never found: doc-b or doc-b2"
    assert order.value is None and order.reason == "hop order undecided: hop(s) doc-b or doc-b2 never came back"


def test_hops_by_url() -> None:
    trace = _trace(
        SearchStep(hits=[Hit(url="https://b.example/page/")]), FetchStep(url="https://B.example/page"),
        SearchStep(hits=[Hit(rank=7, url="https://a.example/x")]), hops=["https://b.example/page", "https://a.example/x"],
    )
    found, order = _hops(trace).values()
    assert found.value == 1.0 and found.metadata["hop_ranks"] == [1, 7] and order.value is True


def test_no_hop_score_without_a_hops_label() -> None:
    scored = retrieval_scorer(k=5)(_trace(_search("a"), required_doc_ids=["a"]))
    names = ["retrieval.recall_at_5", "retrieval.first_hit_rank", "retrieval.retrieved_any"]
    assert [s.name for s in scored] == names
    assert [s.name for s in retrieval_scorer(k=5)(_trace())] == names  # no search step: each absent, no hop score
    with_hops = retrieval_scorer(k=5)(_trace(_search("a"), required_doc_ids=["a"], hops=["a"]))
    assert [s.name for s in with_hops] == [*names, RETRIEVAL_HOPS_FOUND, RETRIEVAL_HOP_ORDER]


def test_hop_scores_absent_with_their_reason() -> None:
    none = _hops(_trace(hops=["a", "b"]))
    assert [s.reason for s in none.values()] == ["no search step in trace"] * 2
    empty = _hops(_trace(_search("a"), hops=[["", "a"]]))
    assert [s.reason for s in empty.values()] == ["hops holds an empty id ([['', 'a']]); fix the label"] * 2


def _diagnosis(trace: Trace) -> object:
    scores = {s.name: s for s in retrieval_scorer(k=5)(trace)} | {"answer.correct": score("answer.correct", True)}
    return diagnose(scores).value


def test_a_multi_hop_case_passes_retrieval_only_when_every_hop_was_found() -> None:
    both = _trace(_search("doc-b"), FetchStep(doc_id="doc-b"), _search("doc-a"), hops=["doc-b", "doc-a"])
    assert _diagnosis(both) == "retrieval_pass/right"
    one = _trace(_search("doc-b"), hops=["doc-b", "doc-a"])
    assert _diagnosis(one) == "retrieval_fail/right"
    # required_doc_ids fully recalled, but a hop never came back: still a retrieval failure
    assert _diagnosis(_trace(_search("doc-b"), hops=["doc-b", "doc-a"], required_doc_ids=["doc-b"])) == (
        "retrieval_fail/right"
    )
    # every hop found, but recall of required_doc_ids short: the recall verdict stands
    assert _diagnosis(_trace(_search("doc-b", "doc-a"), hops=["doc-b", "doc-a"], required_doc_ids=["c"])) == (
        "retrieval_fail/right"
    )
    # every hop found, but required_doc_ids a stale label: undecided by the stale label, as without hops
    stale = _trace(_search("doc-b", "doc-a", "p-v3"), hops=["doc-b", "doc-a"], required_doc_ids=["p-v4"])
    assert _diagnosis(stale) is None
