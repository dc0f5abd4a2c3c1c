"""The adversarial traces of ``benchmarks/worst_case.py`` score in bounded time, so a return to quadratic cost fails.

Measured on the development machine (CPU seconds per trace, ``python benchmarks/worst_case.py --scale 4``):
brackets 0.025, explicit citations 0.068, wide search 0.29; on the code before issue #14 the 40k brackets line alone
took 10-48 s and 1,200 explicit citations 0.22 s, growing with the square of the size. The bounds below are ≥ 10×
the measured figures (CPU time via an injected clock, not wall time, so a loaded machine does not fail them), and the
sizes are chosen so that quadratic code overshoots them many times over.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from benchmarks.worst_case import brackets, cpu_seconds, explicit_citations, wide_search
from tracescore.engine.pipeline import score_trace
from tracescore.engine.plan import deterministic_scorers
from tracescore.scorers.citations import CITATION_COVERAGE, CITATION_FABRICATED_COUNT
from tracescore.trace import Trace


def _scorer(name: str) -> Any:
    """The installed scorer of entry point ``name``, with its defaults."""
    return next(s for s in deterministic_scorers() if s.__name__ == name)


@pytest.mark.parametrize(
    ("build", "bound"),
    [
        (lambda: brackets(160_000), 2.5),  # measured 0.025 s; quadratic: minutes
        (lambda: explicit_citations(4_800), 1.5),  # measured 0.068 s; quadratic: ~3.5 s
        (lambda: wide_search(400, 50, 1_200), 4.0),  # measured 0.29 s
    ],
    ids=["brackets", "explicit_citations", "wide_search"],
)
def test_worst_cases_score_in_bounded_cpu_time(build: object, bound: float) -> None:
    trace: Trace = build()  # type: ignore[operator]
    assert cpu_seconds(trace, repeat=2, clock=time.process_time) < bound


def test_worst_cases_are_scored_not_skipped() -> None:
    scores = score_trace(explicit_citations(1_200), deterministic_scorers()).scores
    assert scores[CITATION_COVERAGE].value == 1.0  # every sentence matched to its explicit citation by index
    assert scores[CITATION_FABRICATED_COUNT].value == 0.0
    wide = score_trace(wide_search(), deterministic_scorers()).scores
    assert wide[CITATION_COVERAGE].value == 1.0 and wide[CITATION_FABRICATED_COUNT].value == 0.0
    assert score_trace(brackets(), deterministic_scorers()).scores[CITATION_COVERAGE].present


def test_the_guard_scores_what_it_can_and_says_what_it_left_out() -> None:
    from tracescore.scorers.citations import MAX_ANSWER_CHARS, MAX_CITATIONS

    long = Trace(id="long", answer="A cited claim [1].\n[1] https://a.example/x\n" + "word " * (MAX_ANSWER_CHARS // 5))
    got = {s.name: s for s in _scorer("citations")(long)}
    assert got[CITATION_COVERAGE].present and "only the start was parsed" in (got[CITATION_COVERAGE].comment or "")
    assert not got[CITATION_FABRICATED_COUNT].present
    assert "over the scoring guard" in (got[CITATION_FABRICATED_COUNT].reason or "")
    many = explicit_citations(MAX_CITATIONS + 10)
    got = {s.name: s for s in _scorer("citations")(many)}
    assert "10 explicit citations past the first" in (got[CITATION_FABRICATED_COUNT].reason or "")


@pytest.mark.parametrize(
    "line",
    [
        "**a**" + " " * 40_000 + "x",  # "\s*:?\s*$" after a heading: quadratic backtracking
        "References" + " " * 40_000 + "x",
        "[1]" + " " * 40_000 + ":" + " " * 40_000 + "x",
        "1." + " " * 40_000,
        "A sentence. " + "[" * 20_000 + "](" + "(" * 20_000,
        "Stop." + " [1" * 20_000,
        "See " + "[a](" * 20_000,
        "x" + "." * 40_000 + "A",
    ],
    ids=["bold-heading", "ref-heading", "ref-line", "list-marker", "link-parens", "markers", "links", "stops"],
)
def test_pathological_lines_parse_in_bounded_cpu_time(line: str) -> None:
    from tracescore.scorers.citations import parse_answer

    parse_answer.cache_clear()
    start = time.process_time()
    parse_answer(line)
    assert time.process_time() - start < 1.0  # each measured < 0.02 s; quadratic: seconds to minutes



def test_url_normalisation_and_answer_scoring_are_linear_on_pathological_text() -> None:
    from tracescore.scorers.answer import answer_scorer
    from tracescore.trace import Labels
    from tracescore.urls import is_url, normalize_url

    start = time.process_time()
    for url in ("https://a.example/" + "/" * 40_000, "https://" + "a" * 40_000 + "/x/", "h" + "://" * 20_000):
        normalize_url(url)
        is_url(url)
    text = "I do not " * 5_000 + "[" * 40_000 + " " * 40_000 + "x"
    labels = Labels(expected_answer_contains=["x " * 1_000], gold_answer="the " * 5_000)
    answer_scorer()(Trace(id="a", answer=text, labels=labels))
    assert time.process_time() - start < 2.0  # measured < 0.1 s
