"""The judged stages end to end through the real ``anthropic`` SDK against the fake Messages API on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic import FakeAnthropic, overloaded, rate_limited, server_error
from tracescore.engine.pipeline import RunCounts, score_records
from tracescore.engine.plan import deterministic_scorers
from tracescore.judge.anthropic import AnthropicJudge
from tracescore.platforms.registry import get_adapter
from tracescore.scorers.grounding import JUDGED_SCORES, grounding_scorer
from tracescore.sources.jsonl import read_jsonl
from tracescore.trace import Trace

SAMPLES = Path(__file__).resolve().parents[2] / "cookbook" / "data" / "traces.jsonl"


def _samples(*ids: str) -> list[Trace]:
    traces = [Trace.model_validate_json(line) for line in SAMPLES.read_text().splitlines()]
    return [t for t in traces if t.id in ids] if ids else traces


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


@pytest.fixture
def judge(fake: FakeAnthropic) -> Iterator[AnthropicJudge]:
    with AnthropicJudge(api_key="test-key", base_url=fake.url, wait_initial=0.001) as j:
        yield j


def _score(judge: AnthropicJudge, traces: list[Trace]) -> dict[str, Any]:
    from tracescore.engine.pipeline import score_trace

    scorers = [*deterministic_scorers(), grounding_scorer(judge=judge)]
    return {t.id: score_trace(t, scorers) for t in traces}


def test_grounded_trace_verdicts_quotes_and_source_ids(fake: FakeAnthropic, judge: AnthropicJudge) -> None:
    result = _score(judge, _samples("tr-0000"))["tr-0000"]
    assert result.values["grounding.rate"] == 1.0
    assert result.values["grounding.unverified_quotes"] == 0.0
    assert result.values["citation.support_rate"] == 1.0
    assert result.values["diagnosis"] == "grounded/right"
    assert [(c.verdict, c.doc, c.quote_check) for c in result.claims] == [
        ("supported", "policy-returns-v4", "verified")
    ] * 2
    assert "30 days" in (result.claims[0].quote or "")
    assert len(fake.messages()) == 1  # every claim against every document, in one call


def test_ungrounded_trace_and_a_fabricated_quote_downgraded_through_the_sdk(
    fake: FakeAnthropic, judge: AnthropicJudge
) -> None:
    def fabricate(output: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        for claim in output["claims"]:
            for item in claim["evidence"]:
                if item["verdict"] == "supported":
                    item["quote"] = "Refunds are always issued within 24 hours, no questions asked."
        return output

    fake.tamper = fabricate
    results = _score(judge, _samples("tr-0000", "tr-0005"))
    assert results["tr-0000"].values["grounding.unverified_quotes"] >= 2.0
    assert results["tr-0000"].values["grounding.rate"] == 0.0
    assert all(c.verdict != "supported" for c in results["tr-0000"].claims)
    ungrounded = results["tr-0005"]
    assert ungrounded.values["grounding.hallucination_rate"] == 1.0
    assert ungrounded.values["diagnosis"] == "ungrounded/wrong"


def test_retries_are_bounded_and_a_failed_trace_does_not_stop_the_batch(fake: FakeAnthropic, tmp_path: Path) -> None:
    # trace 1: 429 (retry-after), 529, 500, 500 → 4 attempts, all failed; trace 2: served normally
    fake.faults.add("/v1/messages", rate_limited(0.05), overloaded(), server_error(), server_error())
    lines = [t.model_dump_json() for t in _samples("tr-0000", "tr-0001")]
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join(lines) + "\n")
    counts = RunCounts()
    with AnthropicJudge(api_key="test-key", base_url=fake.url, wait_initial=0.001, max_attempts=4) as judge:
        scorers = [*deterministic_scorers(), grounding_scorer(judge=judge)]
        first, second = score_records(read_jsonl(str(path)), get_adapter("jsonl"), scorers, counts)
        assert judge.usage.retries == 3 and judge.usage.failures == 1
    assert {n: first.missing[n] for n in JUDGED_SCORES} == dict.fromkeys(JUDGED_SCORES, "judge_error")
    assert first.values["retrieval.recall_at_5"] == 1.0 and first.values["citation.coverage"] == 1.0
    assert first.values["answer.correct"] is True
    assert second.values["grounding.rate"] == 1.0
    assert counts.scored == 2 and counts.failed == 0
    assert len(fake.messages()) == 4 + 1
