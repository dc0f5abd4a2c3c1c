"""Agreement between the judge and human labels: the statistics behind every ``agreement`` figure tracescore reports.

Pure functions of label lists, no I/O and no scikit-learn at runtime (the tests cross-check each one against it).
A figure that cannot be computed (one class only, no pairs) is ``None`` with a reason, never 0. The ordinal verdict
(supported > partial > unsupported > contradicted) gets a linear-weighted kappa as its headline; every other label an
unweighted one. Human labels are rows of the confusion matrix, judge values its columns (scikit-learn's convention).
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any, Literal

from tracescore.calibrate.ranking import (
    Estimate as Estimate,
    absent,
    auroc as auroc,
    bootstrap_auroc,
    pairwise_auroc,
    quantile,
)

VERDICTS: tuple[str, ...] = ("supported", "partial", "unsupported", "contradicted")  # ordinal, best first
Weights = Literal["linear"] | None
BOOTSTRAP_RESAMPLES = 1000
LEVEL = 0.95
MAX_UNDEFINED = 0.1  # more resamples than this share with kappa undefined: no interval (a class is too rare)
_Z95 = 1.959963984540054


@dataclass(frozen=True)
class Pair:
    """One labelled item: the human's label, the judge's value and, when it gives one, its graded score."""

    item_id: str
    human: str
    judge: str
    judge_score: float | None = None
    weight: float = 1.0  # design weight, 1 / inclusion probability (stratified samples are not self-weighting)


@dataclass(frozen=True)
class Agreement:
    """Everything measured for one label: n, raw agreement, kappa, confusion matrix, per-class figures, AUROC."""

    label: str
    n: int
    categories: tuple[str, ...]
    raw: Estimate
    kappa: Estimate  # the headline: linear-weighted when ordinal, else unweighted
    kappa_unweighted: Estimate
    weights: Weights
    confusion: list[list[int]]
    precision: dict[str, float | None]
    recall: dict[str, float | None]
    support: dict[str, int]
    per_class_kappa: dict[str, Estimate] = field(default_factory=dict)  # one class against the rest
    auroc: Estimate = field(default_factory=lambda: absent("not computed"))
    human_human: Agreement | None = None
    pairwise_auroc: dict[str, Estimate] = field(default_factory=dict)  # ordinal: each level against the next

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready form (stored with the calibration, shown in reports)."""
        return {
            "label": self.label,
            "n": self.n,
            "categories": list(self.categories),
            "raw": self.raw.as_dict(),
            "kappa": self.kappa.as_dict(),
            "kappa_unweighted": self.kappa_unweighted.as_dict(),
            "weights": self.weights,
            "confusion": self.confusion,
            "precision": self.precision,
            "recall": self.recall,
            "support": self.support,
            "per_class_kappa": {k: v.as_dict() for k, v in self.per_class_kappa.items()},
            "auroc": self.auroc.as_dict(),
            "pairwise_auroc": {k: v.as_dict() for k, v in self.pairwise_auroc.items()},
            "human_human": self.human_human.as_dict() if self.human_human else None,
        }


# -- the statistics ------------------------------------------------------------------------------------------
def wilson_interval(successes: float, n: float, *, z: float = _Z95) -> tuple[float, float] | None:
    """Wilson score interval of a proportion (sane at 0/n and n/n, unlike the normal one); None when n = 0.

    With design weights pass the weighted share times Kish's effective sample size as ``successes`` and that size
    as ``n``."""
    if n <= 0:
        return None
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def _categories(human: Sequence[Hashable], judge: Sequence[Hashable]) -> list[Hashable]:
    return sorted(set(human) | set(judge), key=str)


def confusion_matrix(
    human: Sequence[Hashable], judge: Sequence[Hashable], categories: Sequence[Hashable]
) -> list[list[int]]:
    """Counts with human labels as rows and judge values as columns, in ``categories`` order (others ignored)."""
    index = {c: i for i, c in enumerate(categories)}
    matrix = [[0] * len(categories) for _ in categories]
    for h, j in zip(human, judge, strict=True):
        if h in index and j in index:
            matrix[index[h]][index[j]] += 1
    return matrix


def _weighted_matrix(
    human: Sequence[Hashable],
    judge: Sequence[Hashable],
    categories: Sequence[Hashable],
    sample_weight: Sequence[float] | None,
) -> list[list[float]]:
    """The confusion matrix with each pair counted by its weight (1 each when no weights are given)."""
    index = {c: i for i, c in enumerate(categories)}
    matrix = [[0.0] * len(categories) for _ in categories]
    weights = sample_weight if sample_weight is not None else [1.0] * len(human)
    for h, j, w in zip(human, judge, weights, strict=True):
        if h in index and j in index:
            matrix[index[h]][index[j]] += w
    return matrix


def _kappa_from_matrix(matrix: Sequence[Sequence[float]], weights: Weights) -> Estimate:
    k = len(matrix)
    n = sum(map(sum, matrix))
    if n == 0:
        return absent("no labelled pairs")
    rows = [sum(r) for r in matrix]
    cols = [sum(matrix[i][j] for i in range(k)) for j in range(k)]

    def w(i: int, j: int) -> float:
        return float(abs(i - j)) if weights == "linear" else float(i != j)

    observed = sum(w(i, j) * matrix[i][j] for i in range(k) for j in range(k)) / n
    expected = sum(w(i, j) * rows[i] * cols[j] for i in range(k) for j in range(k)) / (n * n)
    if expected == 0:
        used = sorted({i for i in range(k) if rows[i]} | {j for j in range(k) if cols[j]})
        return absent(f"kappa undefined: chance disagreement is 0 (only {len(used)} class used by both raters)")
    return Estimate(1 - observed / expected)


def cohen_kappa(
    human: Sequence[Hashable],
    judge: Sequence[Hashable],
    *,
    categories: Sequence[Hashable] | None = None,
    weights: Weights = None,
    sample_weight: Sequence[float] | None = None,
) -> Estimate:
    """Cohen's kappa (linear weights use the position in ``categories``; ``sample_weight`` counts each pair by its
    design weight, 1/inclusion probability); absent when chance disagreement is 0."""
    cats = list(categories) if categories is not None else _categories(human, judge)
    return _kappa_from_matrix(_weighted_matrix(human, judge, cats, sample_weight), weights)


def bootstrap_kappa(
    human: Sequence[Hashable],
    judge: Sequence[Hashable],
    *,
    categories: Sequence[Hashable] | None = None,
    weights: Weights = None,
    sample_weight: Sequence[float] | None = None,
    seed: int = 0,
    resamples: int = BOOTSTRAP_RESAMPLES,
    level: float = LEVEL,
) -> Estimate:
    """Kappa with a seeded percentile-bootstrap interval over items; resamples where kappa is undefined are dropped."""
    cats = list(categories) if categories is not None else _categories(human, judge)
    point = cohen_kappa(human, judge, categories=cats, weights=weights, sample_weight=sample_weight)
    if point.value is None:
        return point
    index = {c: i for i, c in enumerate(cats)}
    pair_weights = sample_weight if sample_weight is not None else [1.0] * len(human)
    codes = [
        (index[h], index[j], w) for h, j, w in zip(human, judge, pair_weights, strict=True) if h in index and j in index
    ]
    rng = random.Random(seed)
    values: list[float] = []
    for _ in range(resamples):
        matrix = [[0.0] * len(cats) for _ in cats]
        for _ in range(len(codes)):
            h, j, w = codes[rng.randrange(len(codes))]
            matrix[h][j] += w
        kappa = _kappa_from_matrix(matrix, weights).value
        if kappa is not None:
            values.append(kappa)
    if len(values) < (1 - MAX_UNDEFINED) * resamples:
        return Estimate(
            point.value,
            reason=f"no interval: kappa undefined in {resamples - len(values)} of "
            f"{resamples} resamples (too few items of some class)",
        )
    values.sort()
    tail = (1 - level) / 2
    return Estimate(point.value, quantile(values, tail), quantile(values, 1 - tail))


def precision_recall(
    human: Sequence[Hashable], judge: Sequence[Hashable], categories: Sequence[Hashable]
) -> tuple[dict[Hashable, float | None], dict[Hashable, float | None], dict[Hashable, int]]:
    """Per class: precision (None when the judge never gave it), recall (None when no human gave it), support."""
    matrix = confusion_matrix(human, judge, categories)
    precision: dict[Hashable, float | None] = {}
    recall: dict[Hashable, float | None] = {}
    support: dict[Hashable, int] = {}
    for i, c in enumerate(categories):
        predicted = sum(matrix[r][i] for r in range(len(categories)))
        actual = sum(matrix[i])
        precision[c] = matrix[i][i] / predicted if predicted else None
        recall[c] = matrix[i][i] / actual if actual else None
        support[c] = actual
    return precision, recall, support


def human_pairs(labels: Sequence[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """From (item_id, author, label) rows, every pair of two reviewers on one item: (item_id, label_a, label_b).

    Authors are ordered by name within a pair, so the result does not depend on row order.
    """
    by_item: dict[str, dict[str, str]] = {}
    for item_id, author, label in labels:
        by_item.setdefault(item_id, {})[author] = label
    out: list[tuple[str, str, str]] = []
    for item_id in sorted(by_item):
        reviewers = by_item[item_id]
        for a, b in combinations(sorted(reviewers), 2):
            out.append((item_id, reviewers[a], reviewers[b]))
    return out


# -- everything for one label --------------------------------------------------------------------------------
def measure(
    pairs: Sequence[Pair],
    *,
    label: str,
    categories: Sequence[str] | None = None,
    ordinal: bool = False,
    positive: str | None = None,
    human_human: Sequence[tuple[str, str, str]] = (),
    seed: int = 0,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> Agreement:
    """All agreement figures of one label over its (human, judge) pairs.

    Raw agreement and kappa are estimates for everything sampled from: each pair counts by its design ``weight``
    (1/inclusion probability; all 1 gives the plain sample figures). The confusion matrix, precision, recall and
    AUROC are the sample's own counts.

    ``categories`` fixes the order (the ordinal order when ``ordinal``; default: every value seen, sorted).
    AUROC ranks items by ``judge_score`` when every pair has one, else by the judge's position in an ordinal order;
    its positive class is ``positive`` (default: the first category). ``human_human``: reviewer pairs from
    ``human_pairs``, measured the same way (the ceiling a judge can reach).
    """
    human = [p.human for p in pairs]
    judge = [p.judge for p in pairs]
    seen = set(human) | set(judge)
    cats = tuple(categories) if categories is not None else tuple(sorted(seen))
    unknown = sorted(seen - set(cats))
    if unknown:
        raise ValueError(f"label {label!r}: values {unknown} are not among the categories {list(cats)}")
    n = len(pairs)
    design = [p.weight for p in pairs]
    total = sum(design)
    if n and total > 0:
        share = sum(w for w, h, j in zip(design, human, judge, strict=True) if h == j) / total
        effective = total * total / sum(w * w for w in design)  # Kish's effective sample size
        raw = Estimate(share, *(wilson_interval(share * effective, effective) or (None, None)))
    else:
        raw = absent("no labelled pairs")
    weights: Weights = "linear" if ordinal else None
    common: dict[str, Any] = {"sample_weight": design, "seed": seed, "resamples": resamples}
    kappa = bootstrap_kappa(human, judge, categories=cats, weights=weights, **common)
    unweighted = bootstrap_kappa(human, judge, categories=cats, **common) if ordinal else kappa
    per_class: dict[str, Estimate] = {}
    if len(cats) > 2:
        for c in cats:
            per_class[c] = bootstrap_kappa(
                [h == c for h in human], [j == c for j in judge], categories=[True, False], **common
            )
    precision, recall, support = precision_recall(human, judge, cats)
    target = positive if positive is not None else cats[0]
    graded: list[float] | None = None
    if n and all(p.judge_score is not None for p in pairs):
        graded = [float(p.judge_score or 0.0) for p in pairs]
    elif ordinal:
        rank = {c: len(cats) - i for i, c in enumerate(cats)}
        graded = [float(rank[j]) for j in judge]
    ranked = {"seed": seed, "resamples": resamples}
    area = bootstrap_auroc([h == target for h in human], graded, **ranked) if graded is not None else absent(
        "the judge gave no graded value"
    )
    pairwise = pairwise_auroc(human, graded, cats, **ranked) if ordinal and graded is not None else {}
    ceiling = None
    if human_human:
        ceiling = measure(
            [Pair(item, a, b) for item, a, b in human_human],
            label=label,
            categories=cats,
            ordinal=ordinal,
            positive=positive,
            seed=seed,
            resamples=resamples,
        )
    return Agreement(
        label=label,
        n=n,
        categories=cats,
        raw=raw,
        kappa=kappa,
        kappa_unweighted=unweighted,
        weights=weights,
        confusion=confusion_matrix(human, judge, cats),
        precision={str(k): v for k, v in precision.items()},
        recall={str(k): v for k, v in recall.items()},
        support={str(k): v for k, v in support.items()},
        per_class_kappa=per_class,
        auroc=area,
        human_human=ceiling,
        pairwise_auroc=pairwise,
    )
