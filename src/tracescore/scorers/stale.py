"""Stale sources: ``citation.stale_rate``, the cited pages the agent fetched that are older than ``[scoring]
stale_after`` before the trace.

A source's date is **every date found for the page, from every place, and the latest one wins**: the ``metadata`` of
each fetch of the page that did not fail, the ``metadata`` of every search hit for the same page (its URL or doc id),
and the text of each of those fetches. Only these forms are read, and never a year alone:

- **keys** (metadata; case, ``_``, ``-`` and ``:`` ignored): ``published``, ``published_date``, ``published_at``,
  ``publishedTime``, ``date_published``, ``publication_date``, ``updated``, ``updated_at``, ``last_updated``,
  ``date_modified``, ``modified``, ``modified_date``, ``modifiedTime``, ``last_modified``, ``article:published_time``,
  ``article:modified_time``, ``date``; the same keys in a nested ``metadata`` object (Firecrawl's); and
  ``Last-Modified`` in a ``headers`` object (the HTTP response's; its ``Date`` is when it was sent, not read);
- **labels** (page text): ``Published``, ``Updated``, ``Last updated``, ``Last modified``, ``Modified``, ``Posted``,
  ``Date published``, ``Date modified``, ``last edited`` (each with an optional ``on``, ``:`` or dash), a dated byline
  at the start of a line (``By Jane Doe | May 17, 2026``, ``By Jane Doe on May 17, 2026``), ``<time datetime="…">``
  and ``datePublished`` / ``dateModified`` / ``article:published_time`` remnants of the page's markup;
- **dates**: ISO ``2026-05-17`` (a time and offset after it allowed), ``2026/05/17``, ``May 17, 2026`` / ``Sep. 3,
  2024``, ``17 May 2026``, each optionally after a weekday (``Tuesday, 20 May 2025``), and the HTTP date ``Sun, 17 May
  2026 10:00:00 GMT``. ``05/17/2026`` is not read: day and month are ambiguous.

A date without a time of day is that day at 00:00 UTC. The comment names where the winning date was found (fetch
metadata, search metadata, page text; on a tie, in that order). The score is stale sources / cited fetched sources
with a date; absent when none has one (undated sources are counted apart, never as fresh or stale).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, timedelta
from itertools import chain
from operator import attrgetter, itemgetter
from types import MappingProxyType
from typing import Any

from tracescore.durations import Duration
from tracescore.reasons import Reasons
from tracescore.registry import ScoreSpec, reasons, scorer
from tracescore.scorers.cited import cited_keys
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scorers.sentences import parse_answer
from tracescore.scores import Score, absent, score
from tracescore.trace import FetchStep, Trace, fetch_failed
from tracescore.urls import normalize_url

CITATION_STALE_RATE = "citation.stale_rate"
_WHY = Reasons
SPECS = (
    ScoreSpec(CITATION_STALE_RATE, "numeric", "lower", 0, 1,
              absent=reasons(_WHY.EMPTY_ANSWER, _WHY.NO_SENTENCES, _WHY.NOTHING_CITED, _WHY.NO_TIMESTAMP,
                             _WHY.NO_CITED_FETCH, _WHY.NO_SOURCE_DATE),
              definition="cited, fetched sources dated more than [scorers.stale] stale_after before the trace / those"
              " with a findable date"),
)  # fmt: skip

# the letters outside ASCII a case-insensitive pattern matches as ASCII ones ("ſ" as s): a month so written is looked
# up as its ASCII name
_FOLD = MappingProxyType(str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}))


def fold(word: str) -> str:
    """``word`` lower-cased as a case-insensitive pattern read it: "ſep" → "sep"."""
    return word.lower() if word.isascii() else word.translate(_FOLD).lower()

_NAMES = ("jan january", "feb february", "mar march", "apr april", "may", "jun june", "jul july", "aug august",
          "sep sept september", "oct october", "nov november", "dec december")  # fmt: skip
_MONTHS = MappingProxyType({m: i for i, names in enumerate(_NAMES, start=1) for m in names.split()})
_MONTH = "(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_ISO = r"(?P<iy>\d{4})[-/](?P<im>\d{1,2})[-/](?P<id>\d{1,2})(?![\d/])"
_MDY = rf"(?P<mm>{_MONTH})\s+(?P<md>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<my>\d{{4}})"
_DMY = rf"(?P<dd>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<dm>{_MONTH}),?\s+(?P<dy>\d{{4}})"
_DATE = rf"(?:{_ISO}|{_MDY}|{_DMY})(?!\d)"
_WEEKDAY = r"(?:(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?,?\s+)?"
_DATE_ONLY = re.compile(rf"\s*{_WEEKDAY}{_DATE}", re.IGNORECASE)
_LABEL = (r"(?:date\s+)?(?:published|updated|last\s+updated|last\s+modified|modified|posted|last\s+edited)"
          r"(?:\s+on)?\s*[:\-–—]?\s*")  # fmt: skip
_BYLINE = (r"(?m:^)[ \t]*by\s+[A-Z][\w.'’-]*(?:\s+[A-Z][\w.'’-]*){0,4}(?:\s*[|,·•—–-]\s*|\s+on\s+)"
           r"(?:(?:published|updated)(?:\s+on)?\s+)?")  # fmt: skip
_MARKUP = (r"<time[^>]{0,200}?datetime\s*=\s*[\"']?\s*|[\"']?(?:datePublished|dateModified)[\"']?\s*[:=]\s*[\"']?\s*"
           r"|article:(?:published|modified)_time[\"']?\s+content\s*=\s*[\"']?\s*")  # fmt: skip
_IN_TEXT = re.compile(rf"(?:(?<![\w-]){_LABEL}|{_BYLINE}|{_MARKUP}){_WEEKDAY}{_DATE}", re.IGNORECASE)
_KEYS = frozenset({"published", "publisheddate", "publishedat", "publishedtime", "datepublished", "publicationdate",
                   "updated", "updatedat", "lastupdated", "datemodified", "modified", "modifieddate", "modifiedtime",
                   "lastmodified", "articlepublishedtime", "articlemodifiedtime", "date"})  # fmt: skip
_HEADER_KEYS = frozenset({"lastmodified"})  # in ``headers``: the HTTP ``Date`` is when the response was sent
_SEPARATORS = re.compile(r"[\s_:\-]")


def _day(match: re.Match[str]) -> date | None:
    """The calendar day a ``_DATE`` match names, or None when it is no real day (2026-02-30)."""
    g = match.group
    if g("iy"):
        y, m, d = int(g("iy")), int(g("im")), int(g("id"))
    elif g("my"):
        y, m, d = int(g("my")), _MONTHS[fold(g("mm")).rstrip(".")], int(g("md"))
    else:
        y, m, d = int(g("dy")), _MONTHS[fold(g("dm")).rstrip(".")], int(g("dd"))
    try:
        return date(y, m, d)
    except ValueError:
        return None


def _moment(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def value_date(value: Any) -> datetime | None:
    """The date of one metadata value: a datetime, or text that begins with one of the date forms (an ISO datetime's
    time and offset kept), else None."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str):
        return None
    text = value.strip()
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        pass
    else:
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    match = _DATE_ONLY.match(text)
    day = _day(match) if match else None
    return _moment(day) if day else None


def _metadata_dates(metadata: Mapping[str, Any], keys: frozenset[str] = _KEYS, nested: bool = True) -> list[datetime]:
    """Every date of a metadata object: its ``keys``, a nested ``metadata`` object's (one level) and the
    ``Last-Modified`` of a ``headers`` object."""
    found = []
    for key, value in metadata.items():
        folded = _SEPARATORS.sub("", str(key)).lower()
        if folded in keys:
            if (moment := value_date(value)) is not None:
                found.append(moment)
        elif nested and isinstance(value, Mapping):
            if folded == "headers":
                found += _metadata_dates(value, _HEADER_KEYS, nested=False)
            elif folded == "metadata":
                found += _metadata_dates(value, keys, nested=False)
    return found


# Every form above contains one of these (lower case): the page text is searched only around them, so a page with
# none costs a few substring searches, not a regex scan of every position.
_KEYWORDS = ("publish", "updated", "modified", "posted", "edited", "datetime", "by ")
_REACH = 260  # characters a form can span before its keyword (``<time`` + 200 + ``datetime``) and after it


def _windows(text: str) -> list[tuple[int, int]]:
    """The merged spans of ``text`` within ``_REACH`` of a keyword."""
    low = text.lower()
    spans = []
    for keyword in _KEYWORDS:
        at = low.find(keyword)
        while at >= 0:
            if keyword != "by " or not low[low.rfind("\n", 0, at) + 1 : at].strip(" \t"):  # a byline starts a line
                spans.append((max(at - _REACH, 0), at + _REACH))
            at = low.find(keyword, at + 1)
    spans.sort()
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


# Every form above holds a year, four digits in a row, so a page without such a run has no date: ruled out in C before
# ``_windows`` lower-cases the page and searches it seven times. One ``translate`` keeps a page's digits (as "0") and
# the characters that are neither letters nor spaces (as " "), dropping the rest, then "0000" is searched for in what
# is left: dropping characters can join two runs, never split one, so no "0000" there means no four digits in a row
# on the page ("202 6" is a "may": the regex decides). Dropping the letters and spaces, nine in ten characters of
# prose, and not mapping them, leaves a short copy and a loop whose branch the CPU predicts: twice as fast as mapping
# every character and searching the page-long copy. ASCII text only, where the regex's \d is [0-9]; other text goes on
# to the keyword search, as does a page with a four-digit number (it pays the pass on top).
_DIGITS_ONLY = bytes(ord("0") if chr(c).isdigit() else ord(" ") for c in range(128)) + b" " * 128
_DROPPED = bytes(c for c in range(128) if chr(c).isalpha() or c == ord(" "))


def _no_year(text: str) -> bool:
    """True when ``text`` certainly holds no four digits in a row (False: it may)."""
    return text.isascii() and b"0000" not in text.encode("ascii").translate(_DIGITS_ONLY, _DROPPED)


def page_date(text: str) -> datetime | None:
    """The latest labelled date of a page's text (see the module's forms), or None. The regex runs over the spans
    near a keyword only, on the whole text (``pos``/``endpos``: look-behind and line starts see the real text)."""
    if _no_year(text):
        return None
    days = [day for start, end in _windows(text) for match in _IN_TEXT.finditer(text, start, end)
            if (day := _day(match)) is not None]  # fmt: skip
    return _moment(max(days)) if days else None


def _source_date(fetches: list[FetchStep], hits: Iterable[Mapping[str, Any]]) -> tuple[datetime, str] | None:
    """(date, where it was found) of one page: the latest date of its fetches' metadata, its search hits' metadata
    and its fetches' text (a tie goes to the first of those places)."""
    found = [(moment, "fetch metadata") for fetch in fetches if fetch.metadata
             for moment in _metadata_dates(fetch.metadata)]  # fmt: skip
    found += [(moment, "search metadata") for metadata in hits for moment in _metadata_dates(metadata)]
    found += [(moment, "page text") for fetch in fetches if (moment := page_date(fetch.text)) is not None]
    return max(found, key=_FIRST) if found else None


def _keys(url: str | None, doc_id: str | None) -> list[str]:
    return [k for k in (normalize_url(url) if url else None, doc_id.strip() if doc_id else None) if k]


@scorer(stage="citations", version="stale-2", scores=SPECS)  # 2 (#43): every date of the page, the latest wins
def stale_scorer(*, stale_after: Duration = timedelta(days=365)) -> Scorer:
    """Scorer factory for ``citation.stale_rate`` (``stale_after``: ``[scoring] stale_after``)."""
    days = stale_after / timedelta(days=1)
    fixed = {reason.text: absent(CITATION_STALE_RATE, reason.text)  # the absences no trace changes, built once
             for reason in (Reasons.EMPTY_ANSWER, Reasons.NO_SENTENCES, Reasons.NOTHING_CITED, Reasons.NO_CITED_FETCH,
                            Reasons.NO_TIMESTAMP)}  # fmt: skip

    def score_stale(trace: Trace) -> Scored:
        return Scored((_stale(trace, stale_after, days, fixed),))

    return score_stale


_FIRST = itemgetter(0)
_METADATA = attrgetter("metadata")
_HITS = attrgetter("hits")


def _hit_metadata(trace: Trace, sources: Iterable[list[FetchStep]], keys: Mapping[int, list[str]]
                  ) -> dict[str, list[Mapping[str, Any]]]:  # fmt: skip
    """Each key of the ``sources`` -> the metadata of the search hits with that key, in the order of the hits."""
    hits: dict[str, list[Mapping[str, Any]]] = {}
    searches = trace.searches
    if not any(map(_METADATA, chain.from_iterable(map(_HITS, searches)))):  # most hits have none: asked in C
        return hits
    wanted = {k for fetches in sources for fetch in fetches for k in keys[id(fetch)]}
    for search in searches:
        for hit in search.hits:
            if hit.metadata:
                for key in _keys(hit.url, hit.doc_id):
                    if key in wanted:
                        hits.setdefault(key, []).append(hit.metadata)
    return hits


def _dates(trace: Trace, sources: dict[str, list[FetchStep]], keys: Mapping[int, list[str]]
           ) -> tuple[dict[str, tuple[datetime, str]], list[str]]:  # fmt: skip
    """(the dated sources with their date and where it was found, the undated ones), each source's pages read once
    (``keys``: each fetch's keys, by its id)."""
    hits = _hit_metadata(trace, sources.values(), keys)
    dated: dict[str, tuple[datetime, str]] = {}
    undated: list[str] = []
    seen: dict[tuple[int, ...], tuple[datetime, str] | None] = {}  # a page cited by its URL and its doc id: once
    for key, fetches in sources.items():
        page = tuple(map(id, fetches))
        if page in seen:
            found = seen[page]
        else:
            page_keys = dict.fromkeys(k for fetch in fetches for k in keys[id(fetch)])
            metadata = [m for k in page_keys for m in hits.get(k, ())] if hits else ()
            found = seen[page] = _source_date(fetches, metadata)
        if found is None:
            undated.append(key)
        else:
            dated[key] = found
    return dated, undated


# the reason when no source has a date, as the text around its ``{sources}``: joined with the sources shown, what
# ``format`` writes, at a tenth of its cost (a text holding another field would not split in two: an import error)
_NO_DATE_HEAD, _NO_DATE_TAIL = Reasons.NO_SOURCE_DATE.format(sources="\0").split("\0")


def _stale(trace: Trace, stale_after: timedelta, days: float, fixed: Mapping[str, Score]) -> Score:
    if not trace.answer.strip():
        return fixed[Reasons.EMPTY_ANSWER.text]
    if not parse_answer(trace.answer).sentences:
        return fixed[Reasons.NO_SENTENCES.text]
    cited = cited_keys(trace)
    if not cited:
        return fixed[Reasons.NOTHING_CITED.text]
    fetches: dict[str, list[FetchStep]] = {}  # every key of a page read -> its fetches that did not fail
    keys: dict[int, list[str]] = {}  # each of those fetches' keys, by its id: worked out once
    for step in trace.fetches:
        if not fetch_failed(step.status):
            keys[id(step)] = step_keys = _keys(step.url, step.doc_id)
            for key in step_keys:
                fetches.setdefault(key, []).append(step)
    sources = {key: fetches[key] for key in cited if key in fetches}
    if not sources:
        return fixed[Reasons.NO_CITED_FETCH.text]
    dated, undated = _dates(trace, sources, keys)
    if not dated:
        shown = ", ".join(undated[:3]) + (f" (+{len(undated) - 3} more)" if len(undated) > 3 else "")
        return absent(CITATION_STALE_RATE, _NO_DATE_HEAD + shown + _NO_DATE_TAIL)
    if trace.timestamp is None:  # asked last: the reasons before it are facts of the pages, the same on every platform
        return fixed[Reasons.NO_TIMESTAMP.text]
    now = trace.timestamp if trace.timestamp.tzinfo else trace.timestamp.replace(tzinfo=UTC)
    stale = {key: found for key, found in dated.items() if found[0] < now - stale_after}
    parts = [f"stale (older than {days:g} days): "
             + "; ".join(f"{key} ({moment.date().isoformat()}, {where})" for key, (moment, where) in stale.items())
             ] if stale else []  # fmt: skip
    if undated:
        parts.append(f"{len(undated)} cited source(s) with no findable date not counted")
    return score(CITATION_STALE_RATE, len(stale) / len(dated), comment="; ".join(parts) or None,
                 dated=len(dated), undated=len(undated), stale=sorted(stale), stale_after_days=days)  # fmt: skip
