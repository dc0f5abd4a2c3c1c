"""The sources an answer cites, keyed as ``citations.citation_rows`` keys them: what the citation scorer builds its rows
from and the stale-source and unused-fetch scores need (a normalised URL or a stripped doc id per source), worked out
once per answer (memoised, as the parse is) and shared by all three."""

from __future__ import annotations

from functools import lru_cache

from tracescore.scorers.sentences import ParsedAnswer, parse_answer, reference_target
from tracescore.trace import Trace
from tracescore.urls import is_url, normalize_url

AnswerCitation = tuple[int, str | None, str, str, str]
"""One citation in an answer sentence: (sentence index, marker or None for a link, target, kind, key), with kind
"url" or "text" and key the normalised URL (a URL) or the stripped text, as ``citation_rows`` gives them."""


def cited_keys(trace: Trace) -> list[str]:
    """The sources the answer cites, as ``citation_rows`` keys them (a normalised URL, a stripped doc id; text
    citations left out), in order, each once: the inline markers' references and links, then the explicit
    citations. Nothing is looked up in the steps, so this costs the parse (memoised) and no index of the hits."""
    if not trace.citations:  # the answer's keys alone, each once already
        return list(_answer_keys(trace.answer))
    keys = dict.fromkeys(_answer_keys(trace.answer))
    for citation in trace.citations:  # kinds and targets as _explicit_rows gives them
        target = citation.url or citation.doc_id
        if citation.url and is_url(citation.url):
            keys.setdefault(normalize_url(citation.url))
        elif target and citation.doc_id:
            keys.setdefault(target.strip())
    return list(keys)


@lru_cache(maxsize=16)
def _answer_keys(answer: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys([c[4] for c in answer_citations(answer) if c[3] == "url"]))


@lru_cache(maxsize=16)
def answer_citations(answer: str) -> tuple[AnswerCitation, ...]:
    """``citations_of(parse_answer(answer))``, memoised on the answer as the parse is: the citation scorer and the
    keys above read one answer's citations, so each reference's URL is found and normalised once per answer."""
    return citations_of(parse_answer(answer))


def citations_of(parsed: ParsedAnswer) -> tuple[AnswerCitation, ...]:
    """Every citation of every sentence, in order: its markers that the reference list resolves, then its links."""
    out: list[AnswerCitation] = []
    references = parsed.references
    targets: dict[str, tuple[str, str, str]] = {}  # marker -> (kind, target, key): one regex per reference
    for index, sentence in enumerate(parsed.sentences):
        if sentence.markers:
            for marker in sentence.markers:
                if marker in references:
                    got = targets.get(marker)
                    if got is None:
                        kind, target = reference_target(references[marker])
                        got = targets[marker] = (kind, target, _key(kind, target))
                    out.append((index, marker, got[1], got[0], got[2]))
        if sentence.links:
            for link in sentence.links:
                kind = "url" if is_url(link) else "text"
                out.append((index, None, link, kind, _key(kind, link)))
    return tuple(out)


def _key(kind: str, target: str) -> str:
    return normalize_url(target) if kind == "url" else target.strip()
