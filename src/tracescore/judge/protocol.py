"""The one ``Judge`` interface: a rubric, a cacheable prefix and the variable content in; a parsed model out."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel

from tracescore.judge.pricing import reply_cost
from tracescore.judge.rubrics import Rubric


@dataclass(frozen=True)
class JudgeRequest:
    """One judge call: the rubric (system prompt), a prefix shared by the calls of one trace, and the content.

    ``output`` is the pydantic model the reply must parse into (structured output, no JSON repair).
    """

    rubric: Rubric
    content: str
    output: type[BaseModel]
    prefix: str = ""

    def key(self, model: str) -> str:
        """Content address: same model + rubric version + prefix + content + output schema → same key."""
        payload = json.dumps(
            [model, self.rubric.name, self.rubric.version, self.prefix, self.content, self.output.model_json_schema()],
            sort_keys=True,
            ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode()).hexdigest()


@dataclass
class JudgeReply:
    """A parsed reply with what it cost (zero tokens when it came from the cache)."""

    output: Any
    model: str
    key: str
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    attempts: int = 1
    cached: bool = False


@dataclass
class JudgeUsage:
    """Tokens, calls, retries, failures and estimated cost of one run's judge calls."""

    calls: int = 0
    attempts: int = 0
    retries: int = 0
    failures: int = 0
    cache_hits: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    priced: bool = True
    errors: list[str] = field(default_factory=list)

    def bill(self, reply: JudgeReply, *, discount: float = 1.0) -> None:
        """Count one reply the API billed (whether or not it then parsed): a call, its tokens and its cost."""
        self.calls += 1
        self.input_tokens += reply.input_tokens
        self.output_tokens += reply.output_tokens
        self.cache_read_tokens += reply.cache_read_tokens
        self.cache_write_tokens += reply.cache_write_tokens
        self.cost_usd += (reply_cost(reply) or 0.0) * discount

    def as_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in self.__dict__.items() if k != "errors"}
        out["cost_usd"] = round(self.cost_usd, 6)
        return out

    def line(self) -> str:
        """One line for the end of a run."""
        cost = f"~${self.cost_usd:.4f}" if self.priced else "cost unknown (model not in the price table)"
        return (
            f"judge: {self.calls} API calls, {self.cache_hits} answered from the cache;"
            f" {self.input_tokens} input tokens (+{self.cache_read_tokens} cache read,"
            f" {self.cache_write_tokens} cache write), {self.output_tokens} output tokens, {cost};"
            f" {self.retries} retries, {self.failures} failed calls"
        )


@runtime_checkable
class Judge(Protocol):
    """Anything that answers a ``JudgeRequest`` with a ``JudgeReply`` (raising ``JudgeError`` when it cannot)."""

    @property
    def model(self) -> str: ...

    @property
    def usage(self) -> JudgeUsage: ...

    def judge(self, request: JudgeRequest) -> JudgeReply: ...
