"""Issue 35.4: the ordinal verdict's pairwise AUROCs (supported vs partial, partial vs unsupported/contradicted, as
the WiCE paper reports them) beside the one-vs-rest figure, each with a bootstrap interval, cross-checked against
scikit-learn."""

from __future__ import annotations

import json
import math
import random
import warnings
from pathlib import Path

import pytest
from sklearn.metrics import roc_auc_score

from tests.calibrate.test_agreement import wice_pairs
from tests.cli.test_label_vocabulary import _agreement, _sheet
from tracescore.calibrate.agreement import VERDICTS, Pair, measure
from tracescore.calibrate.ranking import bootstrap_auroc, pairwise_auroc

PAIRS = ("supported vs partial", "partial vs unsupported/contradicted")


def _sk_auc(human: list[str], scores: list[float], top: str, lower: set[str]) -> float:
    kept = [i for i, h in enumerate(human) if h == top or h in lower]
    positive = [human[i] == top for i in kept]
    if all(positive) or not any(positive):
        return math.nan
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(roc_auc_score(positive, [scores[i] for i in kept]))


def _rank(judge: list[str]) -> list[float]:
    return [float(len(VERDICTS) - VERDICTS.index(j)) for j in judge]


def _check(ours: dict[str, object], human: list[str], scores: list[float]) -> None:
    expected = {
        PAIRS[0]: _sk_auc(human, scores, "supported", {"partial"}),
        PAIRS[1]: _sk_auc(human, scores, "partial", {"unsupported", "contradicted"}),
    }
    assert list(ours) == list(PAIRS)
    for name, theirs in expected.items():
        value = ours[name].value  # type: ignore[attr-defined]
        if math.isnan(theirs):
            assert value is None and "undefined" in (ours[name].reason or "")  # type: ignore[attr-defined]
        else:
            assert value is not None and math.isclose(value, theirs, rel_tol=1e-12), (name, value, theirs)


def test_wice_pairwise_aurocs_equal_sklearn_on_the_graded_score_and_on_the_verdict_order(shared_data: Path) -> None:
    pairs = wice_pairs(shared_data)
    human = [p.human for p in pairs]
    graded = measure(pairs, label="grounding.verdict", categories=VERDICTS, ordinal=True, positive="supported",
                     resamples=200)  # fmt: skip
    _check(graded.pairwise_auroc, human, [p.judge_score or 0.0 for p in pairs])
    by_verdict = measure(
        [Pair(p.item_id, p.human, p.judge) for p in pairs],
        label="grounding.verdict",
        categories=VERDICTS,
        ordinal=True,
        positive="supported",
        resamples=200,
    )
    _check(by_verdict.pairwise_auroc, human, _rank([p.judge for p in pairs]))
    for figures in (graded, by_verdict):  # every AUROC carries a bootstrap interval around its value
        for estimate in (figures.auroc, *figures.pairwise_auroc.values()):
            assert estimate.low is not None and estimate.high is not None
            assert estimate.low <= (estimate.value or 0) <= estimate.high
        stored = json.loads(json.dumps(figures.as_dict()))
        assert set(stored["pairwise_auroc"]) == set(PAIRS) and "interval" in stored["auroc"]


@pytest.mark.parametrize("seed", range(100))
def test_random_ordinal_label_sets_pairwise_aurocs_equal_sklearn(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 40)
    human = [rng.choice(VERDICTS) for _ in range(n)]
    judge = [h if rng.random() < rng.random() else rng.choice(VERDICTS) for h in human]
    _check(pairwise_auroc(human, _rank(judge), VERDICTS, resamples=0), human, _rank(judge))
    scores = [round(rng.random(), 1) for _ in range(n)]  # ties
    _check(pairwise_auroc(human, scores, VERDICTS, resamples=0), human, scores)


def test_the_interval_tells_a_partial_above_chance_from_one_at_chance() -> None:
    rng = random.Random(4)
    human = ["partial"] * 60 + ["unsupported"] * 60
    sharp = bootstrap_auroc([h == "partial" for h in human], [(h == "partial") + rng.random() * 0.8 for h in human])
    blind = bootstrap_auroc([h == "partial" for h in human], [rng.random() for _ in human])
    assert sharp.low is not None and sharp.low > 0.5  # above chance: the whole interval over 0.5
    assert blind.low is not None and blind.high is not None and blind.low < 0.5 < blind.high


def test_a_yes_no_label_has_no_pairwise_figures_and_one_class_gives_no_interval() -> None:
    pairs = [Pair(str(i), "true" if i % 2 else "false", "true") for i in range(10)]
    assert measure(pairs, label="grounding.grounded", categories=("true", "false")).pairwise_auroc == {}
    one = bootstrap_auroc([True, False, False, False, False, False], [1.0, 0.0, 0.0, 0.0, 0.0, 0.0], resamples=200)
    assert one.value == 1.0 and one.low is None and "no interval" in (one.reason or "")


def test_calibrate_agreement_prints_the_pairwise_aurocs(tmp_path: Path) -> None:
    rng = random.Random(8)
    rows = []
    for i in range(80):
        human = rng.choice(VERDICTS)
        rows.append((f"i{i}", human, human if rng.random() < 0.7 else rng.choice(VERDICTS)))
    code, text = _agreement(_sheet(tmp_path / "s.csv", rows))
    assert code == 0, text
    assert "AUROC supported vs partial " in text and "AUROC partial vs unsupported/contradicted " in text
    code, raw = _agreement(tmp_path / "s.csv", "--format", "json")
    data = json.loads(raw)
    human, judge = [r[1] for r in rows], [r[2] for r in rows]
    _check({k: _Value(v["value"]) for k, v in data["pairwise_auroc"].items()}, human, _rank(judge))


class _Value:
    def __init__(self, value: float | None) -> None:
        self.value, self.reason = value, None
