"""``Summary`` counts absent reasons lazily (one Counter entry per distinct ``missing`` mapping): the folded counts
equal a plain per-line count, in first-seen order, and memory stays flat when every reason is unique."""

from __future__ import annotations

import random
from collections import defaultdict

from tracescore.report.tally import Summary


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
