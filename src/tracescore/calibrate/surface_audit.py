"""Auditing the surface oracle: a balanced sample of its per-URL labels, and agreement with reviewers.

Each URL row gives up to two parts (its ``surface`` and, when fetched and readable, its ``page``) and each part two
binary questions: does it support the gold answer, does it contradict it. A leaf is provider × part × label ×
the oracle's value (yes / no); the sample takes ``per_leaf`` items from every leaf (five by default, all of a smaller
leaf), so rare labels (a contradicting page on one provider) are audited as often as common ones. The draw depends
only on the seed and the candidates, never on row order.

Agreement is reported over the clear cases: a reviewer's ``unclear`` stays in the pool (counted, shown) but out of
the denominator (the anchor study: 164 agreeing of 174 clear cases, 94 %).
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from tracescore.calibrate.agreement import wilson_interval
from tracescore.scorers.surface import SURFACE_SMART, UrlRow
from tracescore.store.db import Store

PER_LEAF = 5
PARTS = ("surface", "page")
LABELS = ("supports", "contradicts")
Answer = Literal["yes", "no", "unclear"]


@dataclass(frozen=True)
class AuditItem:
    """One question for a reviewer: does this part of this URL ``label`` the gold answer? (the oracle said ``value``)

    The reviewer sees the URL, the part and, when the oracle quoted one, the quote; never ``value``.
    """

    trace_id: str
    provider: str
    url: str
    part: str
    label: str
    value: bool
    quote: str | None = None

    @property
    def id(self) -> str:
        text = json.dumps([self.trace_id, self.url, self.part, self.label])
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    @property
    def leaf(self) -> tuple[str, str, str, bool]:
        return (self.provider, self.part, self.label, self.value)


def audit_items(rows: Iterable[tuple[str, str, UrlRow]]) -> list[AuditItem]:
    """Every (part, label) question of (trace id, provider, per-URL row) triples; unlabelled parts give none."""
    out: list[AuditItem] = []
    for trace_id, provider, row in rows:
        for part in PARTS:
            got = row.surface if part == "surface" else row.page
            if got is None:
                continue
            quote = row.surface_quote if part == "surface" else row.page_quote
            for label in LABELS:
                out.append(AuditItem(trace_id, provider, row.url or row.key, part, label, got == label, quote))
    return out


def audit_sample(items: Sequence[AuditItem], *, per_leaf: int = PER_LEAF, seed: int = 0) -> list[AuditItem]:
    """Up to ``per_leaf`` items from every provider × part × label × oracle-value leaf, drawn by a seeded hash."""
    leaves: dict[tuple[str, str, str, bool], list[AuditItem]] = defaultdict(list)
    for item in items:
        leaves[item.leaf].append(item)

    def order(item: AuditItem) -> str:
        return hashlib.sha256(f"{seed}:{item.id}".encode()).hexdigest()

    picked: list[AuditItem] = []
    for leaf in sorted(leaves):
        picked += sorted(leaves[leaf], key=order)[:per_leaf]
    return picked


@dataclass
class AuditAgreement:
    """Agreement of the oracle with reviewers over clear cases; unclear ones counted apart, never as disagreement."""

    agree: int = 0
    clear: int = 0
    unclear: int = 0
    by_leaf: dict[tuple[str, str, str, bool], tuple[int, int]] = field(default_factory=dict)  # leaf → (agree, clear)

    @property
    def rate(self) -> float | None:
        return self.agree / self.clear if self.clear else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson_interval(self.agree, self.clear)

    @property
    def pool(self) -> int:
        return self.clear + self.unclear

    def line(self) -> str:
        if self.rate is None:
            return f"surface oracle agreement: no clear case yet ({self.unclear} unclear)"
        low, high = self.interval or (self.rate, self.rate)
        return (
            f"surface oracle agreement: {self.agree} of {self.clear} clear cases, {self.rate:.0%}"
            f" (95% CI {low:.0%}–{high:.0%}); {self.unclear} unclear kept in the pool of {self.pool}"
        )


def audit_agreement(items: Sequence[AuditItem], answers: Mapping[str, Answer]) -> AuditAgreement:
    """Agreement over the items a reviewer answered (item id → yes / no / unclear); unanswered items are skipped."""
    out = AuditAgreement()
    leaf_counts: dict[tuple[str, str, str, bool], list[int]] = defaultdict(lambda: [0, 0])
    for item in items:
        answer = answers.get(item.id)
        if answer is None:
            continue
        if answer == "unclear":
            out.unclear += 1
            continue
        agreed = (answer == "yes") == item.value
        out.clear += 1
        out.agree += agreed
        leaf_counts[item.leaf][0] += agreed
        leaf_counts[item.leaf][1] += 1
    out.by_leaf = {leaf: (a, c) for leaf, (a, c) in sorted(leaf_counts.items())}
    return out


def stored_url_rows(store: Store, run_id: str, *, provider_key: str = "provider") -> list[tuple[str, str, UrlRow]]:
    """(trace id, provider, per-URL row) of a stored run: ``surface.smart``'s metadata, the result's provider."""
    providers: dict[str, str] = {}
    for trace_id, metadata in store.query(  # the result line holds the metadata (0010_lean_results)
        "SELECT trace_id, json_extract(result_line, '$.metadata') FROM results WHERE run_id = ?", (run_id,)
    ):
        meta: dict[str, Any] = json.loads(metadata or "{}")
        providers[str(trace_id)] = str(meta.get(provider_key, "(none)"))
    out: list[tuple[str, str, UrlRow]] = []
    for trace_id, metadata in store.query(
        "SELECT trace_id, metadata FROM scores WHERE run_id = ? AND name = ?", (run_id, SURFACE_SMART)
    ):
        for row in json.loads(metadata or "{}").get("urls", []):
            out.append((str(trace_id), providers.get(str(trace_id), "(none)"), UrlRow(**row)))
    return out
