"""The grounding judge call, built once for the scorer, the batch prefill and the dry run: the evidence the agent saw,
delimited, with the numbered answer sentences, and the reply shape the judge must fill.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, Field

from tracescore.judge.passages import MAX_SHARE, chunk_text, select_passages
from tracescore.judge.protocol import JudgeRequest
from tracescore.judge.quotes import verify_quote
from tracescore.judge.redact import PLACEHOLDER
from tracescore.judge.rubrics import Rubric, load_rubric
from tracescore.reasons import Reasons
from tracescore.scorers.cited import citations_of
from tracescore.scorers.sentences import ParsedAnswer, parse_answer
from tracescore.session import Earlier
from tracescore.trace import Trace, fetch_failed
from tracescore.urls import normalize_url

_MARKERS = re.compile(r"\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\]")
_TAG = re.compile(r"<(?!" + PLACEHOLDER.pattern[1:] + r")(?=[/?]?[A-Za-z_]|!)")
"""The ``<`` of anything tag-shaped (``<system>``, ``</document>``, ``<!--``, ``<?xml``); ``a < b`` and a redaction's
placeholder (``<email-1>``: it closes no delimiter) stay as they are."""


# -- the judge's reply shape (structured output) --------------------------------------------------------------
class Evidence(BaseModel):
    doc_id: str
    verdict: Literal["supported", "partial", "contradicted"]
    quote: str


class JudgedClaim(BaseModel):
    sentence: int
    text: str
    evidence: list[Evidence]
    reason: str


class Judgement(BaseModel):
    claims: list[JudgedClaim] = Field(description="the answer's atomic factual claims, in answer order")


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
    origin: str | None = None  # a page fetched in an earlier turn of the session: "turn 1, trace t1"

    @property
    def name(self) -> str:
        return self.doc_id or self.url or self.ref


def _keys(url: str | None, doc_id: str | None) -> set[str]:
    return ({normalize_url(url)} if url else set()) | ({doc_id} if doc_id else set())


def collect_evidence(trace: Trace) -> list[EvidenceDoc]:
    """Fetched pages (successful fetches, text as stored) and the search snippets of pages never fetched."""
    docs: list[EvidenceDoc] = []

    def find(keys: set[str]) -> EvidenceDoc | None:
        return next((d for d in docs if d.keys & keys), None)

    for fetch in trace.fetches:
        failed = fetch_failed(fetch.status)
        if failed or not fetch.text.strip():
            continue
        keys = _keys(fetch.url, fetch.doc_id)
        known = find(keys)
        if known is not None:
            if fetch.text not in known.text:
                known.text += "\n\n" + fetch.text
            known.keys |= keys
            continue
        ref = fetch.doc_id or fetch.url or f"fetch-{len(docs) + 1}"
        docs.append(EvidenceDoc(ref, fetch.text, "fetched", fetch.url, fetch.doc_id, keys))
    for search in trace.searches:
        for hit in search.hits:
            if not hit.snippet or not hit.snippet.strip():
                continue
            keys = _keys(hit.url, hit.doc_id)
            known = find(keys)
            if known is not None:
                if known.kind == "snippet" and hit.snippet not in known.text:
                    known.text += "\n" + hit.snippet
                continue
            ref = hit.doc_id or hit.url or f"hit-{len(docs) + 1}"
            text = f"{hit.title}\n{hit.snippet}" if hit.title else hit.snippet
            docs.append(EvidenceDoc(ref, text, "snippet", hit.url, hit.doc_id, keys))
    return docs


def carried_docs(parsed: ParsedAnswer, docs: Sequence[EvidenceDoc], earlier: Earlier) -> list[EvidenceDoc]:
    """The pages the answer cites that no document of the trace is and an earlier turn fetched (its text as that
    turn read it), in citation order."""
    have = set().union(*(d.keys for d in docs)) if docs else set()
    out: list[EvidenceDoc] = []
    for _, _, _, kind, key in citations_of(parsed):
        if kind == "text" or key in have or (turn := earlier.fetched(key)) is None:
            continue
        page = next(p for t, p in earlier.pages() if t is turn and key in _keys(p.url, p.doc_id))
        have |= _keys(page.url, page.doc_id)
        if page.text.strip():
            ref = page.doc_id or page.url or key
            out.append(EvidenceDoc(ref, page.text, "fetched", page.url, page.doc_id, _keys(page.url, page.doc_id),
                                   turn.where))  # fmt: skip
    return out


# -- the request ----------------------------------------------------------------------------------------------
def quoted(quote: str, text: str) -> bool:
    """The judge's ``quote`` is in ``text`` as stored, or as the judge saw it (tag-like text escaped): verified in
    code (``judge/quotes.py``), never taken on the judge's word."""
    return verify_quote(quote, text).found or ("&lt;" in quote and verify_quote(quote, escape_tags(text)).found)


def escape_tags(text: str) -> str:
    """Text inside the request opens no tag at all: the ``<`` of every tag-like sequence becomes ``&lt;``."""
    return _TAG.sub("&lt;", text)


def _passages(doc: EvidenceDoc, queries: Sequence[str], max_share: float) -> str:
    out: list[str] = []
    last = -1
    for passage in select_passages(chunk_text(doc.text), queries, max_share=max_share):
        if out and passage.index != last + 1:
            out.append("[…]")
        out.append(passage.text)
        last = passage.index
    return "\n".join(out)


def grounding_request(
    trace: Trace,
    sentences: Sequence[str],
    docs: Sequence[EvidenceDoc],
    *,
    max_share: float = MAX_SHARE,
    rubric: Rubric | None = None,
) -> tuple[JudgeRequest, dict[str, EvidenceDoc]]:
    """The one judge call of a trace (question, numbered answer sentences, delimited evidence) and its doc ids;
    ``rubric`` (default: the bundled ``grounding``) is the system text the judge receives."""
    lines = [f"<question>{escape_tags(trace.question)}</question>", "<answer>"]
    lines += [f'<sentence n="{i}">{escape_tags(s)}</sentence>' for i, s in enumerate(sentences)]
    lines.append("</answer>")
    block, labels = documents_block(docs, sentences, max_share=max_share)
    return JudgeRequest(rubric or load_rubric("grounding"), "\n".join([*lines, block]), Judgement), labels


def documents_block(
    docs: Sequence[EvidenceDoc], sentences: Sequence[str], *, max_share: float = MAX_SHARE
) -> tuple[str, dict[str, EvidenceDoc]]:
    """The ``<documents>`` block of a judge request (each document cut to its passages for ``sentences``, delimited
    with an id ``D1``, ``D2``, …) and the document of each id: what the judge quotes from and the quotes are
    verified against (grounding, and a ``[[criteria]]`` criterion)."""
    lines = ["<documents>"]
    queries = [_MARKERS.sub(" ", s) for s in sentences]
    labels: dict[str, EvidenceDoc] = {}
    for n, doc in enumerate(docs, start=1):
        label = f"D{n}"
        labels[label] = doc
        source = "fetched page" if doc.kind == "fetched" else "search result snippet"
        if doc.origin:
            source += f" (an earlier turn: {doc.origin})"
        url = f' url="{escape_tags(doc.url).replace(chr(34), "%22")}"' if doc.url else ""
        body = escape_tags(_passages(doc, queries, max_share))
        lines.append(f'<document id="{label}" source="{source}"{url}>\n{body}\n</document>')
    lines.append("</documents>")
    return "\n".join(lines), labels


@dataclass(frozen=True)
class GroundingCall:
    """The one judge call scoring a trace makes: the request, its document labels and the parsed answer."""

    request: JudgeRequest
    labels: dict[str, EvidenceDoc]
    parsed: ParsedAnswer
    docs: list[EvidenceDoc]

    @property
    def sentences(self) -> int:
        return len(self.parsed.sentences)


def grounding_call(
    trace: Trace, *, max_share: float = MAX_SHARE, rubric: Rubric | None = None, earlier: Earlier | None = None
) -> GroundingCall | str:
    """The judge call of ``trace`` (the scorer, the batch prefill and the dry run all use this), or why none; with
    ``earlier`` (its session's earlier turns), a page the answer cites that the trace did not fetch but an earlier
    turn did is one more document, named as such."""
    if not trace.answer.strip():
        return Reasons.EMPTY_ANSWER.text
    parsed = parse_answer(trace.answer)
    sentences = [s.text for s in parsed.sentences]
    if not sentences:
        return Reasons.NO_SENTENCES.text
    docs = collect_evidence(trace)
    if earlier is not None:
        docs += carried_docs(parsed, docs, earlier)
    request, labels = grounding_request(trace, sentences, docs, max_share=max_share, rubric=rubric)
    return GroundingCall(request, labels, parsed, docs)
