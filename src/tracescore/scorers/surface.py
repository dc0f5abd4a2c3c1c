"""The search API as a decision surface: a per-URL oracle and the SMART / MISSED / BLIND / NO-OP partition.

Every URL the agent saw is one item: its **surface** (title, URL, domain, snippet and provider metadata exactly as
the search result showed them) and, when the agent fetched it, its **page** (passages of the stored text, selected
for the question and the gold answer like grounding selects them). One judge call per trace (the ``surface``
rubric; a few for very wide traces) labels each part ``supports`` / ``contradicts`` / ``neither`` against the gold
answer (``gold_answer``, else ``expected_answer_contains``). Every ``supports``/``contradicts`` carries a verbatim
quote verified in code against the part it names; an unverifiable quote downgrades the label to ``neither`` and is
counted.

The partition, per URL seen in a search result: SMART (surface supports, fetched), MISSED (surface supports, not
fetched), BLIND (surface does not support, fetched), NO-OP (neither). A fetched page that supports while its surface
did not is post-fetch **discovered support**. "Fetched" is the agent's decision: a fetch step for the URL, whatever
its status; a page that failed or came back empty is never labelled (it did not yield).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Any, get_args

from tracescore.errors import JudgeError
from tracescore.judge.budget import budget_reason
from tracescore.judge.passages import MAX_SHARE, approx_tokens
from tracescore.judge.protocol import Judge, JudgeRequest, JudgeUsage
from tracescore.judge.quotes import verify_quote
from tracescore.judge.rubrics import Rubric, load_rubric
from tracescore.reasons import Reasons
from tracescore.registry import RunContext, ScoreSpec, reasons, scorer
from tracescore.result import Label, UrlRow as UrlRow
from tracescore.scorers.absent import absent_for, all_absent
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scorers.surface_call import (
    MAX_CALL_TOKENS,
    SurfaceItem,
    SurfaceJudgement as SurfaceJudgement,
    collect_items as collect_items,
    gold_text as gold_text,
    surface_requests as surface_requests,
)
from tracescore.scores import Score, absent, score
from tracescore.trace import Trace

SURFACE_SUPPORT_ANY = "surface.support_any"
SURFACE_FIRST_SUPPORT_RANK = "surface.first_support_rank"
SURFACE_SMART = "surface.smart"
SURFACE_MISSED = "surface.missed"
SURFACE_BLIND = "surface.blind"
SURFACE_NOOP = "surface.noop"
SURFACE_CONTRADICTION_RATIO = "surface.contradiction_ratio"
SURFACE_FETCH_YIELD = "surface.fetch_yield"
SURFACE_DISCOVERED_SUPPORT = "surface.discovered_support"
_WHY = Reasons
_SURFACE = (_WHY.SURFACE_REFUSAL, _WHY.NO_GOLD_OR_EXPECTED, _WHY.SURFACE_NO_SEARCH, _WHY.STEP_UNREADABLE)
_SURFACED = (*_SURFACE, _WHY.NO_SUPPORTING_SURFACE)
SPECS = (
    ScoreSpec(SURFACE_SUPPORT_ANY, "boolean", "higher", absent=reasons(*_SURFACE),
              definition="some search result's surface (title, URL, snippet, metadata) supports the gold answer"
              " before any fetch"),
    ScoreSpec(SURFACE_FIRST_SUPPORT_RANK, "numeric", "lower", 1, absent=reasons(*_SURFACED),
              definition="best rank, within its own search call, of a result whose surface supports; absent when"
              " none does"),
    ScoreSpec(SURFACE_SMART, "numeric", None, 0, absent=reasons(*_SURFACE),
              definition="URLs whose surface supports the gold answer and that the agent fetched"),
    ScoreSpec(SURFACE_MISSED, "numeric", "lower", 0, absent=reasons(*_SURFACE),
              definition="URLs whose surface supports the gold answer and that the agent never fetched"),
    ScoreSpec(SURFACE_BLIND, "numeric", "lower", 0, absent=reasons(*_SURFACE),
              definition="URLs whose surface does not support the gold answer and that the agent fetched"),
    ScoreSpec(SURFACE_NOOP, "numeric", None, 0, absent=reasons(*_SURFACE),
              definition="URLs whose surface does not support the gold answer and that the agent did not fetch"),
    ScoreSpec(SURFACE_CONTRADICTION_RATIO, "numeric", "lower", 0, absent=reasons(*_SURFACED),
              definition="results whose surface contradicts the gold answer / results whose surface supports it;"
              " absent when none"),
    ScoreSpec(SURFACE_FETCH_YIELD, "numeric", "higher", 0, 1, absent=reasons(*_SURFACE, _WHY.NO_PAGE_FETCHED),
              definition="fetched pages that support the gold answer / pages fetched; absent when nothing was"
              " fetched"),
    ScoreSpec(SURFACE_DISCOVERED_SUPPORT, "numeric", None, 0, absent=reasons(*_SURFACE),
              definition="fetched pages that support the gold answer while their surface did not (post-fetch"
              " discovery)"),
)  # fmt: skip
SURFACE_SCORES = tuple(s.name for s in SPECS)
CELLS = ("smart", "missed", "blind", "noop")
CELL_SCORES = MappingProxyType(  # each cell's count is a score
    {"smart": SURFACE_SMART, "missed": SURFACE_MISSED, "blind": SURFACE_BLIND, "noop": SURFACE_NOOP}
)
NO_JUDGE, JUDGE_ERROR = Reasons.NO_JUDGE.text, Reasons.JUDGE_ERROR.text
LABELS: tuple[str, ...] = get_args(Label)
"""The labels this scorer maps: a rubric for it declares exactly these."""


def partition(surface_supports: bool, fetched: bool) -> str:
    """The decision cell of one URL: pre-fetch surface support × the agent's fetch decision."""
    if surface_supports:
        return "smart" if fetched else "missed"
    return "blind" if fetched else "noop"


def _verified_labels(
    judgement: SurfaceJudgement, ids: dict[str, SurfaceItem], call: str
) -> tuple[dict[str, UrlRow], list[str]]:
    """Each item's labels with every quote checked against the part it names; unverifiable → neither, counted."""
    rows: dict[str, UrlRow] = {}
    for label, item in ids.items():
        rows[label] = UrlRow(
            item.url, item.key, item.domain, item.rank, item.search, item.fetched,
            "neither" if item.surface is not None else None,
            "neither" if item.page is not None else None,
            None, call=call,
        )  # fmt: skip
    unverified: list[str] = []
    for entry in judgement.labels:
        label = entry.id.strip().upper()
        found, row = ids.get(label), rows.get(label)
        if found is None or row is None:
            unverified.append(f"{entry.id}: no such item")
            continue
        item = found
        text = item.surface if entry.part == "surface" else item.page
        current = row.surface if entry.part == "surface" else row.page
        if text is None or current is None:
            unverified.append(f"{item.url or item.key}: no {entry.part} to quote")
            continue
        if current == "supports" or (current == "contradicts" and entry.label == "contradicts"):
            continue  # supports wins over contradicts; a second quote for the same label adds nothing
        if not verify_quote(entry.quote, text).found:
            note = f"{item.url or item.key} ({entry.part}, {entry.label}): {entry.quote!r}"
            row.unverified.append(note)
            unverified.append(note)
            continue
        if entry.part == "surface":
            row.surface, row.surface_quote = entry.label, entry.quote
        else:
            row.page, row.page_quote = entry.label, entry.quote
    for row in rows.values():
        if row.surface is not None:
            row.cell = partition(row.surface == "supports", row.fetched)
            row.discovered = row.surface != "supports" and row.page == "supports"
    return rows, unverified


# -- scores ---------------------------------------------------------------------------------------------------------
def surface_scores(rows: Sequence[UrlRow], meta: dict[str, Any], unverified: Sequence[str] = ()) -> list[Score]:
    """The surface.* scores of one trace from its per-URL rows (pure: the maths, no judge)."""
    shown = [r for r in rows if r.surface is not None]
    supporting = [r for r in shown if r.surface == "supports"]
    contradicting = [r for r in shown if r.surface == "contradicts"]
    fetched = [r for r in rows if r.fetched]
    cells = {c: sum(1 for r in shown if r.cell == c) for c in CELLS}
    meta = dict(meta) | {"unverified_quotes": len(unverified)}
    if unverified:
        meta["unverified"] = list(unverified[:10])
    out = [score(SURFACE_SUPPORT_ANY, bool(supporting), **meta)]
    ranks = [r.rank for r in supporting if r.rank is not None]
    out.append(
        score(SURFACE_FIRST_SUPPORT_RANK, float(min(ranks)), **meta)
        if ranks
        else absent(SURFACE_FIRST_SUPPORT_RANK, Reasons.NO_SUPPORTING_SURFACE.text, **meta)
    )
    missed = [r.url or r.key for r in shown if r.cell == "missed"]
    for cell in CELLS:
        comment = f"supporting results never opened: {', '.join(missed[:3])}" if cell == "missed" and missed else None
        out.append(score(CELL_SCORES[cell], float(cells[cell]), comment=comment, urls=len(shown), **meta))
    out.append(
        score(
            SURFACE_CONTRADICTION_RATIO,
            len(contradicting) / len(supporting),
            contradicting=len(contradicting),
            supporting=len(supporting),
            **meta,
        )
        if supporting
        else absent(SURFACE_CONTRADICTION_RATIO, Reasons.NO_SUPPORTING_SURFACE.text, **meta)
    )
    yielded = [r for r in fetched if r.page == "supports"]
    out.append(
        score(SURFACE_FETCH_YIELD, len(yielded) / len(fetched), fetched=len(fetched), yielded=len(yielded), **meta)
        if fetched
        else absent(SURFACE_FETCH_YIELD, Reasons.NO_PAGE_FETCHED.text, **meta)
    )
    discovered = [r.url or r.key for r in shown if r.discovered]
    out.append(
        score(
            SURFACE_DISCOVERED_SUPPORT,
            float(len(discovered)),
            comment=f"supported only after opening: {', '.join(discovered[:3])}" if discovered else None,
            **meta,
        )
    )
    return out


def unscorable(trace: Trace) -> str | None:
    """Why the oracle would not label this trace (no gold answer, an unreadable step, no search), or None."""
    gold, why = gold_text(trace)
    if gold is None:
        return why or Reasons.NO_GOLD_OR_EXPECTED.text
    if trace.blind_spots:
        spot = trace.blind_spots[0]
        return Reasons.STEP_UNREADABLE.format(kind=spot.kind, why=spot.reason)
    if not trace.searches:
        return Reasons.SURFACE_NO_SEARCH.text
    return None


def oracle_requests(
    trace: Trace,
    *,
    max_share: float = MAX_SHARE,
    max_call_tokens: int = MAX_CALL_TOKENS,
    rubric: Rubric | None = None,
) -> list[JudgeRequest]:
    """The requests ``surface_scorer`` will send for ``trace`` (same content keys), for batch prefill and estimates."""
    gold, _ = gold_text(trace)
    if unscorable(trace) is not None or gold is None:
        return []
    calls = surface_requests(
        trace, collect_items(trace), gold, max_share=max_share, max_call_tokens=max_call_tokens, rubric=rubric
    )
    return [request for request, _ in calls]


@scorer(stage="surface", version="surface-1", scores=SPECS)
def surface(*, run: RunContext) -> Scorer:
    """The registered form of ``surface_scorer``: the run's judge, budget and surface rubric."""
    rubric = run.rubrics.surface if run.rubrics is not None else None
    return surface_scorer(judge=run.judge, no_judge_reason=run.no_judge_reason, max_cost=run.max_cost, rubric=rubric)


def surface_scorer(
    *,
    judge: Judge | None,
    no_judge_reason: str = NO_JUDGE,
    max_cost: float | None = None,
    max_share: float = MAX_SHARE,
    max_call_tokens: int = MAX_CALL_TOKENS,
    rubric: Rubric | None = None,
) -> Scorer:
    """Scorer factory for the surface stage: the per-URL oracle, the partition and the surface.* scores.

    Without a judge or a gold answer every surface.* score is absent with the reason; so is it when a search or a
    fetch could not be read (the partition would rest on a blind spot), when the trace has no search step, on a judge
    error (``judge_error``) and once ``max_cost`` USD is spent. The per-URL rows come back typed (``Scored.urls``) and,
    as the local store keeps them, in ``surface.smart``'s metadata (``urls``). ``rubric``: default the bundled
    ``surface``.
    """
    rubric = rubric or load_rubric("surface")
    no_judge = Scored(absent_for(SURFACE_SCORES, no_judge_reason))

    def score_surface(trace: Trace) -> Scored:
        if judge is None:
            return no_judge
        why, (gold, _) = unscorable(trace), gold_text(trace)
        if why is not None or gold is None:
            return Scored(absent_for(SURFACE_SCORES, why or Reasons.NO_GOLD_OR_EXPECTED.text))
        if (over := budget_reason(judge, max_cost, trace.id)) is not None:
            return Scored(absent_for(SURFACE_SCORES, over))
        meta: dict[str, Any] = {"judge_model": judge.model, "rubric": rubric.name, "rubric_version": rubric.version}
        items = collect_items(trace)
        rows: list[UrlRow] = []
        unverified: list[str] = []
        spent = JudgeUsage()  # this trace's oracle calls (cache hits cost nothing), for the result line
        calls = surface_requests(
            trace, items, gold, max_share=max_share, max_call_tokens=max_call_tokens, rubric=rubric
        )
        for request, ids in calls:
            try:
                reply = judge.judge(request)
            except JudgeError as exc:
                return Scored(tuple(all_absent(SURFACE_SCORES, JUDGE_ERROR, comment=str(exc), **meta)))
            if not reply.cached:
                spent.bill(reply)
            labelled, bad = _verified_labels(reply.output, ids, reply.key)
            rows += labelled.values()
            unverified += bad
        meta["oracle_calls"], meta["judge_usage"] = spent.calls, spent.as_dict()
        fetch_tokens = sum(approx_tokens(item.page) for item in items if item.page is not None)
        extra: dict[str, dict[str, Any]] = {
            SURFACE_SMART: {"urls": [r.as_dict() for r in rows]},
            SURFACE_FETCH_YIELD: {"fetch_tokens": fetch_tokens},  # what the agent read, for the provider report
        }
        scores = (
            s.with_metadata(s.metadata | extra[s.name]) if s.name in extra else s
            for s in surface_scores(rows, meta, unverified)
        )
        return Scored(tuple(scores), urls=tuple(rows))

    score_surface.__name__ = "surface"
    return score_surface

