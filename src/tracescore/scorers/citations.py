"""Citations stage: which answer sentences cite what, and did the agent ever see or read what it cited?

Parses inline ``[n]`` markers with a reference list (``[n] URL``, ``[n]: URL``), markdown links and bare URLs,
pairs each answer sentence with its citations, and scores ``citation.coverage``, ``citation.unfetched_rate`` and
``citation.fabricated_count``. The per-citation rows go to the local store.

A sentence contains a word: list markers (``1.``, ``2)``, ``-``, ExpertQA's ``1[1].``), headings and reference-list
lines are not answer sentences. A search the adapter could not read (``Trace.blind_spots``) makes
``citation.fabricated_count`` absent, an unreadable fetch ``citation.unfetched_rate``: never a number resting on a
blind spot. Cost is linear in the trace: every regex scans each character a bounded number of times, the answer is
parsed once (memoised) and its rows built once per trace, explicit citations find their sentence by dict lookup, and
a per-trace guard (``MAX_ANSWER_CHARS``, ``MAX_CITATIONS``, ``MAX_HITS``) scores what it read and says what it left.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field

from tracescore.catalog import CITATION_COVERAGE, CITATION_FABRICATED_COUNT, CITATION_UNFETCHED_RATE
from tracescore.result import CitationRow
from tracescore.scorers.sentences import (
    MAX_ANSWER_CHARS,
    CitedSentence,
    ParsedAnswer,
    parse_answer,
    reference_target,
    split_sentences,
)
from tracescore.scores import Score, absent, score
from tracescore.trace import Trace
from tracescore.urls import is_url, normalize_url

__all__ = [
    "MAX_ANSWER_CHARS",
    "MAX_CITATIONS",
    "MAX_HITS",
    "SCORER_VERSION",
    "CitedSentence",
    "ParsedAnswer",
    "citation_rows",
    "citation_scorer",
    "parse_answer",
    "split_sentences",
]

SCORER_VERSION = "citations-1"

# Per-trace guard (with ``MAX_ANSWER_CHARS``): past these, the scorer scores what it read and says what it left out.
MAX_CITATIONS = 5_000  # explicit ``trace.citations`` entries read
MAX_HITS = 50_000  # search hits and fetches read to decide what the agent saw
_MAX_SENTENCE_SEARCHES = 200  # explicit citations whose sentence is not a whole answer sentence, looked up by text

_FAILED_STATUS = re.compile(r"^(4|5)\d\d$|error|fail|timeout", re.IGNORECASE)


@dataclass(frozen=True)
class _Surface:
    """What the agent saw (search hits and fetches) and read (fetches that did not fail), as normalised keys."""

    seen: frozenset[str]
    fetched: frozenset[str]
    skipped_steps: int  # hits and fetches past MAX_HITS, not read


def _seen_and_fetched(trace: Trace) -> _Surface:
    seen: set[str] = set()
    fetched: set[str] = set()
    budget = MAX_HITS
    skipped = 0
    for step in trace.steps:
        if step.kind == "search":
            take = step.hits[: max(budget, 0)]
            skipped += len(step.hits) - len(take)
            budget -= len(take)
            for hit in take:
                if hit.url:
                    seen.add(normalize_url(hit.url))
                if hit.doc_id:
                    seen.add(hit.doc_id)
            continue
        if budget <= 0:
            skipped += 1
            continue
        budget -= 1
        keys = {normalize_url(step.url)} if step.url else set()
        keys |= {step.doc_id} if step.doc_id else set()
        seen |= keys
        failed = step.status is not None and bool(_FAILED_STATUS.search(str(step.status)))
        if not failed:
            fetched |= keys
    return _Surface(frozenset(seen), frozenset(fetched), skipped)


class _SentenceIndex:
    """Finds the answer sentence an explicit citation's ``sentence`` belongs to: a whole sentence by dict lookup,
    else the first sentence containing it, by one search of the joined answer (at most ``_MAX_SENTENCE_SEARCHES``
    such searches per trace, so 1,000s of citations stay linear)."""

    def __init__(self, sentences: list[CitedSentence]) -> None:
        self._exact: dict[str, int] = {}
        self._starts: list[int] = []
        self._ends: list[int] = []
        offset = 0
        for i, s in enumerate(sentences):
            self._exact.setdefault(s.text, i)
            self._starts.append(offset)
            self._ends.append(offset + len(s.text))
            offset += len(s.text) + 1
        self._joined = "\n".join(s.text for s in sentences)
        self._searches = 0

    def find(self, text: str | None) -> int:
        """Index of the sentence ``text`` is (or is part of), or -1."""
        if not text:
            return -1
        hit = self._exact.get(text)
        if hit is not None:
            return hit
        if self._searches >= _MAX_SENTENCE_SEARCHES:
            return -1
        self._searches += 1
        at = self._joined.find(text)
        while at >= 0:
            index = bisect_right(self._starts, at) - 1
            if at + len(text) <= self._ends[index]:
                return index
            at = self._joined.find(text, at + 1)
        return -1


@dataclass
class _RowsMemo:
    """The last trace's citation rows: the scorer and the pipeline ask for the same trace's rows once each."""

    trace: Trace | None = None
    rows: list[CitationRow] = field(default_factory=list)
    surface: _Surface | None = None
    skipped_citations: int = 0


_LAST: list[_RowsMemo] = [_RowsMemo()]


def citation_rows(trace: Trace, parsed: ParsedAnswer | None = None) -> list[CitationRow]:
    """Every cited source of every sentence (plus the trace's explicit citations), checked against the steps.

    Built once per trace (the last trace's rows are kept), so the scorer and the pipeline share them.
    """
    return _rows_of(trace, parsed).rows


def _rows_of(trace: Trace, parsed: ParsedAnswer | None = None) -> _RowsMemo:
    last = _LAST[0]
    if last.trace is trace:
        return last
    parsed = parsed or parse_answer(trace.answer)
    surface = _seen_and_fetched(trace)
    rows: list[CitationRow] = []
    norms: dict[str, str] = {}

    def add(index: int, marker: str | None, kind: str, target: str) -> None:
        if kind == "url":
            norm = norms.get(target)
            if norm is None:
                norm = norms[target] = normalize_url(target)
        else:
            norm = target.strip()
        rows.append(CitationRow(index, marker, target, kind, norm, norm in surface.fetched, norm in surface.seen))

    for index, sentence in enumerate(parsed.sentences):
        for marker in sentence.markers:
            if marker in parsed.references:
                add(index, marker, *reference_target(parsed.references[marker]))
        for link in sentence.links:
            add(index, None, "url" if is_url(link) else "text", link)
    explicit = trace.citations or []
    index_of = _SentenceIndex(parsed.sentences) if any(c.sentence for c in explicit[:MAX_CITATIONS]) else None
    for citation in explicit[:MAX_CITATIONS]:
        target = citation.url or citation.doc_id
        if not target:
            continue
        kind = "url" if citation.url and is_url(citation.url) else ("doc_id" if citation.doc_id else "text")
        index = index_of.find(citation.sentence) if index_of is not None else -1
        add(index, citation.marker, kind, target)
    memo = _RowsMemo(trace, rows, surface, max(len(explicit) - MAX_CITATIONS, 0))
    _LAST[0] = memo
    return memo


def _blind_spot_reason(trace: Trace, kind: str) -> str | None:
    """Why a score resting on ``kind`` steps cannot be trusted: the steps of that kind the adapter could not read."""
    spots = [b for b in trace.blind_spots if b.kind == kind]
    if not spots:
        return None
    shown = "; ".join(f"{b.tool or kind}: {b.reason}" for b in spots[:3])
    more = f" (+{len(spots) - 3} more)" if len(spots) > 3 else ""
    what = "a cited URL may have come from it" if kind == "search" else "a cited URL may have been read there"
    return f"{kind} step(s) could not be read ({shown}{more}); {what}"


def citation_scorer() -> Callable[[Trace], list[Score]]:
    """Scorer factory for ``citation.coverage``, ``citation.unfetched_rate`` and ``citation.fabricated_count``."""

    def score_citations(trace: Trace) -> list[Score]:
        names = (CITATION_COVERAGE, CITATION_UNFETCHED_RATE, CITATION_FABRICATED_COUNT)
        if not trace.answer.strip():
            return [absent(n, "empty answer") for n in names]
        parsed = parse_answer(trace.answer)
        memo = _rows_of(trace, parsed)
        rows = memo.rows
        if not parsed.sentences:
            return [absent(n, "answer has no sentences") for n in names]
        guard = _guard_notes(parsed, memo)
        cited_idx = {r.sentence_index for r in rows} | {i for i, s in enumerate(parsed.sentences) if s.markers}
        cited = sum(1 for i in range(len(parsed.sentences)) if i in cited_idx)
        uncited = [s.text for i, s in enumerate(parsed.sentences) if i not in cited_idx]
        comment = _first("uncited sentences", uncited) if uncited else None
        if guard:
            comment = "; ".join([*guard, *([comment] if comment else [])])
        out = [
            score(
                CITATION_COVERAGE,
                cited / len(parsed.sentences),
                comment=comment,
                sentences=len(parsed.sentences),
                cited=cited,
                unresolved_markers=parsed.unresolved_markers,
            )
        ]
        sources = {r.normalized: r for r in rows if r.kind != "text"}
        fetched = {r.normalized for r in rows if r.fetched}
        fetch_blind = _blind_spot_reason(trace, "fetch")
        search_blind = _blind_spot_reason(trace, "search")
        if not sources:
            out.append(absent(CITATION_UNFETCHED_RATE, "answer cites no URL or doc id"))
        elif fetch_blind:
            out.append(absent(CITATION_UNFETCHED_RATE, fetch_blind))
        else:
            unfetched = sorted(k for k in sources if k not in fetched)
            out.append(
                score(
                    CITATION_UNFETCHED_RATE,
                    len(unfetched) / len(sources),
                    comment=_first("cited but never fetched", unfetched) if unfetched else None,
                    cited=len(sources),
                    unfetched=unfetched,
                )
            )
        if search_blind:
            out.append(absent(CITATION_FABRICATED_COUNT, search_blind))
        elif guard:
            out.append(absent(CITATION_FABRICATED_COUNT, f"trace over the scoring guard: {'; '.join(guard)}"))
        else:
            fabricated = sorted(k for k, r in sources.items() if r.fabricated)
            out.append(
                score(
                    CITATION_FABRICATED_COUNT,
                    float(len(fabricated)),
                    comment=_first("cited but never seen in any search result or fetch", fabricated)
                    if fabricated
                    else None,
                    fabricated=fabricated,
                )
            )
        return out

    return score_citations


def _guard_notes(parsed: ParsedAnswer, memo: _RowsMemo) -> list[str]:
    """What the per-trace guard left unread, in words (empty when the whole trace was read)."""
    notes = []
    if parsed.truncated:
        notes.append(f"answer longer than {MAX_ANSWER_CHARS:,} characters: only the start was parsed")
    if memo.skipped_citations:
        notes.append(f"{memo.skipped_citations} explicit citations past the first {MAX_CITATIONS:,} not read")
    if memo.surface is not None and memo.surface.skipped_steps:
        notes.append(f"{memo.surface.skipped_steps} hits/fetches past the first {MAX_HITS:,} not read")
    return notes


def _first(label: str, items: list[str], limit: int = 5) -> str:
    shown = "; ".join(items[:limit])
    more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
    return f"{label}: {shown}{more}"
