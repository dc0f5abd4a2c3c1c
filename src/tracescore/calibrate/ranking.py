"""How well the judge ranks one class above another: AUROC (the Mann–Whitney U statistic) with a seeded bootstrap
interval, for one class against the rest and, for an ordinal label, for each adjacent pair of levels as the WiCE
paper reports them (supported vs partial, partial vs unsupported/contradicted), so "is PARTIAL above chance?" is read
from an interval around 0.5. ``Estimate`` (a figure with its interval, or absent with the reason) lives here so the
agreement module and this one share it.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Estimate:
    """A statistic with its interval, or absent (``value`` None) with the reason."""

    value: float | None
    low: float | None = None
    high: float | None = None
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"value": self.value}
        if self.low is not None and self.high is not None:
            out["interval"] = [self.low, self.high]
        if self.reason:
            out["reason"] = self.reason
        return out


def absent(reason: str) -> Estimate:
    return Estimate(None, reason=reason)


def auroc(positive: Sequence[bool], scores: Sequence[float]) -> Estimate:
    """Area under the ROC curve as the Mann–Whitney U statistic with midranks for ties; absent with one class only."""
    n_pos = sum(1 for p in positive if p)
    n_neg = len(positive) - n_pos
    if n_pos == 0 or n_neg == 0:
        which = "positive" if n_pos == 0 else "negative"
        return absent(f"AUROC undefined: no {which} item among {len(positive)}")
    order = sorted(range(len(scores)), key=lambda i: scores[i])
    ranks = [0.0] * len(scores)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and scores[order[end + 1]] == scores[order[start]]:
            end += 1
        midrank = (start + end) / 2 + 1
        for k in range(start, end + 1):
            ranks[order[k]] = midrank
        start = end + 1
    rank_sum = sum(r for r, p in zip(ranks, positive, strict=True) if p)
    u = rank_sum - n_pos * (n_pos + 1) / 2
    return Estimate(u / (n_pos * n_neg))


def bootstrap_auroc(
    positive: Sequence[bool],
    scores: Sequence[float],
    *,
    seed: int = 0,
    resamples: int = 1000,
    level: float = 0.95,
    max_undefined: float = 0.1,
) -> Estimate:
    """AUROC with a seeded percentile-bootstrap interval over items (resamples with one class only are dropped; more
    than ``max_undefined`` of them: the point without an interval, and why)."""
    point = auroc(positive, scores)
    if point.value is None or resamples <= 0:
        return point
    levels = {s: i for i, s in enumerate(sorted(set(scores)))}
    cells = [2 * levels[s] + bool(p) for p, s in zip(positive, scores, strict=True)]  # score level and class
    rng = random.Random(seed)
    values: list[float] = []
    for _ in range(resamples):
        drawn = Counter(rng.choices(cells, k=len(cells)))
        value = _area([drawn[2 * i + 1] for i in range(len(levels))], [drawn[2 * i] for i in range(len(levels))])
        if value is not None:
            values.append(value)
    if len(values) < (1 - max_undefined) * resamples:
        dropped = resamples - len(values)
        return Estimate(point.value, reason=f"no interval: one class only in {dropped} of {resamples} resamples")
    values.sort()
    tail = (1 - level) / 2
    return Estimate(point.value, quantile(values, tail), quantile(values, 1 - tail))


def _area(pos: Sequence[int], neg: Sequence[int]) -> float | None:
    """AUROC from the positive and negative counts at each score level (lowest first); ties count one half."""
    n_pos, n_neg = sum(pos), sum(neg)
    if not n_pos or not n_neg:
        return None
    below = u = 0.0
    for p, q in zip(pos, neg, strict=True):
        u += p * (below + q / 2)
        below += q
    return u / (n_pos * n_neg)


def quantile(ordered: list[float], q: float) -> float:
    """Linear-interpolated quantile of sorted values (numpy's default method)."""
    pos = q * (len(ordered) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def pairwise_auroc(
    human: Sequence[str],
    scores: Sequence[float],
    categories: Sequence[str],
    *,
    seed: int = 0,
    resamples: int = 1000,
) -> dict[str, Estimate]:
    """For an ordinal label (``categories`` best first, at least three): the judge's AUROC between each level and the
    next, the last level taking every lower one (``supported vs partial``, ``partial vs unsupported/contradicted``),
    each over the items people put in one of the two; ``scores`` rank the judge's values (higher is better)."""
    if len(categories) < 3:
        return {}
    levels = [(categories[0], [categories[1]]), (categories[1], list(categories[2:]))]
    out: dict[str, Estimate] = {}
    for top, lower in levels:
        kept = [i for i, h in enumerate(human) if h == top or h in lower]
        out[f"{top} vs {'/'.join(lower)}"] = bootstrap_auroc(
            [human[i] == top for i in kept], [scores[i] for i in kept], seed=seed, resamples=resamples
        )
    return out
