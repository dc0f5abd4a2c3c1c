"""A fake Amazon Bedrock runtime on loopback, reached by the real ``anthropic`` SDK's ``AnthropicBedrock`` client.

Written from AWS's published Bedrock runtime API and Signature Version 4:

- ``POST /model/{modelId}/invoke`` (``modelId``: a model id such as ``anthropic.claude-sonnet-4-5-20250929-v1:0``
  or an inference profile such as ``global.anthropic.claude-sonnet-4-6``); the body is Anthropic's Messages body
  with ``anthropic_version`` and without ``model``; the answer is the Messages API's message.
- Authentication: ``Authorization: AWS4-HMAC-SHA256 Credential=<key id>/<yyyymmdd>/<region>/bedrock/aws4_request,
  SignedHeaders=..., Signature=...`` with ``X-Amz-Date`` (and ``X-Amz-Security-Token`` for temporary
  credentials); the fake recomputes the signature from the canonical request with the secret it was given and
  answers 403 ``InvalidSignatureException`` when it differs. A Bedrock API key comes as ``Authorization: Bearer``.
- Errors in Bedrock's shape: a JSON ``{"message": ...}`` with the ``x-amzn-ErrorType`` header
  (``ThrottlingException`` 429, ``InternalServerException`` 500, ``ServiceUnavailableException`` 503).

The verdicts are the Anthropic fake's oracle (``tests/fakes/anthropic.py``), so a judged run means the same here.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import replace
from typing import Any
from urllib.parse import quote, unquote

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.base import Fault, Request, Response

_PATH = re.compile(r"^/model/([^/]+)/invoke$")
_AUTH = re.compile(r"^AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request, "
                   r"SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$")  # fmt: skip


def _error(status: int, kind: str, message: str, **headers: str) -> Fault:
    return Fault.http(status, {"message": message}, **{"x-amzn-ErrorType": kind} | headers)


def throttled(retry_after: float | None = None) -> Fault:
    """429 ThrottlingException (Bedrock names no wait itself; ``retry_after`` adds a Retry-After header)."""
    extra = {} if retry_after is None else {"Retry-After": str(retry_after)}
    return _error(429, "ThrottlingException", "Too many requests, please wait before trying again.", **extra)


def internal_error() -> Fault:
    return _error(500, "InternalServerException", "The server encountered an internal error.")


def unavailable() -> Fault:
    return _error(503, "ServiceUnavailableException", "The service is temporarily unavailable.")


def _deny(status: int, kind: str, message: str) -> Response:
    return Response(status, {"message": message}, {"x-amzn-ErrorType": kind})


class FakeBedrock(FakeAnthropic):
    """Bedrock's InvokeModel for Anthropic models; records each call's model id, region and key id."""

    def __init__(
        self,
        *,
        access_key: str = "AKIDFAKEEXAMPLE",
        secret_key: str = "fake-secret-key",
        region: str = "us-east-1",
        api_keys: tuple[str, ...] = (),
        latency: float = 0.0,
    ) -> None:
        super().__init__(latency)
        self.access_key, self.secret_key, self.region, self.api_keys = access_key, secret_key, region, api_keys
        self.invoked: list[dict[str, Any]] = []  # per answered call: model_id, region, access_key, bearer

    def __enter__(self) -> FakeBedrock:
        self.start()
        return self

    def invocations(self) -> list[Request]:
        return self.requests_to("/model/", "POST")

    def handle(self, request: Request) -> Response:
        match = _PATH.match(request.path)
        if request.method != "POST" or match is None:
            return _deny(404, "ResourceNotFoundException", f"no such operation: {request.method} {request.path}")
        headers = {k.lower(): v for k, v in request.headers.items()}
        who = self._authenticate(request, headers)
        if isinstance(who, Response):
            return who
        body = request.json()
        if "model" in body or not body.get("anthropic_version"):
            return _deny(400, "ValidationException", "the body takes anthropic_version and no model")
        model_id = unquote(match.group(1))
        version = body.pop("anthropic_version")
        inner = replace(
            request,
            path="/v1/messages",
            headers={"x-api-key": "bedrock", "anthropic-version": version},
            body=json.dumps(body | {"model": model_id}).encode(),
        )
        response = super().handle(inner)
        if response.status != 200:
            return _deny(400, "ValidationException", str(response.body))
        self.invoked.append({"model_id": model_id, "region": self.region} | who)
        return response

    def _authenticate(self, request: Request, headers: dict[str, str]) -> dict[str, Any] | Response:
        auth = headers.get("authorization", "")
        if auth.startswith("Bearer "):
            if auth.removeprefix("Bearer ") in self.api_keys:
                return {"access_key": None, "bearer": True}
            return _deny(403, "UnrecognizedClientException", "The security token included in the request is invalid.")
        match = _AUTH.match(auth)
        if match is None or "x-amz-date" not in headers:
            return _deny(403, "MissingAuthenticationTokenException", "Missing Authentication Token")
        key_id, day, region, service, signed, signature = match.groups()
        if key_id != self.access_key:
            return _deny(403, "UnrecognizedClientException", "The security token included in the request is invalid.")
        if region != self.region or service != "bedrock":
            return _deny(403, "InvalidSignatureException", f"credential scope {region}/{service} is wrong")
        if signature != self._signature(request, headers, signed.split(";"), day, headers["x-amz-date"]):
            return _deny(403, "InvalidSignatureException", "The request signature we calculated does not match.")
        return {"access_key": key_id, "bearer": False, "session_token": headers.get("x-amz-security-token")}

    def _signature(self, request: Request, headers: dict[str, str], signed: list[str], day: str, when: str) -> str:
        """SigV4: canonical request → string to sign → HMAC chain of date, region, service, ``aws4_request``."""
        query = "&".join(sorted(f"{k}={v}" for k, values in request.query.items() for v in values))
        canonical = "\n".join([
            request.method,
            quote(request.path, safe="/~"),
            query,
            "".join(f"{name}:{' '.join(headers.get(name, '').split())}\n" for name in signed),
            ";".join(signed),
            hashlib.sha256(request.body).hexdigest(),
        ])  # fmt: skip
        scope = f"{day}/{self.region}/bedrock/aws4_request"
        to_sign = "\n".join(["AWS4-HMAC-SHA256", when, scope, hashlib.sha256(canonical.encode()).hexdigest()])
        key = f"AWS4{self.secret_key}".encode()
        for part in (day, self.region, "bedrock", "aws4_request"):
            key = hmac.new(key, part.encode(), hashlib.sha256).digest()
        return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
