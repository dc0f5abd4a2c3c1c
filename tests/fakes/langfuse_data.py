"""Synthetic search-agent traces in the Langfuse export shape (``trace`` + camelCase ``observations``), for the fake.

Each trace: a root AGENT span (question in, answer with a cited URL out, labels in metadata), a RETRIEVER with
LangChain documents, a ``web_search`` TOOL returning a JSON string of ``{url,title,snippet}``, a ``fetch_url`` TOOL
whose output is double-encoded JSON, and GENERATION/SPAN filler up to ``size`` observations.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

__all__ = ["make_trace"]


def _iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def make_trace(
    index: int,
    start: datetime,
    *,
    size: int = 12,
    environment: str = "production",
    tags: tuple[str, ...] = ("rag",),
    name: str = "support-agent",
    right: bool | None = None,
    labels: bool = True,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One trace ``tr-{index}`` starting at ``start``; ``right`` picks a correct or wrong answer (default: by index);
    ``labels=False`` leaves the root metadata without labels."""
    right = index % 3 != 0 if right is None else right
    tid = f"tr-{index:05d}"
    days = "30" if right else "90"
    answer = f"You can return items within {days} days [1].\n\n[1] https://help.example.com/returns"
    question = "How many days do I have to return an item?"

    def at(ms: int) -> str:
        return _iso(start + timedelta(milliseconds=ms))

    def obs(n: int, kind: str, obs_name: str, parent: str | None, ms: int, **extra: Any) -> dict[str, Any]:
        return {
            "id": f"{tid}-o{n:02d}",
            "traceId": tid,
            "type": kind,
            "name": obs_name,
            "parentObservationId": parent,
            "startTime": at(ms),
            "endTime": at(ms + 5),
            "environment": environment,
            "level": "DEFAULT",
            "input": extra.pop("input", None),
            "output": extra.pop("output", None),
            "metadata": extra.pop("metadata", {}),
            **extra,
        }

    root = f"{tid}-o00"
    observations = [
        obs(
            0,
            "AGENT",
            "agent",
            None,
            0,
            input={"question": question},
            output={"answer": answer},
            metadata={
                "labels": {
                    "required_doc_ids": ["policy-returns-v4"],
                    "expected_answer_contains": ["30 days"],
                    "gold_answer": "30 days",
                }
            }
            if labels
            else {"app": "support"},
        ),
        obs(
            1,
            "RETRIEVER",
            "kb_retriever",
            root,
            10,
            input={"query": "return window"},
            output={
                "documents": [
                    {
                        "page_content": "Returns within 30 days of delivery.",
                        "type": "Document",
                        "metadata": {
                            "doc_id": "policy-returns-v4",
                            "source": "https://help.example.com/returns",
                            "title": "Returns policy",
                        },
                    },
                    {
                        "page_content": "Members get 90 days.",
                        "type": "Document",
                        "metadata": {"doc_id": "blog-returns", "source": "https://blog.example.com/returns"},
                    },
                ]
            },
        ),
        obs(
            2,
            "TOOL",
            "web_search",
            root,
            20,
            input=json.dumps({"query": "example returns days"}),
            output=json.dumps(
                [
                    {"url": "https://help.example.com/returns", "title": "Returns", "snippet": "30 days"},
                    {"url": "https://news.example.org/x", "title": "News", "snippet": "unrelated"},
                ]
            ),
        ),
        obs(
            3,
            "TOOL",
            "fetch_url",
            root,
            30,
            input={"url": "https://help.example.com/returns"},
            output=json.dumps(json.dumps({"status": 200, "text": "Returns policy. Returns within 30 days."})),
        ),
    ]
    n = len(observations)
    while n < size:
        kind = "GENERATION" if n % 2 else "SPAN"
        observations.append(obs(n, kind, f"step-{n}", root, 40 + n, input="…", output="…"))
        n += 1
    trace = {
        "id": tid,
        "name": name,
        "timestamp": at(0),
        "environment": environment,
        "tags": list(tags),
        "input": None,
        "output": None,
        "metadata": {},
    }
    return trace, observations
