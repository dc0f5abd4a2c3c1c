"""The numbers scorer's fast paths against the scorer as it was (``test_numbers_derived``), on traces hypothesis
draws: texts of words, number words, scale words, digits, runs of digits and separators and any characters. Run where
hypothesis is installed (it is no dependency of the project)."""

from __future__ import annotations

import pytest

pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.scorers.test_numbers_derived import _WORDS, _check_paths, _same  # noqa: E402
from tracescore.scorers.numbers import _may_ask  # noqa: E402
from tracescore.scorers.numerals import numerals  # noqa: E402
from tracescore.trace import Trace  # noqa: E402

_ATOM = st.one_of(
    st.sampled_from(_WORDS),
    st.integers(0, 120).map(str),
    st.integers(0, 10**30).map(str),
    st.decimals(min_value=0, max_value=10**6, places=2, allow_nan=False, allow_infinity=False).map(str),
    st.text(alphabet="0123456789.,-– ", min_size=1, max_size=8),
    st.text(min_size=1, max_size=3),
)
_TEXT = st.lists(_ATOM, max_size=25).map(" ".join)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snippets=st.lists(_TEXT, max_size=5), page=_TEXT, answer=st.lists(_ATOM, min_size=1, max_size=12),
       question=_TEXT)  # fmt: skip
def test_drawn_traces_score_as_before(snippets: list[str], page: str, answer: list[str], question: str) -> None:
    hits = [{"url": f"https://h{j}.example/", "title": "Result", "snippet": s} for j, s in enumerate(snippets)]
    trace = Trace.model_validate({"id": "h", "question": question, "answer": " ".join(answer) + ".", "steps": [
        {"kind": "search", "query": "q", "hits": hits},
        {"kind": "fetch", "url": "https://p.example", "text": page, "status": 200}]})  # fmt: skip
    _same(trace)
    _check_paths(trace)


@settings(max_examples=3000, deadline=None)
@given(question=st.one_of(_TEXT, st.text(max_size=40)))
def test_a_question_looked_at_as_stating_no_number_states_none(question: str) -> None:
    assert _may_ask(question) or not numerals(question), question
