"""The outage rule on every judge (#47, acceptance 1; the Anthropic case is ``tests/engine/test_judge_heal.py``'s
first run, here parametrized over the providers): traces judged before by a backfill keep their judged scores on the
platform when a later scheduled run meets the judge down (every request answered 500), whichever provider judges.
Counted at the fakes: judge requests at the judge's fake, score writes and deletes at the Langfuse fake (the real
SDKs over loopback HTTP)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.engine.test_daily_budget import _day_traces, _run
from tests.engine.test_judge_heal import DAY, JUDGED, _failed
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.azure_openai import FakeAzureOpenAI
from tests.fakes.base import Fault
from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.openai_chat import FakeOpenAI, error_body
from tests.test_both_platforms import _langfuse_trace
from tracescore.config import load_config
from tracescore.engine.runner import backfill_job
from tracescore.engine.setup import build_setup


@contextmanager
def _judge(provider: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, str, str]]:
    """The provider's fake with its environment set; (fake, its requests' path, the [judge] lines of a model)."""
    if provider == "anthropic":
        with FakeAnthropic() as fake:
            monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
            monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
            yield fake, "/v1/messages", 'model = "{model}"\n'
    elif provider == "azure-openai":
        with FakeAzureOpenAI(deployments=("judge-old", "judge-new"), key="az-key") as fake:
            monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az-key")
            yield (
                fake,
                "/openai/deployments/",
                f'provider = "azure-openai"\nendpoint = "{fake.url}"\ndeployment = "{{model}}"\n',
            )
    else:  # openai, or a keyless vLLM-like server refusing response_format
        keyless = provider == "vllm"
        with FakeOpenAI(key=None if keyless else "sk-test", response_format=not keyless) as fake:
            if not keyless:
                monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
            yield (
                fake,
                "/v1/chat/completions",
                f'provider = "openai"\nbase_url = "{fake.url}/v1"\nmodel = "{{model}}"\n',
            )


MODELS = {"anthropic": ("claude-haiku-4-5", "claude-sonnet-4-6"), "azure-openai": ("judge-old", "judge-new")}


@pytest.mark.parametrize("provider", ["anthropic", "openai", "azure-openai", "vllm"])
def test_a_judge_outage_keeps_every_earlier_judged_score_on_the_platform(
    provider: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLangfuse() as langfuse, _judge(provider, monkeypatch) as (judge, path, lines):
        for name, value in env_for(langfuse).items():
            monkeypatch.setenv(name, value)
        traces = _day_traces(DAY, 6)
        for sample in traces:
            langfuse.add_trace(*_langfuse_trace(sample))
        old = {s["id"] for s in traces[:3]}
        config, db = tmp_path / "tracescore.toml", tmp_path / "ts.db"
        before, now = MODELS.get(provider, ("gpt-5.4-mini", "gpt-5.4"))

        def configure(model: str) -> None:
            config.write_text(
                f'[source]\nkind = "langfuse"\n\n[job]\nstore = "{db}"\nlookback = "15m"\nsettle = "1m"\n'
                f"judge_concurrency = 1\nwrite_batch = 8\nbackfill_chunks = 1\njudge_retries = 2\n\n[judge]\n"
                + lines.format(model=model),
                encoding="utf-8",
            )

        # the three older traces were judged before by another judge model whose verdicts differ (no claim
        # supported): its judged scores are on the platform
        configure(before)
        judge.tamper = lambda out, _: (
            {"claims": [dict(c, evidence=[]) for c in out["claims"]]} if "claims" in out else out
        )
        setup = build_setup(load_config(config))
        try:
            backfill_job(setup, start=DAY, stop=DAY + timedelta(hours=2))
        finally:
            setup.close()
        judge.tamper = None
        earlier = {k: dict(s) for k, s in langfuse.scores.items() if s["name"] in JUDGED}
        assert {s["traceId"] for s in earlier.values()} == old

        # the judge down: every request answered 500 (retry-after 0); the run scores, the judged traces stay due,
        # and the platform's earlier judged scores stay as they were, none deleted
        configure(now)
        asked = len(judge.requests_to(path, "POST"))
        down = Fault.http(500, error_body("The server had an error while processing your request.", "server_error"),
                          **{"retry-after": "0"})  # fmt: skip
        judge.faults.add(path, *([down] * 2000))
        first = _run(config, DAY + timedelta(hours=5), since=DAY)
        due = _failed(db, first.run_id)
        assert len(judge.requests_to(path, "POST")) > asked  # the judge was asked, and was down
        assert first.summary["scored"] == 6 and old < due
        assert {k: langfuse.scores[k] for k in earlier} == earlier
        assert not langfuse.requests_to("/api/public/scores/", "DELETE")
