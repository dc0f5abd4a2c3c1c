"""The judge on Amazon Bedrock and Google Vertex AI: the real SDK's ``AnthropicBedrock`` / ``AnthropicVertex``
clients over loopback HTTP against fakes written from AWS's and Google's published APIs (paths, model ids, SigV4 and
Bearer authentication), with structured output, the same retries, the cache, and each provider's price."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes import bedrock, vertex
from tests.fakes.bedrock import FakeBedrock
from tests.fakes.vertex import FakeVertex
from tracescore.errors import ConfigError, JudgeError
from tracescore.judge.anthropic import AnthropicJudge
from tracescore.judge.cache import CachingJudge, MemoryJudgeCache
from tracescore.judge.protocol import JudgeRequest
from tracescore.judge.rubrics import load_rubric
from tracescore.scorers.grounding import Judgement

CONTENT = (
    "<question>When?</question>\n<answer>\n"
    '<sentence n="0">Penicillin was discovered in 1928 [1].</sentence>\n</answer>\n'
    '<documents>\n<document id="D1" source="fetched page">\nPenicillin was discovered in 1928 by Alexander Fleming.'
    "\n</document>\n</documents>"
)
QUOTE = "Penicillin was discovered in 1928 by Alexander Fleming."
ACCESS_KEY, SECRET_KEY = "AKIDFAKEEXAMPLE", "fake-secret-key"
TOKEN = "ya29.fake-access-token"
_OPEN: list[AnthropicJudge] = []


def provider_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fake AWS credentials from the environment, as boto3 reads them; nothing from this machine's ~/.aws, IMDS,
    gcloud or a metadata server."""
    for name in ("AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK",
                 "CLOUD_ML_REGION", "ANTHROPIC_VERTEX_PROJECT_ID", "GOOGLE_CLOUD_PROJECT",
                 "ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ACCESS_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "no-adc.json"))
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud"))
    monkeypatch.setenv("NO_GCE_CHECK", "True")  # google-auth: never probe a metadata server
    from anthropic.lib.aws import _auth

    _auth._get_session.cache_clear()  # the SDK keeps one boto3 session (and its credentials) per process


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    provider_env(monkeypatch, tmp_path)
    yield
    while _OPEN:
        _OPEN.pop().close()


def _judge(**options: object) -> AnthropicJudge:
    judge = AnthropicJudge(wait_initial=0.001, **options)  # type: ignore[arg-type]
    _OPEN.append(judge)
    return judge


def _bedrock_judge(
    fake: FakeBedrock, model: str = "global.anthropic.claude-sonnet-4-6", **options: object
) -> AnthropicJudge:
    return _judge(provider="bedrock", model=model, region="us-east-1", base_url=fake.url, **options)


def _vertex_judge(fake: FakeVertex, model: str = "claude-sonnet-4-5@20250929", region: str = "us-east5",
                  **options: object) -> AnthropicJudge:  # fmt: skip
    return _judge(provider="vertex", model=model, region=region, project="acme-evals", api_key=TOKEN,
                  base_url=f"{fake.url}/v1", **options)  # fmt: skip


def _claims() -> JudgeRequest:
    return JudgeRequest(load_rubric("grounding"), CONTENT, Judgement)


def _cost(reply: object, per_in: float, per_out: float) -> float:
    """USD of one reply at (input, output) USD per million tokens: writes 1.25x input, reads 0.1x input."""
    r = reply
    return (r.input_tokens * per_in + r.cache_write_tokens * per_in * 1.25  # type: ignore[attr-defined]
            + r.cache_read_tokens * per_in * 0.1 + r.output_tokens * per_out) / 1e6  # type: ignore[attr-defined]  # fmt: skip


def _verdicts(reply: object) -> list[tuple[str, str]]:
    output = reply.output  # type: ignore[attr-defined]
    return [(e.verdict, e.quote) for c in output.claims for e in c.evidence]


# --- Bedrock ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("model", ["global.anthropic.claude-sonnet-4-6", "us.anthropic.claude-sonnet-4-5-20250929-v1:0",
                                   "anthropic.claude-haiku-4-5-20251001-v1:0"])  # fmt: skip
def test_bedrock_invoke_path_model_id_sigv4_and_structured_output(model: str) -> None:
    with FakeBedrock(access_key=ACCESS_KEY, secret_key=SECRET_KEY) as fake:
        reply = _bedrock_judge(fake, model).judge(_claims())
    assert _verdicts(reply) == [("supported", QUOTE)]
    (request,) = fake.invocations()
    assert request.path == f"/model/{model}/invoke"  # the model id in the path, ':' as is
    auth = request.headers["Authorization"]
    assert auth.startswith(f"AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/") and "/us-east-1/bedrock/aws4_request" in auth
    assert "X-Amz-Date" in request.headers and "x-api-key" not in {k.lower() for k in request.headers}
    body = request.json()
    assert "model" not in body and body["anthropic_version"]
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert fake.invoked == [{"model_id": model, "region": "us-east-1", "access_key": ACCESS_KEY, "bearer": False,
                             "session_token": None}]  # the signature checked out at the fake  # fmt: skip


def test_bedrock_session_token_is_sent_and_a_bad_signature_is_refused_once_not_retried(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_SESSION_TOKEN", "fake-session-token")
    with FakeBedrock(access_key=ACCESS_KEY, secret_key=SECRET_KEY) as fake:
        _bedrock_judge(fake).judge(_claims())
        assert fake.invoked[-1]["session_token"] == "fake-session-token"
    with FakeBedrock(access_key=ACCESS_KEY, secret_key="another-secret") as wrong:
        judge = _bedrock_judge(wrong)
        with pytest.raises(JudgeError, match=r"after 1 attempt\(s\): HTTP 403") as caught:
            judge.judge(_claims())
    assert "fake-secret-key" not in str(caught.value) and wrong.invoked == []


def test_bedrock_api_key_goes_as_a_bearer_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key-1")
    with FakeBedrock(api_keys=("bedrock-api-key-1",)) as fake:
        _bedrock_judge(fake).judge(_claims())
    assert fake.invocations()[0].headers["Authorization"] == "Bearer bedrock-api-key-1"
    assert fake.invoked[0]["bearer"] is True


def test_bedrock_retries_throttling_with_retry_after_and_5xx_then_answers() -> None:
    with FakeBedrock(access_key=ACCESS_KEY, secret_key=SECRET_KEY) as fake:
        fake.faults.add("/model/", bedrock.throttled(retry_after=0.3), bedrock.internal_error(), bedrock.unavailable())
        judge = _bedrock_judge(fake, wait_max=5.0)
        started = time.monotonic()
        reply = judge.judge(_claims())
        waited = time.monotonic() - started
    assert _verdicts(reply) == [("supported", QUOTE)]
    assert reply.attempts == 4 and judge.usage.retries == 3 and judge.usage.calls == 1
    assert [f.status for _, f in fake.faults.injected] == [429, 500, 503]
    assert waited >= 0.3  # the Retry-After the throttled answer named, not the 1 ms backoff
    assert len(fake.invocations()) == 4  # each attempt signed anew (the fake checked every signature)


def test_bedrock_gives_up_after_the_bounded_attempts_with_one_line() -> None:
    with FakeBedrock(access_key=ACCESS_KEY, secret_key=SECRET_KEY) as fake:
        fake.faults.add("/model/", *[bedrock.unavailable() for _ in range(4)])
        judge = _bedrock_judge(fake)
        with pytest.raises(JudgeError, match=r"grounding judge call failed after 4 attempt\(s\): HTTP 503"):
            judge.judge(_claims())
    assert judge.usage.failures == 1 and judge.usage.calls == 0 and judge.usage.cost_usd == 0


def test_bedrock_cost_is_priced_from_the_bedrock_table_global_and_regional() -> None:
    with FakeBedrock(access_key=ACCESS_KEY, secret_key=SECRET_KEY) as fake:
        global_judge = _bedrock_judge(fake, "global.anthropic.claude-sonnet-4-5-20250929-v1:0")
        regional = _bedrock_judge(fake, "us.anthropic.claude-sonnet-4-5-20250929-v1:0")
        in_region = _bedrock_judge(fake, "anthropic.claude-haiku-4-5-20251001-v1:0")
        replies = [j.judge(_claims()) for j in (global_judge, regional, in_region)]
    assert global_judge.usage.priced and global_judge.usage.cost_usd == pytest.approx(_cost(replies[0], 3.0, 15.0))
    assert regional.usage.cost_usd == pytest.approx(_cost(replies[1], 3.3, 16.5))  # a geographic profile: +10%
    assert in_region.usage.cost_usd == pytest.approx(_cost(replies[2], 1.1, 5.5))
    assert replies[0].input_tokens > 0 and replies[0].output_tokens > 0


def test_bedrock_application_profile_arn_is_cost_unknown_never_zero() -> None:
    arn = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123"
    with FakeBedrock(access_key=ACCESS_KEY, secret_key=SECRET_KEY) as fake:
        judge = _bedrock_judge(fake, arn)
        judge.judge(_claims())
    assert fake.invoked[0]["model_id"] == arn
    assert not judge.usage.priced and "cost unknown" in judge.usage.line()


def test_bedrock_identity_keys_the_cache_apart_from_anthropic() -> None:
    with FakeBedrock(access_key=ACCESS_KEY, secret_key=SECRET_KEY) as fake:
        judge = _bedrock_judge(fake)
        cached = CachingJudge(judge, MemoryJudgeCache())
        first, second = cached.judge(_claims()), cached.judge(_claims())
    assert judge.model == "bedrock:global.anthropic.claude-sonnet-4-6" and cached.model == judge.model
    assert len(fake.invocations()) == 1 and second.cached and second.output == first.output
    assert (
        first.key == _claims().key("bedrock:global.anthropic.claude-sonnet-4-6") != _claims().key("claude-sonnet-4-6")
    )


def test_bedrock_missing_region_credentials_or_a_wrong_model_id_is_one_clear_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ConfigError, match=r"no AWS region for Bedrock: set \[judge\] region"):
        AnthropicJudge(provider="bedrock", model="global.anthropic.claude-sonnet-4-6")
    with pytest.raises(ConfigError, match="is an Anthropic API id; Bedrock names models like"):
        AnthropicJudge(provider="bedrock", model="claude-sonnet-4-6", region="us-east-1")
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(ConfigError, match="no AWS credentials for Bedrock: set AWS_ACCESS_KEY_ID") as caught:
        AnthropicJudge(provider="bedrock", region="us-east-1")
    assert SECRET_KEY not in str(caught.value)


# --- Vertex ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "region"), [("claude-sonnet-4-5@20250929", "us-east5"), ("claude-sonnet-4-6", "global")]
)
def test_vertex_raw_predict_path_model_id_bearer_token_and_structured_output(model: str, region: str) -> None:
    with FakeVertex(tokens=(TOKEN,)) as fake:
        reply = _vertex_judge(fake, model, region).judge(_claims())
    assert _verdicts(reply) == [("supported", QUOTE)]
    (request,) = fake.predictions()
    assert request.path.startswith(f"/v1/projects/acme-evals/locations/{region}/publishers/anthropic/models/")
    assert request.path.endswith(":rawPredict")
    assert request.headers["Authorization"] == f"Bearer {TOKEN}"
    body = request.json()
    assert "model" not in body and body["anthropic_version"]
    assert body["output_config"]["format"]["type"] == "json_schema"
    assert fake.invoked == [{"project": "acme-evals", "region": region, "model": model, "token": TOKEN}]


def test_vertex_unknown_token_is_refused_once_not_retried() -> None:
    with FakeVertex(tokens=("ya29.another",)) as fake:
        judge = _vertex_judge(fake)
        with pytest.raises(JudgeError, match=r"after 1 attempt\(s\): HTTP 401"):
            judge.judge(_claims())
    assert fake.invoked == []


def test_vertex_retries_resource_exhausted_with_retry_after_and_5xx_then_answers() -> None:
    with FakeVertex(tokens=(TOKEN,)) as fake:
        fake.faults.add("/v1/projects/", vertex.resource_exhausted(retry_after=0.3), vertex.internal(),
                        vertex.unavailable())  # fmt: skip
        judge = _vertex_judge(fake, wait_max=5.0)
        started = time.monotonic()
        reply = judge.judge(_claims())
        waited = time.monotonic() - started
    assert _verdicts(reply) == [("supported", QUOTE)]
    assert reply.attempts == 4 and judge.usage.retries == 3 and judge.usage.calls == 1
    assert [f.status for _, f in fake.faults.injected] == [429, 500, 503]
    assert waited >= 0.3


def test_vertex_cost_is_priced_from_the_vertex_table_global_and_regional() -> None:
    with FakeVertex(tokens=(TOKEN,)) as fake:
        on_global = _vertex_judge(fake, "claude-haiku-4-5@20251001", "global")
        regional = _vertex_judge(fake, "claude-haiku-4-5@20251001", "europe-west1")
        replies = [j.judge(_claims()) for j in (on_global, regional)]
    assert on_global.model == "vertex:global:claude-haiku-4-5@20251001"
    assert regional.model == "vertex:europe-west1:claude-haiku-4-5@20251001"
    assert on_global.usage.cost_usd == pytest.approx(_cost(replies[0], 1.0, 5.0))
    assert regional.usage.cost_usd == pytest.approx(_cost(replies[1], 1.1, 5.5))  # a regional endpoint: +10%
    assert on_global.usage.cost_usd > 0


def _service_account(path: Path, token_uri: str) -> None:
    """A service-account key file (a fresh RSA key) whose ``token_uri`` is the fake's token endpoint."""
    pytest.importorskip("cryptography", reason="signing a service account's JWT needs cryptography")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    path.write_text(json.dumps({
        "type": "service_account", "project_id": "adc-project", "private_key_id": "k1",
        "private_key": pem.decode(), "client_email": "judge@adc-project.iam.gserviceaccount.com",
        "client_id": "1", "token_uri": token_uri,
    }))  # fmt: skip


def test_vertex_application_default_credentials_mint_the_token_at_the_token_uri(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("google.auth", reason="the [vertex] extra (google-auth) is not installed")
    with FakeVertex(tokens=()) as fake:
        _service_account(tmp_path / "sa.json", fake.token_uri)
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "sa.json"))
        judge = _judge(provider="vertex", model="claude-sonnet-4-6", region="global", base_url=f"{fake.url}/v1")
        judge.judge(_claims())
        judge.judge(JudgeRequest(load_rubric("grounding"), CONTENT + " ", Judgement))
    (grant,) = fake.token_grants  # one token for both calls
    assert grant["iss"] == "judge@adc-project.iam.gserviceaccount.com"
    assert "cloud-platform" in grant["scope"]
    assert [i["project"] for i in fake.invoked] == ["adc-project"] * 2  # the project from the credentials
    assert {i["token"] for i in fake.invoked} == {"ya29.minted-1"}


def test_vertex_missing_region_project_credentials_or_a_wrong_model_id_is_one_clear_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with pytest.raises(ConfigError, match=r"no Vertex AI region: set \[judge\] region"):
        AnthropicJudge(provider="vertex", api_key=TOKEN, project="p")
    with pytest.raises(ConfigError, match=r"no Google Cloud project for Vertex AI: set \[judge\] project"):
        AnthropicJudge(provider="vertex", api_key=TOKEN, region="global")
    with pytest.raises(ConfigError, match="is not a Vertex AI id"):
        AnthropicJudge(provider="vertex", model="anthropic.claude-sonnet-4-6", api_key=TOKEN, region="global")
    pytest.importorskip("google.auth", reason="the [vertex] extra (google-auth) is not installed")
    with pytest.raises(ConfigError, match="no Google credentials for Vertex AI .*GOOGLE_APPLICATION_CREDENTIALS"):
        AnthropicJudge(provider="vertex", region="global", project="p")


def test_vertex_credentials_that_cannot_be_refreshed_are_a_judge_error_not_a_crash(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pytest.importorskip("google.auth", reason="the [vertex] extra (google-auth) is not installed")
    with FakeVertex(tokens=()) as fake:
        _service_account(tmp_path / "sa.json", f"{fake.url}/revoked")  # the token endpoint answers 404
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "sa.json"))
        judge = _judge(provider="vertex", model="claude-sonnet-4-6", region="global", base_url=f"{fake.url}/v1")
        with pytest.raises(JudgeError, match=r"grounding judge call failed after 1 attempt\(s\): RefreshError"):
            judge.judge(_claims())
    assert fake.predictions() == [] and judge.usage.failures == 1
