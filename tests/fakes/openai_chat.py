"""A fake OpenAI Chat Completions API (``POST …/chat/completions``) on loopback, reached by the real ``openai`` SDK.

Replies are built as the SDK's own ``openai.types.chat.ChatCompletion`` (and dumped to JSON), so their shape is the
published API's: ``choices[0].message.content`` holds the JSON verdicts, ``usage`` has ``prompt_tokens`` (cached part
included), ``completion_tokens`` and ``prompt_tokens_details.cached_tokens``. Errors have the API's shape
(``{"error": {"message", "type", "param", "code"}}``).

Two kinds of server:
- OpenAI's (default): a Bearer key is required (``key``), ``response_format`` json_schema is taken and its schema
  says which answer to give;
- a "vLLM-like" one (``key=None, response_format=False``): no key asked, and a ``response_format`` is refused with a
  400 naming it; the answer's schema is read from the prompt (a JSON schema object ending the system message).

Verdicts come from the Anthropic fake's oracle (``oracle_judgement``), so both fakes answer the same verdicts.
Faults (429 + Retry-After, 500, timeouts, truncated bodies) are queued on ``faults`` as for every fake.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from openai.types.chat import ChatCompletion

from tests.fakes.anthropic import Tamper, oracle_judgement, tokens
from tests.fakes.base import FakeServer, Fault, Request, Response

PATH = "/v1/chat/completions"


def error_body(message: str, kind: str, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def rate_limited(retry_after: float) -> Fault:
    body = error_body("Rate limit reached for requests", "requests", None, "rate_limit_exceeded")
    return Fault.http(429, body, **{"retry-after": str(retry_after)})


def server_error() -> Fault:
    return Fault.http(500, error_body("The server had an error while processing your request.", "server_error"))


def schema_in(text: str) -> dict[str, Any]:
    """The JSON schema object that ends ``text`` (the prompt of a server without structured output); {} if none."""
    decoder = json.JSONDecoder()
    for at in (i for i, ch in enumerate(text) if ch == "{"):
        try:
            value, end = decoder.raw_decode(text, at)
        except ValueError:
            continue
        if isinstance(value, dict) and "properties" in value and not text[end:].strip():
            return value
    return {}


class FakeOpenAI(FakeServer):
    """``POST /v1/chat/completions``; counts requests and prompt-cache hits (a repeated system message)."""

    def __init__(
        self, *, key: str | None = "test-key", response_format: bool = True, tamper: Tamper | None = None
    ) -> None:
        super().__init__()
        self.key, self.response_format, self.tamper = key, response_format, tamper
        self.seen_prefixes: set[str] = set()
        self._ids = itertools.count(1)

    def __enter__(self) -> FakeOpenAI:
        self.start()
        return self

    def completions(self) -> list[Request]:
        return self.requests_to(PATH, "POST")

    def handle(self, request: Request) -> Response:
        if request.path != PATH or request.method != "POST":
            return Response(404, error_body(f"Invalid URL (POST {request.path})", "invalid_request_error"))
        auth = {k.lower(): v for k, v in request.headers.items()}.get("authorization", "")
        if self.key is not None and auth != f"Bearer {self.key}":
            return Response(401, error_body("Incorrect API key provided.", "invalid_request_error", None,
                                            "invalid_api_key"))  # fmt: skip
        return self.answer(request)

    def answer(self, request: Request) -> Response:
        """The reply to an authorized ``create`` request: its verdicts, or a 400 naming ``response_format``."""
        body = request.json()
        fmt = body.get("response_format")
        if fmt is not None and not self.response_format:
            return Response(400, error_body("response_format is not supported by this server",
                                            "invalid_request_error", "response_format"))  # fmt: skip
        messages = body["messages"]
        system = "".join(m["content"] for m in messages if m["role"] == "system")
        user = "".join(m["content"] for m in messages if m["role"] == "user")
        if fmt is not None:
            if fmt.get("type") != "json_schema" or not fmt["json_schema"].get("strict"):
                return Response(400, error_body("expected a strict json_schema", "invalid_request_error",
                                                "response_format"))  # fmt: skip
            schema = fmt["json_schema"]["schema"]
        else:
            schema = schema_in(system)
        fields = set(schema.get("properties") or {})
        if "labels" in fields:  # the surface oracle: every item neither supports nor contradicts
            output: dict[str, Any] = {"labels": []}
        elif "match" in fields:  # the semantic match: a variant is not accepted
            output = {"match": False, "reason": "fake: not the same answer"}
        elif "claims" in fields:
            output = oracle_judgement(user)
        else:
            return Response(200, self._completion(body, "I cannot tell which JSON you want.", system, user))
        if self.tamper is not None:
            output = self.tamper(output, body)
        return Response(200, self._completion(body, json.dumps(output), system, user))

    def _completion(self, body: dict[str, Any], text: str, system: str, user: str) -> dict[str, Any]:
        cached = tokens(system) if system in self.seen_prefixes else 0
        self.seen_prefixes.add(system)
        prompt = tokens(system) + tokens(user)
        completion = ChatCompletion.model_validate(
            {
                "id": f"chatcmpl-fake{next(self._ids):04d}",
                "object": "chat.completion",
                "created": 1_764_000_000,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "logprobs": None,
                        "message": {"role": "assistant", "content": text, "refusal": None},
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": tokens(text),
                    "total_tokens": prompt + tokens(text),
                    "prompt_tokens_details": {"cached_tokens": cached},
                },
            }  # fmt: skip
        )
        return completion.model_dump(mode="json", exclude_unset=True)
