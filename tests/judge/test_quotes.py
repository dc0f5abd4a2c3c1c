"""Quote verification: WiCE gold supporting sentences (exact, re-spaced, re-cased, curly quotes) are accepted;
sentences from another claim's page are rejected; a near match never changes a number."""

from __future__ import annotations

import json
import random

import pytest

from tests.conftest import SHARED_DATA
from tracescore.judge.quotes import normalize_quote_text, verify_quote

WICE = SHARED_DATA / "wice" / "claim_dev.jsonl"


@pytest.fixture(scope="module")
def wice() -> list[dict]:
    if not WICE.exists():
        pytest.fail(f"WiCE data not found at {WICE}")
    return [json.loads(line) for line in WICE.read_text(encoding="utf-8").splitlines()]


def _page(row: dict) -> str:
    return "\n".join(row["evidence"])


def _gold_sentences(row: dict) -> list[str]:
    return [row["evidence"][i] for group in row["supporting_sentences"] for i in group if len(row["evidence"][i]) >= 40]


def _variants(sentence: str, rng: random.Random) -> dict[str, str]:
    words = sentence.split()
    start = rng.randrange(0, max(1, len(words) // 3))
    cut = " ".join(words[start:])  # a quote cut from the sentence, not always the whole of it
    return {
        "exact": cut,
        "re-spaced": "  ".join(cut.split(" ")).replace("  ", " \n ", 1),
        "re-cased": cut.upper() if rng.random() < 0.5 else cut.swapcase(),
        "curly": cut.replace("'", "\u2019").replace('"', "\u201c").replace("-", "\u2013"),
    }


def test_gold_supporting_sentences_are_accepted_in_every_variant(wice: list[dict]) -> None:
    rng = random.Random(7)
    checked, rejected = 0, []
    for row in wice:
        page = _page(row)
        for sentence in _gold_sentences(row)[:3]:
            for how, quote in _variants(sentence, rng).items():
                checked += 1
                result = verify_quote(quote, page)
                if not result.found:
                    rejected.append((row["meta"]["id"], how, quote[:60], result.reason))
    assert checked > 1000
    assert rejected == []


def test_sentences_from_another_claims_page_are_rejected(wice: list[dict]) -> None:
    checked, accepted = 0, []
    for row, other in zip(wice, wice[1:] + wice[:1], strict=True):
        page = _page(row)
        norm_page = normalize_quote_text(page)
        if other["evidence"] == row["evidence"]:
            continue
        foreign = [s for s in other["evidence"] if len(s) >= 60 and normalize_quote_text(s) not in norm_page]
        for sentence in foreign[:: max(1, len(foreign) // 4)][:4]:
            checked += 1
            if verify_quote(sentence, page).found:
                accepted.append((row["meta"]["id"], sentence[:80]))
    assert checked > 800
    assert accepted == []


def test_a_copied_sentence_from_another_page_is_found_only_when_it_is_really_there(wice: list[dict]) -> None:
    row = next(r for r in wice if any(len(s) > 80 for s in r["evidence"]))
    sentence = next(s for s in row["evidence"] if len(s) > 80)
    assert verify_quote(sentence, _page(row)).found
    assert not verify_quote(sentence, _page(wice[-1] if wice[-1] is not row else wice[0])).found


def test_a_near_match_may_fix_a_typo_but_never_a_number() -> None:
    doc = "Its elevation of 8,848.86 m was most recently established in 2020 by the Chinese and Nepali authorities."
    assert verify_quote("Its elevaton of 8,848.86 m was most recently established", doc).how == "fuzzy"
    changed = verify_quote("Its elevation of 8,848.85 m was most recently established", doc)
    assert not changed.found and "85" in (changed.reason or "")


def test_short_empty_and_elided_quotes() -> None:
    doc = "Penicillin was discovered in 1928 by Scottish scientist Alexander Fleming."
    assert verify_quote("", doc).reason == "no quote given"
    assert not verify_quote("in 1928", doc).found
    assert "too short" in (verify_quote("in 1928", doc).reason or "")
    assert verify_quote("Penicillin was discovered … by Scottish scientist Alexander Fleming", doc).found
    assert not verify_quote("Penicillin was discovered … by the French chemist Louis Pasteur", doc).found
