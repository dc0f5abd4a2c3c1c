"""Letters outside ASCII that a case-insensitive pattern matches as ASCII ones ("ſ" as s, "ı" and "İ" as i): a word
written with one ("ſix", "fırst", "mıllion", "Auguſt") was matched, then looked up as written, and the lookup raised
KeyError: the trace's numbers or stale-source score became a scorer error. Each is now read as its ASCII word."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from tracescore.scorers.numbers import numbers_scorer
from tracescore.scorers.numerals import fold, numerals
from tracescore.scorers.stale import page_date
from tracescore.trace import Trace


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("\u017fix apples", ("n", Decimal(6))),
        ("the f\u0131rst one", ("n", Decimal(1))),
        ("f\u0130rst", ("n", Decimal(1))),
        ("\u017fixth", ("n", Decimal(6))),
        ("5 m\u0131llion", ("n", Decimal(5_000_000))),
        ("5 thou\u017fand", ("n", Decimal(5000))),
        ("\u017feptember 3, 2024", ("d", 2024, 9, 3)),
        ("Augu\u017ft 2019", ("ym", 2019, 8)),
    ],
)
def test_a_word_with_such_a_letter_is_read_as_its_ascii_word(text: str, key: tuple[object, ...]) -> None:
    assert numerals(text)[0].key == key
    assert numerals(text, whole=True)[0].key == key


def test_fold_is_lower_for_ascii_and_maps_the_four_letters() -> None:
    assert fold("SIX") == "six"
    assert fold("\u017fIX") == "six"
    assert fold("F\u0130RST") == "first"
    assert fold("\u212aM") == "km"


def test_a_claim_and_its_evidence_so_written_are_scored_not_an_error() -> None:
    trace = Trace.model_validate({
        "id": "t", "answer": "It has \u017fix branches and f\u0131ve stores.",
        "steps": [{"kind": "fetch", "url": "https://a.example/p", "text": "The chain runs six branches."}],
    })
    scores = {s.name: s for s in numbers_scorer()(trace).scores}
    assert scores["grounding.numbers_checked"].value == 2
    assert scores["grounding.unsupported_numbers"].value == 1
    assert scores["grounding.unsupported_numbers"].comment is not None
    assert scores["grounding.unsupported_numbers"].comment.startswith('"f\u0131ve" not in any evidence')


def test_a_page_dated_with_such_a_letter_has_its_date() -> None:
    assert page_date("Published: \u017feptember 3, 2024") == datetime(2024, 9, 3, tzinfo=UTC)
    assert page_date("Updated 3 \u017fep 2024") == datetime(2024, 9, 3, tzinfo=UTC)
