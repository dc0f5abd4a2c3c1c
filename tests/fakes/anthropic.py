"""A fake Anthropic Messages API (``POST /v1/messages``) on loopback, reached by the real ``anthropic`` SDK.

It answers structured-output requests (``output_config.format`` = ``json_schema``, as ``messages.parse`` sends)
in the exact response shape the SDK parses: a ``message`` whose text block holds the JSON, with ``usage``
(``input_tokens``, ``output_tokens``, ``cache_creation_input_tokens``, ``cache_read_input_tokens``). Verdicts come
from a small deterministic oracle (term overlap and numbers against the delimited documents) unless a test sets
``tamper`` to rewrite them. Error helpers return faults in Anthropic's error shape (429 with retry-after, 529, 500).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Callable
from typing import Any

from tests.fakes.base import FakeServer, Fault, Request, Response

_TOKEN = re.compile(r"\w+|[^\w\s]")
_WORD = re.compile(r"[a-z0-9]+(?:[.,][0-9]+)*")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_SENTENCE = re.compile(r'<sentence n="(\d+)">(.*?)</sentence>', re.S)
_DOCUMENT = re.compile(r'<document id="(D\d+)"[^>]*>\n(.*?)\n</document>', re.S)
_STOP = set(
    "a an and are as at be by for from has have in is it of on or that the this to was were with you your".split()
)

Tamper = Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]  # (output, request body) → output


def _error(status: int, kind: str, message: str, **headers: str) -> Fault:
    return Fault.http(status, {"type": "error", "error": {"type": kind, "message": message}}, **headers)


def rate_limited(retry_after: float) -> Fault:
    return _error(
        429,
        "rate_limit_error",
        "Number of request tokens has exceeded your rate limit.",
        **{"retry-after": str(retry_after)},
    )


def overloaded() -> Fault:
    return _error(529, "overloaded_error", "Overloaded")


def server_error() -> Fault:
    return _error(500, "api_error", "Internal server error")


def tokens(text: str) -> int:
    return len(_TOKEN.findall(text))


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "").rstrip(".") for n in _NUMBER.findall(text)}


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n", text) if s.strip() and s.strip() != "[…]"]


def oracle_judgement(content: str) -> dict[str, Any]:
    """One claim per answer sentence (markers dropped); per claim, every document with a sentence sharing at least
    half its words: ``supported`` (quoting that sentence) when the claim's numbers are in it, else ``contradicted``."""
    docs = [(d, s) for d, text in _DOCUMENT.findall(content) for s in _sentences(text)]
    claims = []
    for n, sentence in _SENTENCE.findall(content):
        text = re.sub(r"\s*\[\d+(?:\s*,\s*\d+)*\]", "", sentence).strip()
        if not text:
            continue
        words, numbers = _words(text), _numbers(text)
        evidence = []
        for doc_id in dict.fromkeys(d for d, _ in docs):
            best = max((s for d, s in docs if d == doc_id), key=lambda s: len(words & _words(s)))
            if len(words & _words(best)) / max(1, len(words)) >= 0.5:
                verdict = "supported" if numbers <= _numbers(best) else "contradicted"
                evidence.append({"doc_id": doc_id, "verdict": verdict, "quote": best})
        claims.append({"sentence": int(n), "text": text, "evidence": evidence, "reason": "oracle"})
    return {"claims": claims}


class FakeAnthropic(FakeServer):
    """``POST /v1/messages`` with structured output; counts requests, tokens and prompt-cache reads."""

    def __init__(self, latency: float = 0.0, tamper: Tamper | None = None) -> None:
        super().__init__(latency)
        self.tamper = tamper
        self.cached_prefixes: set[str] = set()
        self._ids = itertools.count(1)

    def __enter__(self) -> FakeAnthropic:
        self.start()
        return self

    def messages(self) -> list[Request]:
        return self.requests_to("/v1/messages", "POST")

    def handle(self, request: Request) -> Response:
        if request.path != "/v1/messages" or request.method != "POST":
            return Response(404, {"type": "error", "error": {"type": "not_found_error", "message": request.path}})
        headers = {k.lower(): v for k, v in request.headers.items()}
        key = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ").strip()
        if not key or not headers.get("anthropic-version"):  # SDK 2.x sends the key as a Bearer token
            return Response(401, {"type": "error", "error": {"type": "authentication_error", "message": "no key"}})
        body = request.json()
        fmt = (body.get("output_config") or {}).get("format") or {}
        if fmt.get("type") != "json_schema" or "schema" not in fmt:
            msg = "expected output_config.format json_schema"
            return Response(400, {"type": "error", "error": {"type": "invalid_request_error", "message": msg}})
        system = "".join(block["text"] for block in body.get("system", []))
        blocks = body["messages"][0]["content"]
        content = "".join(block["text"] for block in blocks)
        fields = set(fmt["schema"].get("properties") or {})
        if "labels" in fields:  # the surface oracle: every item neither supports nor contradicts
            output: dict[str, Any] = {"labels": []}
        elif "match" in fields:  # the semantic match: a variant is not accepted
            output = {"match": False, "reason": "fake: not the same answer"}
        else:
            output = oracle_judgement(content)
        if self.tamper is not None:
            output = self.tamper(output, body)
        cacheable = system + "".join(b["text"] for b in blocks if b.get("cache_control"))
        cached_part = tokens(cacheable) if any(b.get("cache_control") for b in body.get("system", [])) else 0
        total = tokens(system) + tokens(content) + tokens(json.dumps(fmt["schema"]))
        hit = cacheable in self.cached_prefixes
        self.cached_prefixes.add(cacheable)
        text = json.dumps(output)
        return Response(
            200,
            {
                "id": f"msg_fake_{next(self._ids):04d}",
                "type": "message",
                "role": "assistant",
                "model": body["model"],
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": {
                    "input_tokens": total - cached_part,
                    "output_tokens": tokens(text),
                    "cache_creation_input_tokens": 0 if hit else cached_part,
                    "cache_read_input_tokens": cached_part if hit else 0,
                },
            },
        )
