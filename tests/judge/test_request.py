"""One judge request body: the direct judge, the Message Batches prefill and the dry-run estimate send (or count)
the very same Messages API body, so a batch reply is always found under the key the direct judge looks up."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import anthropic

from tests.conftest import SAMPLES
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.anthropic_batches import FakeAnthropicBatches
from tracescore.engine.batch import BatchPrefill, judge_request, judge_requests
from tracescore.engine.estimate import estimate_body, estimate_trace
from tracescore.judge.anthropic import AnthropicJudge
from tracescore.judge.cache import CachingJudge, MemoryJudgeCache
from tracescore.judge.passages import approx_tokens
from tracescore.judge.protocol import JudgeUsage
from tracescore.judge.request import message_params, prompt_texts
from tracescore.platforms.registry import get_adapter

MODEL = "claude-sonnet-4-6"
SRC = Path(__file__).resolve().parents[2] / "src" / "tracescore"


def _traces() -> list:  # type: ignore[type-arg]
    adapter = get_adapter("jsonl")
    traces = [adapter(json.loads(line)) for line in SAMPLES.read_text().splitlines()]
    return [t for t in traces if judge_request(t) is not None]


def test_direct_batch_and_estimate_build_one_identical_body_under_one_key(tmp_path: Path) -> None:
    traces = _traces()
    assert len(traces) >= 3
    with FakeAnthropic() as fake, AnthropicJudge(api_key="k", base_url=fake.url, model=MODEL) as judge:
        for trace in traces:
            judge.judge(judge_request(trace))  # type: ignore[arg-type]
        direct = [r.json() for r in fake.messages()]
    with FakeAnthropicBatches(polls_to_end=1) as fake, anthropic.Anthropic(api_key="k", base_url=fake.url) as client:
        cache = MemoryJudgeCache()
        prefill = BatchPrefill(
            model=MODEL, cache=cache, usage=JudgeUsage(), store_path=tmp_path / "ts.db", client=client,
            sleep=lambda _: None,
        )
        prefill.prefill(traces)
        (batch,) = fake.batches.values()
        batched = {item["custom_id"]: item["params"] for item in batch["requests"]}
    keys = [judge_request(t).key(MODEL) for t in traces]  # type: ignore[union-attr]
    # the batch's custom_ids are the direct judge's cache keys: grounding's, the surface oracle's, the semantic match's
    assert set(batched) == {r.key(MODEL) for t in traces for r in judge_requests(t)} > set(keys)
    estimated = {k: estimate_body(t, MODEL) for k, t in zip(keys, traces, strict=True)}
    grounding = {k: batched[k] for k in keys}
    assert dict(zip(keys, direct, strict=True)) == grounding == estimated  # the same body, three ways
    # and a direct judge over that cache finds every batch reply: no call
    with FakeAnthropic() as fake, AnthropicJudge(api_key="k", base_url=fake.url, model=MODEL) as inner:
        cached = CachingJudge(inner, cache)
        assert all(cached.judge(judge_request(t)).cached for t in traces)  # type: ignore[arg-type]
        assert fake.messages() == []


def test_the_estimate_counts_the_tokens_of_the_bodies_it_would_send() -> None:
    for trace in _traces():
        requests = judge_requests(trace)  # grounding, the surface oracle, the semantic match: the batch's set
        bodies = [message_params(r, MODEL) for r in requests]
        estimate = estimate_trace(trace, MODEL)
        assert estimate.calls == len(requests) == sum(estimate.stages.values())
        assert estimate.input_tokens == sum(approx_tokens(t) for body in bodies for t in prompt_texts(body)) > 100
    first = estimate_trace(_traces()[0], MODEL)
    assert first.stages == {"grounding": 1, "surface": 1}  # an exact match needs no semantic call
    grounding = message_params(judge_request(_traces()[0]), MODEL)  # type: ignore[arg-type]
    assert first.input_tokens > sum(approx_tokens(t) for t in prompt_texts(grounding))  # more than grounding alone


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_prices_live_in_judge_pricing_and_no_scorer_or_estimate_imports_the_concrete_judge() -> None:
    users = [*sorted((SRC / "scorers").glob("*.py")), SRC / "engine" / "estimate.py", SRC / "engine" / "batch.py"]
    for path in users:
        assert "tracescore.judge.anthropic" not in _imports(path), path
    assert "tracescore.judge.pricing" in _imports(SRC / "scorers" / "grounding.py")
    for path in (SRC / "judge").glob("*.py"):
        if path.name != "pricing.py":
            assert "PRICES_PER_MTOK: dict" not in path.read_text(), f"a second price table in {path}"
