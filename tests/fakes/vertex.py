"""A fake Vertex AI endpoint for Anthropic models on loopback, reached by the real ``anthropic`` SDK's
``AnthropicVertex`` client, and a fake Google OAuth 2.0 token endpoint for Application Default Credentials.

Written from Google's published Vertex AI API for partner models and its OAuth 2.0 service-account flow:

- ``POST /v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:rawPredict`` (``model``: a
  Vertex id such as ``claude-sonnet-4-5@20250929``); the body is Anthropic's Messages body with
  ``anthropic_version`` and without ``model``; the answer is the Messages API's message.
- Authentication: ``Authorization: Bearer <OAuth 2.0 access token>``; an unknown token is 401 ``UNAUTHENTICATED``.
- Errors in Google's shape: ``{"error": {"code", "message", "status"}}`` (429 ``RESOURCE_EXHAUSTED``, 500
  ``INTERNAL``, 503 ``UNAVAILABLE``).
- ``POST /token`` (a service account's ``token_uri``): ``grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer``
  with a signed JWT ``assertion`` (``aud`` Google's token endpoint, ``scope``, ``iss`` the account); answers a
  fresh access token, which the rawPredict route then accepts.

The verdicts are the Anthropic fake's oracle (``tests/fakes/anthropic.py``), so a judged run means the same here.
"""

from __future__ import annotations

import base64
import itertools
import json
import re
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qs, unquote

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.base import Fault, Request, Response

_PATH = re.compile(r"^/v1/projects/([^/]+)/locations/([^/]+)/publishers/anthropic/models/([^/]+):rawPredict$")
_JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
_AUDIENCE = "https://oauth2.googleapis.com/token"  # a service account's JWT names Google's token endpoint as its aud


def _status(code: int, status: str, message: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "status": status}}


def resource_exhausted(retry_after: float | None = None) -> Fault:
    """429 RESOURCE_EXHAUSTED (quota); ``retry_after`` adds a Retry-After header."""
    extra = {} if retry_after is None else {"Retry-After": str(retry_after)}
    body = _status(429, "RESOURCE_EXHAUSTED", "Quota exceeded for aiplatform.googleapis.com/online_prediction_requests")
    return Fault.http(429, body, **extra)


def internal() -> Fault:
    return Fault.http(500, _status(500, "INTERNAL", "Internal error encountered."))


def unavailable() -> Fault:
    return Fault.http(503, _status(503, "UNAVAILABLE", "The service is currently unavailable."))


def _claims(assertion: str) -> dict[str, Any] | None:
    parts = assertion.split(".")
    if len(parts) != 3:
        return None
    try:
        claims: dict[str, Any] = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except ValueError:
        return None
    return claims


class FakeVertex(FakeAnthropic):
    """Vertex AI's rawPredict for Anthropic models; records each call's project, region, model and token."""

    def __init__(self, *, tokens: tuple[str, ...] = ("ya29.fake-access-token",), latency: float = 0.0) -> None:
        super().__init__(latency)
        self.tokens = set(tokens)
        self.invoked: list[dict[str, Any]] = []  # per answered call: project, region, model, token
        self.token_grants: list[dict[str, Any]] = []  # per /token exchange: the JWT's claims
        self._minted = itertools.count(1)

    def __enter__(self) -> FakeVertex:
        self.start()
        return self

    @property
    def token_uri(self) -> str:
        return f"{self.url}/token"

    def predictions(self) -> list[Request]:
        return self.requests_to("/v1/projects/", "POST")

    def handle(self, request: Request) -> Response:
        if request.method == "POST" and request.path == "/token":
            return self._token(request)
        match = _PATH.match(request.path)
        if request.method != "POST" or match is None:
            return Response(404, _status(404, "NOT_FOUND", f"{request.method} {request.path} not found"))
        headers = {k.lower(): v for k, v in request.headers.items()}
        token = headers.get("authorization", "").removeprefix("Bearer ").strip()
        if not headers.get("authorization", "").startswith("Bearer ") or token not in self.tokens:
            return Response(401, _status(401, "UNAUTHENTICATED", "Request had invalid authentication credentials."))
        body = request.json()
        if "model" in body or not body.get("anthropic_version"):
            return Response(400, _status(400, "INVALID_ARGUMENT", "the body takes anthropic_version and no model"))
        project, region, model = (unquote(g) for g in match.groups())
        version = body.pop("anthropic_version")
        inner = replace(
            request,
            path="/v1/messages",
            headers={"x-api-key": "vertex", "anthropic-version": version},
            body=json.dumps(body | {"model": model}).encode(),
        )
        response = super().handle(inner)
        if response.status != 200:
            return Response(400, _status(400, "INVALID_ARGUMENT", str(response.body)))
        self.invoked.append({"project": project, "region": region, "model": model, "token": token})
        return response

    def _token(self, request: Request) -> Response:
        form = {k: v[0] for k, v in parse_qs(request.body.decode()).items()}
        claims = _claims(form.get("assertion", ""))
        if form.get("grant_type") != _JWT_BEARER or claims is None or claims.get("aud") != _AUDIENCE:
            return Response(400, {"error": "invalid_grant", "error_description": "bad assertion"})
        self.token_grants.append(claims)
        token = f"ya29.minted-{next(self._minted)}"
        self.tokens.add(token)
        return Response(200, {"access_token": token, "expires_in": 3600, "token_type": "Bearer"})
