"""``[judge] merge_partial``: the judge's PARTIAL verdicts counted as the named verdict, said on every judged score."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.judge import QueueJudge
from tests.scorers.test_grounding import QUOTE_A, _ev, _judgement, _trace
from tracescore.cli import main
from tracescore.config import Config, fingerprint, load_config
from tracescore.errors import ConfigError
from tracescore.result import ClaimRow
from tracescore.scorers.grounding import JUDGED_SCORES, grounding_scorer
from tracescore.scorers.partial import merge_partial_verdicts
from tracescore.scorers.scored import Scored
from tracescore.store.db import Store

PARTIAL = [_ev("D1", "partial", QUOTE_A)]


def _scored(merge: str | None) -> Scored:
    judge = QueueJudge().enqueue(_judgement(c1=PARTIAL))
    return grounding_scorer(judge=judge, merge_partial=merge)(_trace())


def _scores(merge: str | None) -> dict[str, object]:
    return {s.name: s for s in _scored(merge)}


def test_off_by_default_partial_is_kept_apart_and_not_mentioned() -> None:
    scores = _scores(None)
    assert scores["grounding.hallucination_rate"].value == 0.0  # type: ignore[attr-defined]
    assert scores["citation.support_rate"].metadata["partial"] == 1  # type: ignore[attr-defined]
    assert all("merge_partial" not in s.metadata for s in scores.values())  # type: ignore[attr-defined]


def test_merged_into_contradicted_counts_as_hallucination_and_says_so_on_every_judged_score() -> None:
    scores = _scores("contradicted")
    assert scores["grounding.hallucination_rate"].value == 0.5  # type: ignore[attr-defined]
    assert scores["grounding.hallucination_rate"].metadata["contradicted"] == 1  # type: ignore[attr-defined]
    assert scores["grounding.rate"].value == 0.5  # type: ignore[attr-defined]  # supported claims unchanged
    support = scores["citation.support_rate"]
    assert support.value == 0.0 and support.metadata["partial"] == 0  # type: ignore[attr-defined]
    for name in JUDGED_SCORES:
        assert "PARTIAL verdicts are counted as contradicted" in scores[name].metadata["merge_partial"]  # type: ignore[attr-defined]
    (first, _) = _scored("contradicted").claims
    assert first.verdict == "contradicted" and first.judge_verdict == "partial"  # the judge's word is kept


def test_merge_rewrites_rows_and_per_document_verdicts_and_refuses_other_targets() -> None:
    rows = [ClaimRow(0, 0, "a", "partial", "partial"), ClaimRow(1, 1, "b", "supported", "supported")]
    per_doc = {"d1": {0: "partial", 1: "supported"}}
    assert merge_partial_verdicts(rows, per_doc, "unsupported") == 1
    assert [r.verdict for r in rows] == ["unsupported", "supported"] and per_doc == {
        "d1": {0: "unsupported", 1: "supported"}
    }
    with pytest.raises(ValueError, match="'supported' is not one of contradicted, unsupported"):
        merge_partial_verdicts(rows, per_doc, "supported")


def test_config_declares_it_validates_it_and_it_changes_the_fingerprint(tmp_path: Path) -> None:
    plain, merged, bad = (tmp_path / n for n in ("a.toml", "b.toml", "c.toml"))
    plain.write_text("[judge]\n")
    merged.write_text('[judge]\nmerge_partial = "contradicted"\n')
    bad.write_text('[judge]\nmerge_partial = "supported"\n')
    assert load_config(plain).section("judge").merge_partial is None
    assert load_config(merged).section("judge").merge_partial == "contradicted"
    assert fingerprint(load_config(plain)) != fingerprint(load_config(merged))
    assert fingerprint(load_config(plain)) == fingerprint(Config({}))  # off: existing fingerprints unchanged
    with pytest.raises(ConfigError, match="judge.merge_partial"):
        load_config(bad)


def _to_partial(output: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """Grounding replies with PARTIAL for SUPPORTED; the surface and semantic replies (no claims) pass unchanged
    (raising on them made the fake answer 500, and the SDK's retries made this test take minutes)."""
    if "claims" not in output:
        return output
    for claim in output["claims"]:
        for item in claim["evidence"]:
            item["verdict"] = "partial" if item["verdict"] == "supported" else item["verdict"]
    return output


def test_score_reads_it_from_the_config(tmp_path: Path) -> None:
    """Wired through `tracescore score --config` (and build_setup for run/backfill): the stored claims are merged."""
    config = tmp_path / "tracescore.toml"
    config.write_text('[judge]\nmerge_partial = "contradicted"\n')
    with FakeAnthropic(tamper=_to_partial) as fake:
        env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.url}
        args = ["score", str(SAMPLES), "--store", str(tmp_path / "t.db"), "--config", str(config)]
        result = CliRunner(env=env).invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "0 retries, 0 failed calls" in result.output  # every judged stage answered (no 500 from the tamper)
    with Store(tmp_path / "t.db") as store:
        claims = store.claims(store.runs()[-1]["id"])
    assert claims and {c["judge_verdict"] for c in claims if c["verdict"] == "contradicted"} >= {"partial"}
    assert not any(c["verdict"] == "partial" for c in claims)
