"""Letters outside ASCII that a case-insensitive pattern matches as ASCII ones ("ſ" as s, "ı" and "İ" as i). The stale
check's patterns ignore case, so a month so written ("ſeptember") is matched and must be looked up as its ASCII name
(it raised KeyError). The numbers reader reads lower-cased text with case-sensitive patterns: such a word ("ſix",
"fırst") is no number word there, and a trace holding them is scored, not an error."""

from __future__ import annotations

from datetime import UTC, datetime

from tracescore.scorers.number_reader import read
from tracescore.scorers.numbers import numbers_scorer
from tracescore.scorers.stale import fold, page_date
from tracescore.trace import Trace


def test_fold_is_lower_for_ascii_and_maps_the_four_letters() -> None:
    assert fold("SIX") == "six"
    assert fold("\u017fIX") == "six"
    assert fold("F\u0130RST") == "first"
    assert fold("\u212aM") == "km"


def test_such_words_are_no_number_words_and_are_scored_not_an_error() -> None:
    got = read("\u017fix apples, the f\u0131rst one, 5 m\u0131llion, F\u0130RST")
    assert [(n.text, n.key) for n in got] == [("one", 1), ("5", 5)]  # "ſix", "fırst", "mıllion", "FİRST": none
    trace = Trace.model_validate({
        "id": "t", "answer": "It has \u017fix branches and five stores.",
        "steps": [{"kind": "fetch", "url": "https://a.example/p", "text": "The chain runs six branches."}],
    })
    scores = {s.name: s for s in numbers_scorer()(trace).scores}
    assert scores["grounding.numbers_checked"].value == 1  # "five"
    assert scores["grounding.unsupported_numbers"].comment == '"five" not in any evidence; closest: "six" (page 1)'


def test_a_page_dated_with_such_a_letter_has_its_date() -> None:
    assert page_date("Published: \u017feptember 3, 2024") == datetime(2024, 9, 3, tzinfo=UTC)
    assert page_date("Updated 3 \u017fep 2024") == datetime(2024, 9, 3, tzinfo=UTC)
