"""The judge requests scoring a trace will send, built exactly as the judged scorers build them (the same bodies, so
the same content keys): what ``backfill --judge-batch`` submits and the tests compare with. With ``[judge] redact``
they are built from the redacted copy of the trace, as the scorers are.
"""

from __future__ import annotations

from tracescore.engine.plan import ScorerPlan, answer_prefix
from tracescore.judge.protocol import JudgeRequest
from tracescore.judge.redact import Redactor
from tracescore.scorers import semantic, surface
from tracescore.scorers.criteria import criterion_call
from tracescore.scorers.grounding import grounding_call
from tracescore.scorers.rubrics import Rubrics
from tracescore.session import Earlier
from tracescore.trace import Trace


def judge_request(
    trace: Trace, rubrics: Rubrics | None = None, earlier: Earlier | None = None
) -> JudgeRequest | None:
    """The grounding scorer's judge request for ``trace`` (None when it would not call the judge); ``earlier``: its
    session's earlier turns (a cited page one of them fetched is judged as evidence)."""
    call = grounding_call(trace, rubric=(rubrics or Rubrics()).grounding, earlier=earlier)
    return None if isinstance(call, str) else call.request


def judge_requests(
    trace: Trace,
    rubrics: Rubrics | None = None,
    redact: Redactor | None = None,
    plan: ScorerPlan | None = None,
    earlier: Earlier | None = None,
) -> list[JudgeRequest]:
    """Every judge request scoring ``trace`` will send: grounding, the surface oracle, the semantic match, ``plan``'s
    criteria, each with its stage's rubric and built from the trace as ``redact`` leaves it (the same bodies, so the
    same content keys, as the scorers); the answer's prefix is ``plan``'s (None: the answer scorer's default);
    ``earlier``: the evidence of its session's earlier turns the engine scores it with (grounding reads it)."""
    rubrics = rubrics or Rubrics()
    if redact is not None:
        trace, earlier = redact.trace(trace), redact.earlier(earlier) if earlier is not None else None
    grounding = judge_request(trace, rubrics, earlier)
    needed = semantic.needed_request(trace, final_answer_prefix=answer_prefix(plan), rubric=rubrics.semantic)
    return [
        *([grounding] if grounding is not None else []),
        *surface.oracle_requests(trace, rubric=rubrics.surface),
        *([needed] if needed is not None else []),
        *criteria_requests(trace, plan),
    ]


def criteria_requests(trace: Trace, plan: ScorerPlan | None) -> list[JudgeRequest]:
    """The request of each ``[[criteria]]`` criterion ``plan`` runs on ``trace`` (``trace`` as redaction leaves it)."""
    if plan is None or plan.criteria is None:
        return []
    chosen = {name for name, _ in plan.chosen_scorers()}
    calls = [criterion_call(trace, c) for c in plan.criteria[1] if c.name in chosen]
    return [call.request for call in calls if not isinstance(call, str)]
