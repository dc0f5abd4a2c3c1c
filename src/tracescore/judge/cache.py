"""Content-addressed judge cache: the same model + rubric + claims + passages never costs a second call."""

from __future__ import annotations

import json
from typing import Protocol

from tracescore.judge.protocol import Judge, JudgeReply, JudgeRequest, JudgeUsage


class JudgeCache(Protocol):
    """Where replies are kept by content key (the local store implements this)."""

    def judge_cache_get(self, key: str) -> str | None: ...

    def judge_cache_put(self, key: str, *, model: str, rubric: str, request: str, reply: str) -> None: ...


class MemoryJudgeCache:
    """A dict-backed cache (one process)."""

    def __init__(self) -> None:
        self.entries: dict[str, dict[str, str]] = {}

    def judge_cache_get(self, key: str) -> str | None:
        entry = self.entries.get(key)
        return entry["reply"] if entry else None

    def judge_cache_put(self, key: str, *, model: str, rubric: str, request: str, reply: str) -> None:
        self.entries[key] = {"model": model, "rubric": rubric, "request": request, "reply": reply}


class CachingJudge:
    """Wraps a judge: a request whose key is cached is answered from the cache, with zero tokens."""

    def __init__(self, inner: Judge, cache: JudgeCache) -> None:
        self.inner = inner
        self.cache = cache
        self.model = inner.model

    @property
    def usage(self) -> JudgeUsage:
        return self.inner.usage

    def close(self) -> None:
        """Close the wrapped judge (its HTTP connections), when it has anything to close."""
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()

    def judge(self, request: JudgeRequest) -> JudgeReply:
        key = request.key(self.model)
        stored = self.cache.judge_cache_get(key)
        if stored is not None:
            self.usage.cache_hits += 1
            return JudgeReply(output=request.output.model_validate_json(stored), model=self.model, key=key, cached=True)
        reply = self.inner.judge(request)
        self.cache.judge_cache_put(
            key,
            model=self.model,
            rubric=request.rubric.version,
            request=json.dumps({"prefix": request.prefix, "content": request.content}, ensure_ascii=False),
            reply=reply.output.model_dump_json(),
        )
        return reply
