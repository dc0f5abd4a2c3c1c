"""Passage selection: short pages go whole; long pages are cut to each claim's best chunks within a token budget."""

from __future__ import annotations

import json

from tests.conftest import SHARED_DATA
from tracescore.judge.passages import BM25, approx_tokens, chunk_text, select_passages, terms

WICE = SHARED_DATA / "wice" / "claim_dev.jsonl"


def test_terms_drop_stop_words_stem_and_keep_numbers() -> None:
    assert terms("The heights of 8,848.86 metres were measured") == ["height", "8848.86", "metr", "measur"]


def test_chunk_text_splits_paragraphs_and_sentences_and_cuts_long_ones() -> None:
    text = "First sentence here. Second one follows!\n\nA new paragraph. Then " + "word " * 200
    chunks = chunk_text(text, max_chars=300)
    assert chunks[:3] == ["First sentence here.", "Second one follows!", "A new paragraph."]
    assert all(len(c) <= 300 for c in chunks)
    assert " ".join(chunks[3:]).split() == ["Then"] + ["word"] * 200


def test_bm25_ranks_the_sentence_that_shares_rare_terms_first() -> None:
    chunks = ["Shipping is free over $50.", "Everest is 8,848.86 m tall.", "K2 is the second-highest mountain."]
    scores = BM25(chunks).scores("How tall is Everest?")
    assert scores.index(max(scores)) == 1 and scores[0] == 0


def test_short_page_is_sent_whole() -> None:
    chunks = ["One.", "Two.", "Three."]
    assert [p.index for p in select_passages(chunks, ["anything"])] == [0, 1, 2]


def test_long_page_keeps_each_claims_best_chunk_within_budget() -> None:
    filler = [f"Filler sentence number {i} about nothing in particular at all today." for i in range(200)]
    chunks = filler[:50] + ["Penicillin was discovered in 1928 by Alexander Fleming."] + filler[50:150]
    chunks += ["Mass production of penicillin began in 1942."] + filler[150:]
    selected = select_passages(chunks, ["Fleming discovered penicillin in 1928", "Production began in 1942"])
    picked = {p.index for p in selected}
    assert {50, 151} <= picked
    sent = sum(approx_tokens(p.text) for p in selected)
    assert sent <= 0.15 * sum(approx_tokens(c) for c in chunks) + 1
    assert [p.index for p in selected] == sorted(picked)


def test_wice_supported_claims_keep_a_gold_sentence_at_a_quarter_of_the_tokens() -> None:
    rows = [json.loads(line) for line in WICE.read_text(encoding="utf-8").splitlines()]
    supported = [r for r in rows if r["label"] == "supported"]
    kept = sent = total = 0
    for row in supported:
        selected = select_passages(row["evidence"], [row["claim"]])
        gold = {i for group in row["supporting_sentences"] for i in group}
        kept += bool(gold & {p.index for p in selected})
        sent += sum(approx_tokens(p.text) for p in selected)
        total += sum(approx_tokens(s) for s in row["evidence"])
    assert kept / len(supported) >= 0.95
    assert sent / total <= 0.25
