"""Agreement statistics, cross-checked against scikit-learn on WiCE's human labels and on random label sets."""

from __future__ import annotations

import json
import math
import random
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import (
    accuracy_score,
    cohen_kappa_score,
    confusion_matrix as sk_confusion_matrix,
    precision_recall_fscore_support,
    roc_auc_score,
)

from tracescore.calibrate.agreement import (
    VERDICTS,
    Pair,
    auroc,
    bootstrap_kappa,
    cohen_kappa,
    confusion_matrix,
    human_pairs,
    measure,
    precision_recall,
    wilson_interval,
)

_WICE_LABEL = {"supported": "supported", "partially_supported": "partial", "not_supported": "unsupported"}
_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"the", "a", "an", "of", "in", "on", "and", "or", "to", "is", "was", "for", "by", "with", "as", "at", "it"}


def _tokens(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def wice_pairs(shared_data: Path) -> list[Pair]:
    """WiCE dev claims: the human 3-way label against a deterministic stand-in judge (claim-token overlap with the
    gold supporting sentences: ≥0.75 supported, ≥0.4 partial, else unsupported; the overlap is its graded score)."""
    pairs = []
    for n, line in enumerate((shared_data / "wice" / "claim_dev.jsonl").read_text().splitlines()):
        row = json.loads(line)
        gold = {i for group in row["supporting_sentences"] for i in group}
        evidence = _tokens(" ".join(row["evidence"][i] for i in sorted(gold) if i < len(row["evidence"])))
        claim = _tokens(row["claim"])
        overlap = len(claim & evidence) / len(claim) if claim else 0.0
        verdict = "supported" if overlap >= 0.75 else "partial" if overlap >= 0.4 else "unsupported"
        pairs.append(Pair(f"wice-{n}", _WICE_LABEL[row["label"]], verdict, overlap))
    return pairs


def _sk(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _close(ours: float | None, theirs: float) -> bool:
    if math.isnan(theirs):
        return ours is None
    return ours is not None and math.isclose(ours, theirs, rel_tol=1e-9, abs_tol=1e-12)


# -- WiCE ----------------------------------------------------------------------------------------------------------
def test_wice_stand_in_judge_is_informative_but_imperfect(shared_data: Path) -> None:
    pairs = wice_pairs(shared_data)
    assert len(pairs) == 349
    agree = sum(p.human == p.judge for p in pairs) / len(pairs)
    assert 0.3 < agree < 0.95  # neither trivial nor useless, so the statistics below are exercised


@pytest.mark.parametrize("weights", [None, "linear"])
def test_kappa_equals_sklearn_on_wice(shared_data: Path, weights: str | None) -> None:
    pairs = wice_pairs(shared_data)
    human, judge = [p.human for p in pairs], [p.judge for p in pairs]
    ours = cohen_kappa(human, judge, categories=VERDICTS, weights=weights)  # type: ignore[arg-type]
    theirs = cohen_kappa_score(human, judge, labels=list(VERDICTS), weights=weights)
    assert ours.value is not None and math.isclose(ours.value, theirs, rel_tol=1e-12)


def test_confusion_precision_recall_equal_sklearn_on_wice(shared_data: Path) -> None:
    pairs = wice_pairs(shared_data)
    human, judge = [p.human for p in pairs], [p.judge for p in pairs]
    assert confusion_matrix(human, judge, VERDICTS) == sk_confusion_matrix(human, judge, labels=list(VERDICTS)).tolist()
    precision, recall, support = precision_recall(human, judge, VERDICTS)
    p, r, _, s = _sk(precision_recall_fscore_support, human, judge, labels=list(VERDICTS), zero_division=np.nan)
    for i, c in enumerate(VERDICTS):
        assert _close(precision[c], p[i]) and _close(recall[c], r[i]) and support[c] == s[i]
    assert precision["contradicted"] is None  # WiCE has no contradicted label: undefined, not 0


def test_auroc_equals_sklearn_on_wice(shared_data: Path) -> None:
    pairs = wice_pairs(shared_data)
    positive = [p.human == "supported" for p in pairs]
    scores = [p.judge_score or 0.0 for p in pairs]
    ours = auroc(positive, scores)
    assert ours.value is not None and math.isclose(ours.value, roc_auc_score(positive, scores), rel_tol=1e-12)


def test_measure_on_wice_reports_every_figure(shared_data: Path) -> None:
    pairs = wice_pairs(shared_data)
    figures = measure(
        pairs, label="grounding.verdict", categories=VERDICTS, ordinal=True, positive="supported", resamples=300
    )
    human, judge = [p.human for p in pairs], [p.judge for p in pairs]
    assert figures.n == 349 and figures.weights == "linear"
    assert figures.kappa.value == pytest.approx(
        cohen_kappa_score(human, judge, labels=list(VERDICTS), weights="linear"), rel=1e-12
    )
    assert figures.kappa_unweighted.value == pytest.approx(
        cohen_kappa_score(human, judge, labels=list(VERDICTS)), rel=1e-12
    )
    assert figures.kappa.low is not None and figures.kappa.high is not None
    assert figures.kappa.low < figures.kappa.value < figures.kappa.high
    assert figures.raw.low is not None and figures.raw.high is not None
    assert figures.raw.low < (figures.raw.value or 0) < figures.raw.high
    assert figures.auroc.value == pytest.approx(
        roc_auc_score([h == "supported" for h in human], [p.judge_score for p in pairs]), rel=1e-12
    )
    partial = figures.per_class_kappa["partial"].value
    assert partial == pytest.approx(cohen_kappa_score([h == "partial" for h in human], [j == "partial" for j in judge]))
    assert figures.per_class_kappa["contradicted"].value is None  # nobody said contradicted: undefined
    assert "undefined" in (figures.per_class_kappa["contradicted"].reason or "")
    json.dumps(figures.as_dict())  # storable as is


def test_bootstrap_interval_is_deterministic_by_seed(shared_data: Path) -> None:
    pairs = wice_pairs(shared_data)
    human, judge = [p.human for p in pairs], [p.judge for p in pairs]
    a = bootstrap_kappa(human, judge, categories=VERDICTS, weights="linear", seed=7, resamples=200)
    b = bootstrap_kappa(human, judge, categories=VERDICTS, weights="linear", seed=7, resamples=200)
    c = bootstrap_kappa(human, judge, categories=VERDICTS, weights="linear", seed=8, resamples=200)
    assert a == b and (a.low, a.high) != (c.low, c.high)


# -- random label sets (many seeds) --------------------------------------------------------------------------------
def _random_labels(seed: int) -> tuple[list[str], list[str], list[float], list[str]]:
    rng = random.Random(seed)
    cats = list(VERDICTS[: rng.randint(2, 4)])
    n = rng.randint(1, 40)
    human = [rng.choice(cats) for _ in range(n)]
    agree = rng.random()
    judge = [h if rng.random() < agree else rng.choice(cats) for h in human]
    scores = [round(rng.random(), 1) for _ in range(n)]  # one decimal: plenty of ties
    return human, judge, scores, cats


@pytest.mark.parametrize("seed", range(300))
def test_random_label_sets_equal_sklearn(seed: int) -> None:
    human, judge, scores, cats = _random_labels(seed)
    for weights in (None, "linear"):
        ours = cohen_kappa(human, judge, categories=cats, weights=weights)  # type: ignore[arg-type]
        theirs = _sk(cohen_kappa_score, human, judge, labels=cats, weights=weights)
        assert _close(ours.value, theirs), (weights, ours, theirs)
        if ours.value is None:
            assert ours.reason and "undefined" in ours.reason
    assert confusion_matrix(human, judge, cats) == sk_confusion_matrix(human, judge, labels=cats).tolist()
    precision, recall, support = precision_recall(human, judge, cats)
    p, r, _, s = _sk(precision_recall_fscore_support, human, judge, labels=cats, zero_division=np.nan)
    for i, c in enumerate(cats):
        assert _close(precision[c], p[i]) and _close(recall[c], r[i]) and support[c] == s[i]
    positive = [h == cats[0] for h in human]
    ours_auc = auroc(positive, scores)
    if all(positive) or not any(positive):
        assert ours_auc.value is None and "undefined" in (ours_auc.reason or "")
    else:
        assert _close(ours_auc.value, roc_auc_score(positive, scores))


@pytest.mark.parametrize("seed", range(100))
def test_design_weighted_kappa_and_raw_equal_sklearn_with_sample_weight(seed: int) -> None:
    human, judge, _, cats = _random_labels(seed)
    rng = random.Random(-seed)
    design = [rng.choice([1.0, 2.5, 7.0]) for _ in human]
    for weights in (None, "linear"):
        ours = cohen_kappa(human, judge, categories=cats, weights=weights, sample_weight=design)  # type: ignore[arg-type]
        theirs = _sk(cohen_kappa_score, human, judge, labels=cats, weights=weights, sample_weight=design)
        assert _close(ours.value, theirs)
    pairs = [Pair(str(i), h, j, weight=w) for i, (h, j, w) in enumerate(zip(human, judge, design, strict=True))]
    figures = measure(pairs, label="x", categories=cats, resamples=20)
    assert figures.raw.value == pytest.approx(accuracy_score(human, judge, sample_weight=design))
    assert figures.confusion == sk_confusion_matrix(human, judge, labels=cats).tolist()  # counts stay counts


def test_design_weights_change_the_estimate() -> None:
    """A big stratum sampled thinly must count for more than its share of the sample."""
    small = [Pair(f"s{i}", "partial", "supported", weight=1.0) for i in range(10)]  # judge wrong, stratum of 10
    big = [Pair(f"b{i}", "supported", "supported", weight=20.0) for i in range(10)]  # judge right, stratum of 200
    plain = measure([Pair(p.item_id, p.human, p.judge) for p in small + big], label="x", categories=VERDICTS)
    weighted = measure(small + big, label="x", categories=VERDICTS, resamples=50)
    assert plain.raw.value == 0.5 and weighted.raw.value == pytest.approx(200 / 210)


# -- degenerate and failing inputs --------------------------------------------------------------------------------
def test_one_class_only_kappa_is_absent_with_a_reason_never_zero() -> None:
    pairs = [Pair(str(i), "supported", "supported") for i in range(10)]
    figures = measure(pairs, label="grounding.verdict", categories=VERDICTS, ordinal=True, resamples=50)
    assert figures.raw.value == 1.0
    assert figures.kappa.value is None and figures.kappa_unweighted.value is None
    assert "kappa undefined" in (figures.kappa.reason or "")
    assert figures.auroc.value is None and "no negative item" in (figures.auroc.reason or "")
    assert math.isnan(_sk(cohen_kappa_score, ["a"] * 10, ["a"] * 10))  # sklearn agrees it is undefined


def test_no_pairs_everything_absent() -> None:
    figures = measure([], label="answer.correct", categories=("true", "false"), resamples=10)
    assert figures.n == 0 and figures.raw.value is None and figures.kappa.value is None
    assert figures.raw.reason == "no labelled pairs"


def test_a_judge_that_contradicts_people_gets_a_negative_kappa() -> None:
    human = ["true", "false"] * 20
    judge = ["false", "true"] * 20
    ours = cohen_kappa(human, judge, categories=["true", "false"])
    assert ours.value == pytest.approx(-1.0)


def test_unknown_value_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"values \['maybe'\] are not among the categories"):
        measure([Pair("1", "maybe", "supported")], label="grounding.verdict", categories=VERDICTS)


def test_bootstrap_without_interval_says_why() -> None:
    human = ["true"] * 19 + ["false"]
    judge = ["true"] * 19 + ["false"]
    est = bootstrap_kappa(human, judge, categories=["true", "false"], resamples=200, seed=1)
    assert est.value == 1.0 and est.low is None and "undefined in" in (est.reason or "")


def test_wilson_interval_known_values() -> None:
    low, high = wilson_interval(8, 10) or (0, 0)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    low, high = wilson_interval(0, 10) or (1, 1)
    assert low == 0.0 and round(high, 4) == 0.2775
    assert wilson_interval(0, 0) is None


def test_human_human_agreement_from_several_reviewers() -> None:
    rows = [
        ("i1", "ann", "supported"),
        ("i1", "bob", "partial"),
        ("i1", "cy", "supported"),
        ("i2", "bob", "unsupported"),
        ("i2", "ann", "unsupported"),
        ("i3", "ann", "supported"),
    ]
    between = human_pairs(rows)
    assert between == [
        ("i1", "supported", "partial"),
        ("i1", "supported", "supported"),
        ("i1", "partial", "supported"),
        ("i2", "unsupported", "unsupported"),
    ]
    assert human_pairs(list(reversed(rows))) == between
    figures = measure(
        [Pair("i1", "supported", "supported")],
        label="grounding.verdict",
        categories=VERDICTS,
        ordinal=True,
        human_human=between,
        resamples=50,
    )
    assert figures.human_human is not None and figures.human_human.n == 4
    assert figures.human_human.raw.value == 0.5
