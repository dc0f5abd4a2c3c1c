"""#44 item 2: what a date is. A full date is a valid calendar date written as one unit; it is stated only when the
evidence states that date, never by its day and month in one place and its year in another. Each form the reader
reads is tested, and the forms WiCE showed it missed (digits run on after letters, ``May 1 2019``, ``2003.06.11``)."""

from __future__ import annotations

import pytest

from tracescore.scorers.number_reader import read
from tracescore.scorers.numbers import numbers_scorer
from tracescore.trace import Trace


def _unsupported(claim: str, page: str) -> tuple[float | None, str | None]:
    trace = Trace.model_validate({"id": "t", "answer": claim, "steps": [
        {"kind": "fetch", "url": "https://a.example/p", "text": page}]})  # fmt: skip
    got = {s.name: s for s in numbers_scorer()(trace)}["grounding.unsupported_numbers"]
    return got.value, got.comment


@pytest.mark.parametrize(
    "page",
    ["It opened on 2003-06-11.", "Opened 2003-06-11T09:30:00Z.", "It opened on 2003.06.11.", "It opened on 11.06.2003.",
     "It opened on June 11, 2003.", "It opened on June 11 2003.", "It opened on 11 June 2003.",
     "It opened on the 11th of June, 2003.", "It opened Jun. 11, 2003."],
)
def test_each_form_of_a_full_date_states_it(page: str) -> None:
    assert _unsupported("It opened on June 11, 2003.", page) == (0.0, None)
    assert _unsupported("It opened on 2003-06-11.", page) == (0.0, None)
    assert _unsupported("It opened on June 12, 2003.", page)[0] == 1.0  # another day is not stated


def test_day_dot_month_dot_year_is_read_day_first() -> None:
    assert [n.key for n in read("11.06.2003", whole=True)] == [("d", 2003, 6, 11)]
    assert [n.key for n in read("2003.06.11", whole=True)] == [("d", 2003, 6, 11)]
    assert _unsupported("It opened on November 6, 2003.", "It opened on 11.06.2003.")[0] == 1.0


def test_a_full_date_is_not_stated_by_its_day_and_month_and_its_year_apart() -> None:
    value, comment = _unsupported("It opened on January 31, 2010.", "It opened on January 31. Figures (2006-10).")
    assert (value, comment) == (1.0, '"January 31, 2010" not in any evidence')
    # but a month and year, or a year, is stated by a full date holding it
    assert _unsupported("It opened in January 2010, in 2010.", "It opened on January 31, 2010.") == (0.0, None)


@pytest.mark.parametrize("claim", ["It opened on January 32, 2017.", "It opened on February 30, 2016.",
                                   "It opened on 2017-02-29.", "It opened on 31.04.2017."])
def test_an_impossible_date_is_never_stated(claim: str) -> None:
    page = "It opened on January 31, 2017, February 29, 2016, March 1, 2017, April 30, 2017, 31 April 2017."
    value, comment = _unsupported(claim, page)
    assert value == 1.0 and comment is not None and "not in any evidence" in comment
    assert ("d", 2017, 4, 31) not in {n.key for n in read(page)}  # nor read from the evidence as a date


def test_digits_run_on_after_letters_are_read() -> None:
    assert _unsupported("It was staged in 1990 and shown in Spain in 1986.", "staged1990— Spain1986—") == (0.0, None)
    assert [n.key for n in read("staged1990—", whole=True)] == [1990]


def test_a_date_without_its_comma_is_read() -> None:
    assert [n.key for n in read("on May 1 2019 it", whole=True)] == [("d", 2019, 5, 1)]
    assert _unsupported("It opened on May 1, 2019.", "Opened May 1 2019 downtown.") == (0.0, None)
