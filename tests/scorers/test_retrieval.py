"""Retrieval scorer: unit cases, trec_eval's reference outputs, and ir-measures on random rankings."""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path

import ir_measures
import pytest
from ir_measures import RR, R

from tracescore.scorers.retrieval import doc_family, retrieval_scorer
from tracescore.trace import Hit, Labels, SearchStep, Trace


def _trace(*rankings: list[str], required: list[str] | None, **labels: object) -> Trace:
    steps = [SearchStep(query=f"q{i}", hits=[Hit(doc_id=d) for d in docs]) for i, docs in enumerate(rankings)]
    return Trace(id="t", steps=steps, labels=Labels(required_doc_ids=required, **labels))


def _scores(trace: Trace, k: int = 5) -> dict[str, object]:
    return {s.name: (s.value if s.present else ("absent", s.reason)) for s in retrieval_scorer(k=k)(trace)}


def test_recall_unions_search_calls_and_rank_is_per_call() -> None:
    trace = _trace(["x", "a", "y"], ["b", "z", "w", "v", "u", "c"], required=["a", "b", "c"])
    got = _scores(trace, k=5)
    assert got["retrieval.recall_at_5"] == pytest.approx(2 / 3)  # c is at rank 6 of call 2
    assert got["retrieval.first_hit_rank"] == 1.0  # b is first in its own call
    assert got["retrieval.retrieved_any"] is True


def test_a_required_doc_ranked_below_k_is_named_as_missing_from_the_top_k() -> None:
    """Defect fixed in #14: a doc returned only below k counted 0 toward recall but was not named in the comment."""
    trace = _trace(["x", "y", "z", "w", "v", "u", "a"], ["b"], required=["a", "b", "never"])
    (recall, rank, _) = retrieval_scorer(k=5)(trace)
    assert recall.value == pytest.approx(1 / 3) and rank.value == 1.0
    assert recall.metadata["missing"] == ["a", "never"]  # a at rank 7: in no call's top 5
    assert recall.comment == "missing required docs in top 5: a, never"
    below_only = retrieval_scorer(k=5)(_trace(["x", "y", "z", "w", "v", "a"], required=["a"]))[0]
    assert below_only.value == 0.0 and below_only.comment == "missing required docs in top 5: a"


def test_k_is_part_of_the_name() -> None:
    names = {s.name for s in retrieval_scorer(k=10)(_trace(["a"], required=["a"]))}
    assert "retrieval.recall_at_10" in names and "retrieval.recall_at_5" not in names


def test_explicit_rank_and_url_matching() -> None:
    steps = [SearchStep(hits=[Hit(rank=3, url="https://Docs.example.com/a/?utm_source=x"), Hit(rank=1, doc_id="z")])]
    trace = Trace(id="t", steps=steps, labels=Labels(required_doc_ids=["https://docs.example.com/a"]))
    got = _scores(trace)
    assert got["retrieval.recall_at_5"] == 1.0
    assert got["retrieval.first_hit_rank"] == 3.0


def test_absent_not_zero() -> None:
    assert _scores(Trace(id="t"))["retrieval.recall_at_5"] == ("absent", "no search step in trace")
    got = _scores(_trace(["a"], required=None))
    assert got["retrieval.recall_at_5"] == ("absent", "no required_doc_ids label")
    assert got["retrieval.retrieved_any"] is True
    miss = _scores(_trace(["x"], required=["a"]))
    assert miss["retrieval.recall_at_5"] == 0.0
    assert miss["retrieval.first_hit_rank"] == ("absent", "no required doc came back in any search call")
    empty = _scores(_trace([], required=["a"]))
    assert empty["retrieval.retrieved_any"] is False


@pytest.mark.parametrize("required", [[""], ["a", "  "]])
def test_an_empty_required_id_is_a_broken_label_not_a_miss(required: list[str]) -> None:
    got = _scores(_trace(["", "a"], required=required))
    reason = f"required_doc_ids holds an empty id ({required!r}); fix the label"
    assert got["retrieval.recall_at_5"] == got["retrieval.first_hit_rank"] == ("absent", reason)
    assert got["retrieval.retrieved_any"] is True


def test_refusal_case_gives_no_recall() -> None:
    got = _scores(_trace(["x"], required=[], expect_refusal=True))
    assert got["retrieval.recall_at_5"][0] == "absent"
    assert "refusal case" in got["retrieval.recall_at_5"][1]


def test_stale_label_is_a_labelling_task_not_a_miss() -> None:
    got = _scores(_trace(["policy-returns-v3", "other"], required=["policy-returns-v4"]))
    status, reason = got["retrieval.recall_at_5"]
    assert status == "absent"
    assert "stale label" in reason and "policy-returns-v4" in reason and "policy-returns-v3" in reason
    # the exact version found deeper than k is a real ranking miss, not a stale label
    deep = _scores(
        _trace(["policy-returns-v3", "a", "b", "c", "d", "policy-returns-v4"], required=["policy-returns-v4"])
    )
    assert deep["retrieval.recall_at_5"] == 0.0


def test_explicit_ranks_order_each_call_before_the_cut_at_k() -> None:
    """Top k is by ``rank`` (ties in list order), not list position: a doc listed first with rank 7 is below k."""
    docs = ["a", "x1", "x2", "x3", "x4", "x5", "b", "c"]
    ranks = [7, 2, 3, 4, 5, 6, 1, 1]  # b and c tie at rank 1; a is last
    steps = [SearchStep(hits=[Hit(doc_id=d, rank=r) for d, r in zip(docs, ranks, strict=True)])]
    got = _scores(Trace(id="t", steps=steps, labels=Labels(required_doc_ids=["a", "b", "c"])), k=5)
    assert got["retrieval.recall_at_5"] == pytest.approx(2 / 3)  # b, c in the top 5; a ranked 7th
    assert got["retrieval.first_hit_rank"] == 1.0
    top2 = _scores(Trace(id="t", steps=steps, labels=Labels(required_doc_ids=["c"])), k=2)
    assert top2["retrieval.recall_at_2"] == 1.0  # c ties b at rank 1: both fit in the top 2
    top1 = _scores(Trace(id="t", steps=steps, labels=Labels(required_doc_ids=["c"])), k=1)
    assert top1["retrieval.recall_at_1"] == 0.0  # the tie keeps list order: b is first


def test_a_hit_without_doc_id_answers_by_its_url_and_a_url_label_reads_every_hits_url() -> None:
    url = "https://docs.example.com/a"
    by_url = [SearchStep(hits=[Hit(url="https://Docs.example.com/a/?utm_source=x")])]
    assert _scores(Trace(id="t", steps=by_url, labels=Labels(required_doc_ids=[url])))["retrieval.recall_at_5"] == 1.0
    both = [SearchStep(hits=[Hit(doc_id="d1", url=url + "/")])]
    assert _scores(Trace(id="t", steps=both, labels=Labels(required_doc_ids=[url])))["retrieval.recall_at_5"] == 1.0
    # with doc-id labels only, a hit that has a doc_id answers by it alone
    assert _scores(Trace(id="t", steps=both, labels=Labels(required_doc_ids=["d2"])))["retrieval.recall_at_5"] == 0.0


def test_a_stale_label_is_found_in_any_call_and_a_present_pin_is_not_stale() -> None:
    got = _scores(_trace(["x"], ["y", "Policy-Returns-V3"], required=["policy-returns-v4", "x"]))
    status, reason = got["retrieval.recall_at_5"]
    assert status == "absent" and "required policy-returns-v4 but retrieved Policy-Returns-V3" in reason
    fresh = _scores(_trace(["policy-returns-v4"], ["policy-returns-v3"], required=["policy-returns-v4"]))
    assert fresh["retrieval.recall_at_5"] == 1.0


@pytest.mark.parametrize(
    ("doc_id", "family"), [("policy-returns-v4", "policy-returns"), ("spec_v2.1", "spec"), ("plain-doc", None)]
)
def test_doc_family(doc_id: str, family: str | None) -> None:
    assert doc_family(doc_id) == family


# --- trec_eval reference outputs --------------------------------------------------------------------------------


def _read_trec(folder: Path) -> tuple[dict[str, set[str]], dict[str, list[str]], dict[tuple[str, str], float]]:
    relevant: dict[str, set[str]] = defaultdict(set)
    for line in (folder / "qrels.test").read_text().splitlines():
        qid, _, doc, rel = line.split()
        if int(rel) > 0:
            relevant[qid].add(doc)
    rows: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for line in (folder / "results.test").read_text().splitlines():
        qid, _, doc, _, sc, _ = line.split()
        rows[qid].append((float(sc), doc))
    # trec_eval ranks by score descending, ties broken by docno descending
    ranked = {q: [d for _, d in sorted(r, key=lambda p: (p[0], p[1]), reverse=True)] for q, r in rows.items()}
    expected: dict[tuple[str, str], float] = {}
    for line in (folder / "out.test.aq").read_text().splitlines():
        measure, qid, value = line.split()
        if measure in ("recall_5", "recall_10", "recip_rank"):
            expected[(measure, qid)] = float(value)
    return relevant, ranked, expected


def test_matches_trec_eval_reference_per_query(shared_data: Path) -> None:
    relevant, ranked, expected = _read_trec(shared_data / "trec_eval")
    assert set(ranked) == {"301", "302", "303"}
    for qid, docs in ranked.items():
        trace = _trace(docs, required=sorted(relevant[qid]))
        for k in (5, 10):
            got = _scores(trace, k=k)[f"retrieval.recall_at_{k}"]
            assert round(got, 4) == expected[(f"recall_{k}", qid)], (qid, k)
        rank = _scores(trace)["retrieval.first_hit_rank"]
        assert round(1 / rank, 4) == expected[("recip_rank", qid)], qid


def test_matches_ir_measures_on_random_rankings() -> None:
    rng = random.Random(1234)
    qrels, run, ours = {}, {}, {}
    for q in range(60):
        pool = [f"d{i}" for i in range(40)]
        rels = rng.sample(pool, rng.randint(1, 8))
        ranking = rng.sample(pool, rng.randint(1, 30))
        qid = f"q{q}"
        qrels[qid] = {d: 1 for d in rels}
        run[qid] = {d: float(len(ranking) - i) for i, d in enumerate(ranking)}
        scored = _scores(_trace(ranking, required=rels), k=5)
        ours[qid] = (scored["retrieval.recall_at_5"], scored["retrieval.first_hit_rank"])
    checked = 0
    for metric in ir_measures.iter_calc([R @ 5, RR], qrels, run):
        recall, rank = ours[metric.query_id]
        if metric.measure == R @ 5:
            assert recall == pytest.approx(metric.value, abs=1e-9), metric
        else:
            want = 0.0 if isinstance(rank, tuple) else 1 / rank
            assert want == pytest.approx(metric.value, abs=1e-9), metric
        checked += 1
    assert checked == 120
