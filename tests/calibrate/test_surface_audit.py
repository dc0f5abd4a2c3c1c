"""Auditing the surface oracle (#13 item 6): a balanced sample over provider × part × label × oracle value, five per
leaf, and agreement over clear cases with unclear ones kept in the pool."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from tests.report.test_surface import _results
from tracescore.calibrate.surface_audit import (
    AuditItem,
    audit_agreement,
    audit_items,
    audit_sample,
    stored_url_rows,
)
from tracescore.scorers.surface import UrlRow
from tracescore.store.db import Store


def _stored(tmp_path: Path) -> list[tuple[str, str, UrlRow]]:
    with Store(tmp_path / "t.db") as store:
        run = store.start_run("score")
        for result in _results():
            store.add_result(run, result)
        store.finish_run(run, {})
        return stored_url_rows(store, run)


def test_the_stored_rows_give_one_question_per_part_and_label(tmp_path: Path) -> None:
    rows = _stored(tmp_path)
    assert Counter(p for _, p, _ in rows) == {"brave": 4, "tavily": 3, "exa": 4}
    items = audit_items(rows)
    brave_page = [i for i in items if i.provider == "brave" and i.part == "page"]
    # brave fetched U1 (page supports) and U3 (page supports): two pages, two questions each
    assert sorted((i.url.split("//")[1][0], i.label, i.value) for i in brave_page) == [
        ("a", "contradicts", False), ("a", "supports", True), ("c", "contradicts", False), ("c", "supports", True),
    ]  # fmt: skip
    contradicting = [i for i in items if i.label == "contradicts" and i.value]
    assert {(i.provider, i.part) for i in contradicting} == {("brave", "surface"), ("tavily", "surface"),
                                                            ("tavily", "page"), ("exa", "surface")}  # fmt: skip
    assert all(i.quote for i in items if i.value)  # every yes the oracle gave carries its verified quote


def _many(n: int) -> list[AuditItem]:
    rng = random.Random(1)
    return [
        AuditItem(f"t{k}", rng.choice("ab"), f"https://x/{k}", rng.choice(("surface", "page")),
                  rng.choice(("supports", "contradicts")), rng.random() < 0.1)
        for k in range(n)
    ]  # fmt: skip


def test_sample_is_balanced_five_per_leaf_and_independent_of_order() -> None:
    items = _many(2000)
    drawn = audit_sample(items)
    per_leaf = Counter(i.leaf for i in drawn)
    assert len(per_leaf) == 16 and set(per_leaf.values()) == {5}  # 2 providers × 2 parts × 2 labels × yes/no
    shuffled = list(items)
    random.Random(7).shuffle(shuffled)
    assert audit_sample(shuffled) == drawn
    assert audit_sample(items, seed=1) != drawn
    small = audit_sample(items[:20], per_leaf=5)
    assert all(n <= 5 for n in Counter(i.leaf for i in small).values())
    assert len(small) == sum(min(5, n) for n in Counter(i.leaf for i in items[:20]).values())


def test_agreement_excludes_unclear_from_the_denominator_but_keeps_it_in_the_pool() -> None:
    items = _many(181)
    answers: dict[str, str] = {}
    for k, item in enumerate(items):
        if k < 164:
            answers[item.id] = "yes" if item.value else "no"  # agrees
        elif k < 174:
            answers[item.id] = "no" if item.value else "yes"  # disagrees
        else:
            answers[item.id] = "unclear"
    got = audit_agreement(items, answers)  # type: ignore[arg-type]
    assert (got.agree, got.clear, got.unclear, got.pool) == (164, 174, 7, 181)
    assert got.rate == pytest.approx(0.9425, abs=1e-4)
    assert "164 of 174 clear cases, 94%" in got.line() and "7 unclear kept in the pool of 181" in got.line()
    assert sum(c for _, c in got.by_leaf.values()) == 174
    only_unclear = audit_agreement(items[:3], dict.fromkeys((i.id for i in items[:3]), "unclear"))  # type: ignore[arg-type]
    assert only_unclear.rate is None and "no clear case yet (3 unclear)" in only_unclear.line()
