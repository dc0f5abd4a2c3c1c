"""The Anthropic judge through the real SDK over loopback HTTP against the fake Messages API."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest

from tests.fakes.anthropic import FakeAnthropic, overloaded, rate_limited, server_error
from tests.fakes.base import Fault
from tracescore.errors import ConfigError, JudgeError
from tracescore.judge.anthropic import DEFAULT_MODEL, AnthropicJudge, JudgeModelWarning, deprecated_models
from tracescore.judge.pricing import is_priced
from tracescore.judge.protocol import JudgeRequest
from tracescore.judge.rubrics import load_rubric
from tracescore.scorers.grounding import Judgement

CONTENT = (
    "<question>When?</question>\n<answer>\n"
    '<sentence n="0">Penicillin was discovered in 1928 [1].</sentence>\n</answer>\n'
    '<documents>\n<document id="D1" source="fetched page">\nPenicillin was discovered in 1928 by Alexander Fleming.'
    "\n</document>\n</documents>"
)


_OPEN: list[AnthropicJudge] = []


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server
        while _OPEN:
            _OPEN.pop().close()


def _judge(fake: FakeAnthropic, **options: object) -> AnthropicJudge:
    judge = AnthropicJudge(api_key="test-key", base_url=fake.url, wait_initial=0.001, **options)  # type: ignore[arg-type]
    _OPEN.append(judge)
    return judge


def _claims() -> JudgeRequest:
    return JudgeRequest(load_rubric("grounding"), CONTENT, Judgement)


def deprecated_priced_model() -> tuple[str, str]:
    """A model the installed SDK lists as deprecated (and we can price), with its end of life: read from the SDK,
    because each release moves models in and out of the table (2.15 dropped claude-sonnet-4-5 once it retired)."""
    for model, end in deprecated_models().items():
        if is_priced(model):
            return model, end
    pytest.skip("the installed anthropic SDK lists no deprecated model that tracescore prices")


def test_default_model_is_current_not_deprecated_in_the_sdk() -> None:
    from anthropic._data import DEPRECATED_MODELS

    assert deprecated_models() == dict(DEPRECATED_MODELS)  # the SDK's own table, read as it is
    assert DEFAULT_MODEL not in deprecated_models()


def test_structured_output_request_shape_and_parsed_reply(fake: FakeAnthropic) -> None:
    judge = _judge(fake)
    reply = judge.judge(_claims())
    quote = "Penicillin was discovered in 1928 by Alexander Fleming."
    evidence = [{"doc_id": "D1", "verdict": "supported", "quote": quote}]
    assert reply.output == Judgement.model_validate(
        {
            "claims": [
                {"sentence": 0, "text": "Penicillin was discovered in 1928.", "evidence": evidence, "reason": "oracle"}
            ]
        }
    )
    (request,) = fake.messages()
    body = request.json()
    assert body["model"] == DEFAULT_MODEL
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert body["output_config"]["format"]["schema"]["required"] == ["claims"]
    assert body["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert "atomic factual claims" in body["system"][0]["text"]
    assert body["messages"][0]["content"] == [{"type": "text", "text": CONTENT}]
    assert request.headers["Authorization"] == "Bearer test-key"
    assert request.headers["x-stainless-retry-count"] == "0"
    assert reply.input_tokens > 0 and reply.output_tokens > 0 and reply.cache_write_tokens > 0
    assert judge.usage.calls == 1 and judge.usage.cost_usd > 0


def test_shared_prefixes_are_marked_for_prompt_caching(fake: FakeAnthropic) -> None:
    judge = _judge(fake)
    rubric = load_rubric("grounding")
    for doc in ("Penicillin was discovered in 1928 by Alexander Fleming.", "Mass production began in 1942."):
        judge.judge(
            JudgeRequest(
                rubric,
                CONTENT.replace("Penicillin was discovered in 1928 by Alexander Fleming.", doc),
                Judgement,
                prefix="<shared>same prefix</shared>",
            )
        )
    first, second = (r.json() for r in fake.messages())
    assert first["system"] == second["system"] and first["system"][0]["cache_control"] == {"type": "ephemeral"}
    shared = {"type": "text", "text": "<shared>same prefix</shared>", "cache_control": {"type": "ephemeral"}}
    assert first["messages"][0]["content"][0] == shared and "cache_control" not in first["messages"][0]["content"][1]
    assert judge.usage.cache_write_tokens > 0 and judge.usage.cache_read_tokens == judge.usage.cache_write_tokens


def test_429_then_529_then_500_are_retried_and_counted_honouring_retry_after(fake: FakeAnthropic) -> None:
    fake.faults.add("/v1/messages", rate_limited(0.4), overloaded(), server_error())
    judge = _judge(fake)
    started = time.monotonic()
    reply = judge.judge(_claims())
    waited = time.monotonic() - started
    assert reply.attempts == 4
    assert len(fake.messages()) == 4
    assert [f.status for _, f in fake.faults.injected] == [429, 529, 500]
    assert judge.usage.retries == 3 and judge.usage.attempts == 4 and judge.usage.failures == 0
    assert waited >= 0.4  # the retry-after of the 429 was honoured (exponential waits are 1 ms here)
    # one retry layer: the SDK never retried on its own
    assert {r.headers["x-stainless-retry-count"] for r in fake.messages()} == {"0"}


def test_attempts_are_bounded_and_a_call_that_still_fails_raises_judge_error(fake: FakeAnthropic) -> None:
    fake.faults.add("/v1/messages", *[server_error() for _ in range(10)])
    judge = _judge(fake, max_attempts=3)
    with pytest.raises(JudgeError, match=r"grounding judge call failed after 3 attempt\(s\): HTTP 500"):
        judge.judge(_claims())
    assert len(fake.messages()) == 3
    assert judge.usage.failures == 1 and judge.usage.retries == 2 and judge.usage.calls == 0


def test_a_bad_request_is_not_retried(fake: FakeAnthropic) -> None:
    fake.faults.add(
        "/v1/messages", Fault.http(400, {"type": "error", "error": {"type": "invalid_request_error", "message": "bad"}})
    )
    with pytest.raises(JudgeError, match="HTTP 400"):
        _judge(fake).judge(_claims())
    assert len(fake.messages()) == 1


def test_a_truncated_body_is_retried(fake: FakeAnthropic) -> None:
    fake.faults.add("/v1/messages", Fault.truncated())
    judge = _judge(fake)
    assert judge.judge(_claims()).attempts == 2
    assert len(fake.messages()) == 2


def test_a_reply_that_does_not_fit_the_schema_is_a_judge_error_not_a_verdict(fake: FakeAnthropic) -> None:
    fake.tamper = lambda output, body: {"claims": [{"text": "no sentence number"}]}
    with pytest.raises(JudgeError, match="grounding judge call failed after 1 attempt"):
        _judge(fake).judge(_claims())
    assert len(fake.messages()) == 1


def test_a_deprecated_model_draws_a_warning_naming_its_end_of_life(fake: FakeAnthropic) -> None:
    model, end = deprecated_priced_model()
    with pytest.warns(JudgeModelWarning, match=f"{re.escape(model)}.*end of life on {re.escape(end)}"):
        judge = _judge(fake, model=model)
    judge.judge(_claims())  # the SDK's own per-call DeprecationWarning is not repeated (warnings are errors here)
    assert fake.messages()[0].json()["model"] == model


def test_no_key_is_a_config_error_naming_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="set ANTHROPIC_API_KEY"):
        AnthropicJudge()


def test_a_billed_reply_that_does_not_parse_still_counts_in_tokens_and_cost(fake: FakeAnthropic) -> None:
    fake.tamper = lambda output, body: {"claims": [{"text": "no sentence number"}]}
    judge = _judge(fake)
    with pytest.raises(JudgeError, match="no structured output"):
        judge.judge(_claims())
    usage = judge.usage
    assert usage.failures == 1 and usage.calls == 1  # the API answered (and billed) once
    assert usage.input_tokens > 0 and usage.output_tokens > 0 and usage.cost_usd > 0
