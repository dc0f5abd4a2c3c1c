"""``Summary`` counts absent reasons lazily (one Counter entry per distinct ``missing`` mapping): the folded counts
equal a plain per-line count, in first-seen order, and memory stays flat when every reason is unique."""

from __future__ import annotations

import random
from collections import defaultdict

import pytest

from tracescore.report.tally import Summary, summarize


def _lines(n: int, seed: int, unique: bool) -> list[dict[str, object]]:
    rng = random.Random(seed)
    reasons = ["no gold_answer label", "judge turned off", "no required_doc_ids label"]
    out = []
    for i in range(n):
        missing = {
            name: (f"error on trace {i}" if unique else rng.choice(reasons))
            for name in rng.sample(["grounding.rate", "answer.token_f1", "diagnosis", "retrieval.recall_at_5"], 2)
        }
        out.append(
            {"trace_id": f"t{i}", "scores": {"answer.correct": rng.random() < 0.5}, "missing": missing, "errors": []}
        )
    return out


def _plain_counts(lines: list[dict[str, object]]) -> tuple[dict[str, dict[str, int]], dict[str, int]]:
    absent: dict[str, dict[str, int]] = defaultdict(dict)
    undiagnosed: dict[str, int] = {}
    for line in lines:
        for name, reason in line["missing"].items():  # type: ignore[attr-defined]
            target = undiagnosed if name == "diagnosis" else absent[name]
            target[reason] = target.get(reason, 0) + 1
    return absent, undiagnosed


def test_folded_absent_counts_equal_a_plain_count_in_first_seen_order() -> None:
    for unique in (False, True):
        lines = _lines(2000, 14, unique)
        summary = Summary()
        for n, line in enumerate(lines):
            summary.add(line)
            if n == 700:
                assert summary.stats["answer.correct"].present == 701  # a read in the middle folds, then goes on
        absent, undiagnosed = _plain_counts(lines)
        got = {name: dict(stat.absent) for name, stat in summary.stats.items() if stat.absent}
        assert got == absent and list(got["grounding.rate"]) == list(absent["grounding.rate"])
        assert dict(summary.undiagnosed) == undiagnosed
        assert len(summary._absent) <= 513  # folded as it goes when every reason is unique


def test_a_wrong_count_is_caught() -> None:
    lines = _lines(50, 3, False)
    summary = Summary()
    for line in lines[:-1]:
        summary.add(line)
    absent, _ = _plain_counts(lines)
    got = {name: dict(stat.absent) for name, stat in summary.stats.items() if stat.absent}
    assert got != absent  # one line short: the comparison above can fail


def _varied(n: int, seed: int) -> list[dict[str, object]]:
    """Result lines of every kind the summary folds: cells, categorical values, fabricated counts, errors, judge use."""
    rng = random.Random(seed)
    cells = ["retrieval_pass/right", "retrieval_fail/wrong", "grounded/right", "ungrounded/wrong"]
    out: list[dict[str, object]] = []
    for line in _lines(n, seed, unique=False):
        if rng.random() < 0.05:  # an unreadable line: errors only
            out.append({"trace_id": line["trace_id"], "scores": {}, "missing": {}, "errors": ["line 3: bad"]})
            continue
        scores = dict(line["scores"])  # type: ignore[call-overload]
        scores["retrieval.recall_at_5"] = rng.choice([0.0, 0.2, 1 / 3, 0.7, 1.0])
        scores["citation.fabricated_count"] = float(rng.randint(0, 2))
        scores["grounding.rate"] = rng.random()
        if rng.random() < 0.8:
            scores["diagnosis"] = rng.choice(cells)
        line["scores"] = scores
        if rng.random() < 0.3:
            line["judge"] = {"calls": 1, "input_tokens": rng.randint(1, 900), "cost_usd": 0.001}
        if rng.random() < 0.1:
            line["errors"] = ["scorer x failed: boom"]
        out.append(line)
    return out


def test_merged_chunk_summaries_equal_one_summary_of_every_line() -> None:
    """What ``score --workers N`` does: each worker summarises its chunk, the parent merges them in input order."""
    import pickle

    for seed, unique in ((5, False), (6, True)):
        lines = _varied(3000, seed) if not unique else _lines(3000, seed, unique=True)
        whole = Summary()
        for line in lines:
            whole.add(line)
        merged = Summary()
        rng, at = random.Random(seed), 0
        while at < len(lines):
            size = rng.choice([1, 7, 64, 256, 700])
            part = pickle.loads(pickle.dumps(summarize(lines[at : at + size])))  # as it crosses the pipe
            merged.merge(part)
            at += size
        assert (merged.traces, merged.failed, merged.errors) == (whole.traces, whole.failed, whole.errors)
        assert merged.cells == whole.cells and merged.fabricated == whole.fabricated
        assert {s: (c.passed, c.decided, c.failed_ids) for s, c in merged.stages.items()} == {
            s: (c.passed, c.decided, c.failed_ids) for s, c in whole.stages.items()
        }
        assert merged.categorical == whole.categorical and merged.judge == whole.judge  # type: ignore[comparison-overlap]
        assert list(merged.stats) == list(whole.stats) and merged.undiagnosed == whole.undiagnosed
        for name, stat in whole.stats.items():
            got = merged.stats[name]
            assert (got.present, list(got.absent.items())) == (stat.present, list(stat.absent.items()))
            assert got.total == pytest.approx(stat.total, rel=1e-12)


def test_a_merge_that_drops_a_chunk_is_seen() -> None:
    lines = _varied(300, 9)
    whole, merged = summarize(lines), Summary()
    merged.merge(summarize(lines[:100]))
    merged.merge(summarize(lines[200:]))
    assert merged.traces < whole.traces and merged.cells != whole.cells
