"""The judge on the Chat Completions API (#47): the real ``openai`` SDK over loopback HTTP against a fake written
from the SDK's own types (``tests/fakes/openai_chat.py``): the sample traces give the same judged scores through
OpenAI, a keyless "vLLM-like" server without ``response_format``, and Anthropic's fake answering the same verdicts;
the bodies have the Chat Completions shape; faults are retried; identity and price."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.azure_openai import FakeAzureOpenAI
from tests.fakes.base import Fault
from tests.fakes.openai_chat import FakeOpenAI, rate_limited, server_error
from tests.judge.test_providers import CONTENT, QUOTE
from tracescore.cli import main
from tracescore.config import load_config
from tracescore.errors import ConfigError, JudgeError
from tracescore.judge.openai import OpenAIJudge
from tracescore.judge.pricing import estimate_cost, is_priced, price_of
from tracescore.judge.protocol import JudgeRequest
from tracescore.judge.providers import ProviderSettings
from tracescore.judge.rubrics import load_rubric
from tracescore.scorers.grounding import Judgement

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "cookbook" / "data" / "traces.jsonl"


@pytest.fixture(autouse=True)
def _no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID", "OPENAI_ADMIN_KEY",
                 "OPENAI_API_VERSION", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_AD_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def _header(request: Any, name: str) -> str | None:
    return {k.lower(): v for k, v in request.headers.items()}.get(name)


def _auth(request: Any) -> str | None:
    return _header(request, "authorization")


def _claims() -> JudgeRequest:
    return JudgeRequest(load_rubric("grounding"), CONTENT, Judgement)


def _verdicts(reply: Any) -> list[tuple[str, str]]:
    return [(e.verdict, e.quote) for c in reply.output.claims for e in c.evidence]


def _score(tmp_path: Path, name: str, config: str, env: dict[str, str]) -> dict[str, dict[str, Any]]:
    """``tracescore score`` of the cookbook's sample traces; each trace's result line by id."""
    (tmp_path / f"{name}.toml").write_text("[job]\njudge_concurrency = 1\n" + config, encoding="utf-8")
    out = tmp_path / f"{name}.jsonl"
    args = ["score", str(SAMPLES), "--config", str(tmp_path / f"{name}.toml"), "--store", str(tmp_path / f"{name}.db"),
            "--out", str(out), "-q"]  # fmt: skip
    ran = CliRunner().invoke(main, args, env=env)
    assert ran.exit_code in (0, 1), ran.output  # 1: a gate-less run may still report unscorable lines
    return {row["trace_id"]: row for row in map(json.loads, out.read_text().splitlines())}


def _judged(rows: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Every trace's scores (judged and not) and the reasons of absent ones: what must not depend on the provider."""
    return {tid: {"scores": row["scores"], "absent": row.get("absent")} for tid, row in rows.items()}


def test_the_sample_traces_give_the_same_judged_scores_on_openai_azure_a_vllm_like_server_and_anthropic(
    tmp_path: Path,
) -> None:
    with FakeAnthropic() as fake:
        anthropic = _score(tmp_path, "anthropic", "", {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url})
        assert fake.messages()
    with FakeOpenAI(key="sk-test") as fake:
        openai = _score(tmp_path, "openai", '[judge]\nprovider = "openai"\nmodel = "gpt-5.4"\n',
                        {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": f"{fake.url}/v1"})  # fmt: skip
        openai_bodies = [r.json() for r in fake.completions()]
        assert fake.completions() and all(_auth(r) == "Bearer sk-test" for r in fake.completions())
    with FakeOpenAI(key=None, response_format=False) as fake:
        config = f'[judge]\nprovider = "openai"\nmodel = "qwen3-32b"\nbase_url = "{fake.url}/v1"\n'
        vllm = _score(tmp_path, "vllm", config, {})
        vllm_requests = fake.completions()
    with FakeAzureOpenAI(deployments=("judge-gpt",), key="az-key") as fake:
        config = (f'[judge]\nprovider = "azure-openai"\nendpoint = "{fake.url}"\ndeployment = "judge-gpt"\n'
                  'api_version = "2024-10-21"\n')  # fmt: skip
        azure = _score(tmp_path, "azure", config, {"AZURE_OPENAI_API_KEY": "az-key"})
        azure_requests = fake.completions()

    judged = [row for row in anthropic.values() if row["scores"].get("grounding.rate") is not None]
    assert len(judged) >= 5  # the comparison is about judged scores: there are some
    assert _judged(openai) == _judged(anthropic)
    assert _judged(vllm) == _judged(anthropic)
    assert _judged(azure) == _judged(anthropic)
    assert {row["judge"]["model"] for row in azure.values() if row.get("judge")} == {"azure-openai:judge-gpt"}
    assert {row["judge"]["model"] for row in openai.values() if row.get("judge")} == {"openai:127.0.0.1:gpt-5.4"}
    assert {row["judge"]["model"] for row in vllm.values() if row.get("judge")} == {"openai:127.0.0.1:qwen3-32b"}

    # the Chat Completions shape: model, system + user messages, a strict json_schema response_format, no Messages
    # API fields (max_tokens: a loopback server is not OpenAI's own API, which takes max_completion_tokens)
    for body in openai_bodies:
        assert set(body) == {"model", "messages", "response_format", "max_tokens"}
        assert [m["role"] for m in body["messages"]] == ["system", "user"]
        assert all(isinstance(m["content"], str) for m in body["messages"])
        assert body["response_format"]["type"] == "json_schema" and body["response_format"]["json_schema"]["strict"]
    # the keyless server: no Authorization header; its one refusal of response_format, then the schema in the prompt
    assert vllm_requests and all(_auth(r) is None for r in vllm_requests)
    vllm_bodies = [r.json() for r in vllm_requests]
    assert "response_format" in vllm_bodies[0] and all("response_format" not in b for b in vllm_bodies[1:])
    assert all(set(b) == {"model", "messages", "max_tokens"} for b in vllm_bodies[1:])
    assert all('"properties"' in b["messages"][0]["content"] for b in vllm_bodies[1:])
    # Azure: the deployment in the path, the api-version in the query, the key as api-key (no Authorization), the
    # Chat Completions body with the deployment as model and max_completion_tokens (Azure's API is OpenAI's)
    assert azure_requests and {r.path for r in azure_requests} == {"/openai/deployments/judge-gpt/chat/completions"}
    assert all(r.query == {"api-version": ["2024-10-21"]} for r in azure_requests)
    assert all(_header(r, "api-key") == "az-key" and _auth(r) is None for r in azure_requests)
    for body in (r.json() for r in azure_requests):
        assert set(body) == {"model", "messages", "response_format", "max_completion_tokens"}
        assert body["model"] == "judge-gpt" and body["response_format"]["json_schema"]["strict"]


def test_openais_own_api_gets_max_completion_tokens_other_servers_max_tokens() -> None:
    from tracescore.judge.request import chat_params

    assert chat_params(_claims(), "gpt-5.4", 100)["max_completion_tokens"] == 100
    assert chat_params(_claims(), "qwen3", 100, openai=False)["max_tokens"] == 100


def test_structured_false_sends_no_response_format_from_the_start() -> None:
    with (
        FakeOpenAI(key=None, response_format=False) as fake,
        OpenAIJudge(base_url=f"{fake.url}/v1", structured=False, wait_initial=0.001) as judge,
    ):
        reply = judge.judge(_claims())
        assert len(fake.completions()) == 1 and "response_format" not in fake.completions()[0].json()
    assert _verdicts(reply) == [("supported", QUOTE)]


def test_429_with_retry_after_500_and_a_truncated_body_are_retried_then_answered() -> None:
    with FakeOpenAI() as fake, OpenAIJudge(api_key="test-key", base_url=f"{fake.url}/v1", wait_initial=0.001) as judge:
        fake.faults.add("/v1/chat/completions", rate_limited(0.01), server_error(), Fault.truncated())
        reply = judge.judge(_claims())
    assert _verdicts(reply) == [("supported", QUOTE)]
    assert reply.attempts == 4 and judge.usage.retries == 3 and judge.usage.calls == 1 and judge.usage.failures == 0


def test_a_timeout_is_retried_and_an_outage_is_one_judge_error_line() -> None:
    with (
        FakeOpenAI() as fake,
        OpenAIJudge(
            api_key="test-key", base_url=f"{fake.url}/v1", wait_initial=0.001, timeout=0.3, max_attempts=2
        ) as judge,
    ):
        fake.faults.add("/v1/chat/completions", Fault.timeout(1.5))
        assert _verdicts(judge.judge(_claims())) == [("supported", QUOTE)]
        fake.faults.add("/v1/chat/completions", server_error(), server_error())
        with pytest.raises(JudgeError) as caught:
            judge.judge(_claims())
    assert str(caught.value) == (
        "grounding judge call failed after 2 attempt(s): HTTP 500: Error code: 500 - The server had an error while"
        " processing your request."
    )
    assert judge.usage.failures == 1


def test_a_reply_that_does_not_parse_is_a_judge_error_billed_not_repaired() -> None:
    def broken(output: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        return {"claims": "all of them"}

    with FakeOpenAI(tamper=broken) as fake, OpenAIJudge(api_key="k", base_url=f"{fake.url}/v1") as judge:
        fake.key = "k"
        with pytest.raises(JudgeError, match="no structured output"):
            judge.judge(_claims())
    assert judge.usage.calls == 1 and judge.usage.input_tokens > 0 and len(fake.completions()) == 1  # sent once


def test_a_400_not_about_response_format_is_sent_once() -> None:
    with FakeOpenAI() as fake, OpenAIJudge(api_key="test-key", base_url=f"{fake.url}/v1") as judge:
        too_large = {"error": {"message": "max_tokens is too large", "type": "invalid_request_error"}}
        fake.faults.add("/v1/chat/completions", Fault.http(400, too_large))
        with pytest.raises(JudgeError, match="HTTP 400"):
            judge.judge(_claims())
    assert len(fake.completions()) == 1


def test_the_key_comes_from_api_key_env_and_openai_without_one_is_a_config_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ConfigError, match="no OpenAI API key: set OPENAI_API_KEY"):
        OpenAIJudge()
    monkeypatch.setenv("TEAM_OPENAI_KEY", "sk-team")
    with FakeOpenAI(key="sk-team") as fake, OpenAIJudge(api_key_env="TEAM_OPENAI_KEY", base_url=f"{fake.url}/v1") as j:
        j.judge(_claims())
        assert _auth(fake.completions()[0]) == "Bearer sk-team"


def test_identity_keys_the_cache_by_provider_host_and_model() -> None:
    openai = ProviderSettings("openai")
    assert openai.identity("gpt-5.4") == "openai:gpt-5.4"
    assert ProviderSettings("openai", base_url="https://api.openai.com/v1").identity("gpt-5.4") == "openai:gpt-5.4"
    local = ProviderSettings("openai", base_url="http://gpu-box:11434/v1")
    assert local.identity("llama3.1:8b") == "openai:gpu-box:llama3.1:8b"
    assert _claims().key("openai:gpt-5.4") != _claims().key("openai:gpu-box:gpt-5.4") != _claims().key("gpt-5.4")


def test_openai_list_prices_with_their_cached_rate_and_another_server_is_cost_unknown_until_priced(
    tmp_path: Path,
) -> None:
    assert price_of("openai:gpt-5.4") == (2.5, 15.0, 0.25)
    cost = estimate_cost("openai:gpt-5.4", input_tokens=1_000_000, output_tokens=100_000, cache_read=1_000_000)
    assert cost == pytest.approx(2.5 + 1.5 + 0.25)
    assert not is_priced("openai:gpu-box:gpt-5.4") and not is_priced("openai:some-new-model")

    traces = tmp_path / "t.jsonl"
    traces.write_bytes(b"".join(SAMPLES.read_bytes().splitlines(keepends=True)[:3]))
    config, out = tmp_path / "tracescore.toml", tmp_path / "out.jsonl"
    with FakeOpenAI(key=None) as fake:
        config.write_text(f'[judge]\nprovider = "openai"\nmodel = "qwen3-8b"\nbase_url = "{fake.url}/v1"\n')
        args = ["score", str(traces), "--config", str(config), "--max-cost", "1", "--out", str(out), "--store", "none"]
        ran = CliRunner().invoke(main, args, env={})
        assert ran.exit_code == 2 and "needs a price for judge model 'openai:127.0.0.1:qwen3-8b'" in ran.output
        assert not fake.completions()  # refused before any call
        config.write_text(config.read_text() + "\n[judge.price]\ninput_per_mtok = 0\noutput_per_mtok = 0\n")
        assert load_config(config).judge_price == (0.0, 0.0, 0.0)
        ran = CliRunner().invoke(main, [*args, "--format", "json"], env={})
        assert ran.exit_code in (0, 1), ran.output
        assert fake.completions()  # judged, at $0 within the budget
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert any(row["scores"].get("grounding.rate") is not None for row in rows)
