"""Agent tests with tracescore's pytest plugin: each case's trace checked stage by stage.

    pytest cookbook/pytest_suite --tracescore-out results.jsonl
    AGENT_RUN=baseline pytest cookbook/pytest_suite --tracescore-out baseline.jsonl   # the run before the change
    tracescore gate results.jsonl --baseline baseline.jsonl

The agent here is a stand-in that replays a recorded run of five support and trivia questions (``runs/<AGENT_RUN>
.jsonl``, default ``candidate``: after a retriever and prompt change); put yours in its place. In the candidate run
two cases break a stage: ``tr-0001`` (the shipping policy is ranked 6th: retrieval) and ``tr-0008`` (the answer
cites a made-up URL: citations). Each fails with one line naming the stage, the score, its value, the limit and why.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

RUN = Path(__file__).parent / "runs" / f"{os.environ.get('AGENT_RUN', 'candidate')}.jsonl"
CASES = ["tr-0000", "tr-0001", "tr-0006", "tr-0008", "tr-0011"]


def agent(case: str) -> dict[str, Any]:
    """The agent under test (a stand-in): the recorded trace of ``case`` in the trace format."""
    recorded = {t["id"]: t for t in map(json.loads, RUN.read_text(encoding="utf-8").splitlines())}
    return recorded[case]  # type: ignore[no-any-return]


@pytest.mark.parametrize("case", CASES)
def test_agent_answers_from_the_right_sources(tracescore, case):
    tracescore.check(agent(case), min={"retrieval.recall_at_5": 1.0, "answer.correct": True},
                     max={"citation.fabricated_count": 0})
