"""``answer.semantic_match``: the final answer is the gold answer up to harmless formatting and naming variants.

Exact match (SQuAD normalisation, number words as digits) is accepted without a call; otherwise one judge call (the
``semantic`` rubric) sees the question, the gold answer and the final answer and says match or not, with a reason
("US$5 million" = "$5,000,000"; "J. Smith" = "John Smith" when unambiguous). Token F1 stays beside it, unchanged.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from tracescore.errors import JudgeError
from tracescore.judge.budget import budget_reason
from tracescore.judge.protocol import Judge, JudgeRequest, JudgeUsage
from tracescore.judge.rubrics import Rubric, load_rubric
from tracescore.reasons import Reasons
from tracescore.registry import RunContext, ScoreSpec, reasons, scorer
from tracescore.scorers.absent import absent_for
from tracescore.scorers.answer import exact_match, extract_final_answer, gold_answers
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scores import Score, absent, score
from tracescore.trace import Trace

ANSWER_SEMANTIC_MATCH = "answer.semantic_match"
SCORE = ANSWER_SEMANTIC_MATCH
SPECS = (
    ScoreSpec(ANSWER_SEMANTIC_MATCH, "boolean", "higher", absent=reasons(Reasons.NO_GOLD_LABEL),
              definition="the final answer is gold_answer up to harmless formatting and naming variants (exact match"
              " needs no call)"),
)  # fmt: skip
LABELS = ("match", "no match")
"""The verdicts this scorer maps: a rubric for it declares exactly these."""
_TAG = re.compile(r"<(/?)(question|gold_answer|answer)\b", re.IGNORECASE)


class SemanticVerdict(BaseModel):
    match: bool
    reason: str


def _escape(text: str) -> str:
    return _TAG.sub(lambda m: "&lt;" + m.group(1) + m.group(2), text)


def semantic_request(question: str, gold: str, answer: str, *, rubric: Rubric | None = None) -> JudgeRequest:
    """The one judge call: question, gold answer and final answer, each delimited (``rubric``: default the bundled
    ``semantic``)."""
    content = (
        f"<question>{_escape(question)}</question>\n<gold_answer>{_escape(gold)}</gold_answer>\n"
        f"<answer>{_escape(answer)}</answer>"
    )
    return JudgeRequest(rubric or load_rubric("semantic"), content, SemanticVerdict)


def needed_request(
    trace: Trace, *, final_answer_prefix: str | None, rubric: Rubric | None = None
) -> JudgeRequest | None:
    """The request ``semantic_scorer`` will send for ``trace``, or None when it needs no call (batch prefill)."""
    golds = _golds(trace)
    final = extract_final_answer(trace.answer, final_answer_prefix).strip()
    if not golds or not final or any(exact_match(final, gold) for gold in golds):
        return None
    return semantic_request(trace.question, golds[0], final, rubric=rubric)


def _golds(trace: Trace) -> list[str]:
    """The gold answers a judge can compare with: ``gold_answer`` then ``gold_answers``, blank ones left out."""
    return [gold for gold in gold_answers(trace.labels) if gold.strip()]


@scorer(stage="answer", version="semantic-1", scores=SPECS, uses={"final_answer_prefix": "answer"})
def semantic(*, run: RunContext, final_answer_prefix: str | None) -> Scorer:
    """The registered form of ``semantic_scorer``: the run's judge, budget and semantic rubric; the answer
    scorer's ``final_answer_prefix``."""
    rubric = run.rubrics.semantic if run.rubrics is not None else None
    return semantic_scorer(judge=run.judge, final_answer_prefix=final_answer_prefix,
                           no_judge_reason=run.no_judge_reason, max_cost=run.max_cost, rubric=rubric)  # fmt: skip


def semantic_scorer(
    *,
    judge: Judge | None,
    final_answer_prefix: str | None,
    no_judge_reason: str = Reasons.NO_JUDGE.text,
    max_cost: float | None = None,
    rubric: Rubric | None = None,
) -> Scorer:
    """Scorer factory for ``answer.semantic_match`` (absent without ``gold_answer``; exact match needs no judge).

    Once the judge's estimated spend reaches ``max_cost`` (USD), a trace needing a call is left absent (budget reason).
    ``rubric``: default the bundled ``semantic``; its name and version are recorded.
    """
    rubric = rubric or load_rubric("semantic")
    # the outcomes that need no judge, built once (Scores are frozen; their metadata is only read downstream)
    no_gold, exact = Scored((absent(SCORE, Reasons.NO_GOLD_LABEL.text),)), Scored((score(SCORE, True, how="exact"),))
    empty = Scored((score(SCORE, False, comment="empty answer", how="empty"),))
    no_judge = Scored((absent(SCORE, no_judge_reason),))

    def score_semantic(trace: Trace) -> Scored:
        golds = _golds(trace)
        if not golds:
            return no_gold
        final = extract_final_answer(trace.answer, final_answer_prefix).strip()
        if any(exact_match(final, gold) for gold in golds):
            return exact
        if not final:
            return empty
        if judge is None:
            return no_judge
        spent = JudgeUsage()  # what the calls cost (nothing from the cache), summed into the result line's judge
        for i, gold in enumerate(golds):  # one call per gold answer, until one matches: passes when any matches
            if (reason := budget_reason(judge, max_cost, trace.id)) is not None:
                if i == 0:
                    return Scored(absent_for((SCORE,), reason))
                return Scored((Score(name=SCORE, reason=reason, metadata={"judge_usage": spent.as_dict()}),))
            meta: dict[str, Any] = {
                "judge_model": judge.model, "rubric": rubric.name, "rubric_version": rubric.version, "how": "judge"
            }
            if len(golds) > 1:
                meta["gold"] = gold
            try:
                reply = judge.judge(semantic_request(trace.question, gold, final, rubric=rubric))
            except JudgeError as exc:
                if i > 0:  # what the earlier calls cost stays on the line
                    meta["judge_usage"] = spent.as_dict()
                return Scored((Score(name=SCORE, reason=Reasons.JUDGE_ERROR.text, comment=str(exc), metadata=meta),))
            if not reply.cached:
                spent.bill(reply)
            verdict: SemanticVerdict = reply.output
            if verdict.match:
                break
        judged = score(SCORE, verdict.match, comment=verdict.reason or None, judge_usage=spent.as_dict(), **meta)
        return Scored((judged,))

    score_semantic.__name__ = "semantic"
    return score_semantic
