"""Grounding and citation support, judged: are the answer's claims backed by what the agent actually retrieved?

Per trace, one judge call (the ``grounding`` rubric): the answer's sentences and the evidence the agent saw (each
fetched page cut to its top passages for those sentences, plus the snippets of hits it never fetched), each document
delimited with an id. The judge splits the answer into atomic claims and lists, per claim, the documents that
support, partially support or contradict it, each with a verbatim quote. Every quote is verified in code against
the document it names; a ``supported`` entry whose quote is not found is dropped (downgraded) and counted.

Scores: ``grounding.rate``, ``grounding.hallucination_rate``, ``grounding.unverified_quotes`` and, from the same
claims, the citation stage's judged scores (``citation.support_rate`` and ``citation.drift_rate``). A judge failure
leaves them absent with ``judge_error``. The judge never sees the labels (expected answer).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from tracescore.errors import JudgeError
from tracescore.judge.budget import budget_reason
from tracescore.judge.passages import MAX_SHARE
from tracescore.judge.pricing import reply_cost
from tracescore.judge.protocol import Judge, JudgeReply
from tracescore.judge.rubrics import Rubric, load_rubric
from tracescore.reasons import Reasons
from tracescore.registry import RunContext, ScoreSpec, reasons, scorer
from tracescore.result import ClaimRow
from tracescore.scorers.absent import absent_for, all_absent
from tracescore.scorers.citations import citation_rows
from tracescore.scorers.grounding_call import (
    EvidenceDoc,
    Judgement as Judgement,
    collect_evidence as collect_evidence,
    grounding_call as grounding_call,
    quoted,
)
from tracescore.scorers.partial import merge_partial_definition, merge_partial_verdicts
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scorers.sentences import ParsedAnswer
from tracescore.scores import Score, absent, score
from tracescore.session import Earlier
from tracescore.trace import Trace

GROUNDING_RATE = "grounding.rate"
GROUNDING_HALLUCINATION_RATE = "grounding.hallucination_rate"
GROUNDING_UNVERIFIED_QUOTES = "grounding.unverified_quotes"
_GROUNDED = reasons(Reasons.EMPTY_ANSWER, Reasons.NO_SENTENCES, Reasons.NO_CLAIM)
CITATION_SUPPORT_RATE = "citation.support_rate"  # the cited claims' verdicts, from the same judge call
CITATION_DRIFT_RATE = "citation.drift_rate"
_TEXT = (Reasons.EMPTY_ANSWER, Reasons.NO_SENTENCES)
_CITED = reasons(*_TEXT, Reasons.NO_CLAIM, Reasons.NO_CITED_CLAIM)
JUDGED_SPECS = (
    ScoreSpec(CITATION_SUPPORT_RATE, "numeric", "higher", 0, 1, absent=_CITED,
              definition="cited claims whose cited source supports them"),
    ScoreSpec(CITATION_DRIFT_RATE, "numeric", "lower", 0, 1, absent=_CITED,
              definition="cited claims supported by another fetched source but not by the one cited"),
)  # fmt: skip
SPECS = (
    ScoreSpec(GROUNDING_RATE, "numeric", "higher", 0, 1, absent=_GROUNDED, definition="supported claims / claims"),
    ScoreSpec(GROUNDING_HALLUCINATION_RATE, "numeric", "lower", 0, 1, absent=_GROUNDED,
              definition="(unsupported + contradicted) / claims"),
    ScoreSpec(GROUNDING_UNVERIFIED_QUOTES, "numeric", "lower", 0, absent=_GROUNDED,
              definition="supported verdicts whose quote was not found in the named document (downgraded)"),
    *JUDGED_SPECS,
)  # fmt: skip
JUDGED_SCORES = tuple(s.name for s in SPECS)  # the grounding scores, then the judged citation ones
NO_JUDGE, JUDGE_ERROR = Reasons.NO_JUDGE.text, Reasons.JUDGE_ERROR.text
BUDGET_REASON = Reasons.BUDGET.text.split(" (", 1)[0]  # how every budget reason starts
_RANK = MappingProxyType({"supported": 3, "partial": 2, "contradicted": 1, "unsupported": 0})
LABELS = tuple(_RANK)
"""The verdicts this scorer maps: a rubric for it declares exactly these."""


# -- the scorer -----------------------------------------------------------------------------------------------
@scorer(stage=("grounding", "citations"), version="grounding-1", scores=SPECS)
def grounding(*, run: RunContext) -> Scorer:
    """The registered form of ``grounding_scorer``: the run's judge, budget, agreement, merge_partial and rubric."""
    rubric = run.rubrics.grounding if run.rubrics is not None else None
    return grounding_scorer(judge=run.judge, no_judge_reason=run.no_judge_reason, max_cost=run.max_cost,
                            agreement=run.agreement, merge_partial=run.merge_partial, rubric=rubric)  # fmt: skip


def grounding_scorer(
    *,
    judge: Judge | None,
    no_judge_reason: str = NO_JUDGE,
    max_cost: float | None = None,
    max_share: float = MAX_SHARE,
    agreement: dict[str, dict[str, Any]] | None = None,
    merge_partial: str | None = None,
    rubric: Rubric | None = None,
) -> Scorer:
    """Scorer factory for the judged stages (grounding, citation support and drift).

    ``judge=None`` makes every judged score absent with ``no_judge_reason``. ``max_cost`` (USD) is checked before
    each trace: once the judge's estimated spend reaches it, later traces are left unjudged (absent, with
    ``BUDGET_REASON``) while their deterministic scores are still computed. ``agreement`` (last measured agreement
    with human labels, per score name) is recorded in the metadata when known. ``merge_partial``: see scorers/partial.
    ``rubric`` (default: the bundled ``grounding``) is what the judge receives; its name and version are recorded.
    """
    rubric = rubric or load_rubric("grounding")
    no_judge = Scored(absent_for(JUDGED_SCORES, no_judge_reason))

    def score_grounding(trace: Trace, *, earlier: Earlier | None = None) -> Scored:
        if judge is None:
            return no_judge
        if (over := budget_reason(judge, max_cost, trace.id)) is not None:
            return Scored(absent_for(JUDGED_SCORES, over))
        meta: dict[str, Any] = {"judge_model": judge.model, "rubric": rubric.name, "rubric_version": rubric.version}
        call = grounding_call(trace, max_share=max_share, rubric=rubric, earlier=earlier)
        if isinstance(call, str):
            return Scored(absent_for(JUDGED_SCORES, call))
        try:
            reply = judge.judge(call.request)
        except JudgeError as exc:
            return Scored(tuple(all_absent(JUDGED_SCORES, JUDGE_ERROR, comment=str(exc), **meta)))
        meta["judge_usage"] = reply_usage(reply)
        judged = _verify(reply.output, call.labels, call.sentences, reply.key)
        if merge_partial:  # [judge] merge_partial: PARTIAL counted as another verdict, said on every judged score
            merge_partial_verdicts(judged.rows, judged.per_doc, merge_partial)
            meta["merge_partial"] = merge_partial_definition(merge_partial)
        if not judged.rows:
            return Scored(tuple(all_absent(JUDGED_SCORES, Reasons.NO_CLAIM.text, **meta)))
        _add_citations(trace, call.parsed, judged, call.docs)
        return Scored(_scores(judged, meta, agreement or {}), claims=tuple(judged.rows))

    score_grounding.__name__ = "grounding"
    return score_grounding


def reply_usage(reply: JudgeReply) -> dict[str, Any]:
    """What one judge call cost (zero when answered from the cache), for a score's ``judge_usage`` and reports."""
    cost = reply_cost(reply)
    return {
        "calls": 0 if reply.cached else 1,
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "cost_usd": round(cost or 0.0, 6),
    }


@dataclass
class _Judged:
    rows: list[ClaimRow]
    per_doc: dict[str, dict[int, str]] = field(default_factory=dict)  # doc ref → claim index → verified verdict
    unverified: list[str] = field(default_factory=list)


def _verify(judgement: Judgement, labels: dict[str, EvidenceDoc], n_sentences: int, key: str) -> _Judged:
    """Check every quote against the document it names; keep each claim's strongest verified verdict."""
    judged = _Judged([])
    for index, claim in enumerate(c for c in judgement.claims if c.text.strip()):
        sentence = claim.sentence if 0 <= claim.sentence < n_sentences else -1
        row = ClaimRow(index, sentence, claim.text.strip(), "unsupported", "unsupported", reason=claim.reason or None)
        row.calls.append(key)
        best = (0, 0)  # (verified rank, judge's rank): the row shows its strongest verified evidence
        for item in claim.evidence:
            doc = labels.get(item.doc_id.strip().upper())
            found = doc is not None and quoted(item.quote, doc.text)
            if not found and item.verdict == "supported":
                judged.unverified.append(f"{doc.name if doc else item.doc_id}: {item.quote!r}")
            checked = item.verdict if found else "unsupported"
            if doc is not None:
                known = judged.per_doc.setdefault(doc.ref, {})
                if _RANK[checked] >= _RANK[known.get(index, "unsupported")]:
                    known[index] = checked
            if (_RANK[checked], _RANK[item.verdict]) > best:
                best = (_RANK[checked], _RANK[item.verdict])
                row.verdict, row.judge_verdict, row.quote = checked, item.verdict, item.quote
                row.doc = doc.name if doc else item.doc_id
                row.quote_check = "verified" if found else "not found"
        judged.rows.append(row)
    return judged


def _add_citations(trace: Trace, parsed: ParsedAnswer, judged: _Judged, docs: list[EvidenceDoc]) -> None:
    """For each claim of a cited sentence: the cited sources' verdict, and a fetched source that drifted in."""
    by_sentence: dict[int, list[str]] = {}
    for c in citation_rows(trace, parsed):
        targets = by_sentence.setdefault(c.sentence_index, [])
        if c.normalized not in targets:
            targets.append(c.normalized)
    for row in judged.rows:
        targets = by_sentence.get(row.sentence_index, [])
        if not targets:
            continue
        row.cited = targets
        cited_docs = [d for d in docs if d.keys & set(targets)]
        verdicts = [judged.per_doc.get(d.ref, {}).get(row.claim_index, "unsupported") for d in cited_docs]
        row.cited_verdict = max(verdicts, key=_RANK.__getitem__) if verdicts else "unsupported"
        if row.cited_verdict in ("supported", "partial"):
            continue
        for doc in docs:
            if doc.kind == "fetched" and doc not in cited_docs:
                if judged.per_doc.get(doc.ref, {}).get(row.claim_index) == "supported":
                    row.drift_to = doc.url or doc.name
                    break


def _scores(judged: _Judged, meta: dict[str, Any], agreement: dict[str, dict[str, Any]]) -> tuple[Score, ...]:
    rows = judged.rows
    n = len(rows)
    count = {v: sum(1 for r in rows if r.verdict == v) for v in _RANK}

    def m(name: str, **extra: Any) -> dict[str, Any]:
        out = dict(meta) | extra
        if name in agreement:
            out["agreement"] = agreement[name]
        return out

    bad = [r.text for r in rows if r.verdict in ("unsupported", "contradicted")]
    out = [
        score(
            GROUNDING_RATE,
            count["supported"] / n,
            comment=_first("not supported by the evidence", bad) if bad else None,
            **m(GROUNDING_RATE, verdicts=count),
        ),
        score(
            GROUNDING_HALLUCINATION_RATE,
            (count["unsupported"] + count["contradicted"]) / n,
            **m(GROUNDING_HALLUCINATION_RATE, claims_total=n, contradicted=count["contradicted"]),
        ),
        score(
            GROUNDING_UNVERIFIED_QUOTES,
            float(len(judged.unverified)),
            comment=_first("quote not found in the named document", judged.unverified) if judged.unverified else None,
            **m(GROUNDING_UNVERIFIED_QUOTES),
        ),
    ]
    out += judged_citation_scores(rows, meta, m)
    return tuple(out)


def _first(label: str, items: list[str], limit: int = 3) -> str:
    shown = "; ".join(items[:limit])
    more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
    return f"{label}: {shown}{more}"


def judged_citation_scores(
    claims: Sequence[ClaimRow], meta: dict[str, Any], with_meta: Callable[..., dict[str, Any]]
) -> list[Score]:
    """``citation.support_rate`` (PARTIAL kept apart in its metadata) and ``citation.drift_rate`` (naming the fetched
    source that does support the claim) over the claims of cited sentences, from the verdicts the grounding scorer's
    judge call gave them (``cited_verdict``, ``drift_to``). ``with_meta(name, **extra)``: a score's metadata."""
    cited = [r for r in claims if r.cited]
    if not cited:
        return [absent(n, Reasons.NO_CITED_CLAIM.text, **meta) for n in (CITATION_SUPPORT_RATE, CITATION_DRIFT_RATE)]
    supported = sum(1 for r in cited if r.cited_verdict == "supported")
    partial = sum(1 for r in cited if r.cited_verdict == "partial")
    unsupported = [r.text for r in cited if r.cited_verdict not in ("supported", "partial")]
    drifted = [r for r in cited if r.drift_to]
    support = score(
        CITATION_SUPPORT_RATE,
        supported / len(cited),
        comment=_first("cited source does not support", unsupported, 3) if unsupported else None,
        **with_meta(
            CITATION_SUPPORT_RATE,
            cited_claims=len(cited),
            supported=supported,
            partial=partial,
            partial_rate=partial / len(cited),
        ),
    )
    drift = score(
        CITATION_DRIFT_RATE,
        len(drifted) / len(cited),
        comment=_first("supported by another fetched source", [f"{r.text} → {r.drift_to}" for r in drifted], 3)
        if drifted
        else None,
        **with_meta(CITATION_DRIFT_RATE, cited_claims=len(cited), drift_to=sorted({r.drift_to or "" for r in drifted})),
    )
    return [support, drift]
