"""A fake Azure OpenAI data-plane inference API on loopback, reached by the real ``openai`` SDK's ``AzureOpenAI``.

Written from Azure's published REST reference (learn.microsoft.com/azure/ai-services/openai/reference, "Chat
completions": ``POST {endpoint}/openai/deployments/{deployment-id}/chat/completions?api-version={api-version}``,
authenticated by an ``api-key`` header or ``Authorization: Bearer <Entra ID token>``) and the SDK's ``AzureOpenAI``
client (``openai/lib/azure.py``: the deployment from ``model`` goes into the path, the key as ``api-key``, a token
provider's token as Bearer). The body and the reply are the Chat Completions ones (``FakeOpenAI.answer``: the same
verdicts as the Anthropic fake); Azure adds ``prompt_filter_results`` and each choice's ``content_filter_results``
(its content filter's annotations), which the SDK keeps as extra fields.

Not known from the published material, so chosen here: the exact error bodies (Azure's documented shape
``{"error": {"code", "message"}}`` is used, 401 for a wrong key, 404 ``DeploymentNotFound`` for an unknown
deployment, 404 for a missing or unknown ``api-version``), the wording of a 429's message, and whether a deployment of
a given model refuses ``response_format`` with the 400 the OpenAI fake sends (``response_format=False`` says so).
"""

from __future__ import annotations

import re
from typing import Any

from tests.fakes.base import Request, Response
from tests.fakes.openai_chat import FakeOpenAI

VERSIONS = frozenset({"2024-06-01", "2024-10-21", "2025-04-01-preview"})  # GA and preview versions Azure lists
_PATH = re.compile(r"^/openai/deployments/(?P<deployment>[^/]+)/chat/completions$")
_FILTERED = {s: {"filtered": False, "severity": "safe"} for s in ("hate", "self_harm", "sexual", "violence")}


def azure_error(status: int, code: str, message: str) -> Response:
    return Response(status, {"error": {"code": code, "message": message}})


class FakeAzureOpenAI(FakeOpenAI):
    """``POST /openai/deployments/<deployment>/chat/completions?api-version=...`` for the deployments given; ``key``
    (``api-key``) or ``token`` (Bearer, an Entra ID token) is required."""

    def __init__(
        self,
        *,
        deployments: tuple[str, ...] = ("judge-gpt",),
        key: str | None = "azure-key",
        token: str | None = None,
        response_format: bool = True,
    ) -> None:
        super().__init__(key=None, response_format=response_format)
        self.deployments, self.azure_key, self.token = deployments, key, token

    def __enter__(self) -> FakeAzureOpenAI:
        self.start()
        return self

    def completions(self) -> list[Request]:
        return self.requests_to("/openai/deployments/", "POST")

    def handle(self, request: Request) -> Response:
        headers = {k.lower(): v for k, v in request.headers.items()}
        by_key = self.azure_key is not None and headers.get("api-key") == self.azure_key
        by_token = self.token is not None and headers.get("authorization") == f"Bearer {self.token}"
        if not (by_key or by_token):
            return azure_error(401, "401", "Access denied due to invalid subscription key or wrong API endpoint. Make"
                               " sure to provide a valid key for an active subscription and use a correct regional"
                               " API endpoint for your resource.")  # fmt: skip
        match = _PATH.match(request.path)
        if request.method != "POST" or match is None:
            return azure_error(404, "404", "Resource not found")
        if (request.query.get("api-version") or [""])[0] not in VERSIONS:
            return azure_error(404, "404", "Resource not found")
        if match["deployment"] not in self.deployments:
            return azure_error(404, "DeploymentNotFound", "The API deployment for this resource does not exist. If"
                               " you created the deployment within the last 5 minutes, please wait a moment and try"
                               " again.")  # fmt: skip
        reply = self.answer(request)
        if reply.status == 200 and isinstance(reply.body, dict):
            reply.body = self._filtered(reply.body)
        return reply

    @staticmethod
    def _filtered(body: dict[str, Any]) -> dict[str, Any]:
        body["prompt_filter_results"] = [{"prompt_index": 0, "content_filter_results": _FILTERED}]
        for choice in body.get("choices", []):
            choice["content_filter_results"] = _FILTERED
        return body
