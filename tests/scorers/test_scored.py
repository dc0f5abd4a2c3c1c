"""A scorer's rows come back in its own ``Scored``: scoring two traces at once from many threads through the same
scorer objects gives every trace its own citation rows, claims and notes, both in what each scorer returns and in the
pipeline's result. (Before, scorers returned bare lists; citation rows reached the result through a module-level slot
shared by every scoring thread, and claims rode in ``grounding.rate``'s metadata until the pipeline popped them.)"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from tests.scorers.test_grounding import QUOTE_A, QUOTE_B, A, B, _trace
from tracescore.engine.pipeline import score_trace
from tracescore.judge.protocol import JudgeReply, JudgeRequest, JudgeUsage
from tracescore.result import TraceResult
from tracescore.scorers.citations import citation_scorer
from tracescore.scorers.grounding import grounding_scorer
from tracescore.scorers.scored import Scored
from tracescore.trace import Trace

THREADS, ROUNDS = 8, 5

TRACE_A = _trace().model_copy(update={"id": "t-a"})  # cites A: "330 metres tall [1] ... built it [1]"
TRACE_B = _trace(f"The tower was built by Gustave Eiffel's company [1] [2].\n\nSources:\n[1] {B}").model_copy(
    update={"id": "t-b"}
)  # cites B, and a marker [2] with no reference
CLAIM_A, CLAIM_B = "The Eiffel Tower is 330 metres tall.", "The tower was built by Gustave Eiffel's company."
EXPECTED = {  # trace id -> (cited targets, claim texts, notes)
    "t-a": ([A, A], [CLAIM_A], []),
    "t-b": ([B], [CLAIM_B], ["marker [2] has no reference in the answer's reference list"]),
}


class _AnswerJudge:
    """A judge that answers from what it is shown (safe from any thread): the claim of the answer it reads."""

    model = "answer-judge"

    def __init__(self) -> None:
        self.usage = JudgeUsage()

    def judge(self, request: JudgeRequest) -> JudgeReply:
        shown = request.prefix + request.content
        text, doc, quote = (CLAIM_B, "D2", QUOTE_B) if "was built by" in shown else (CLAIM_A, "D1", QUOTE_A)
        evidence = [{"doc_id": doc, "verdict": "supported", "quote": quote}]
        output: dict[str, Any] = {"claims": [{"sentence": 0, "text": text, "evidence": evidence, "reason": ""}]}
        return JudgeReply(output=request.output.model_validate(output), model=self.model, key=f"k-{text}")


def _own(trace: Trace, citations: Any, claims: Any, notes: Any) -> tuple[list[str], list[str], list[str]]:
    return [c.target for c in citations], [c.text for c in claims], list(notes)


def test_two_traces_scored_at_once_through_shared_scorers_each_get_their_own_rows() -> None:
    cite, ground = citation_scorer(), grounding_scorer(judge=_AnswerJudge())
    together = threading.Barrier(THREADS, timeout=30)

    def interleave(trace: Trace) -> Scored:  # every thread has run the citation scorer before any goes on
        together.wait()
        return Scored(())

    seen: list[tuple[str, tuple[list[str], list[str], list[str]], tuple[list[str], list[str], list[str]]]] = []
    failures: list[BaseException] = []
    lock = threading.Lock()

    def work(trace: Trace) -> None:
        try:
            for _ in range(ROUNDS):
                cited = cite(trace)  # the same scorer objects, from every thread
                together.wait()  # ... while the other trace is scored in the other threads
                judged = ground(trace)
                from_scorers = _own(trace, cited.citations, judged.claims, cited.notes)
                result: TraceResult = score_trace(trace, [cite, interleave, ground])
                from_result = _own(trace, result.citations, result.claims, result.notes)
                with lock:
                    seen.append((trace.id, from_scorers, from_result))
        except BaseException as exc:  # noqa: BLE001 - reported below, with the barrier broken for the others
            together.abort()
            with lock:
                failures.append(exc)

    threads = [threading.Thread(target=work, args=(TRACE_A if i % 2 else TRACE_B,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    if failures:
        raise failures[0]
    assert len(seen) == THREADS * ROUNDS
    for trace_id, from_scorers, from_result in seen:
        assert from_scorers == EXPECTED[trace_id], trace_id
        assert from_result == EXPECTED[trace_id], trace_id


def test_a_scored_is_the_sequence_of_its_scores_and_cannot_be_edited() -> None:
    scored = citation_scorer()(TRACE_B)
    assert [s.name for s in scored] == [s.name for s in scored.scores] == [
        "citation.coverage",
        "citation.unfetched_rate",
        "citation.fabricated_count",
    ]
    assert len(scored) == 3 and scored[0] is scored.scores[0] and list(scored[1:]) == list(scored.scores[1:])
    with pytest.raises(AttributeError):
        scored.citations = ()  # type: ignore[misc]


def test_without_the_citation_scorer_a_result_has_no_citation_rows_nor_marker_notes() -> None:
    """The pipeline reads rows only from what the scorers returned: it builds none of its own."""
    result = score_trace(TRACE_B, [grounding_scorer(judge=_AnswerJudge())])
    assert (result.citations, result.notes, [c.text for c in result.claims]) == ([], [], [CLAIM_B])
