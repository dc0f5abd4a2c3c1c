"""#44 acceptance 2 on real claims: WiCE claims as traces (the claim as the answer, the cited page as a fetched page).
Tampered copies (a changed digit; for a full date also a changed day, month or year, and an impossible day) are caught
for all but at most 1 in 100. Claims people labelled supported are flagged for at most 10 % apart from those whose
full date the page states only as a day and month in one place and a year in another, which item 2 of #44 counts as
not stated (WiCE's annotators read them as supported). The figures the README states are the ones
``benchmarks/numbers_wice.py`` prints."""

from __future__ import annotations

from benchmarks.numbers_wice import measure, tampered_copies, trace_of
from tests.conftest import SHARED_DATA
from tracescore.scorers.numbers import numbers_scorer

WICE = SHARED_DATA / "wice" / "claim_dev.jsonl"


def test_supported_claims_are_rarely_flagged_and_tampered_copies_are_caught() -> None:
    figures = measure(WICE)
    assert figures.supported == 115 and figures.supported_checked >= 60  # the labelled claims stating a number
    assert figures.other_flag_rate <= 0.10, (figures.false_flags, figures.split_dates, figures.supported_checked)
    assert figures.false_flags <= 12, figures.false_flags  # 12 of 74 measured: 6 of them split dates
    assert figures.tampered >= 500
    assert figures.caught_rate >= 0.99, figures.missed


def test_a_tampered_copy_changes_one_digit_to_a_number_the_page_never_states() -> None:
    row = {"claim": "It opened in 1998 with 41 branches.", "evidence": ["It opened in 1998.", "It has 41 branches."]}
    assert list(tampered_copies(row)) == [("It opened in 1999 with 41 branches.", "1999"),
                                          ("It opened in 1998 with 42 branches.", "42")]  # fmt: skip


def test_a_dates_day_month_and_year_changed_and_an_impossible_day_are_each_caught() -> None:
    row = {"claim": "It opened on January 31, 2010.", "evidence": ["It opened on January 31, 2010 (2006-10)."]}
    copies = list(tampered_copies(row))
    assert [text for _, text in copies] == ["January 31, 2011", "January 4, 2010", "February 28, 2010",
                                            "January 31, 2011", "January 32, 2010"]  # fmt: skip
    for n, (claim, text) in enumerate(copies):
        scores = {s.name: s for s in numbers_scorer()(trace_of(row, claim, n))}
        assert scores["grounding.unsupported_numbers"].value == 1.0, claim
        assert f'"{text}" not in any evidence' in (scores["grounding.unsupported_numbers"].comment or ""), claim
    assert {s.name: s.value for s in numbers_scorer()(trace_of(row))}["grounding.unsupported_numbers"] == 0.0
