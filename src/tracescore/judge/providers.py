"""Where the judge's calls go: Anthropic's API, Amazon Bedrock or Google Vertex AI, each through the ``anthropic``
SDK's own client (``Anthropic``, ``AnthropicBedrock``, ``AnthropicVertex``), credentials from their usual places.

- ``anthropic``: ``ANTHROPIC_API_KEY`` (``ANTHROPIC_BASE_URL`` to point elsewhere).
- ``bedrock``: the AWS credential chain as boto3 resolves it (``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY`` /
  ``AWS_SESSION_TOKEN``, ``AWS_PROFILE``, ``~/.aws``, an instance role) or a Bedrock API key in
  ``AWS_BEARER_TOKEN_BEDROCK``; the region from ``[judge] region``, ``AWS_REGION`` / ``AWS_DEFAULT_REGION`` or the
  profile. Requests go to ``POST /model/{model id}/invoke`` of ``bedrock-runtime.{region}.amazonaws.com``, signed
  with SigV4 (``ANTHROPIC_BEDROCK_BASE_URL`` to point elsewhere). Needs ``pip install 'tracescore[bedrock]'``.
- ``vertex``: Application Default Credentials (``GOOGLE_APPLICATION_CREDENTIALS``, ``gcloud auth
  application-default login``, the metadata server) through google-auth; the project from ``[judge] project``,
  ``ANTHROPIC_VERTEX_PROJECT_ID`` or the credentials; the region from ``[judge] region`` or ``CLOUD_ML_REGION``.
  Requests go to ``POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict``
  with a Bearer token (``ANTHROPIC_VERTEX_BASE_URL`` to point elsewhere). Needs ``pip install 'tracescore[vertex]'``.

- ``openai``: the Chat Completions API through the ``openai`` SDK (``judge/openai.py``), on OpenAI's API or any
  OpenAI-compatible server (``[judge] base_url``: vLLM, Ollama, LiteLLM, llama.cpp, LM Studio); the key from
  ``OPENAI_API_KEY`` or the variable ``[judge] api_key_env`` names, none sent when there is none and the server is
  not OpenAI's. Needs ``pip install 'tracescore[openai]'``.
- ``azure-openai``: the same judge on the SDK's ``AzureOpenAI`` client (``judge/azure.py``): ``[judge] endpoint``,
  ``deployment``, ``api_version``; ``AZURE_OPENAI_API_KEY`` or an Entra ID token (``tracescore[azure]``).

Each is an entry point of ``tracescore.judges`` (``judge/registry.py``) whose factory builds its judge; this module
holds what they share: the ``[judge]`` settings, the identities, and the Anthropic SDK's three clients.

The judge's identity (its cache key, the ``judge_model`` of its scores and calibrations, its price) is
``identity(provider, model, region)``: the model id alone for Anthropic (so existing caches and calibrations keep
their keys), ``bedrock:<model id>``, ``vertex:<region>:<model id>``, ``openai:<model>`` on OpenAI's API and
``openai:<base_url host>:<model>`` on another server (the same model name served elsewhere is another judge),
``azure-openai:<deployment>``, a plugin's ``<entry point>:<model>`` unless it says otherwise; the
Vertex region is part of it
because a regional endpoint is priced apart from the global one (on Bedrock the model id says which).

Batches (``--judge-batch``) exist on Anthropic's API (Message Batches) and OpenAI's (the Batch API,
``judge/openai_batch.py``) only: Bedrock's batch inference and Vertex's batch prediction read and write files in
S3 / Cloud Storage and are not reached through these clients, and another OpenAI-compatible server is not known to
keep OpenAI's Batch API, so ``--judge-batch`` is refused there.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import urlsplit

from tracescore.errors import ConfigError
from tracescore.judge.registry import ProviderSettings as ProviderSettings

Provider = str
"""A judge provider's entry-point name (``tracescore.judges``): ``anthropic``, ``bedrock``, ``vertex``, ``openai``,
``azure-openai`` or a plugin's."""
DEFAULT_MODELS: dict[str, str] = {  # the judge's model when none is configured: Sonnet 4.6 in each platform's id
    "anthropic": "claude-sonnet-4-6",
    "bedrock": "global.anthropic.claude-sonnet-4-6",
    "vertex": "claude-sonnet-4-6",
    "openai": "gpt-5.4",
}
OPENAI_HOST = "api.openai.com"
_CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"


def openai_host(base_url: str | None) -> str | None:
    """The host of an OpenAI-compatible server's ``base_url``; None for OpenAI's own API (or no URL)."""
    if not base_url:
        return None
    host = urlsplit(base_url).hostname or base_url
    return None if host == OPENAI_HOST else host


def identity(provider: str, model: str, region: str | None = None) -> str:
    """The judge's identity: the model id for Anthropic, ``bedrock:<model>``, ``vertex:<region>:<model>``,
    ``openai:<model>`` or ``openai:<host>:<model>`` (``region``: the server's host for openai)."""
    if provider == "anthropic":
        return model
    if provider == "vertex":
        return f"vertex:{region or 'unknown'}:{model}"
    if provider == "openai" and region:
        return f"openai:{region}:{model}"
    return f"{provider}:{model}"


def parse_identity(judge: str) -> tuple[str, str | None, str]:
    """``identity``'s inverse: (provider, region or None, model id). For openai the model is everything after
    ``openai:`` (a host-qualified id, ``<host>:<model>``, is no OpenAI model and so never in its price table; model
    names may hold colons, e.g. Ollama's ``llama3.1:8b``)."""
    head, _, rest = judge.partition(":")
    if head == "openai" and rest:
        return "openai", None, rest
    if head in ("bedrock", "azure-openai") and rest:  # an Azure deployment is its team's name: in no price table
        return head, None, rest
    if head == "vertex" and rest:
        region, _, model = rest.partition(":")
        return "vertex", region, model
    return "anthropic", None, judge


def check_model(provider: str, model: str) -> None:
    """ConfigError when ``model`` is plainly another platform's id (the fix names this platform's form)."""
    if provider == "bedrock" and model.startswith("claude-"):
        raise ConfigError(
            f"judge model {model!r} is an Anthropic API id; Bedrock names models like"
            f" 'anthropic.claude-sonnet-4-5-20250929-v1:0' or an inference profile such as"
            f" {DEFAULT_MODELS['bedrock']!r}: set [judge] model"
        )
    if provider == "vertex" and (model.startswith("anthropic.") or "." in model.split("@")[0]):
        raise ConfigError(
            f"judge model {model!r} is not a Vertex AI id; Vertex names models like 'claude-sonnet-4-5@20250929'"
            f" or {DEFAULT_MODELS['vertex']!r}: set [judge] model"
        )
    if provider == "anthropic" and (model.startswith(("anthropic.", "global.", "us.", "eu.")) or "@" in model):
        raise ConfigError(
            f'judge model {model!r} is a Bedrock or Vertex id; set [judge] provider ("bedrock" or "vertex")'
            f" or use an Anthropic id such as {DEFAULT_MODELS['anthropic']!r}"
        )


def refuse_batch(settings: ProviderSettings) -> None:
    """ConfigError for ``--judge-batch`` where no batch API is reached: Bedrock, Vertex, and an OpenAI-compatible
    server that is not OpenAI's (vLLM, Ollama, LiteLLM...: none of them is known to keep OpenAI's Batch API)."""
    provider = settings.provider
    if provider == "openai":
        host = openai_host(settings.base_url or os.environ.get("OPENAI_BASE_URL"))
        if host is not None:
            raise ConfigError(
                f"--judge-batch needs OpenAI's own Batch API; [judge] base_url is another server ({host}): run the"
                " backfill without --judge-batch"
            )
        return
    if provider in ("bedrock", "vertex"):
        raise ConfigError(
            f"--judge-batch uses Anthropic's Message Batches API, which [judge] provider = {provider!r} does not offer"
            " through its client (its batch jobs read and write files in cloud storage); run the backfill without"
            ' --judge-batch (each call is priced at the synchronous rate) or with provider = "anthropic"'
        )
    if provider != "anthropic":
        raise ConfigError(
            f"--judge-batch is built for provider 'anthropic' (Message Batches) and 'openai' (OpenAI's Batch API);"
            f" [judge] provider = {provider!r} has none here: run the backfill without --judge-batch"
        )


def auth_errors(provider: str) -> tuple[type[BaseException], ...]:
    """Exceptions a provider's credentials can raise during a call (an expired token that cannot be refreshed)."""
    if provider == "bedrock":
        from botocore.exceptions import BotoCoreError  # type: ignore[import-untyped]

        return (BotoCoreError, RuntimeError)  # the SDK raises RuntimeError when the chain resolves nothing
    if provider == "vertex":
        from google.auth.exceptions import GoogleAuthError

        return (GoogleAuthError, RuntimeError)
    return ()


def make_client(settings: ProviderSettings, *, api_key: str | None, **common: Any) -> Any:
    """The SDK client of ``settings.provider`` (``common``: base_url, timeout, http_client; retries stay ours).

    ConfigError names what is missing (the extra to install, the credentials, the region or project) and the fix.
    """
    import anthropic

    common["max_retries"] = 0
    if settings.provider == "anthropic":
        api_key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not api_key:
            raise ConfigError("no Anthropic API key: set ANTHROPIC_API_KEY (or run with --no-judge)")
        return anthropic.Anthropic(api_key=api_key, **common)
    if settings.provider == "bedrock":
        return _bedrock(settings, api_key, common)
    return _vertex(settings, api_key, common)


def _bedrock(settings: ProviderSettings, api_key: str | None, common: dict[str, Any]) -> Any:
    try:
        import boto3  # type: ignore[import-untyped]
        import botocore  # type: ignore[import-untyped]  # noqa: F401 - the SDK signs with it
    except ImportError as exc:
        raise ConfigError(
            f"[judge] provider = 'bedrock' needs boto3 and botocore ({exc}): pip install 'tracescore[bedrock]'"
        ) from None
    import anthropic

    region = settings.resolved_region()
    token = api_key or os.environ.get("AWS_BEARER_TOKEN_BEDROCK")
    if not region:
        try:
            region = boto3.Session().region_name
        except Exception:  # noqa: BLE001 - a broken profile: said below as no region
            region = None
    if not region:
        raise ConfigError("no AWS region for Bedrock: set [judge] region (e.g. 'us-east-1') or AWS_REGION")
    if token is None and boto3.Session(region_name=region).get_credentials() is None:
        raise ConfigError(
            "no AWS credentials for Bedrock: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or"
            " AWS_BEARER_TOKEN_BEDROCK (or run with --no-judge)"
        )
    return anthropic.AnthropicBedrock(aws_region=region, api_key=token, **common)


def _vertex(settings: ProviderSettings, access_token: str | None, common: dict[str, Any]) -> Any:
    import anthropic

    region = settings.resolved_region()
    if not region:
        raise ConfigError("no Vertex AI region: set [judge] region (e.g. 'global' or 'us-east5') or CLOUD_ML_REGION")
    project = settings.project or os.environ.get("ANTHROPIC_VERTEX_PROJECT_ID") or None
    credentials = None
    if access_token is None:
        credentials, found = _google_credentials()
        project = project or found
    if not project:
        raise ConfigError("no Google Cloud project for Vertex AI: set [judge] project or ANTHROPIC_VERTEX_PROJECT_ID")
    return anthropic.AnthropicVertex(
        region=region, project_id=project, access_token=access_token, credentials=credentials, **common
    )


def _google_credentials() -> tuple[Any, str | None]:
    try:
        import google.auth
        from google.auth.exceptions import GoogleAuthError
    except ImportError as exc:
        raise ConfigError(
            f"[judge] provider = 'vertex' needs google-auth for its credentials ({exc}):"
            " pip install 'tracescore[vertex]'"
        ) from None
    try:
        credentials, project = google.auth.default(scopes=[_CLOUD_PLATFORM])
    except GoogleAuthError as exc:
        raise ConfigError(
            f"no Google credentials for Vertex AI ({str(exc).splitlines()[0][:160]}): set"
            " GOOGLE_APPLICATION_CREDENTIALS or run 'gcloud auth application-default login' (or run with --no-judge)"
        ) from None
    return credentials, project
