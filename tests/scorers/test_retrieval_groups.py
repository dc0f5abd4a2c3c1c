"""Retrieval over groups of alternative documents (#34): hand-computed cases, the stale-label rule per member, and
pytrec_eval / ir-measures with each group mapped onto one relevance id."""

from __future__ import annotations

import random

import ir_measures
import pytest
import pytrec_eval
from ir_measures import RR, R

from tracescore.scorers.retrieval import retrieval_scorer
from tracescore.trace import Hit, Labels, SearchStep, Trace


def _trace(*rankings: list[str], required: list[str | list[str]]) -> Trace:
    steps = [SearchStep(query=f"q{i}", hits=[Hit(doc_id=d) for d in docs]) for i, docs in enumerate(rankings)]
    return Trace(id="t", steps=steps, labels=Labels(required_doc_ids=required))


def _scores(trace: Trace, k: int = 5) -> dict[str, object]:
    return {s.name: (s.value if s.present else ("absent", s.reason)) for s in retrieval_scorer(k=k)(trace)}


def test_one_alternative_of_a_group_satisfies_it() -> None:
    """The issue's example: the FAQ came back (rank 2), the policy page did not, shipping-v2 at rank 4.
    Flat, this is 2 of 3; grouped it is 2 of 2 groups."""
    trace = _trace(
        ["x", "faq-returns", "y", "shipping-v2"], required=[["faq-returns", "policy-returns-v4"], "shipping-v2"]
    )
    (recall, rank, _) = retrieval_scorer(k=5)(trace)
    assert recall.value == 1.0 and recall.metadata["missing"] == [] and recall.comment is None
    assert rank.value == 2.0  # best rank of any member of any group


def test_recall_is_satisfied_groups_over_groups() -> None:
    # {a, b}: b at rank 6 of call 1, a never -> missing; {c}: rank 1 of call 2 -> hit; {d, e}: e rank 3 -> hit
    trace = _trace(["x", "y", "z", "w", "v", "b"], ["c", "u", "e"], required=[["a", "b"], ["c"], ["d", "e"]])
    (recall, rank, _) = retrieval_scorer(k=5)(trace)
    assert recall.value == pytest.approx(2 / 3)
    assert recall.metadata["missing"] == [["a", "b"]]
    assert recall.comment == "missing required docs in top 5: a or b"
    assert rank.value == 1.0
    # with k=6 b is in call 1's top 6: every group satisfied
    assert _scores(trace, k=6)["retrieval.recall_at_6"] == 1.0


def test_a_group_of_one_scores_as_the_plain_id() -> None:
    rankings = (["x", "a", "y", "z", "w", "c"], ["b"])
    flat = retrieval_scorer(k=5)(_trace(*rankings, required=["a", "c", "never"]))
    grouped = retrieval_scorer(k=5)(_trace(*rankings, required=[["a"], ["c"], "never"]))
    assert [s.value for s in grouped] == [s.value for s in flat] == [pytest.approx(1 / 3), 2.0, True]
    assert grouped[0].comment == flat[0].comment == "missing required docs in top 5: c, never"


def test_equal_groups_count_once_as_equal_ids_do() -> None:
    trace = _trace(["a"], required=[["a", "b"], ["b", "a"], ["c"]])
    assert _scores(trace)["retrieval.recall_at_5"] == pytest.approx(1 / 2)  # {a,b} satisfied, {c} not


def test_no_member_anywhere_gives_no_first_hit_rank() -> None:
    got = _scores(_trace(["x", "y"], required=[["a", "b"]]))
    assert got["retrieval.recall_at_5"] == 0.0
    assert got["retrieval.first_hit_rank"] == ("absent", "no required doc came back in any search call")


def test_stale_label_per_member_unless_another_member_came_back() -> None:
    # policy-returns-v3 came back, the label pins v4; the group's other member (the FAQ) did not come back: stale
    stale = _scores(_trace(["policy-returns-v3", "x"], required=[["faq-returns", "policy-returns-v4"], "x"]))
    reason = stale["retrieval.recall_at_5"]
    assert isinstance(reason, tuple) and reason[0] == "absent"
    assert "required policy-returns-v4 but retrieved policy-returns-v3" in reason[1]
    # the FAQ came back too (even below k): the group's miss is not a stale label, recall is scored
    trace = _trace(
        ["policy-returns-v3", "x", "y", "z", "w", "faq-returns"], required=[["faq-returns", "policy-returns-v4"]]
    )
    assert _scores(trace)["retrieval.recall_at_5"] == 0.0
    assert _scores(trace, k=6)["retrieval.recall_at_6"] == 1.0


def test_an_empty_member_is_a_broken_label() -> None:
    got = _scores(_trace(["a"], required=[["a", " "], "b"]))
    assert got["retrieval.recall_at_5"][0] == "absent"  # type: ignore[index]
    assert "empty id" in got["retrieval.recall_at_5"][1]  # type: ignore[index]


def test_url_members_match_normalised_urls() -> None:
    steps = [SearchStep(hits=[Hit(rank=2, url="https://Docs.example.com/faq/?utm_source=x"), Hit(rank=1, doc_id="z")])]
    labels = Labels(required_doc_ids=[["https://docs.example.com/faq", "policy-v4"]])
    got = _scores(Trace(id="t", steps=steps, labels=labels))
    assert got["retrieval.recall_at_5"] == 1.0 and got["retrieval.first_hit_rank"] == 2.0


def _random_case(rng: random.Random) -> tuple[list[list[str]], list[str]]:
    pool = [f"d{i}" for i in range(40)]
    rng.shuffle(pool)
    groups, at = [], 0
    for _ in range(rng.randint(1, 5)):  # disjoint groups of 1-3 alternatives
        size = rng.randint(1, 3)
        groups.append(pool[at : at + size])
        at += size
    return groups, rng.sample(pool, rng.randint(1, 30))


def _as_qrels(groups: list[list[str]], ranking: list[str]) -> tuple[dict[str, int], dict[str, float]]:
    """A group as one relevance id: its best-ranked member becomes ``g<i>``, any later member a non-relevant id in
    the same place (so no other document moves up a rank)."""
    group_of = {m: f"g{i}" for i, group in enumerate(groups) for m in group}
    seen: set[str] = set()
    run = {}
    for i, doc in enumerate(ranking):
        gid = group_of.get(doc)
        name = doc if gid is None else (gid if gid not in seen else f"dup-{doc}")
        seen.add(name)
        run[name] = float(len(ranking) - i)
    return {f"g{i}": 1 for i in range(len(groups))}, run


def test_grouped_recall_matches_pytrec_eval_and_ir_measures_on_random_rankings() -> None:
    rng = random.Random(34)
    qrels, run, ours, flat = {}, {}, {}, {}
    for q in range(80):
        groups, ranking = _random_case(rng)
        qid = f"q{q}"
        flat[qid] = _scores(_trace(ranking, required=[m for g in groups for m in g]), k=5)["retrieval.recall_at_5"]
        qrels[qid], run[qid] = _as_qrels(groups, ranking)
        got = _scores(_trace(ranking, required=list(groups)), k=5)
        ours[qid] = (got["retrieval.recall_at_5"], got["retrieval.first_hit_rank"])
    trec = pytrec_eval.RelevanceEvaluator(qrels, {"recall.5", "recip_rank"}).evaluate(run)
    checked = 0
    for qid, (recall, rank) in ours.items():
        assert recall == pytest.approx(trec[qid]["recall_5"], abs=1e-9), qid
        want_rr = 0.0 if isinstance(rank, tuple) else 1 / rank  # type: ignore[operator]
        assert want_rr == pytest.approx(trec[qid]["recip_rank"], abs=1e-9), qid
        checked += 1
    for metric in ir_measures.iter_calc([R @ 5, RR], qrels, run):
        recall, rank = ours[metric.query_id]
        want = recall if metric.measure == R @ 5 else (0.0 if isinstance(rank, tuple) else 1 / rank)  # type: ignore[operator]
        assert want == pytest.approx(metric.value, abs=1e-9), metric
        checked += 1
    assert checked == 80 * 3
    # the groups matter: every member required (the flat reading) scores lower on many of these queries
    assert sum(flat[q] != ours[q][0] for q in ours) >= 20
