"""Retrieval stage: did the search calls bring back the documents the answer needed?

``retrieval.recall_at_{k}``, ``retrieval.first_hit_rank``, ``retrieval.retrieved_any``. Required doc ids are
version-pinned (``policy-returns-v4``); when only another version came back the miss is a stale label, a labelling
task, so recall is absent with that reason instead of a silent retrieval failure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from tracescore.catalog import RETRIEVAL_FIRST_HIT_RANK, RETRIEVAL_RETRIEVED_ANY, recall_name
from tracescore.scores import Score, absent, score
from tracescore.trace import Hit, Trace
from tracescore.urls import is_url, normalize_url

__all__ = ["SCORER_VERSION", "doc_family", "first_hit_rank", "recall_at_k", "retrieval_scorer"]

SCORER_VERSION = "retrieval-1"
_VERSION_SUFFIX = re.compile(r"^(?P<family>.+?)[-_.@]v(?P<version>\d+(?:\.\d+)*)$", re.IGNORECASE)


def _key(ident: str) -> str:
    return normalize_url(ident) if is_url(ident) else ident.strip()


def _hit_keys(hit: Hit, urls: bool = True) -> set[str]:
    """The ids a hit answers to: its doc_id, and its normalised URL when ``urls`` (some required id is a URL)."""
    keys = {hit.doc_id.strip()} if hit.doc_id else set()
    if hit.url and (urls or not hit.doc_id):
        keys.add(_key(hit.url))
    return keys


def doc_family(doc_id: str) -> str | None:
    """The unversioned family of a pinned id (``policy-returns-v4`` → ``policy-returns``), else None."""
    match = _VERSION_SUFFIX.match(doc_id.strip())
    return match.group("family").lower() if match else None


def recall_at_k(required: Iterable[str], rankings: Iterable[list[set[str]]], k: int) -> float:
    """Share of ``required`` found in the first ``k`` entries of any ranking (each entry: the keys of one hit)."""
    wanted = {_key(r) for r in required}
    if not wanted:
        raise ValueError("recall is undefined without required ids")
    found: set[str] = set()
    for ranking in rankings:
        for keys in ranking[:k]:
            found |= keys & wanted
    return len(found) / len(wanted)


def first_hit_rank(required: Iterable[str], rankings: Iterable[list[tuple[int, set[str]]]]) -> int | None:
    """Best rank, within its own ranking, of any required id; None when none came back."""
    wanted = {_key(r) for r in required}
    ranks = [rank for ranking in rankings for rank, keys in ranking if keys & wanted]
    return min(ranks) if ranks else None


def retrieval_scorer(*, k: int = 5) -> Callable[[Trace], list[Score]]:
    """Scorer factory for the retrieval stage; ``k`` is part of the score name so series never mix."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k!r}")
    recall = recall_name(k)

    def score_retrieval(trace: Trace) -> list[Score]:
        searches = trace.searches
        if not searches:
            reason = "no search step in trace"
            return [
                absent(recall, reason, k=k),
                absent(RETRIEVAL_FIRST_HIT_RANK, reason),
                absent(RETRIEVAL_RETRIEVED_ANY, reason),
            ]
        urls = any(is_url(r) for r in trace.labels.required_doc_ids or [])
        ranked = [
            sorted(((rank, _hit_keys(h, urls)) for rank, h in s.ranked_hits()), key=lambda p: p[0]) for s in searches
        ]
        any_hit = any(s.hits for s in searches)
        out = [
            score(RETRIEVAL_RETRIEVED_ANY, any_hit, comment=None if any_hit else "every search call came back empty")
        ]
        required = trace.labels.required_doc_ids
        if required is None:
            reason = "no required_doc_ids label"
            return [absent(recall, reason, k=k), absent(RETRIEVAL_FIRST_HIT_RANK, reason), *out]
        if not required:
            reason = "refusal case: required_doc_ids is empty, scored on the answer"
            return [absent(recall, reason, k=k), absent(RETRIEVAL_FIRST_HIT_RANK, reason), *out]

        top_k = [[keys for _, keys in ranking] for ranking in ranked]
        value = recall_at_k(required, top_k, k)
        found_any = {key for ranking in top_k for keys in ranking for key in keys}
        missing = [r for r in required if _key(r) not in found_any]
        everywhere = {key for ranking in ranked for _, keys in ranking for key in keys}
        stale = _stale([r for r in missing if _key(r) not in everywhere], everywhere)
        if stale:
            pairs = ", ".join(f"required {req} but retrieved {got}" for req, got in stale.items())
            out.insert(0, absent(recall, f"stale label: {pairs}; update the label", k=k, stale=stale))
        else:
            comment = f"missing required docs in top {k}: {', '.join(missing)}" if missing else None
            out.insert(0, score(recall, value, comment=comment, k=k, missing=missing))
        rank = first_hit_rank(required, ranked)
        if rank is None:
            out.insert(1, absent(RETRIEVAL_FIRST_HIT_RANK, "no required doc came back in any search call"))
        else:
            out.insert(1, score(RETRIEVAL_FIRST_HIT_RANK, float(rank)))
        return out

    return score_retrieval


def _stale(missing: list[str], found: set[str]) -> dict[str, str]:
    """Missing required ids whose family came back in another version: {required: retrieved}."""
    by_family: dict[str, str] = {}
    for key in sorted(found):
        family = doc_family(key)
        if family:
            by_family.setdefault(family, key)
    stale = {}
    for req in missing:
        family = doc_family(req)
        if family and family in by_family:
            stale[req] = by_family[family]
    return stale
