"""The judge: one ``Judge`` protocol, the Anthropic implementation, passage selection, quote checks and a cache.

``tracescore.judge.anthropic`` (and so the ``anthropic`` SDK) is imported only when a judge is built.
"""

from __future__ import annotations

from tracescore.judge.cache import CachingJudge, JudgeCache, MemoryJudgeCache
from tracescore.judge.passages import Passage, approx_tokens, chunk_text, select_passages
from tracescore.judge.protocol import Judge, JudgeReply, JudgeRequest, JudgeUsage
from tracescore.judge.quotes import QuoteCheck, verify_quote
from tracescore.judge.rubrics import Rubric, load_rubric

__all__ = [
    "CachingJudge",
    "Judge",
    "JudgeCache",
    "JudgeReply",
    "JudgeRequest",
    "JudgeUsage",
    "MemoryJudgeCache",
    "Passage",
    "QuoteCheck",
    "Rubric",
    "approx_tokens",
    "chunk_text",
    "load_rubric",
    "select_passages",
    "verify_quote",
]
