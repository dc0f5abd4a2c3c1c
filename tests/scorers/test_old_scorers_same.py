"""The speed pass over the scorers that came before #33 (citations, retrieval, answer) and the answer parse they
share gives exactly what the code before it gave: that code is kept in tests/scorers/old_*.py and compared with the
new on every fixture trace (the cookbook's, ExpertQA's, the benchmark's light and heavy traces, decoded both ways)
and on thousands of generated traces, answers and labels (odd spacing, grouped markers, links, explicit citations,
hits with and without doc ids, ranks and URLs, version-pinned and grouped labels, gold answers of every length)."""

from __future__ import annotations

import dataclasses
import json
import random
import sys
from pathlib import Path
from typing import Any

from tests.scorers import old_answer, old_citations, old_cited, old_retrieval
from tests.scorers.test_cite_fast_paths import _ATOMS, _fixture_traces, _texts
from tracescore.adapters.jsonl import trace_from_json
from tracescore.scorers import answer, citations, cited, retrieval
from tracescore.scorers.scored import Scored
from tracescore.trace import Citation, FetchStep, Hit, Labels, SearchStep, Trace

_REPO = Path(__file__).resolve().parents[2]


def _same(new: Scored, old: Scored) -> None:
    """Equal scores (every field, and the JSON they are written as), rows and notes."""
    assert [repr(s) for s in new.scores] == [repr(s) for s in old.scores]
    assert list(new.scores) == list(old.scores)
    assert [dataclasses.astuple(r) for r in new.citations] == [dataclasses.astuple(r) for r in old.citations]
    assert new.citations == old.citations and new.claims == old.claims and new.notes == old.notes


def _benchmark_traces() -> list[Trace]:
    sys.path.insert(0, str(_REPO / "benchmarks"))
    import throughput

    rng = random.Random(1)
    lines = [
        json.dumps(make(i, rng)) for make in (throughput.make_trace, throughput.make_light_trace) for i in range(6)
    ]
    return [trace_from_json(line) for line in lines] + [Trace.model_validate_json(line) for line in lines]


_URLS = [
    "https://a.example/x", "https://A.example/x/", "http://B.example/y/?utm_source=1", "https://e.example", " d1",
    "https://a.example/x ", "not a url", "https://site1.example/p/1/2", "policy-v2", "policy_v3", "doc-7",
]  # fmt: skip
_IDS = [None, "", "d1", " d1 ", "https://a.example/x", "policy-v2", "policy-v4", "doc-7", "Doc-7", "x@v1.2", " "]
_GOLDS = [
    "", " ", "the", "30 days", "Thirty days", "a b c d e f g h i", "one two two three", "30 30 days days days", "!!!",
    "refund within 30 days of the order", "é ü", "x_y", "ninety-nine", "1 2 3 4 5 6 7 8 9 10",
]  # fmt: skip


def _generated_traces(count: int, seed: int) -> list[Trace]:
    rng = random.Random(seed)
    out = []
    texts = _texts(count, seed)
    for i, text in enumerate(texts):
        steps: list[Any] = []
        for _ in range(rng.randint(0, 4)):
            if rng.random() < 0.6:
                hits = [
                    Hit(
                        url=rng.choice([*_URLS, None]),
                        doc_id=rng.choice(_IDS),
                        rank=rng.choice([None, 1, 2, 3, 5, 9, 40, rng.randint(1, 12)]),
                    )
                    for _ in range(rng.randint(0, 12))
                ]
                steps.append(SearchStep(hits=hits))
            else:
                steps.append(
                    FetchStep(url=rng.choice(_URLS), doc_id=rng.choice(_IDS), status=rng.choice([200, 404, None]))
                )
        cites = [
            Citation(
                url=rng.choice([*_URLS, None]), doc_id=rng.choice(_IDS), sentence=rng.choice(["", "A", "b.", text])
            )
            for _ in range(rng.randint(0, 2))
        ] or None
        pool = [u for u in _URLS + _IDS if u is not None]
        required: Any = rng.choice(
            [
                None,
                [],
                [rng.choice(pool) for _ in range(rng.randint(1, 3))],
                [rng.choice(pool), [rng.choice(pool), rng.choice(pool)]],
            ]
        )
        answer_text = rng.choice(["", "FINAL ANSWER: ", "final answer:"]) + text + rng.choice(["", " 30 days", " the"])
        labels = Labels(
            required_doc_ids=required,
            expected_answer_contains=rng.choice([None, [], ["30 days"], ["a", "b"], ["the"], [rng.choice(_ATOMS)]]),
            expect_refusal=rng.random() < 0.05,
            gold_answer=rng.choice([None, *_GOLDS, text[:10]]),
            gold_answers=rng.choice([None, None, [rng.choice(_GOLDS), rng.choice(_GOLDS)]]),
        )
        out.append(Trace(id=str(i), answer=answer_text, steps=steps, citations=cites, labels=labels))
    return out


_PAIRS = [
    (citations.citation_scorer, old_citations.citation_scorer),
    (retrieval.retrieval_scorer, old_retrieval.retrieval_scorer),
    (answer.answer_scorer, old_answer.answer_scorer),
]


def _check(traces: list[Trace]) -> None:
    made = [(new(), old()) for new, old in _PAIRS] + [
        (retrieval.retrieval_scorer(k=1), old_retrieval.retrieval_scorer(k=1)),
        (answer.answer_scorer(final_answer_prefix=None), old_answer.answer_scorer(final_answer_prefix=None)),
    ]
    for trace in traces:
        for new, old in made:
            _same(new(trace), old(trace))
        assert citations.citation_rows(trace) == old_citations.citation_rows(trace)
        assert cited.cited_keys(trace) == old_cited.cited_keys(trace)


def test_the_old_scorers_are_unchanged_on_fixtures(shared_data: Path) -> None:
    _check(_fixture_traces(shared_data) + _benchmark_traces())


def test_the_old_scorers_are_unchanged_on_generated_traces() -> None:
    _check(_generated_traces(6_000, 33))


_LETTERS = [*"aZ9 _.!?,;:-'\u00e9\u00df\u0130\u00a0\t\n", "the", "an", "A", "one", "Twenty", " 30", "days"]


def test_answer_normalisation_and_overlap_are_unchanged() -> None:
    rng = random.Random(35)
    for _ in range(4_000):
        text = "".join(rng.choice(_LETTERS) for _ in range(rng.randint(0, 30)))
        assert answer.normalize_answer(text) == old_answer.normalize_answer(text)
        assert answer.squad_normalize(text) == old_answer.squad_normalize(text)
        for gold in (*_GOLDS, text[:7], text):
            assert answer.token_f1(text, gold) == old_answer.token_f1(text, gold)
            assert answer.token_f1(gold, text) == old_answer.token_f1(gold, text)
            new = answer._contains(answer.normalize_answer(text), gold)
            assert new == old_answer._contains(old_answer.normalize_answer(text), gold)


def test_a_surface_answers_every_lookup_as_before_past_its_scans() -> None:
    rng = random.Random(36)
    keys = [*_URLS, *[i for i in _IDS if i is not None], "https://a.example/x", "https://b.example/y", "zzz"]
    for i in range(3_000):
        steps: list[Any] = [
            SearchStep(hits=[Hit(url=rng.choice([*_URLS, None, ""]), doc_id=rng.choice(_IDS)) for _ in range(n)])
            for n in (rng.randint(0, 6) for _ in range(rng.randint(0, 3)))
        ]
        steps += [FetchStep(url=rng.choice(_URLS), status=rng.choice([200, 500])) for _ in range(rng.randint(0, 2))]
        trace = Trace(id=str(i), answer="", steps=steps)
        new, old = citations._Surface(trace), old_citations._Surface(trace)
        for key in [rng.choice(keys) for _ in range(rng.randint(1, 9))]:  # past _SCANS lookups, in any order
            assert new.check(key) == old.check(key), (key, trace)
