"""Stratified sampling of judged claims: every stratum, deterministic by seed, never re-queued, budgeted, blind."""

from __future__ import annotations

import json
import random
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.calibrate.helpers import scored_store
from tracescore.calibrate.sampling import (
    FAILURE_KINDS,
    Candidate,
    Item,
    attach_documents,
    candidates,
    item_id,
    queued_ids,
    queued_on,
    record_sample,
    sample,
)
from tracescore.errors import ConfigError
from tracescore.trace import Trace

NOW = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)


def test_candidates_carry_stratum_judge_and_failure_flags(tmp_path: Path) -> None:
    store, run_id = scored_store(tmp_path / "s.db")
    pool = candidates(store, run_id)
    assert len(pool) == len(store.claims(run_id))
    assert {c.judge_model for c in pool} == {"claude-opus-4-5"}
    assert {c.diagnosis for c in pool} == {
        "retrieval_fail/right",
        "retrieval_fail/wrong",
        "ungrounded/right",
        "ungrounded/wrong",
        "grounded/right",
        "grounded/wrong",
    }
    flags = Counter(f for c in pool for f in c.failures)
    assert set(flags) == set(FAILURE_KINDS)
    assert len({c.item.item_id for c in pool}) == len(pool)


def test_sample_60_of_200_traces_has_every_stratum_and_recorded_probabilities(tmp_path: Path) -> None:
    store, run_id = scored_store(tmp_path / "s.db")
    pool = candidates(store, run_id)
    drawn = sample(pool, n=60, seed=11)
    random_slice = [p for p in drawn.picked if p.slice == "random"]
    assert len(random_slice) == 60
    sizes = Counter(c.stratum for c in pool)
    assert {p.candidate.stratum for p in random_slice} == set(sizes)  # every non-empty stratum present
    for stratum, (total, taken) in drawn.strata.items():
        assert total == sizes[stratum] and taken >= 1
        members = [p for p in random_slice if p.candidate.stratum == stratum]
        assert len(members) == taken
        assert all(p.inclusion_probability == pytest.approx(taken / total) for p in members)
        assert sum(1 / (p.inclusion_probability or 1) for p in members) == pytest.approx(total)  # Horvitz–Thompson


def test_same_seed_same_sample_whatever_the_row_order(tmp_path: Path) -> None:
    store, run_id = scored_store(tmp_path / "s.db")
    pool = candidates(store, run_id)
    first = [p.candidate.item.item_id for p in sample(pool, n=60, seed=5, failures=10).picked]
    shuffled = list(pool)
    random.Random(1).shuffle(shuffled)
    assert [p.candidate.item.item_id for p in sample(shuffled, n=60, seed=5, failures=10).picked] == first
    assert [p.candidate.item.item_id for p in sample(pool, n=60, seed=6, failures=10).picked] != first


def test_too_small_a_sample_is_refused_naming_the_minimum(tmp_path: Path) -> None:
    store, run_id = scored_store(tmp_path / "s.db")
    pool = candidates(store, run_id)
    strata = len({c.stratum for c in pool})
    with pytest.raises(ConfigError, match=rf"sample size 3 is below the {strata} non-empty strata.*at least {strata}"):
        sample(pool, n=3, seed=1)


def test_failures_slice_is_marked_and_separate(tmp_path: Path) -> None:
    store, run_id = scored_store(tmp_path / "s.db")
    drawn = sample(candidates(store, run_id), n=30, seed=2, failures=15)
    fails = [p for p in drawn.picked if p.slice == "failures"]
    assert len(fails) == 15
    assert all(p.candidate.failures and p.inclusion_probability is None for p in fails)
    random_ids = {p.candidate.item.item_id for p in drawn.picked if p.slice == "random"}
    assert not random_ids & {p.candidate.item.item_id for p in fails}


def test_never_requeued(tmp_path: Path) -> None:
    store, run_id = scored_store(tmp_path / "s.db")
    pool = candidates(store, run_id)
    first = sample(pool, n=60, seed=1, failures=10)
    assert record_sample(store, first, now=NOW) == 70
    again = sample(pool, n=60, seed=1, failures=10, exclude=queued_ids(store))
    assert not {i.item_id for i in again.items} & {i.item_id for i in first.items}
    assert any("70 item(s) already queued earlier" in n for n in again.notes)
    record_sample(store, again, now=NOW)
    assert len(queued_ids(store)) == 140
    assert record_sample(store, first, now=NOW) == 0 and len(queued_ids(store)) == 140  # the store keeps one row


def test_per_day_budget(tmp_path: Path) -> None:
    store, run_id = scored_store(tmp_path / "s.db")
    pool = candidates(store, run_id)
    strata = len({c.stratum for c in pool})
    budget = 40
    first = sample(pool, n=30, seed=1, failures=20, budget_left=budget - queued_on(store, NOW))
    assert len(first.picked) == 40 and sum(p.slice == "failures" for p in first.picked) == 10
    record_sample(store, first, now=NOW)
    assert queued_on(store, NOW) == 40
    later = sample(pool, n=30, seed=1, exclude=queued_ids(store), budget_left=budget - queued_on(store, NOW))
    assert later.picked == [] and any("nothing queued today" in n for n in later.notes)
    tomorrow = NOW + timedelta(days=1)
    assert queued_on(store, tomorrow) == 0
    cut = sample(pool, n=60, seed=1, exclude=queued_ids(store), budget_left=budget - queued_on(store, tomorrow))
    assert len(cut.picked) == 40 and any("cut from 60 to 40" in n for n in cut.notes)
    assert len({p.candidate.stratum for p in cut.picked}) >= min(strata, 40)


def test_items_are_blind(tmp_path: Path) -> None:
    store, run_id = scored_store(tmp_path / "s.db")
    drawn = sample(candidates(store, run_id), n=30, seed=1)
    record_sample(store, drawn, now=NOW)
    shown = set(Item.__dataclass_fields__)
    assert not shown & {"verdict", "judge_verdict", "cited_verdict", "judge", "judge_values"}
    for (item_json,) in store.query("SELECT item FROM calibration_items"):
        item = json.loads(item_json)
        assert set(item) == shown
        assert not {"supported", "partial", "unsupported", "contradicted"} & {str(v) for v in item.values()}


def test_attach_documents_shows_the_judged_passages_of_the_named_page(shared_data: Path) -> None:
    row = json.loads((shared_data / "wice" / "claim_dev.jsonl").read_text().splitlines()[0])
    url = "https://www.mediaplaynews.com/about-us/"
    trace = Trace.model_validate(
        {
            "id": "t-wice",
            "question": "Who publishes Media Play News?",
            "steps": [{"kind": "fetch", "url": url, "text": "\n".join(row["evidence"])}],
            "answer": row["claim"],
        }
    )
    item = Item(item_id("t-wice", 0, row["claim"]), "t-wice", 0, row["claim"], doc=url, quote="q")
    other = Item("x", "t-gone", 0, "claim of a trace we no longer have")
    pool = [
        Candidate(item, "run", "grounded/right", "partial", None, None),
        Candidate(other, "run", "c", "v", None, None),
    ]
    filled = attach_documents(pool, {"t-wice": trace})
    shown = filled[0].item
    assert shown.question == "Who publishes Media Play News?" and shown.url == url and shown.document
    assert len(shown.document) < len("\n".join(row["evidence"]))  # the judged passages, not the whole page
    gold = {i for group in row["supporting_sentences"] for i in group}
    assert any(row["evidence"][i] in shown.document for i in gold)
    assert filled[1].item == other  # trace gone: the item keeps no document rather than a wrong one
