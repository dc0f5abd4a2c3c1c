"""``scorers/trajectory.py``'s functions as they were before its speed-up (#33), the ones it changed: the reference
the fast scorer is compared with in tests/scorers/test_signals_same.py (what it did not change is imported). Frozen,
but for the meaning changes an issue made since, applied here in the plain form (#43: ``fetch.chars`` counts only
fetches that did not fail)."""

from __future__ import annotations

import json
import re

from tracescore.catalog import Reasons
from tracescore.scorers.cited import cited_keys
from tracescore.scorers.retrieval import all_found_after
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scorers.sentences import parse_answer
from tracescore.scorers.trajectory import (
    _EDGES,
    _STOP,
    FETCH_CALLS,
    FETCH_CHARS,
    FETCH_UNUSED_RATE,
    FIRST_QUERY,
    SEARCH_AFTER_FOUND,
    SEARCH_CALLS,
    SEARCH_QUERY_OVERLAP,
    SEARCH_REPEATED_QUERIES,
    _calls,
    _Scores,
    _Steps,
)
from tracescore.scores import Score, absent, score
from tracescore.trace import Trace, fetch_failed
from tracescore.urls import normalize_url

_SPACES = re.compile(r"\s+")
_WORD = re.compile(r"[^\W_]+")


def normalise_query(query: str) -> str:
    """The query as compared for repeats: case-folded, whitespace collapsed, quotes and punctuation at its ends
    dropped."""
    return _SPACES.sub(" ", query.casefold()).strip(_EDGES)


def _unreadable(trace: Trace, kind: str, what: str) -> str | None:
    spots = [b for b in trace.blind_spots if b.kind == kind]
    if not spots:
        return None
    shown = "; ".join(f"{b.tool or kind}: {b.reason}" for b in spots[:3])
    more = f" (+{len(spots) - 3} more)" if len(spots) > 3 else ""
    return Reasons.STEPS_UNREADABLE.format(kind=kind, steps=shown + more, consequence=what)


def _repeated(trace: Trace, searches: int) -> Score:
    if not searches:
        return absent(SEARCH_REPEATED_QUERIES, Reasons.NO_SEARCH_STEP.text)
    reason = _unreadable(trace, "search", "its query may repeat another")
    if reason is not None:
        return absent(SEARCH_REPEATED_QUERIES, reason)
    sent: set[str] = set()
    repeats: list[str] = []
    for step in trace.searches:
        query = normalise_query(step.query)
        if not query:
            continue  # no query recorded: nothing to compare
        if query in sent:
            repeats.append(step.query)
        sent.add(query)
    comment = "; ".join(f"repeated: {q!r}" for q in repeats[:5]) + (f" (+{len(repeats) - 5} more)"
                                                                    if len(repeats) > 5 else "")  # fmt: skip
    return score(SEARCH_REPEATED_QUERIES, len(repeats), comment=comment or None)


def _chars(trace: Trace, fetches: int) -> Score:
    if not fetches:
        return absent(FETCH_CHARS, Reasons.NO_PAGE_FETCHED.text)
    reason = _unreadable(trace, "fetch", "its text was not counted")
    if reason is not None:
        return absent(FETCH_CHARS, reason)
    return score(FETCH_CHARS, sum(len(step.text) for step in trace.fetches if not fetch_failed(step.status)))


def content_words(text: str) -> list[str]:
    """The words of ``text`` that carry content, case-folded, in order, each once: letters and digits runs, not a
    stop word."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.casefold()):
        if word not in _STOP:
            seen.setdefault(word)
    return list(seen)


def _quoted(query: str) -> str:
    return json.dumps(query, ensure_ascii=False)


def _overlap(trace: Trace, searches: int) -> Score:
    if not searches:
        return absent(SEARCH_QUERY_OVERLAP, Reasons.NO_SEARCH_STEP.text)
    reason = _unreadable(trace, "search", "the first query may be its")
    if reason is not None:
        return absent(SEARCH_QUERY_OVERLAP, reason)
    if not trace.question.strip():
        return absent(SEARCH_QUERY_OVERLAP, Reasons.NO_QUESTION.text)
    wanted = content_words(trace.question)
    if not wanted:
        return absent(SEARCH_QUERY_OVERLAP, Reasons.NO_QUESTION_WORD.text)
    queries = [step.query for step in trace.searches]
    if not queries[0].strip():
        return absent(SEARCH_QUERY_OVERLAP, Reasons.NO_FIRST_QUERY.text)
    sent = set(_WORD.findall(queries[0].casefold()))
    missing = [w for w in wanted if w not in sent]
    comment = FIRST_QUERY + _quoted(queries[0])
    if missing:
        comment += "; question words not in it: " + ", ".join(missing[:10]) + (" …" if len(missing) > 10 else "")
    later = [_quoted(q) for q in queries[1:] if q.strip()]
    if later:
        comment += "; later queries: " + ", ".join(later[:5]) + (f" (+{len(later) - 5} more)" if len(later) > 5
                                                                 else "")  # fmt: skip
    return score(SEARCH_QUERY_OVERLAP, (len(wanted) - len(missing)) / len(wanted), comment=comment,
                 words=len(wanted), missing=missing)  # fmt: skip


def _unused(trace: Trace, fetches: int) -> Score:
    """Pages read (distinct, fetches that did not fail) that no citation names / pages read."""
    if not fetches:
        return absent(FETCH_UNUSED_RATE, Reasons.NO_PAGE_FETCHED.text)
    if not trace.answer.strip():
        return absent(FETCH_UNUSED_RATE, Reasons.EMPTY_ANSWER.text)
    if not parse_answer(trace.answer).sentences:
        return absent(FETCH_UNUSED_RATE, Reasons.NO_SENTENCES.text)
    cited = set(cited_keys(trace))
    if not cited:
        return absent(FETCH_UNUSED_RATE, Reasons.NOTHING_CITED.text)
    reason = _unreadable(trace, "fetch", "its page may be one the answer cites or not")
    if reason is not None:
        return absent(FETCH_UNUSED_RATE, reason)
    pages: dict[str, set[str]] = {}  # a page (its URL, else its doc id) -> the keys a citation may name it by
    for step in trace.fetches:
        if fetch_failed(step.status):
            continue
        url = normalize_url(step.url) if step.url else None
        doc = step.doc_id.strip() if step.doc_id else None
        if url or doc:
            pages.setdefault(url or doc or "", set()).update(k for k in (url, doc) if k)
    if not pages:
        return absent(FETCH_UNUSED_RATE, Reasons.NO_PAGE_FETCHED.text)
    unused = [page for page, keys in pages.items() if not keys & cited]
    comment = ("fetched, never cited: " + "; ".join(unused[:5]) + (f" (+{len(unused) - 5} more)" if len(unused) > 5
                                                                     else "")) if unused else None  # fmt: skip
    return score(FETCH_UNUSED_RATE, len(unused) / len(pages), comment=comment, pages=len(pages), unused=unused)


def _after_found(trace: Trace, searches: int) -> Score:
    """Search calls after the one whose hits completed ``required_doc_ids`` (groups: any member)."""
    required = trace.labels.required_doc_ids
    if not searches:
        return absent(SEARCH_AFTER_FOUND, Reasons.NO_SEARCH_STEP.text)
    if required is None:
        return absent(SEARCH_AFTER_FOUND, Reasons.NO_REQUIRED_LABEL.text)
    if not required:
        return absent(SEARCH_AFTER_FOUND, Reasons.REFUSAL_RECALL.text)
    if not all(m.strip() for entry in required for m in ([entry] if isinstance(entry, str) else entry)):
        return absent(SEARCH_AFTER_FOUND, Reasons.EMPTY_REQUIRED_ID.format(required=required))
    reason = _unreadable(trace, "search", "it may have found them earlier")
    if reason is not None:
        return absent(SEARCH_AFTER_FOUND, reason)
    found, missing = all_found_after(trace.searches, required)
    if found is None:
        return absent(SEARCH_AFTER_FOUND, Reasons.NOT_ALL_FOUND.format(missing=", ".join(missing)))
    after = len(trace.searches) - found - 1
    comment = f"every required doc among the hits of search {found + 1} of {len(trace.searches)}"
    return score(SEARCH_AFTER_FOUND, after, comment=comment if after else None, found_at=found + 1)


def trajectory_scorer() -> Scorer:
    """Scorer factory for the trajectory scores."""
    no_steps = Reasons.NO_TOOL_STEP.text
    none = Scored((absent(SEARCH_CALLS, no_steps), absent(FETCH_CALLS, no_steps),
                   absent(SEARCH_REPEATED_QUERIES, Reasons.NO_SEARCH_STEP.text),
                   absent(FETCH_CHARS, Reasons.NO_PAGE_FETCHED.text),
                   absent(SEARCH_QUERY_OVERLAP, Reasons.NO_SEARCH_STEP.text),
                   absent(FETCH_UNUSED_RATE, Reasons.NO_PAGE_FETCHED.text),
                   absent(SEARCH_AFTER_FOUND, Reasons.NO_SEARCH_STEP.text)))  # fmt: skip

    def score_trajectory(trace: Trace) -> Scored:
        if not trace.steps and not trace.blind_spots:
            return none
        # #50: an unread step is one of the steps (its blind spot names it), counted once; the call counts as now
        searches, fetches = len(trace.searches), len(trace.fetches)
        steps, shared = _Steps(trace), _Scores()
        return Scored((_calls(steps, "search", shared), _calls(steps, "fetch", shared), _repeated(trace, searches),
                       _chars(trace, fetches), _overlap(trace, searches), _unused(trace, fetches),
                       _after_found(trace, searches)))  # fmt: skip

    return score_trajectory
