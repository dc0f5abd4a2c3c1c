"""The fast trajectory and stale-source scorers (#33's speed-up) give exactly what they gave before: the scorers as they
were are kept in ``old_trajectory.py`` / ``old_stale.py`` and compared, score for score (value, reason, comment and
metadata), on every fixture trace and on generated ones, in both trace forms (the msgspec struct and the model)."""

from __future__ import annotations

import json
import random
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.engine.test_golden import SAMPLES, expertqa_lines, faults_lines
from tests.scorers import old_stale, old_trajectory
from tracescore.adapters import structs
from tracescore.adapters.jsonl import trace_from_json
from tracescore.errors import InputError
from tracescore.scorers import stale, trajectory
from tracescore.scorers.retrieval import all_found_after
from tracescore.trace import Trace

_COOKBOOK = SAMPLES.parent.parent / "pytest_suite" / "runs"
_ALL = "".join(map(chr, range(0x110000)))


def _fixture_traces() -> list[Any]:
    lines = [*SAMPLES.read_bytes().splitlines(), *faults_lines(), *expertqa_lines()]
    for run in sorted(_COOKBOOK.glob("*.jsonl")):
        lines += run.read_bytes().splitlines()
    traces = []
    for line in lines:
        try:
            traces.append(trace_from_json(line))
        except InputError:
            continue  # a planted malformed line: no trace to score
    return traces


def _pairs() -> list[tuple[Any, Any]]:
    return [(trajectory.trajectory_scorer(), old_trajectory.trajectory_scorer()),
            (stale.stale_scorer(), old_stale.stale_scorer()),
            (stale.stale_scorer(stale_after=timedelta(days=30)),
             old_stale.stale_scorer(stale_after=timedelta(days=30)))]  # fmt: skip


def _assert_same(traces: list[Any]) -> int:
    pairs = _pairs()
    compared = 0
    for trace in traces:
        for new, old in pairs:
            got, want = list(new(trace)), list(old(trace))
            assert got == want, trace.id
            compared += len(got)
    return compared


def test_every_fixture_trace_scores_as_before() -> None:
    traces = _fixture_traces()
    assert len(traces) > 250
    assert _assert_same(traces) == len(traces) * 9
    assert _assert_same([Trace.model_validate_json(t.model_dump_json()) if isinstance(t, Trace) else
                         Trace.model_validate(json.loads(json.dumps(_plain(t)))) for t in traces[:80]])  # fmt: skip


def _plain(value: Any) -> Any:
    import msgspec

    return msgspec.to_builtins(value)


_WORDS = ("acme", "Return", "policy", "days", "item", "the", "how", "Published", "updated", "Last modified",
          "posted", "by", "By Jane Doe |", "datetime", "<time datetime=\"", "datePublished\": \"", "on", "—", ":",
          "2026-05-17", "2024/02/30", "May 17, 2026", "Sep. 3, 2024", "17 May 2026", "3rd June 2025", "1999",
          "٢٠٢٦-٠٥-١٧", "12345", "42", "Sun, 17 May 2026 10:00:00 GMT", "İ", "ß", "\u00a0", "\n", "\t", "  ",
          "?", "\"", "“x”", "[1]", "[2]", "(see)", "05/17/2026", "PUBLISHED", "pUbLiShEd", "Updated on")  # fmt: skip
_URLS = ("https://a.example/1", "https://A.example/1/", "https://b.example/2?utm_source=x", "http://c.example:80/3",
         "https://d.example/4#frag", "not a url", "")  # fmt: skip
_DOCS = ("kb-1", " kb-1 ", "kb-2", "", "faq", "ship-v2")
_DATES = ("2026-05-17", "2026-05-17T10:00:00Z", "2020-01-01T00:00:00+02:00", "May 17, 2026", "17 May 2026", "junk",
          "2026-02-30", 3, None, "Sun, 17 May 2026 10:00:00 GMT", "2019-03-04", "Sep. 3, 2024", "1 Jan 2021",
          "2025/12/31", "12/31/2025", "June 31, 2025")  # fmt: skip


_QUERIES = ("acme return", "  ACME   return? ", '"acme return"', "", "acme warranty", "Acme: return an ITEM, days")
_LABELS = ("Published", "Updated on", "Last modified:", "posted —", "By Jane Doe |", "<time datetime=\"",
           "datePublished\": \"", "date published", "Modified")  # fmt: skip


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def _page(rng: random.Random) -> str:
    """Random words, with now and then a labelled date (of any form, real or not) among them."""
    parts = [_text(rng, rng.randint(0, 30))]
    for _ in range(rng.choice((0, 0, 1, 2))):
        parts += [rng.choice(("", "\n")) + rng.choice(_LABELS), str(rng.choice(_DATES)), _text(rng, rng.randint(0, 9))]
    return " ".join(parts)


def _random_trace(rng: random.Random, i: int) -> dict[str, Any]:
    urls = [u for u in _URLS if u]
    refs = rng.sample(urls, rng.randint(0, 3))  # what the answer's reference list names: mostly what was fetched
    steps: list[dict[str, Any]] = []
    for _ in range(rng.randint(0, 6)):
        if rng.random() < 0.55:
            hits = [{"url": rng.choice(_URLS) or None, "doc_id": rng.choice(_DOCS) or None,
                     "metadata": {rng.choice(("published", "Date-Modified", "x", "article:published_time")):
                                  rng.choice(_DATES)} if rng.random() < 0.3 else {}}
                    for _ in range(rng.randint(0, 4))]  # fmt: skip
            query = rng.choice(_QUERIES) if rng.random() < 0.6 else _text(rng, rng.randint(0, 4))
            steps.append({"kind": "search", "query": query, "hits": hits})
        else:
            url = rng.choice(refs) if refs and rng.random() < 0.6 else rng.choice(_URLS) or None
            steps.append({"kind": "fetch", "url": url, "doc_id": rng.choice(_DOCS) or None,
                          "text": _page(rng),
                          "status": rng.choice((None, 200, 404, "error", "ok", "0", 0, True, False)),
                          "metadata": {"published": rng.choice(_DATES)} if rng.random() < 0.2 else {}})  # fmt: skip
    answer = rng.choice(("", "   ", "[1]", *[_text(rng, 6) + " [1]. " + _text(rng, 5) + " [2]."] * 3,
                         "Returns take 30 days [1]. See " + rng.choice(urls) + " too."))  # fmt: skip
    if refs and answer.strip():
        answer += "\n\nSources:\n" + "\n".join(f"[{j + 1}] {u}" for j, u in enumerate(refs))
    trace: dict[str, Any] = {
        "id": f"r{i}",
        "question": rng.choice(
            ("", "  ", "What is it?", "How many days do I have to return an item at Acme?", _text(rng, 5))
        ),
        "steps": steps,
        "answer": answer,
    }
    if rng.random() < 0.3:
        trace["citations"] = [{"url": rng.choice(_URLS) or None, "doc_id": rng.choice(_DOCS) or None}]
    if rng.random() < 0.25:
        trace["blind_spots"] = [{"kind": rng.choice(("search", "fetch")), "tool": rng.choice(("", "t")),
                                 "reason": "unreadable"} for _ in range(rng.randint(1, 5))]  # fmt: skip
    if rng.random() < 0.7:
        required = [rng.choice(_DOCS[:3] + _URLS[:2]) if rng.random() < 0.7 else rng.sample(_DOCS, 2)
                    for _ in range(rng.randint(0, 3))]  # fmt: skip
        trace["labels"] = {"required_doc_ids": required}
    if rng.random() < 0.7:
        trace["timestamp"] = (datetime(2026, 6, 1, tzinfo=UTC) - timedelta(days=rng.randint(0, 3000))).isoformat()
    return trace


def test_generated_traces_score_as_before() -> None:
    rng = random.Random(33)
    traces = []
    for i in range(2500):
        raw = json.dumps(_random_trace(rng, i))
        traces.append(trace_from_json(raw))
        if i % 5 == 0:
            traces.append(Trace.model_validate_json(raw))
    assert _assert_same(traces) == len(traces) * 9


def test_normalised_query_and_content_words_as_before_on_every_space_and_random_text() -> None:
    spaces = "".join(c for c in _ALL if re.fullmatch(r"\s", c))
    rng = random.Random(5)
    texts = [spaces, " " + spaces + "a" + spaces + "b" + spaces, *(c + "x" + c + "y" + c for c in spaces)]
    texts += ["".join(rng.choice(_WORDS + tuple(spaces) + tuple("\"'`“”‘’.,;:!?()[]{}")) for _ in range(8))
              for _ in range(3000)]  # fmt: skip
    words = "".join(c for c in _ALL if re.fullmatch(r"\w", c))  # every word character, "_" among them
    texts += [words, *("".join(rng.choice(words[:200] + "__ -" + words[-50:]) for _ in range(12)) for _ in range(3000))]
    for text in texts:
        assert trajectory._words(text) == old_trajectory._WORD.findall(text), repr(text)
        assert trajectory.normalise_query(text) == old_trajectory.normalise_query(text), repr(text)
        assert trajectory.content_words(text) == old_trajectory.content_words(text), repr(text)


def test_a_page_without_four_digits_in_a_row_has_no_date_and_the_check_never_skips_a_dated_one() -> None:
    rng = random.Random(9)
    digits = "".join(c for c in _ALL if c.isdigit())
    pages = [_text(rng, rng.randint(0, 60)) for _ in range(3000)]
    pages += ["Published 20" + d + "6-05-17" for d in digits[:400]]  # non-ASCII digits: the check says "may"
    pages += ["Published " + "".join(rng.choice("0123456789-/ ") for _ in range(12)) for _ in range(2000)]
    for page in pages:
        if stale._no_year(page):
            assert not re.search(r"\d{4}", page), repr(page)
        assert stale.page_date(page) == old_stale.page_date(page), repr(page)
    assert stale._no_year("Published May 17, 202.6") and not stale._no_year("Published May 17, 2026")
    assert not stale._no_year("Published May 17, 202 6")  # letters and spaces dropped join runs: a "may"
    assert not stale._no_year("Published 2026-05-1٧")  # not ASCII: left to the regex


@pytest.mark.parametrize("kind", ["light", "heavy"])
def test_the_benchmark_traces_score_as_before(kind: str) -> None:
    from benchmarks.throughput import make_light_trace, make_trace

    make = make_light_trace if kind == "light" else make_trace
    rng = random.Random(1)
    assert _assert_same([trace_from_json(json.dumps(make(i, rng))) for i in range(20)])


_IDS = ("kb-1", " kb-1 ", "kb-1\t", "kb-2", "KB-2", "faq", "", "  ", "https://a.example/1", "https://A.example/1/",
        "a.example/1", "not a url", " not a url")  # fmt: skip


def test_plain_required_ids_are_found_after_the_same_search() -> None:
    """The plain-id path of ``trajectory.searches_after_found`` (every required id a str without "://") finds them
    after the search ``all_found_after`` names, with the same ones missing; anything else is left to
    ``all_found_after``."""
    rng = random.Random(35)
    ids = (None, *_IDS)
    taken = 0
    for _ in range(6000):
        hits = [[structs.Hit(doc_id=rng.choice(ids), url=rng.choice(ids)) for _ in range(rng.randint(0, 5))]
                for _ in range(rng.randint(0, 5))]  # fmt: skip
        searches = [structs.SearchStep(hits=h) for h in hits]
        required: list[Any] = [rng.choice(_IDS) if rng.random() < 0.85 else rng.sample(_IDS, rng.randint(1, 2))
                               for _ in range(rng.randint(1, 3))]  # fmt: skip
        keys = trajectory._plain_keys(required)
        assert (keys is not None) == all(isinstance(entry, str) and "://" not in entry for entry in required)
        if keys is not None and all(keys):
            taken += 1
            want = all_found_after(searches, required)
            assert trajectory._plain_found_after(searches, required, set(keys)) == want, (searches, required)
    assert taken > 1500


def _trajectory_trace(rng: random.Random, i: int) -> dict[str, Any]:
    """A trace of the cases the trajectory scorer's fast paths take or leave: repeated and blank queries, plain and
    URL required ids, hits with and without doc ids, fetches of every status, pages fetched twice."""
    steps: list[dict[str, Any]] = []
    for _ in range(rng.randint(0, 7)):
        if rng.random() < 0.6:
            hits = [{"doc_id": rng.choice((None, *_IDS)), "url": rng.choice((None, *_IDS))}
                    for _ in range(rng.randint(0, 4))]  # fmt: skip
            steps.append({"kind": "search", "query": rng.choice(_QUERIES + ("", " ", "acme  RETURN")), "hits": hits})
        else:
            steps.append({"kind": "fetch", "url": rng.choice((None, *_IDS)), "doc_id": rng.choice((None, *_IDS)),
                          "text": "x" * rng.randint(0, 9),
                          "status": rng.choice((None, 200, 200, 201, 399, 400, 404, "200", " 404", "error", "ok",
                                                "-1", 0, True, False))})  # fmt: skip
    refs = [u for u in _IDS if "://" in u]
    answer = rng.choice(("", "Returns take 30 days [1]. Refunds [2].", "No citation here.", "Days [1]."))
    if answer.strip() and rng.random() < 0.8:
        answer += "\n\nSources:\n" + "\n".join(f"[{j + 1}] {u}" for j, u in enumerate(rng.sample(refs, 2)))
    trace: dict[str, Any] = {"id": f"t{i}", "question": rng.choice(("How many days to return an acme item?",
                             "How many days to return an acme item?", "", "the of", "acme warranty?")),
                             "steps": steps, "answer": answer}  # fmt: skip
    if rng.random() < 0.3:
        trace["citations"] = [{"url": rng.choice((None, *_IDS)), "doc_id": rng.choice((None, *_IDS))}]
    if rng.random() < 0.1:
        trace["blind_spots"] = [{"kind": rng.choice(("search", "fetch")), "reason": "unreadable"}]
    if rng.random() < 0.9:
        ids = [i for i in _IDS if i.strip()]
        trace["labels"] = {"required_doc_ids": [rng.choice(ids) if rng.random() < 0.85 else rng.sample(ids, 2)
                                                for _ in range(rng.randint(0, 3))]}  # fmt: skip
    return trace


def test_generated_trajectories_score_as_before() -> None:
    rng = random.Random(34)
    traces = []
    for i in range(4000):
        raw = json.dumps(_trajectory_trace(rng, i))
        traces.append(trace_from_json(raw))
        if i % 4 == 0:
            traces.append(Trace.model_validate_json(raw))
    new, old = trajectory.trajectory_scorer(), old_trajectory.trajectory_scorer()
    for trace in traces:
        assert list(new(trace)) == list(old(trace)), trace.id
