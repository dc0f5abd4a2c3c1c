"""``Summary`` sums the numeric scores of consecutive lines of one shape together (``Summary._sum``): the stats it
gives equal a plain line-by-line count exactly (the same float totals, the same order of names and reasons), whatever
the lines: shapes that change, values of mixed types, flagged lines, reads and merges in between."""

from __future__ import annotations

import pickle
import random
from typing import Any

from tracescore.report.tally import Summary, summarize

_NAMES = ["retrieval.recall_at_5", "answer.correct", "grounding.rate", "trajectory.fetch_chars",
          "trajectory.search_calls", "diagnosis"]  # fmt: skip


def _line(i: int, rng: random.Random) -> dict[str, Any]:
    scores: dict[str, Any] = {}
    for name in rng.sample(_NAMES, rng.randint(0, len(_NAMES))) if rng.random() < 0.2 else _NAMES[:4]:
        kind = rng.random()
        if kind < 0.7:
            scores[name] = rng.choice([0.0, 1 / 3, 0.1, 0.7, 1e16, 2.5e-7, rng.random()])
        elif kind < 0.8:
            scores[name] = rng.random() < 0.5
        elif kind < 0.9:
            scores[name] = rng.randint(0, 9)
        else:
            scores[name] = rng.choice(["retrieval_pass/right", "grounded/wrong", "x"])
    missing = {n: rng.choice(["no gold_answer label", f"error on {i % 7}"]) for n in _NAMES if n not in scores}
    line: dict[str, Any] = {"trace_id": f"t{i}", "scores": scores, "missing": missing, "errors": []}
    if rng.random() < 0.05:
        line["judge"] = {"calls": 1, "sample": {"rate": 0.5, "by": "flagged"}}
    return line


def _plain(lines: list[dict[str, Any]]) -> tuple[list[Any], dict[str, dict[str, int]], list[Any]]:
    """The stats, categories and flagged stats of ``lines`` counted one line at a time, in plain Python."""
    stats: dict[str, list[Any]] = {}
    flagged: dict[str, list[Any]] = {}
    categorical: dict[str, dict[str, int]] = {}
    for line in lines:
        apart = (line.get("judge") or {}).get("sample", {}).get("by") == "flagged"
        for name, value in line["scores"].items():
            if isinstance(value, str):
                categorical.setdefault(name, {}).setdefault(value, 0)
                categorical[name][value] += 1
                continue
            into = flagged if apart and name == "grounding.rate" else stats
            stat = into.setdefault(name, [0, 0.0, {}])
            stat[0] += 1
            stat[1] += float(value)
    absent: dict[str, dict[str, int]] = {}
    for line in lines:
        for name, reason in line["missing"].items():
            if name != "diagnosis":
                absent.setdefault(name, {}).setdefault(reason, 0)
                absent[name][reason] += 1
    for name, reasons in absent.items():
        stats.setdefault(name, [0, 0.0, {}])[2] = reasons
    return (
        sorted((n, s[0], s[1], list(s[2].items())) for n, s in stats.items()),
        categorical,
        sorted((n, s[0], s[1]) for n, s in flagged.items()),
    )


def _got(summary: Summary) -> tuple[list[Any], dict[str, dict[str, int]], list[Any]]:
    return (
        sorted((n, s.present, s.total, list(s.absent.items())) for n, s in summary.stats.items()),
        {n: dict(v) for n, v in summary.categorical.items()},
        sorted((n, s.present, s.total) for n, s in summary.flagged_stats.items()),
    )


def test_pending_sums_equal_a_line_by_line_count_exactly() -> None:
    for seed in range(6):
        rng = random.Random(seed)
        lines = [_line(i, rng) for i in range(1500)]
        summary = Summary()
        for n, line in enumerate(lines):
            summary.add(line)
            if n in (0, 333, 1000):  # a read in the middle sums what waits, then lines go on waiting
                assert summary.stats is not None
        assert _got(summary) == _plain(lines)  # totals compared exactly: summed in the same order


def test_names_keep_the_order_they_came_in() -> None:
    rng = random.Random(3)
    lines = [_line(i, rng) for i in range(800)]
    one_by_one = Summary()
    for line in lines:
        one_by_one.add(line)
        one_by_one._sum()  # nothing ever waits: the order line-by-line counting gives
    summary = summarize(lines)
    assert list(summary.stats) == list(one_by_one.stats)
    assert [(n, s.total) for n, s in summary.stats.items()] == [(n, s.total) for n, s in one_by_one.stats.items()]


def test_merged_pending_summaries_equal_one_summary() -> None:
    rng = random.Random(11)
    lines = [_line(i, rng) for i in range(1200)]
    merged, at = Summary(), 0
    while at < len(lines):
        size = rng.choice([1, 5, 90, 400])
        merged.merge(pickle.loads(pickle.dumps(summarize(lines[at : at + size]))))  # pending lines cross the pipe
        at += size
    whole = summarize(lines)
    assert list(merged.stats) == list(whole.stats)
    assert [(n, s.present, list(s.absent.items())) for n, s in merged.stats.items()] == [
        (n, s.present, list(s.absent.items())) for n, s in whole.stats.items()
    ]
    assert merged.categorical == whole.categorical


def test_a_lost_pending_line_is_seen() -> None:
    rng = random.Random(5)
    lines = [_line(i, rng) for i in range(300)]
    summary = summarize(lines)
    summary._rows.pop() if summary._rows else summary._absent.clear()
    assert _got(summary) != _plain(lines)  # the comparison above can fail


def test_a_long_run_of_one_shape_keeps_memory_flat_and_sums_exactly() -> None:
    rng = random.Random(8)
    lines = [{"trace_id": f"t{i}", "scores": {"a": rng.random(), "b": True, "diagnosis": "x"}, "missing": {},
              "errors": []} for i in range(10_000)]  # fmt: skip
    summary = summarize(lines)
    assert len(summary._rows) < 4096
    assert _got(summary) == _plain(lines)
