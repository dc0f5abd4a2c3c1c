"""The judge on Azure OpenAI (#47, item 3): the real ``openai`` SDK's ``AzureOpenAI`` over loopback HTTP against a
fake written from Azure's REST reference (``tests/fakes/azure_openai.py``): the URL shape and ``api-key`` header,
an Entra ID token when there is no key (azure-identity's provider called, its token sent as Bearer), faults retried
(429 + Retry-After, 500, a timeout, a truncated body), a wrong deployment one judge error line, the identity."""

from __future__ import annotations

import sys
import types
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.azure_openai import FakeAzureOpenAI
from tests.fakes.base import Fault
from tests.fakes.openai_chat import rate_limited, server_error
from tests.judge.test_openai_judge import SAMPLES, _claims, _header, _verdicts
from tests.judge.test_providers import QUOTE
from tracescore.cli import main
from tracescore.errors import ConfigError, JudgeError
from tracescore.judge.azure import ENTRA_SCOPE, AzureOpenAIJudge
from tracescore.judge.pricing import is_priced

PATH = "/openai/deployments/"


@pytest.fixture(autouse=True)
def _no_azure_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION", "AZURE_OPENAI_AD_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def _judge(fake: FakeAzureOpenAI, **options: Any) -> AzureOpenAIJudge:
    return AzureOpenAIJudge(deployment="judge-gpt", endpoint=fake.url, wait_initial=0.001, **options)


def test_the_key_goes_as_api_key_to_the_deployments_url_with_the_api_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az-key")
    with FakeAzureOpenAI(key="az-key") as fake, _judge(fake) as judge:
        reply = judge.judge(_claims())
        sent = fake.completions()
    assert _verdicts(reply) == [("supported", QUOTE)]
    assert [r.path for r in sent] == ["/openai/deployments/judge-gpt/chat/completions"]
    assert sent[0].query == {"api-version": ["2024-10-21"]} and _header(sent[0], "api-key") == "az-key"
    assert judge.model == reply.model == "azure-openai:judge-gpt" and not is_priced(judge.model)


def test_without_a_key_an_entra_id_token_from_azure_identity_is_sent_as_bearer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """azure-identity itself is not installed in the test environment: a stand-in module records that tracescore
    asks ``get_bearer_token_provider(DefaultAzureCredential(), <Cognitive Services scope>)`` and calls the provider
    (per request, as the SDK does); what the real credential chain does is azure-identity's."""
    asked: list[tuple[Any, str]] = []
    calls: list[int] = []

    class DefaultAzureCredential:
        pass

    def get_bearer_token_provider(credential: Any, scope: str) -> Any:
        asked.append((credential, scope))
        return lambda: calls.append(1) or "entra-token"

    identity = types.ModuleType("azure.identity")
    identity.DefaultAzureCredential = DefaultAzureCredential  # type: ignore[attr-defined]
    identity.get_bearer_token_provider = get_bearer_token_provider  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "azure", types.ModuleType("azure"))
    monkeypatch.setitem(sys.modules, "azure.identity", identity)
    with FakeAzureOpenAI(key=None, token="entra-token") as fake, _judge(fake) as judge:
        judge.judge(_claims())
        sent = fake.completions()
    assert len(asked) == 1 and isinstance(asked[0][0], DefaultAzureCredential) and asked[0][1] == ENTRA_SCOPE
    assert calls and _header(sent[0], "authorization") == "Bearer entra-token" and _header(sent[0], "api-key") is None


def test_neither_key_nor_azure_identity_is_a_config_error_naming_both(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "azure.identity", None)  # not installed
    with pytest.raises(ConfigError, match=r"set AZURE_OPENAI_API_KEY, or use an Entra ID token .*tracescore\[azure\]"):
        AzureOpenAIJudge(deployment="d", endpoint="https://acme.openai.azure.com")
    with pytest.raises(ConfigError, match="no Azure OpenAI endpoint: set \\[judge\\] endpoint"):
        AzureOpenAIJudge(deployment="d", api_key="k")


def test_429_with_retry_after_500_a_timeout_and_a_truncated_body_are_retried_then_answered() -> None:
    with FakeAzureOpenAI(key="k") as fake, _judge(fake, api_key="k", timeout=0.5, max_attempts=5) as judge:
        fake.faults.add(PATH, rate_limited(0.01), server_error(), Fault.timeout(1.5), Fault.truncated())
        reply = judge.judge(_claims())
    assert _verdicts(reply) == [("supported", QUOTE)]
    assert reply.attempts == 5 and judge.usage.retries == 4 and judge.usage.calls == 1


def test_an_unknown_deployment_is_one_judge_error_line_sent_once() -> None:
    with FakeAzureOpenAI(key="k", deployments=("other",)) as fake, _judge(fake, api_key="k") as judge:
        with pytest.raises(JudgeError, match=r"after 1 attempt\(s\): HTTP 404: .*The API deployment .* does not exist"):
            judge.judge(_claims())
        assert len(fake.completions()) == 1


def test_a_deployment_has_no_list_price_so_a_budget_is_refused_until_judge_price_sets_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az-key")
    traces = tmp_path / "t.jsonl"
    traces.write_bytes(b"".join(SAMPLES.read_bytes().splitlines(keepends=True)[:3]))
    config, out = tmp_path / "tracescore.toml", tmp_path / "out.jsonl"
    args = ["score", str(traces), "--config", str(config), "--max-cost", "1", "--out", str(out), "--store", "none"]
    with FakeAzureOpenAI(key="az-key") as fake:
        config.write_text(f'[judge]\nprovider = "azure-openai"\nendpoint = "{fake.url}"\ndeployment = "judge-gpt"\n')
        ran = CliRunner().invoke(main, args)
        assert ran.exit_code == 2 and "needs a price for judge model 'azure-openai:judge-gpt'" in ran.output
        assert "set [judge.price] input_per_mtok and output_per_mtok" in " ".join(ran.output.split())
        assert not fake.completions()  # refused before any call
        config.write_text(config.read_text() + "\n[judge.price]\ninput_per_mtok = 2.5\noutput_per_mtok = 15\n")
        ran = CliRunner().invoke(main, args)
        assert ran.exit_code in (0, 1), ran.output
        assert fake.completions()
