"""``scorers/stale.py``'s functions as they were before its speed-up (#33), the ones it changed: the reference the
fast scorer is compared with in tests/scorers/test_signals_same.py (what it did not change is imported). Frozen, but
for the meaning changes an issue made since, applied here in the plain form (#43: every date found for the page, from
every place, and the latest one wins; every fetch of the page that did not fail is read)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from tracescore.catalog import Reasons
from tracescore.scorers.cited import cited_keys
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scorers.sentences import parse_answer
from tracescore.scorers.stale import (
    _IN_TEXT,
    CITATION_STALE_RATE,
    _day,
    _keys,
    _metadata_dates,
    _moment,
    _windows,
)
from tracescore.scores import Score, absent, score
from tracescore.trace import FetchStep, Trace, fetch_failed


def page_date(text: str) -> datetime | None:
    """The latest labelled date of a page's text (see the module's forms), or None. The regex runs over the spans
    near a keyword only, on the whole text (``pos``/``endpos``: look-behind and line starts see the real text)."""
    days = [day for start, end in _windows(text) for match in _IN_TEXT.finditer(text, start, end)
            if (day := _day(match)) is not None]  # fmt: skip
    return _moment(max(days)) if days else None


def _source_date(fetches: list[FetchStep], hits: Iterable[Mapping[str, Any]]) -> tuple[datetime, str] | None:
    """(date, where it was found) of one page: the latest of every date of its fetches' metadata, its hits'
    metadata and its fetches' text (a tie: the first place)."""
    found: list[tuple[datetime, str]] = []
    for where, metadata in (
        *(("fetch metadata", f.metadata) for f in fetches),
        *(("search metadata", m) for m in hits),
    ):
        found += [(moment, where) for moment in _metadata_dates(metadata)]
    found += [(moment, "page text") for f in fetches if (moment := page_date(f.text)) is not None]
    best: tuple[datetime, str] | None = None
    for candidate in found:
        if best is None or candidate[0] > best[0]:
            best = candidate
    return best


def stale_scorer(*, stale_after: timedelta = timedelta(days=365)) -> Scorer:
    """Scorer factory for ``citation.stale_rate`` (``stale_after``: ``[scoring] stale_after``)."""
    days = stale_after / timedelta(days=1)

    def score_stale(trace: Trace) -> Scored:
        return Scored((_stale(trace, stale_after, days),))

    return score_stale


def _stale(trace: Trace, stale_after: timedelta, days: float) -> Score:
    if not trace.answer.strip():
        return absent(CITATION_STALE_RATE, Reasons.EMPTY_ANSWER.text)
    if not parse_answer(trace.answer).sentences:
        return absent(CITATION_STALE_RATE, Reasons.NO_SENTENCES.text)
    cited = cited_keys(trace)
    if not cited:
        return absent(CITATION_STALE_RATE, Reasons.NOTHING_CITED.text)
    fetches: dict[str, list[FetchStep]] = {}  # every key of a page read -> its fetches that did not fail
    for step in trace.fetches:
        if not fetch_failed(step.status):
            for key in _keys(step.url, step.doc_id):
                fetches.setdefault(key, []).append(step)
    hits: dict[str, list[Mapping[str, Any]]] = {}  # every key of a search hit -> the metadata of its hits
    for search in trace.searches:
        for hit in search.hits:
            if hit.metadata:
                for key in _keys(hit.url, hit.doc_id):
                    hits.setdefault(key, []).append(hit.metadata)
    sources = {key: fetches[key] for key in cited if key in fetches}
    if not sources:
        return absent(CITATION_STALE_RATE, Reasons.NO_CITED_FETCH.text)
    dated: dict[str, tuple[datetime, str]] = {}
    undated: list[str] = []
    for key, page in sources.items():
        page_keys = dict.fromkeys(k for fetch in page for k in _keys(fetch.url, fetch.doc_id))
        metadata = [m for k in page_keys for m in hits.get(k, ())]
        found = _source_date(page, metadata)
        if found is None:
            undated.append(key)
        else:
            dated[key] = found
    if not dated:
        shown = ", ".join(undated[:3]) + (f" (+{len(undated) - 3} more)" if len(undated) > 3 else "")
        return absent(CITATION_STALE_RATE, Reasons.NO_SOURCE_DATE.format(sources=shown))
    if trace.timestamp is None:  # asked last: the reasons before it are facts of the pages, the same on every platform
        return absent(CITATION_STALE_RATE, Reasons.NO_TIMESTAMP.text)
    now = trace.timestamp if trace.timestamp.tzinfo else trace.timestamp.replace(tzinfo=UTC)
    stale = {key: found for key, found in dated.items() if found[0] < now - stale_after}
    parts = [f"stale (older than {days:g} days): "
             + "; ".join(f"{key} ({moment.date().isoformat()}, {where})" for key, (moment, where) in stale.items())
             ] if stale else []  # fmt: skip
    if undated:
        parts.append(f"{len(undated)} cited source(s) with no findable date not counted")
    return score(CITATION_STALE_RATE, len(stale) / len(dated), comment="; ".join(parts) or None,
                 dated=len(dated), undated=len(undated), stale=sorted(stale), stale_after_days=days)  # fmt: skip
