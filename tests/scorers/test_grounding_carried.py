"""#48: the judge sees the earlier turn's passage when a claim cites a page that turn fetched (named as such, redacted
as the trace is), and verifies the quote against it; without carried evidence the same reply is unsupported."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import tracescore
from tests.fakes.judge import QueueJudge
from tracescore.judge.redact import redactor

PAGE = "https://river.example.org/facts"
T0 = datetime(2026, 11, 3, 8, 0, tzinfo=UTC)


def _turns() -> list[dict[str, Any]]:
    one = {
        "id": "c1-t1", "session_id": "c1", "timestamp": T0.isoformat(), "question": "How long is the river?",
        "steps": [
            {"kind": "search", "query": "river length", "hits": [{"url": PAGE, "title": "River facts"}]},
            {"kind": "fetch", "url": PAGE, "text": "The river is 42 km long. Questions: ops@example.com."},
        ],
        "answer": "The river is 42 km long [1].\n\n[1] " + PAGE,
    }  # fmt: skip
    two = {
        "id": "c1-t2", "session_id": "c1", "timestamp": (T0 + timedelta(minutes=2)).isoformat(),
        "question": "And its length again?", "steps": [],
        "answer": "As said, it is 42 km long [1].\n\n[1] " + PAGE,
    }  # fmt: skip
    return [two, one]  # the file order is not the conversation's


def _reply(sentence: str) -> dict[str, Any]:
    quote = "The river is 42 km long."
    return {"claims": [{"sentence": 0, "text": sentence, "reason": "stated",
                        "evidence": [{"doc_id": "D1", "verdict": "supported", "quote": quote}]}]}  # fmt: skip


def test_a_claim_citing_an_earlier_turns_page_is_judged_against_that_page() -> None:
    judge = QueueJudge().enqueue(_reply("The river is 42 km long."), _reply("It is 42 km long."))
    results = {r.trace_id: r for r in tracescore.score_traces(_turns(), judge=judge)}
    first, second = judge.requests  # turn 1 first: the conversation's order
    assert "c1-t1" not in first.content and PAGE in first.content
    assert "an earlier turn: turn 1, trace c1-t1" in second.content and "42 km long" in second.content
    turn2 = results["c1-t2"]
    assert turn2.values["grounding.rate"] == 1.0 and turn2.values["grounding.unverified_quotes"] == 0.0
    assert turn2.values["citation.support_rate"] == 1.0
    assert turn2.values["citation.unfetched_rate"] == 0.0 and turn2.values["citation.fabricated_count"] == 0.0


def test_without_carried_evidence_the_same_reply_is_not_supported() -> None:
    judge = QueueJudge().enqueue(_reply("The river is 42 km long."), _reply("It is 42 km long."))
    results = {r.trace_id: r for r in tracescore.score_traces(_turns(), judge=judge, carry_evidence=False)}
    assert "an earlier turn" not in judge.requests[1].content
    turn2 = results["c1-t2"]
    assert turn2.values["grounding.rate"] == 0.0  # D1 is no document of this turn: the quote cannot be verified
    assert turn2.values["citation.fabricated_count"] == 1.0


def test_the_earlier_passage_is_redacted_as_the_trace_is() -> None:
    judge = QueueJudge().enqueue(_reply("The river is 42 km long."), _reply("It is 42 km long."))
    tracescore.score_traces(_turns(), judge=judge, redact=redactor(["email"]))
    assert all("ops@example.com" not in r.content for r in judge.requests)
    assert "an earlier turn: turn 1, trace c1-t1" in judge.requests[1].content
    assert "<email-1>" in judge.requests[1].content
