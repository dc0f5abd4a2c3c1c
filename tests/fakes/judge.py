"""A judge with queued replies, for unit tests of the judged scorers (no HTTP): ``enqueue`` outputs in call order."""

from __future__ import annotations

from collections import deque
from typing import Any

from tracescore.errors import JudgeError
from tracescore.judge.protocol import JudgeReply, JudgeRequest, JudgeUsage


class QueueJudge:
    """Answers each request with the next queued output (a dict validated into the request's model, or an error)."""

    def __init__(self, model: str = "queue-judge", cost_per_call: float = 0.0) -> None:
        self.model = model
        self.usage = JudgeUsage()
        self.requests: list[JudgeRequest] = []
        self._replies: deque[dict[str, Any] | Exception] = deque()
        self.cost_per_call = cost_per_call

    def enqueue(self, *replies: dict[str, Any] | Exception) -> QueueJudge:
        self._replies.extend(replies)
        return self

    def judge(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        if not self._replies:
            raise AssertionError(f"no reply queued for request #{len(self.requests)} ({request.rubric.name})")
        reply = self._replies.popleft()
        if isinstance(reply, Exception):
            self.usage.failures += 1
            raise reply if isinstance(reply, JudgeError) else JudgeError(str(reply))
        self.usage.calls += 1
        self.usage.cost_usd += self.cost_per_call
        return JudgeReply(output=request.output.model_validate(reply), model=self.model, key=f"k{len(self.requests)}")
