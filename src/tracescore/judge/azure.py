"""The judge on Azure OpenAI: ``judge/openai.py``'s judge on the ``openai`` SDK's ``AzureOpenAI`` client.

``[judge] endpoint`` (else ``AZURE_OPENAI_ENDPOINT``: ``https://<resource>.openai.azure.com``), ``deployment`` (the
model deployment: what is sent as ``model`` and put in the URL, ``/openai/deployments/<deployment>/chat/completions
?api-version=<api_version>``) and ``api_version`` (else ``OPENAI_API_VERSION``, else ``API_VERSION``, the GA version
that takes a strict ``response_format`` json_schema). The key: ``AZURE_OPENAI_API_KEY`` (sent as ``api-key``), else
an Entra ID token from ``azure-identity``'s ``DefaultAzureCredential`` (``pip install 'tracescore[azure]'``, sent
as ``Authorization: Bearer``). The judge's identity is ``azure-openai:<deployment>``: a deployment is named by its
team, so it has no list price; ``[judge.price]`` prices it.
"""

from __future__ import annotations

import os
from typing import Any

from tracescore.errors import ConfigError
from tracescore.judge.calling import MAX_ATTEMPTS, TIMEOUT_SECONDS, WAIT_INITIAL, WAIT_MAX
from tracescore.judge.openai import OpenAIJudge, sdk
from tracescore.judge.providers import ProviderSettings
from tracescore.judge.registry import judge_provider
from tracescore.judge.request import MAX_TOKENS

API_VERSION = "2024-10-21"
ENTRA_SCOPE = "https://cognitiveservices.azure.com/.default"


def _entra_token() -> tuple[Any, tuple[type[BaseException], ...]]:
    """A bearer token provider over ``DefaultAzureCredential`` and the errors its tokens can raise; ConfigError
    when azure-identity is not installed (and so there is neither key nor token)."""
    try:
        from azure.identity import (  # type: ignore[import-not-found,unused-ignore]
            DefaultAzureCredential,
            get_bearer_token_provider,
        )
    except ImportError as exc:
        raise ConfigError(
            f"no Azure OpenAI key: set AZURE_OPENAI_API_KEY, or use an Entra ID token with azure-identity ({exc}):"
            " pip install 'tracescore[azure]' (or run with --no-judge)"
        ) from None
    try:
        from azure.core.exceptions import AzureError  # type: ignore[import-not-found,unused-ignore]

        errors: tuple[type[BaseException], ...] = (AzureError,)
    except ImportError:  # pragma: no cover - azure-identity depends on azure-core
        errors = ()
    return get_bearer_token_provider(DefaultAzureCredential(), ENTRA_SCOPE), errors


class AzureOpenAIJudge(OpenAIJudge):
    """``OpenAIJudge`` on ``openai.AzureOpenAI``: ``model`` is the deployment; ``self.model`` is
    ``azure-openai:<deployment>``. ``api_key``: else ``AZURE_OPENAI_API_KEY``, else an Entra ID token."""

    def __init__(  # noqa: PLR0913 - the client's settings and the retry layer's, as OpenAIJudge's
        self,
        *,
        deployment: str,
        endpoint: str | None = None,
        api_version: str | None = None,
        api_key: str | None = None,
        structured: bool = True,
        max_attempts: int = MAX_ATTEMPTS,
        wait_initial: float = WAIT_INITIAL,
        wait_max: float = WAIT_MAX,
        timeout: float = TIMEOUT_SECONDS,
        max_tokens: int = MAX_TOKENS,
        http_client: Any = None,
    ) -> None:
        openai = sdk("azure-openai")
        endpoint = endpoint or os.environ.get("AZURE_OPENAI_ENDPOINT") or None
        if not endpoint:
            raise ConfigError(
                "no Azure OpenAI endpoint: set [judge] endpoint (e.g. 'https://my-resource.openai.azure.com') or"
                " AZURE_OPENAI_ENDPOINT"
            )
        version = api_version or os.environ.get("OPENAI_API_VERSION") or API_VERSION
        key = api_key or os.environ.get("AZURE_OPENAI_API_KEY") or None
        token, token_errors = (None, ()) if key is not None else _entra_token()
        client = openai.AzureOpenAI(
            azure_endpoint=endpoint,
            api_version=version,
            api_key=key,
            azure_ad_token_provider=token,
            timeout=timeout,
            max_retries=0,  # one retry layer: ours
            http_client=http_client,
        )
        self._start(client, deployment, f"azure-openai:{deployment}", own_api=True, structured=structured,
                    max_tokens=max_tokens, failures=(openai.OpenAIError, *token_errors), max_attempts=max_attempts,
                    wait_initial=wait_initial, wait_max=wait_max)  # fmt: skip


def _deployment(settings: ProviderSettings) -> str:
    """The judge's model: its deployment, which has no default."""
    if not settings.deployment:
        raise ConfigError('[judge] provider = "azure-openai" needs [judge] deployment: the model deployment\'s name')
    return settings.deployment


@judge_provider(
    default_model=_deployment,
    needs="AZURE_OPENAI_API_KEY, or an Entra ID token through azure-identity (DefaultAzureCredential)",
    env=("AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "OPENAI_API_VERSION"),
    sdk="openai",
    install="pip install 'tracescore[azure]'",
    keys=("endpoint", "deployment", "api_version", "structured"),
    identity=lambda settings, model: f"azure-openai:{settings.deployment or model}",
)
def azure_openai_judge(settings: ProviderSettings, model: str, **options: Any) -> AzureOpenAIJudge:
    """Azure OpenAI: a model deployment of an Azure OpenAI resource ([judge] endpoint, deployment, api_version),
    through the openai SDK's AzureOpenAI client."""
    return AzureOpenAIJudge(deployment=settings.deployment or model, endpoint=settings.endpoint,
                            api_version=settings.api_version, structured=settings.structured, **options)  # fmt: skip
