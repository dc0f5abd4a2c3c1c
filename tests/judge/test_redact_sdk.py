"""Acceptance (#32, 4): traces seeded with 50 personal-data strings of each built-in kind, scored by
``tracescore score`` with ``[judge] redact`` through the real ``anthropic`` SDK against the loopback Messages API: none
of them in any request body the fake received, the judge's quotes (copied from the redacted evidence) verified, the
grounding scores computed, and the claims kept in the store redacted too."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.azure_openai import FakeAzureOpenAI
from tests.fakes.base import Request
from tests.fakes.openai_chat import FakeOpenAI, schema_in
from tests.judge.pii import KINDS, compact, samples
from tracescore.cli import main
from tracescore.config import load_config
from tracescore.engine.batch import judge_requests
from tracescore.judge.anthropic import DEFAULT_MODEL
from tracescore.store.db import Store
from tracescore.trace import Trace

PER_TRACE = 2  # of each kind: 25 traces × 2 × 5 kinds = 250 strings


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def _trace(n: int, pii: dict[str, list[str]]) -> dict[str, Any]:
    """A CRM lookup: the answer restates five values of the page (one of each kind), the page and a search snippet
    hold five more, the question and the gold answer one each."""
    a = {k: pii[k][PER_TRACE * n] for k in KINDS}
    b = {k: pii[k][PER_TRACE * n + 1] for k in KINDS}
    url = f"https://crm.example.com/customers/{n}"
    facts = [
        f"The customer email on file is {a['email']}.",
        f"The customer phone on file is {a['phone']}.",
        f"The card on file is {a['card']}.",
        f"The payout account is {a['iban']}.",
        f"The last login came from {a['ip']}.",
    ]
    page = " ".join(
        [f"Customer record {n}.", *facts, f"Escalations go to {b['email']} or {b['phone']}.",
         f"A refund went to card {b['card']} and account {b['iban']}, requested from {b['ip']}."]
    )  # fmt: skip
    answer = " ".join(f"{fact[:-1]} [1]." for fact in facts) + f"\n\nSources:\n[1] {url}"
    return {
        "id": f"pii-{n:02d}",
        "timestamp": "2026-11-20T09:00:00+00:00",
        "question": f"Which contact details and payment data does the record of {a['email']} hold?",
        "steps": [
            {"kind": "search", "tool": "crm_search", "query": f"customer {n}",
             "hits": [{"rank": 1, "doc_id": f"cust-{n}", "url": url, "title": f"Customer {n}",
                       "snippet": f"Customer record {n}. Escalations go to {b['email']} or {b['phone']}."}]},
            {"kind": "fetch", "tool": "fetch_page", "url": url, "doc_id": f"cust-{n}", "text": page, "status": 200},
        ],
        "answer": answer,
        "labels": {"required_doc_ids": [f"cust-{n}"], "gold_answer": f"{a['email']}, {a['phone']}"},
    }  # fmt: skip


def _schema(body: dict[str, Any]) -> dict[str, Any]:
    """The reply's schema a request body carries (Messages API or Chat Completions)."""
    if "output_config" in body:
        return body["output_config"]["format"]["schema"]  # type: ignore[no-any-return]
    if "response_format" in body:
        return body["response_format"]["json_schema"]["schema"]  # type: ignore[no-any-return]
    return schema_in(body["messages"][0]["content"])  # a server refusing response_format: the schema in the prompt


def _texts(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _texts(v)
    elif isinstance(value, list):
        for v in value:
            yield from _texts(v)


def _leaks(pii: dict[str, list[str]], texts: list[str]) -> list[str]:
    """Every seeded value (or its compact form) found in any of ``texts``."""
    return [v for kind in KINDS for v in pii[kind] if any(v in t or compact(kind, v) in t for t in texts)]


@pytest.mark.parametrize("provider", ["anthropic", "openai", "azure-openai", "vllm"])
def test_no_seeded_value_reaches_the_judge_and_quotes_still_verify(
    fake: FakeAnthropic, tmp_path: Path, provider: str
) -> None:
    if provider == "openai":  # the same run on the Chat Completions API (#47), its own loopback fake
        with FakeOpenAI() as server:
            _no_seeded_value_reaches_the_judge(tmp_path, provider, server.completions, server.url)
    elif provider == "vllm":  # a keyless OpenAI-compatible server refusing response_format: the schema in the prompt
        with FakeOpenAI(key=None, response_format=False) as server:
            _no_seeded_value_reaches_the_judge(tmp_path, provider, server.completions, server.url)
    elif provider == "azure-openai":
        with FakeAzureOpenAI(key="az-key") as server:
            _no_seeded_value_reaches_the_judge(tmp_path, provider, server.completions, server.url)
    else:
        _no_seeded_value_reaches_the_judge(tmp_path, provider, fake.messages, fake.url)


def _no_seeded_value_reaches_the_judge(
    tmp_path: Path, provider: str, requests: Callable[[], list[Request]], url: str
) -> None:
    pii = samples(50)
    traces = [_trace(n, pii) for n in range(50 // PER_TRACE)]
    data = tmp_path / "traces.jsonl"
    data.write_text("".join(json.dumps(t) + "\n" for t in traces), encoding="utf-8")
    config = tmp_path / "tracescore.toml"
    chosen = {"anthropic": "", "openai": 'provider = "openai"\n',
              "vllm": f'provider = "openai"\nmodel = "qwen3-32b"\nbase_url = "{url}/v1"\n',
              "azure-openai": f'provider = "azure-openai"\nendpoint = "{url}"\ndeployment = "judge-gpt"\n'}[provider]
    config.write_text(f'[judge]\n{chosen}redact = ["email", "phone", "card", "iban", "ip"]\n', encoding="utf-8")
    assert len(_leaks(pii, [data.read_text()])) == 250  # every value is in the input: a leak would be seen

    out, store = tmp_path / "results.jsonl", tmp_path / "t.db"
    env = {"openai": {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": f"{url}/v1"}, "vllm": {},
           "azure-openai": {"AZURE_OPENAI_API_KEY": "az-key"},
           "anthropic": {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": url}}[provider]  # fmt: skip
    result = CliRunner().invoke(
        main, ["score", str(data), "--config", str(config), "--store", str(store), "--out", str(out)], env=env
    )
    assert result.exit_code == 0, result.output

    bodies = [request.body.decode() for request in requests()]
    stages = {json.dumps(_schema(json.loads(b)).get("properties", {})) for b in bodies}
    assert len(bodies) >= 3 * len(traces) and len(stages) == 3  # grounding, surface and semantic calls, every trace
    decoded = [" ".join(_texts(json.loads(body))) for body in bodies]
    assert _leaks(pii, bodies + decoded) == []  # 0 of the 250 in any request body, raw or decoded
    assert all("<email-1>" in body and "<card-1>" in body for body in decoded if "<documents>" in body)

    lines = {line["trace_id"]: line for line in map(json.loads, out.read_text().splitlines())}
    assert set(lines) == {t["id"] for t in traces}
    for line in lines.values():
        assert line["scores"]["grounding.rate"] == 1.0, line["trace_id"]  # computed, not absent
        assert line["scores"]["grounding.unverified_quotes"] == 0.0
    with Store(store) as opened:
        (run,) = opened.runs()
        claims = [c for t in traces for c in opened.claims(run["id"], t["id"])]
    assert len(claims) == 5 * len(traces)
    assert all(c["verdict"] == "supported" and c["quote_check"] == "verified" for c in claims)
    assert {c["quote"].split(" is ")[-1].rstrip(".") for c in claims if "email on file" in c["quote"]} == {"<email-1>"}
    assert _leaks(pii, [json.dumps(claims)]) == []  # the store keeps the redacted claims and quotes

    # backfill --judge-batch builds the very same requests (so its replies land under the keys the judge looks up)
    with Store(store) as opened:
        cached = {str(key): str(request) for key, request in opened.query("SELECT key, request FROM judge_cache")}
    loaded = load_config(config)
    redact, models = loaded.redactor, [Trace.model_validate(t) for t in traces]
    # the identity the run used (OPENAI_BASE_URL is the loopback server, so the host is part of it)
    judge = {"openai": f"openai:127.0.0.1:{loaded.judge_model}", "vllm": "openai:127.0.0.1:qwen3-32b",
             "azure-openai": "azure-openai:judge-gpt", "anthropic": DEFAULT_MODEL}[provider]
    assert {r.key(judge) for t in models for r in judge_requests(t, redact=redact)} == set(cached)
    assert not {r.key(judge) for t in models for r in judge_requests(t)} & set(cached)  # unredacted: others
    assert _leaks(pii, list(cached.values())) == []


def test_calibrate_checks_rejudging_finds_the_stored_redacted_claims_and_sends_no_original(
    fake: FakeAnthropic,
) -> None:
    from tracescore.calibrate.drift import rejudge
    from tracescore.judge.anthropic import AnthropicJudge
    from tracescore.judge.redact import redactor

    pii = samples(50)
    trace = Trace.model_validate(_trace(0, pii))
    stored = "The customer email on file is <email-1>."  # the claim as the redacted scoring stored it
    with AnthropicJudge(api_key="test-key", base_url=fake.url, wait_initial=0.001) as judge:
        plain, skipped = rejudge({"i1": (trace.id, stored)}, {trace.id: trace}, judge)
        assert plain == {} and skipped  # unredacted, the judge's claims are other texts (and saw the originals)
        sent = len(fake.messages())
        values, skipped = rejudge({"i1": (trace.id, stored)}, {trace.id: trace}, judge, redact=redactor(list(KINDS)))
    assert skipped == [] and values["i1"]["grounding.verdict"] == "supported"
    assert _leaks(pii, [r.body.decode() for r in fake.messages()[sent:]]) == []


def test_the_python_api_redacts_as_the_command_does(fake: FakeAnthropic) -> None:
    import tracescore
    from tracescore.judge.anthropic import AnthropicJudge
    from tracescore.judge.redact import redactor

    pii = samples(50)
    traces = [_trace(n, pii) for n in range(3)]
    with AnthropicJudge(api_key="test-key", base_url=fake.url, wait_initial=0.001) as judge:
        results = tracescore.score_traces(traces, judge=judge, redact=redactor(list(KINDS)))
    assert [r.scores["grounding.rate"].value for r in results] == [1.0, 1.0, 1.0]
    assert len(fake.messages()) >= 3 and _leaks(pii, [r.body.decode() for r in fake.messages()]) == []


def test_a_dry_run_estimates_the_redacted_requests(tmp_path: Path) -> None:
    from tracescore.engine.estimate import estimate_trace
    from tracescore.judge.redact import redactor

    pii = samples(50)
    traces = [_trace(n, pii) for n in range(5)]
    (tmp_path / "t.jsonl").write_text("".join(json.dumps(t) + "\n" for t in traces), encoding="utf-8")
    config = tmp_path / "tracescore.toml"
    config.write_text(
        f'[source]\nkind = "jsonl"\npath = "t.jsonl"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\n\n'
        '[judge]\nredact = ["email", "phone", "card", "iban", "ip"]\n', encoding="utf-8"
    )  # fmt: skip
    args = ["backfill", "--config", str(config), "--from", "2026-11-20", "--to", "2026-11-21", "--dry-run"]
    result = CliRunner().invoke(main, args, env={"ANTHROPIC_API_KEY": "test-key"})
    assert result.exit_code == 0, result.output
    out = json.loads([line for line in result.output.splitlines() if line.startswith("{")][-1])
    models, every = [Trace.model_validate(t) for t in traces], redactor(list(KINDS))
    assert every is not None
    redacted = sum(estimate_trace(every.trace(t), DEFAULT_MODEL).input_tokens for t in models)
    assert out["judge_input_tokens"] == redacted != sum(estimate_trace(t, DEFAULT_MODEL).input_tokens for t in models)
