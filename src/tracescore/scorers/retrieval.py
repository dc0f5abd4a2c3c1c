"""Retrieval stage: did the search calls bring back the documents the answer needed?

``retrieval.recall_at_{k}``, ``retrieval.first_hit_rank``, ``retrieval.retrieved_any`` (and, with a ``hops`` label,
the hop scores of ``scorers/hops.py``). Required doc ids are
version-pinned (``policy-returns-v4``); when only another version came back the miss is a stale label, a labelling
task, so recall is absent with that reason instead of a silent retrieval failure.
"""

from __future__ import annotations

import re
from functools import lru_cache
from operator import attrgetter
from typing import Annotated

from pydantic import Field

from tracescore.reasons import Reasons
from tracescore.registry import ScoreSpec, reasons, scorer
from tracescore.scorers.hops import HOP_SPECS, hop_scores
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scores import Score, absent, score
from tracescore.trace import Hit, SearchStep, Trace
from tracescore.urls import URL_CACHE_SIZE, is_url, normalize_url

RETRIEVAL_RECALL_AT_K = "retrieval.recall_at_{k}"  # k is part of the name: recall_name(k)
RECALL_PREFIX = RETRIEVAL_RECALL_AT_K.partition("{k}")[0]  # every recall name starts so
RETRIEVAL_FIRST_HIT_RANK = "retrieval.first_hit_rank"
RETRIEVAL_RETRIEVED_ANY = "retrieval.retrieved_any"
_WHY = Reasons
_RETRIEVAL = (_WHY.NO_SEARCH_STEP, _WHY.NO_REQUIRED_LABEL, _WHY.REFUSAL_RECALL, _WHY.EMPTY_REQUIRED_ID)
SPECS = (
    ScoreSpec(RETRIEVAL_RECALL_AT_K, "numeric", "higher", 0, 1, absent=reasons(*_RETRIEVAL, _WHY.STALE_LABEL),
              definition="share of required_doc_ids among the first k hits of any search call"),
    ScoreSpec(RETRIEVAL_FIRST_HIT_RANK, "numeric", "lower", 1, absent=reasons(*_RETRIEVAL, _WHY.NO_REQUIRED_HIT),
              definition="best rank, within its own search call, of any required doc; absent when none came back"),
    ScoreSpec(RETRIEVAL_RETRIEVED_ANY, "boolean", "higher", absent=reasons(_WHY.NO_SEARCH_STEP, _WHY.STEPS_UNREADABLE),
              definition="any hit came back at all"),
    *HOP_SPECS,
)  # fmt: skip


def recall_name(k: int) -> str:
    """The recall score's name at cut-off ``k`` (k is part of the name so series never mix)."""
    return RETRIEVAL_RECALL_AT_K.format(k=k)

_VERSION_SUFFIX = re.compile(r"^(?P<family>.+?)[-_.@]v(?P<version>\d+(?:\.\d+)*)$", re.IGNORECASE)


_SHARED_RANKS = 100  # first_hit_rank Scores kept per scorer: ranks past this are built per trace
_is_url = lru_cache(maxsize=URL_CACHE_SIZE)(is_url)  # required ids repeat across a run's traces


@lru_cache(maxsize=URL_CACHE_SIZE)
def _key(ident: str) -> str:
    """The id a required id or a hit's URL compares by (a normalised URL, else the stripped text); cached per run."""
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


class _Found:
    """Which wanted keys one pass over the hits found: in some call's top k, anywhere, and the best rank of any."""

    __slots__ = ("top", "anywhere", "rank")

    def __init__(self) -> None:
        self.top: set[str] = set()
        self.anywhere: set[str] = set()
        self.rank: int | None = None


_RANK_OF = attrgetter("rank")


def _matches(hits: list[Hit], wanted: set[str], urls: bool) -> list[tuple[int, str]]:
    """(position, key) of every hit answering to a wanted key: by its doc_id, and by its URL when ``urls`` (some
    required id is a URL) or when it has no doc_id. A plain loop: on pydantic hits, map(attrgetter) and
    map(str.strip) cost more instructions than this (measured with callgrind)."""
    matches: list[tuple[int, str]] = []
    for i, hit in enumerate(hits):
        doc_id = hit.doc_id
        if doc_id:
            if (key := doc_id.strip()) in wanted:
                matches.append((i, key))
            if not urls:
                continue  # a hit with a doc_id answers by its URL only when some required id is a URL
        url = hit.url
        if url and (key := _key(url)) in wanted:
            matches.append((i, key))
    return matches


def _find(searches: list[SearchStep], wanted: set[str], urls: bool, k: int) -> _Found:
    """One pass over every hit: the wanted keys it answers to, whether it is in its call's top ``k`` (calls ranked
    by ``rank``, stable, list position when absent) and the best rank; only calls with a match are ranked."""
    found = _Found()
    for search in searches:
        hits = search.hits
        matches = _matches(hits, wanted, urls)
        if not matches:
            continue
        ranks = list(map(_RANK_OF, hits))
        if None in ranks:  # a hit without a rank is ranked by its list position
            ranks = [hit.rank if hit.rank is not None else i for i, hit in enumerate(hits, start=1)]
        top: range | set[int] = range(k)
        if len(hits) > k and sorted(ranks) != ranks:
            top = set(sorted(range(len(hits)), key=ranks.__getitem__)[:k])
        for i, key in matches:
            found.anywhere.add(key)
            if i in top:
                found.top.add(key)
            if found.rank is None or ranks[i] < found.rank:
                found.rank = ranks[i]
    return found


def all_found_after(searches: list[SearchStep], required: list[str | list[str]]) -> tuple[int | None, list[str]]:
    """The 0-based index of the search call whose hits (at any rank) completed the required documents, a plain id a
    group of one and a group satisfied by any member (``None`` when some group never came back), and the groups
    not yet seen then (as written, alternatives joined with " or ")."""
    groups = [[entry] if isinstance(entry, str) else entry for entry in required]
    keysets = [frozenset(map(_key, group)) for group in groups]
    urls = any(_is_url(m) for group in groups for m in group)
    wanted: set[str] = set().union(*keysets)
    seen: set[str] = set()
    for index, search in enumerate(searches):
        seen.update(key for _, key in _matches(search.hits, wanted, urls))
        if all(keys & seen for keys in keysets):
            return index, []
    return None, [" or ".join(g) for g, keys in zip(groups, keysets, strict=True) if not keys & seen]


def _unread_searches(trace: Trace) -> str | None:
    """Why ``retrieval.retrieved_any`` cannot say "every search came back empty": a search step could not be read
    (its results may hold hits), else None."""
    spots = [b for b in trace.blind_spots if b.kind == "search"]
    if not spots:
        return None
    shown = "; ".join(b.reason for b in spots[:3]) + (f" (+{len(spots) - 3} more)" if len(spots) > 3 else "")
    return Reasons.STEPS_UNREADABLE.format(kind="search", steps=shown, consequence="its results may hold hits")


@scorer(stage="retrieval", version="retrieval-1", scores=SPECS)
def retrieval_scorer(*, k: Annotated[int, Field(ge=1)] = 5) -> Scorer:
    """Scorer factory for the retrieval stage; ``k`` (the cut-off of recall) is part of the score name so series
    never mix."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k!r}")
    recall = recall_name(k)
    none = Reasons.NO_SEARCH_STEP.text
    no_search = Scored((*_absent(recall, k, none), absent(RETRIEVAL_RETRIEVED_ANY, none)))
    no_label = _absent(recall, k, Reasons.NO_REQUIRED_LABEL.text)
    refusal = _absent(recall, k, Reasons.REFUSAL_RECALL.text)
    no_rank = absent(RETRIEVAL_FIRST_HIT_RANK, Reasons.NO_REQUIRED_HIT.text)
    ranks: dict[int, Score] = {}  # first_hit_rank by rank, built once per rank (up to _SHARED_RANKS)
    full_recall = score(recall, 1.0, k=k, missing=[])  # every required doc in the top k: 1.0, as the division gives
    retrieved = {True: score(RETRIEVAL_RETRIEVED_ANY, True)}
    retrieved[False] = score(RETRIEVAL_RETRIEVED_ANY, False, comment="every search call came back empty")

    def score_retrieval(trace: Trace) -> Scored:
        """The retrieval scores, and the hop scores after them when the trace has a ``hops`` label."""
        scored = _plain(trace)
        return Scored((*scored, *hops)) if (hops := hop_scores(trace)) else scored

    def _plain(trace: Trace) -> Scored:
        searches = trace.searches
        if not searches:
            return no_search
        any_hit = retrieved[bool(searches[0].hits) or any(s.hits for s in searches)]  # most: the first has hits
        if not any_hit.value and (unread := _unread_searches(trace)) is not None:
            any_hit = absent(RETRIEVAL_RETRIEVED_ANY, unread)  # the unread results may have held hits
        required = trace.labels.required_doc_ids
        if required is None:
            return Scored((*no_label, any_hit))
        if not required:
            return Scored((*refusal, any_hit))
        if len(required) == 1 and type(only := required[0]) is str:  # most labels: one id, no list built for it
            return Scored((*_one(searches, only, required), any_hit))
        if not all(type(r) is str for r in required):  # some entry is a group of alternatives
            grouped = _grouped(searches, required, recall, k)
            if isinstance(grouped, tuple):
                return Scored((*grouped, any_hit))
            return Scored((grouped.first, ranked(grouped.found.rank), any_hit))
        flat: list[str] = required  # type: ignore[assignment]  # every entry is a str (checked above)
        if not all(r.strip() for r in flat):  # an empty id can match no document: a broken label, not a miss
            return Scored((*_absent(recall, k, Reasons.EMPTY_REQUIRED_ID.format(required=required)), any_hit))
        keys = [_key(r) for r in flat]
        wanted = set(keys)
        urls = any(_is_url(r) for r in flat)
        found = _find(searches, wanted, urls, k)
        # "missing": the required ids in no call's top k (returned lower down or never); a stale label is one never
        # returned whose other version was
        missing = [r for r, key in zip(flat, keys, strict=True) if key not in found.top]
        never = [r for r, key in zip(flat, keys, strict=True) if key not in found.anywhere]
        stale = _stale(never, _everywhere(searches, urls)) if any(doc_family(r) for r in never) else {}
        if stale:
            first = _stale_recall(recall, k, stale)
        elif not missing:
            first = full_recall
        else:
            comment = f"missing required docs in top {k}: {', '.join(missing)}"
            first = score(recall, len(found.top) / len(wanted), comment=comment, k=k, missing=missing)
        return Scored((first, ranked(found.rank), any_hit))

    def _one(searches: list[SearchStep], required: str, label: list[str | list[str]]) -> tuple[Score, Score]:
        """Recall and first-hit rank of a single required id: what the general path gives for a list of one."""
        if not required.strip():
            return _absent(recall, k, Reasons.EMPTY_REQUIRED_ID.format(required=label))
        key, urls = _key(required), _is_url(required)
        found = _find(searches, {key}, urls, k)
        if key in found.top:
            return full_recall, ranked(found.rank)
        stale = {}
        if key not in found.anywhere and doc_family(required):
            stale = _stale([required], _everywhere(searches, urls))
        if stale:
            return _stale_recall(recall, k, stale), ranked(found.rank)
        comment = f"missing required docs in top {k}: {required}"
        return score(recall, 0.0, comment=comment, k=k, missing=[required]), ranked(found.rank)

    def ranked(rank: int | None) -> Score:
        """``first_hit_rank``: absent without a hit, else shared for the first ``_SHARED_RANKS`` ranks."""
        if rank is None:
            return no_rank
        if rank not in ranks and rank <= _SHARED_RANKS:
            ranks[rank] = score(RETRIEVAL_FIRST_HIT_RANK, float(rank))
        return ranks.get(rank) or score(RETRIEVAL_FIRST_HIT_RANK, float(rank))

    return score_retrieval


def _stale_recall(recall: str, k: int, stale: dict[str, str]) -> Score:
    pairs = ", ".join(f"required {req} but retrieved {got}" for req, got in stale.items())
    return absent(recall, Reasons.STALE_LABEL.format(pairs=pairs), k=k, stale=stale)


class _Grouped:
    __slots__ = ("first", "found")

    def __init__(self, first: Score, found: _Found) -> None:
        self.first, self.found = first, found


def _grouped(
    searches: list[SearchStep], required: list[str | list[str]], recall: str, k: int
) -> _Grouped | tuple[Score, Score]:
    """Recall over groups of alternatives (a plain id is a group of one): a group is satisfied when any member is in
    some call's top ``k``; recall = satisfied groups / groups (equal groups counted once, as equal ids are). A group
    none of whose members came back anywhere is a stale label when a member's other version did."""
    groups = [[entry] if isinstance(entry, str) else entry for entry in required]
    members = [m for group in groups for m in group]
    if not all(m.strip() for m in members):
        reason = Reasons.EMPTY_REQUIRED_ID.format(required=required)
        return _absent(recall, k, reason)
    keysets = [frozenset(map(_key, group)) for group in groups]
    urls = any(_is_url(m) for m in members)
    found = _find(searches, set().union(*keysets), urls, k)
    missing = [entry for entry, keys in zip(required, keysets, strict=True) if not keys & found.top]
    never = [m for group, keys in zip(groups, keysets, strict=True) if not keys & found.anywhere for m in group]
    stale = _stale(never, _everywhere(searches, urls)) if any(doc_family(m) for m in never) else {}
    if stale:
        return _Grouped(_stale_recall(recall, k, stale), found)
    distinct = set(keysets)
    satisfied = sum(1 for keys in distinct if keys & found.top)
    if not missing:
        return _Grouped(score(recall, 1.0, k=k, missing=[]), found)
    named = ", ".join(entry if isinstance(entry, str) else " or ".join(entry) for entry in missing)
    comment = f"missing required docs in top {k}: {named}"
    return _Grouped(score(recall, satisfied / len(distinct), comment=comment, k=k, missing=missing), found)


def _absent(recall: str, k: int, reason: str) -> tuple[Score, Score]:
    """Recall and first-hit rank absent for one fixed reason, built once per scorer (Scores are frozen)."""
    return absent(recall, reason, k=k), absent(RETRIEVAL_FIRST_HIT_RANK, reason)


def _everywhere(searches: list[SearchStep], urls: bool) -> set[str]:
    """Every key any hit answers to: the pool a stale label's other version is looked up in."""
    return {key for search in searches for hit in search.hits for key in _hit_keys(hit, urls)}


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
