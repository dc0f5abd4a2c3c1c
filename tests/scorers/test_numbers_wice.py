"""#33 acceptance 2 on real claims: WiCE claims as traces (the claim as the answer, the cited page as a fetched page).
Claims people labelled supported are flagged for at most 10 %; a copy with one digit of one number changed (so the new
number is stated nowhere on the page) is caught for all but at most 1 in 100 copies. The figures the README states are
the ones ``benchmarks/numbers_wice.py`` prints."""

from __future__ import annotations

from benchmarks.numbers_wice import measure, tampered_copies
from tests.conftest import SHARED_DATA

WICE = SHARED_DATA / "wice" / "claim_dev.jsonl"


def test_supported_claims_are_rarely_flagged_and_tampered_copies_are_caught() -> None:
    figures = measure(WICE)
    assert figures.supported == 115 and figures.supported_checked >= 60  # the labelled claims stating a number
    assert figures.false_flag_rate <= 0.10, (figures.false_flags, figures.supported_checked)
    assert figures.tampered >= 300
    assert figures.caught_rate >= 0.99, figures.missed


def test_a_tampered_copy_changes_one_digit_to_a_number_the_page_never_states() -> None:
    row = {"claim": "It opened in 1998 with 41 branches.", "evidence": ["It opened in 1998.", "It has 41 branches."]}
    assert list(tampered_copies(row)) == [("It opened in 1999 with 41 branches.", "1999"),
                                          ("It opened in 1998 with 42 branches.", "42")]  # fmt: skip
