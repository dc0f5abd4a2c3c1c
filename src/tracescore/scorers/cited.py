"""The sources an answer cites, keyed as ``citations.citation_rows`` keys them, without the rows: what the stale-source
and unused-fetch scores need (a normalised URL or a stripped doc id per source), for the cost of the memoised parse."""

from __future__ import annotations

from functools import lru_cache

from tracescore.scorers.sentences import parse_answer, reference_target
from tracescore.trace import Trace
from tracescore.urls import is_url, normalize_url

__all__ = ["cited_keys"]


def cited_keys(trace: Trace) -> list[str]:
    """The sources the answer cites, as ``citation_rows`` keys them (a normalised URL, a stripped doc id; text
    citations left out), in order, each once: the inline markers' references and links, then the explicit
    citations. Nothing is looked up in the steps, so this costs the parse (memoised) and no index of the hits."""
    keys = dict.fromkeys(_answer_keys(trace.answer))
    for citation in trace.citations or ():  # kinds and targets as _explicit_rows gives them
        target = citation.url or citation.doc_id
        if citation.url and is_url(citation.url):
            keys.setdefault(normalize_url(citation.url))
        elif target and citation.doc_id:
            keys.setdefault(target.strip())
    return list(keys)


@lru_cache(maxsize=16)
def _answer_keys(answer: str) -> tuple[str, ...]:
    parsed = parse_answer(answer)
    keys: dict[str, None] = {}
    for sentence in parsed.sentences:
        for marker in sentence.markers:
            if marker in parsed.references:
                kind, target = reference_target(parsed.references[marker])
                if kind == "url":
                    keys.setdefault(normalize_url(target))
        for link in sentence.links:
            if is_url(link):
                keys.setdefault(normalize_url(link))
    return tuple(keys)
