"""Grounding and citation support, judged: are the answer's claims backed by what the agent actually retrieved?

Per trace: one call splits the answer into atomic claims; then all claims are judged against each evidence group
in one call (one group per fetched page or cited source, one for the remaining search snippets), with only the
top passages of each page. Every quote is verified in code against the document it names; a ``supported`` verdict
whose quote is not found is downgraded to ``unsupported`` and counted. Scores: ``grounding.rate``,
``grounding.hallucination_rate``, ``grounding.unverified_quotes``, ``citation.support_rate`` and
``citation.drift_rate``. A judge failure leaves them absent with ``judge_error``; the judge never sees labels.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

from tracescore.errors import JudgeError
from tracescore.judge.passages import MAX_SHARE, chunk_text, select_passages
from tracescore.judge.protocol import Judge, JudgeRequest
from tracescore.judge.quotes import verify_quote
from tracescore.judge.rubrics import Rubric, load_rubric
from tracescore.score import Score, absent, score
from tracescore.scorers.citations import citation_rows, parse_answer
from tracescore.trace import Trace
from tracescore.urls import normalize_url

__all__ = [
    "BUDGET_REASON",
    "JUDGED_SCORES",
    "JUDGE_ERROR",
    "NO_JUDGE",
    "ClaimList",
    "ClaimRow",
    "EvidenceDoc",
    "Verdict",
    "VerdictList",
    "collect_evidence",
    "grounding_scorer",
    "take_claim_rows",
]

JUDGED_SCORES = (
    "grounding.rate",
    "grounding.hallucination_rate",
    "grounding.unverified_quotes",
    "citation.support_rate",
    "citation.drift_rate",
)
NO_JUDGE = "no judge configured"
JUDGE_ERROR = "judge_error"
BUDGET_REASON = "judge budget spent"
_RANK = {"supported": 3, "partial": 2, "contradicted": 1, "unsupported": 0}
_FAILED_STATUS = re.compile(r"^(4|5)\d\d$|error|fail|timeout", re.IGNORECASE)
_TAG = re.compile(r"<(/?)(documents?|claims?|answer|sentence|question)\b", re.IGNORECASE)


# -- structured outputs (the judge's reply shapes) ------------------------------------------------------------
class Claim(BaseModel):
    sentence: int = Field(description="number of the answer sentence the claim comes from")
    text: str = Field(description="the atomic claim, self-contained")


class ClaimList(BaseModel):
    claims: list[Claim]


class Verdict(BaseModel):
    claim_id: str
    verdict: Literal["supported", "partial", "unsupported", "contradicted"]
    doc_id: str = Field(default="", description="id of the document the quote is copied from")
    quote: str = Field(default="", description="verbatim span from that document")
    reason: str = ""


class VerdictList(BaseModel):
    verdicts: list[Verdict]


# -- evidence -------------------------------------------------------------------------------------------------
@dataclass
class EvidenceDoc:
    """One document as the agent saw it: a fetched page's text, or the snippets of a search hit never fetched."""

    ref: str  # doc_id, else the URL
    text: str
    kind: Literal["fetched", "snippet"]
    url: str | None = None
    doc_id: str | None = None
    keys: set[str] = field(default_factory=set)


def collect_evidence(trace: Trace) -> list[EvidenceDoc]:
    """Fetched pages (successful fetches, text as stored) and search snippets of pages that were never fetched."""
    docs: dict[str, EvidenceDoc] = {}

    def keys_of(url: str | None, doc_id: str | None) -> set[str]:
        return ({normalize_url(url)} if url else set()) | ({doc_id} if doc_id else set())

    def find(keys: set[str]) -> EvidenceDoc | None:
        return next((d for d in docs.values() if d.keys & keys), None)

    for fetch in trace.fetches:
        failed = fetch.status is not None and bool(_FAILED_STATUS.search(str(fetch.status)))
        if failed or not fetch.text.strip():
            continue
        keys = keys_of(fetch.url, fetch.doc_id)
        known = find(keys)
        if known is not None and known.kind == "fetched":
            if fetch.text not in known.text:
                known.text += "\n\n" + fetch.text
            known.keys |= keys
            continue
        ref = fetch.doc_id or fetch.url or f"fetch-{len(docs) + 1}"
        docs[ref] = EvidenceDoc(ref, fetch.text, "fetched", fetch.url, fetch.doc_id, keys)
    for search in trace.searches:
        for hit in search.hits:
            if not hit.snippet or not hit.snippet.strip():
                continue
            keys = keys_of(hit.url, hit.doc_id)
            known = find(keys)
            if known is not None:
                if known.kind == "snippet" and hit.snippet not in known.text:
                    known.text += "\n" + hit.snippet
                continue
            ref = hit.doc_id or hit.url or f"hit-{len(docs) + 1}"
            text = f"{hit.title}\n{hit.snippet}" if hit.title else hit.snippet
            docs[ref] = EvidenceDoc(ref, text, "snippet", hit.url, hit.doc_id, keys)
    return list(docs.values())


# -- per-claim rows (kept in the local store) -----------------------------------------------------------------
@dataclass
class ClaimRow:
    """One claim of one answer: its verdict after quote verification, the evidence it rests on, and citations."""

    claim_index: int
    sentence_index: int
    text: str
    verdict: str
    judge_verdict: str
    doc: str | None = None
    quote: str | None = None
    quote_check: str | None = None
    reason: str | None = None
    cited: list[str] = field(default_factory=list)
    cited_verdict: str | None = None
    drift_to: str | None = None
    calls: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# -- prompts --------------------------------------------------------------------------------------------------
def _escape(text: str) -> str:
    """Evidence cannot open or close our delimiters: tag-like text inside it is neutralised."""
    return _TAG.sub(lambda m: "&lt;" + m.group(1) + m.group(2), text)


def _answer_block(question: str, sentences: Sequence[str]) -> str:
    lines = [f"<question>{_escape(question)}</question>", "<answer>"]
    lines += [f'<sentence n="{i}">{_escape(s)}</sentence>' for i, s in enumerate(sentences)]
    lines.append("</answer>")
    return "\n".join(lines)


def _claims_block(claims: Sequence[str]) -> str:
    lines = ["<claims>"] + [f'<claim id="C{i + 1}">{_escape(c)}</claim>' for i, c in enumerate(claims)]
    return "\n".join(lines + ["</claims>"])


def _documents_block(docs: Sequence[tuple[str, EvidenceDoc, str]]) -> str:
    parts = ["<documents>"]
    for label, doc, passages in docs:
        source = "fetched page" if doc.kind == "fetched" else "search result snippet"
        url = f' url="{_escape(doc.url)}"' if doc.url else ""
        parts.append(f'<document id="{label}" source="{source}"{url}>\n{_escape(passages)}\n</document>')
    parts.append("</documents>")
    parts.append("Judge every claim above against these documents only. Return one verdict per claim.")
    return "\n".join(parts)


def _passages(doc: EvidenceDoc, claims: Sequence[str], max_share: float) -> str:
    chunks = chunk_text(doc.text)
    selected = select_passages(chunks, claims, max_share=max_share)
    out: list[str] = []
    last = -1
    for passage in selected:
        if out and passage.index != last + 1:
            out.append("[…]")
        out.append(passage.text)
        last = passage.index
    return "\n".join(out)


# -- the scorer -----------------------------------------------------------------------------------------------
def _all_absent(reason: str, comment: str | None = None, **meta: Any) -> list[Score]:
    return [Score(name=n, reason=reason, comment=comment, metadata=meta) for n in JUDGED_SCORES]


def grounding_scorer(
    *,
    judge: Judge | None,
    no_judge_reason: str = NO_JUDGE,
    max_cost: float | None = None,
    max_share: float = MAX_SHARE,
    agreement: dict[str, float] | None = None,
) -> Callable[[Trace], list[Score]]:
    """Scorer factory for the judged stages (grounding and citation support/drift).

    ``judge=None`` makes every judged score absent with ``no_judge_reason``. ``max_cost`` (USD) is checked before
    each trace: once the judge's estimated spend reaches it, later traces are left unjudged (absent, with
    ``BUDGET_REASON``) while their deterministic scores are still computed. ``agreement`` (last measured
    agreement with human labels, per score) is recorded in the metadata when known.
    """
    claims_rubric = load_rubric("claims")
    grounding_rubric = load_rubric("grounding")

    def score_grounding(trace: Trace) -> list[Score]:
        if judge is None:
            return _all_absent(no_judge_reason)
        if max_cost is not None and judge.usage.cost_usd >= max_cost:
            return _all_absent(f"{BUDGET_REASON} (${judge.usage.cost_usd:.4f} of max ${max_cost:.4f})")
        meta: dict[str, Any] = {
            "judge_model": judge.model,
            "rubric_version": grounding_rubric.version,
            "claims_rubric_version": claims_rubric.version,
        }
        if not trace.answer.strip():
            return _all_absent("empty answer")
        parsed = parse_answer(trace.answer)
        sentences = [s.text for s in parsed.sentences]
        if not sentences:
            return _all_absent("answer has no sentences")
        try:
            judged = _judge_trace(trace, sentences, judge, claims_rubric, grounding_rubric, max_share)
        except JudgeError as exc:
            return _all_absent(JUDGE_ERROR, comment=str(exc), **meta)
        if not judged.rows:
            return _all_absent("answer makes no factual claim", **meta)
        _add_citations(trace, parsed, judged)
        return _scores(judged, meta, agreement or {})

    score_grounding.__name__ = "grounding"
    return score_grounding


@dataclass
class _Judged:
    """What the judge said about each claim, per evidence document (verdicts after quote verification)."""

    rows: list[ClaimRow]
    docs: list[EvidenceDoc]
    per_doc: dict[str, dict[int, str]] = field(default_factory=dict)  # doc ref → claim index → checked verdict
    unverified: int = 0


def _judge_trace(
    trace: Trace, sentences: list[str], judge: Judge, claims_rubric: Rubric, rubric: Rubric, max_share: float
) -> _Judged:
    reply = judge.judge(JudgeRequest(claims_rubric, _answer_block(trace.question, sentences), ClaimList))
    claims = [c for c in reply.output.claims if c.text.strip()]
    rows = [
        ClaimRow(i, c.sentence if 0 <= c.sentence < len(sentences) else -1, c.text.strip(), "unsupported", "")
        for i, c in enumerate(claims)
    ]
    judged = _Judged(rows, collect_evidence(trace))
    if not rows:
        return judged
    for row in rows:
        row.calls.append(reply.key)
    texts = [r.text for r in rows]
    cited = {c.normalized for c in citation_rows(trace)}
    own = [d for d in judged.docs if d.kind == "fetched" or d.keys & cited]
    rest = [d for d in judged.docs if d not in own]
    groups = [[d] for d in own] + ([rest] if rest else [])
    prefix = _claims_block(texts)
    for group in groups:
        labelled = [(f"D{n + 1}", d, _passages(d, texts, max_share)) for n, d in enumerate(group)]
        answer = judge.judge(JudgeRequest(rubric, _documents_block(labelled), VerdictList, prefix=prefix))
        by_claim = {v.claim_id.strip().upper(): v for v in answer.output.verdicts}
        missing = [f"C{i + 1}" for i in range(len(rows)) if f"C{i + 1}" not in by_claim]
        if missing:
            raise JudgeError(f"{rubric.name} judge reply has no verdict for claim(s) {', '.join(missing)}")
        labels = {label: d for label, d, _ in labelled}
        for i, row in enumerate(rows):
            row.calls.append(answer.key)
            verdict = by_claim[f"C{i + 1}"]
            doc = labels.get(verdict.doc_id.strip().upper()) if verdict.doc_id else None
            if doc is None and len(group) == 1 and verdict.verdict == "unsupported":
                doc = group[0]
            checked = _check(verdict, doc)
            if verdict.verdict == "supported" and checked != "supported":
                judged.unverified += 1
            if doc is not None:
                judged.per_doc.setdefault(doc.ref, {})[i] = checked
            if len(group) == 1:
                judged.per_doc.setdefault(group[0].ref, {}).setdefault(i, checked)
            _merge(row, checked, verdict, doc)
    return judged


def _check(verdict: Verdict, doc: EvidenceDoc | None) -> str:
    """The verdict after quote verification: a supporting or contradicting quote must be in the named document."""
    if verdict.verdict == "unsupported":
        return "unsupported"
    if doc is None or not verify_quote(verdict.quote, doc.text).found:
        return "unsupported"
    return verdict.verdict


def _merge(row: ClaimRow, checked: str, verdict: Verdict, doc: EvidenceDoc | None) -> None:
    """Keep, per claim, the strongest verified verdict over all evidence groups (first one on ties)."""
    first = not row.judge_verdict
    if (
        not first
        and _RANK[checked] <= _RANK[row.verdict]
        and not (
            row.verdict == "unsupported" and row.judge_verdict == "unsupported" and verdict.verdict != "unsupported"
        )
    ):
        return
    row.verdict = checked
    row.judge_verdict = verdict.verdict
    row.doc = (doc.doc_id or doc.url or doc.ref) if doc else None
    row.quote = verdict.quote or None
    row.reason = verdict.reason or None
    row.quote_check = (
        None if verdict.verdict == "unsupported" else ("verified" if checked != "unsupported" else "not found")
    )


def _add_citations(trace: Trace, parsed: Any, judged: _Judged) -> None:
    """For each claim from a cited sentence: the cited sources' verdict, and the fetched source that drifted in."""
    by_sentence: dict[int, list[str]] = {}
    for c in citation_rows(trace, parsed):
        if c.normalized not in by_sentence.setdefault(c.sentence_index, []):
            by_sentence[c.sentence_index].append(c.normalized)
    for row in judged.rows:
        targets = by_sentence.get(row.sentence_index, [])
        if not targets:
            continue
        row.cited = targets
        verdicts = []
        for doc in judged.docs:
            if doc.keys & set(targets):
                verdicts.append(judged.per_doc.get(doc.ref, {}).get(row.claim_index, "unsupported"))
        row.cited_verdict = max(verdicts, key=_RANK.__getitem__) if verdicts else "unsupported"
        if row.cited_verdict in ("supported", "partial"):
            continue
        for doc in judged.docs:
            if doc.kind == "fetched" and not doc.keys & set(targets):
                if judged.per_doc.get(doc.ref, {}).get(row.claim_index) == "supported":
                    row.drift_to = doc.url or doc.doc_id or doc.ref
                    break


def _scores(judged: _Judged, meta: dict[str, Any], agreement: dict[str, float]) -> list[Score]:
    rows = judged.rows
    n = len(rows)
    count = {v: sum(1 for r in rows if r.verdict == v) for v in _RANK}

    def m(name: str, **extra: Any) -> dict[str, Any]:
        out = dict(meta) | extra
        if name in agreement:
            out["agreement"] = agreement[name]
        return out

    bad = [r.text for r in rows if r.verdict in ("unsupported", "contradicted")]
    unverified = [f"{r.doc}: {r.quote!r}" for r in rows if r.quote_check == "not found" and r.quote]
    out = [
        score(
            "grounding.rate",
            count["supported"] / n,
            comment=_first("not supported by the evidence", bad) if bad else None,
            **m("grounding.rate", claims=[r.as_dict() for r in rows], verdicts=count),
        ),
        score(
            "grounding.hallucination_rate",
            (count["unsupported"] + count["contradicted"]) / n,
            **m("grounding.hallucination_rate", claims_total=n, contradicted=count["contradicted"]),
        ),
        score(
            "grounding.unverified_quotes",
            float(judged.unverified),
            comment=_first("quote not found in the named document", unverified) if unverified else None,
            **m("grounding.unverified_quotes"),
        ),
    ]
    cited = [r for r in rows if r.cited]
    if not cited:
        reason = "answer cites no source" if not any(r.cited for r in rows) else "no cited claim"
        out += [absent("citation.support_rate", reason, **meta), absent("citation.drift_rate", reason, **meta)]
        return out
    supported = sum(1 for r in cited if r.cited_verdict == "supported")
    partial = sum(1 for r in cited if r.cited_verdict == "partial")
    drifted = [r for r in cited if r.drift_to]
    out.append(
        score(
            "citation.support_rate",
            supported / len(cited),
            comment=_first(
                "cited source does not support",
                [r.text for r in cited if r.cited_verdict not in ("supported", "partial")],
            )
            if supported + partial < len(cited)
            else None,
            **m(
                "citation.support_rate",
                cited_claims=len(cited),
                supported=supported,
                partial=partial,
                partial_rate=partial / len(cited),
            ),
        )
    )
    out.append(
        score(
            "citation.drift_rate",
            len(drifted) / len(cited),
            comment=_first("supported by another fetched source", [f"{r.text} → {r.drift_to}" for r in drifted])
            if drifted
            else None,
            **m(
                "citation.drift_rate",
                cited_claims=len(cited),
                drift_to=sorted({r.drift_to for r in drifted if r.drift_to}),
            ),
        )
    )
    return out


def _first(label: str, items: list[str], limit: int = 3) -> str:
    shown = "; ".join(items[:limit])
    more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
    return f"{label}: {shown}{more}"


def take_claim_rows(scores: dict[str, Score]) -> list[ClaimRow]:
    """Move the per-claim rows off ``grounding.rate``'s metadata (they go to their own store table, not twice)."""
    rate = scores.get("grounding.rate")
    if rate is None or "claims" not in rate.metadata:
        return []
    rows = [ClaimRow(**row) for row in rate.metadata["claims"]]
    meta = {k: v for k, v in rate.metadata.items() if k != "claims"}
    scores["grounding.rate"] = rate.model_copy(update={"metadata": meta})
    return rows
