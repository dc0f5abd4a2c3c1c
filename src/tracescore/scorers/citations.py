"""Citations stage: which answer sentences cite what, and did the agent ever see or read what it cited?

Parses inline ``[n]`` markers with a reference list (``[n] URL``, ``[n]: URL``), markdown links and bare URLs,
pairs each answer sentence with its citations, and scores ``citation.coverage``, ``citation.unfetched_rate`` and
``citation.fabricated_count`` (the judged ``citation.support_rate`` and ``citation.drift_rate`` are the grounding
scorer's: ``scorers/grounding.py``). The per-citation rows (for the local store) and a note per marker with no reference
come back with them, in the scorer's ``Scored``.

A sentence contains a word: list markers (``1.``, ``2)``, ``-``, ExpertQA's ``1[1].``), headings and reference-list
lines are not answer sentences. A search the adapter could not read (``Trace.blind_spots``) makes
``citation.fabricated_count`` absent, an unreadable fetch ``citation.unfetched_rate``: never a number resting on a
blind spot. Cost is linear in the trace: every regex scans each character a bounded number of times, the answer is
parsed and its rows built once per trace, explicit citations find their sentence by dict lookup, and
a per-trace guard (``MAX_ANSWER_CHARS``, ``MAX_CITATIONS``, ``MAX_HITS``) scores what it read and says what it left.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter

from tracescore.reasons import Reasons
from tracescore.registry import ScoreSpec, reasons, scorer
from tracescore.result import CitationRow
from tracescore.scorers.cited import answer_citations, citations_of
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scorers.sentences import (
    MAX_ANSWER_CHARS as MAX_ANSWER_CHARS,
    ParsedAnswer,
    SentenceIndex,
    parse_answer as parse_answer,
    split_sentences as split_sentences,
)
from tracescore.scores import Score, absent, score
from tracescore.session import Earlier, carried_comment, joined
from tracescore.trace import Citation, Hit, Trace, fetch_failed
from tracescore.urls import is_url, normalize_url

CITATION_COVERAGE = "citation.coverage"
CITATION_UNFETCHED_RATE = "citation.unfetched_rate"
CITATION_FABRICATED_COUNT = "citation.fabricated_count"
_WHY = Reasons
_TEXT = (_WHY.EMPTY_ANSWER, _WHY.NO_SENTENCES)
SPECS = (
    ScoreSpec(CITATION_COVERAGE, "numeric", "higher", 0, 1, absent=reasons(*_TEXT),
              definition="answer sentences that carry a citation / answer sentences"),
    ScoreSpec(CITATION_UNFETCHED_RATE, "numeric", "lower", 0, 1,
              absent=reasons(*_TEXT, _WHY.NOTHING_CITED, _WHY.STEPS_UNREADABLE),
              definition="cited URLs the agent never fetched / cited URLs; absent when a fetch could not be read"),
    ScoreSpec(CITATION_FABRICATED_COUNT, "numeric", "lower", 0,
              absent=reasons(*_TEXT, _WHY.STEPS_UNREADABLE, _WHY.OVER_GUARD),
              definition="cited URLs that never appeared in any search result or fetch; absent when a search could"
              " not be read"),
)  # fmt: skip

# Per-trace guard (with ``MAX_ANSWER_CHARS``): past these, the scorer scores what it read and says what it left out.
MAX_CITATIONS = 5_000  # explicit ``trace.citations`` entries read
MAX_HITS = 50_000  # search hits and fetches read to decide what the agent saw

_EMPTY, _NO_SENTENCES, _NO_SOURCE = Reasons.EMPTY_ANSWER.text, Reasons.NO_SENTENCES.text, Reasons.NOTHING_CITED.text
NOTHING_CITED = frozenset({_EMPTY, _NO_SENTENCES, _NO_SOURCE})
"""Absent reasons that mean the answer cites nothing, so no cited URL can be unread or made up (the gate counts such a
trace as checked; any other reason, a search or fetch it could not read, leaves it unchecked)."""


class _Surface:
    """What the agent saw (search hits and fetches) and read (fetches that did not fail), indexed once per trace.

    A key is looked up among the hit URLs as written first: by a scan that stops at the hit (the first
    ``_SCANS`` lookups of a trace: a set costs every hit, a scan only those before the page), then in a set of them
    built once; all hit URLs are normalised (once) and the doc ids indexed only when a key is not found that way, so
    the common case (cited pages listed as the search gave them) costs no normalisation per hit.
    """

    __slots__ = ("fetch_seen", "fetched", "skipped_steps", "earlier", "carried", "_hits", "_hit_urls", "_hit_keys",
                 "_scans")

    def __init__(self, trace: Trace, earlier: Earlier | None = None) -> None:
        self.earlier = earlier  # the earlier turns of the session: a key this trace lacks is looked up there
        self.carried: dict[str, str] = {}  # key -> where an earlier turn had it ("fetched in turn 1, trace t1")
        fetch_seen: set[str] = set()  # normalised URLs and doc ids of every fetch read
        fetched: set[str] = set()  # ... of the fetches that did not fail
        skipped = 0  # hits and fetches past MAX_HITS, not read
        groups: list[list[Hit]] = []  # the hits read, per search
        budget = MAX_HITS
        for step in trace.steps:
            if step.kind == "search":
                hits = step.hits
                if len(hits) > budget:
                    hits = hits[: max(budget, 0)]
                    skipped += len(step.hits) - len(hits)
                budget -= len(hits)
                groups.append(hits)
                continue
            if budget <= 0:
                skipped += 1
                continue
            budget -= 1
            url, doc_id = step.url, step.doc_id
            ok = not fetch_failed(step.status)
            if url:
                norm = normalize_url(url)
                fetch_seen.add(norm)
                if ok:
                    fetched.add(norm)
            if doc_id:
                fetch_seen.add(doc_id)
                if ok:
                    fetched.add(doc_id)
        self.fetch_seen, self.fetched, self.skipped_steps, self._hits = fetch_seen, fetched, skipped, groups
        self._hit_urls: set[str] | None = None  # hit URLs as written
        self._hit_keys: set[str] | None = None  # normalised hit URLs and hit doc ids
        self._scans = 0  # lookups answered by scanning the hits, before _hit_urls is built

    def check(self, key: str) -> tuple[str, bool, bool]:
        """(key, fetched, seen) of a cited source's ``key`` (its normalised URL, doc id or stripped text); what this
        trace did not fetch or see is looked up in the earlier turns' evidence, and where it was found is kept."""
        fetched, seen = key in self.fetched, key in self.fetch_seen or self.seen(key)
        if not fetched and self.earlier is not None:
            if (turn := self.earlier.fetched(key)) is not None:
                self.carried[key] = f"fetched in {turn.where}"
                return (key, True, True)
            if not seen and (turn := self.earlier.seen(key)) is not None:
                self.carried[key] = f"seen in {turn.where}"
                return (key, False, True)
        return (key, fetched, seen)

    def seen(self, key: str) -> bool:
        """Whether ``key`` (a normalised URL, a doc id or a text citation) is among the hits and fetches."""
        if key in self.fetch_seen:
            return True
        if self._hit_urls is None and self._scans < _SCANS:
            self._scans += 1
            written = bool(key) and _written(key, self._hits)
        else:
            if self._hit_urls is None:
                self._hit_urls = _truthy(_URL_OF, self._hits)
            written = key in self._hit_urls
        if written and normalize_url(key) == key:
            return True  # a hit written exactly in its normalised form
        if self._hit_keys is None:
            if self._hit_urls is None:
                self._hit_urls = _truthy(_URL_OF, self._hits)
            self._hit_keys = {normalize_url(u) for u in self._hit_urls} | _truthy(_DOC_ID_OF, self._hits)
        return key in self._hit_keys


_URL_OF, _DOC_ID_OF = attrgetter("url"), attrgetter("doc_id")
_SCANS = 4  # lookups per trace answered by a scan of the hits; past them, a set (each scan may read every hit)


def _written(key: str, groups: list[list[Hit]]) -> bool:
    """Whether some hit's URL is ``key`` as written (``key in _truthy(_URL_OF, groups)``, ``key`` not empty), by a
    scan that stops at it (the heavy benchmark's unfetched page, in its 4th search of 10: an eighth of the set)."""
    for hits in groups:
        for hit in hits:
            if hit.url == key:
                return True
    return False


def _truthy(field: Callable[[Hit], str | None], groups: list[list[Hit]]) -> set[str]:
    """One field's non-empty values over every hit (``map``/``filter`` in C: no Python loop per hit)."""
    out: set[str] = set()
    for hits in groups:
        out.update(filter(None, map(field, hits)))
    return out


class _Rows:
    """One trace's citation rows and what the scores need of them, built (with the tallies) in one pass."""

    __slots__ = ("parsed", "rows", "sources", "explicit_index", "skipped_steps", "skipped_citations", "carried")

    def __init__(
        self,
        parsed: ParsedAnswer,
        rows: list[CitationRow] | None = None,
        sources: dict[str, tuple[str, bool, bool]] | None = None,
        explicit_index: set[int] | None = None,
        skipped_steps: int = 0,
        skipped_citations: int = 0,
    ) -> None:
        self.parsed = parsed
        self.rows: list[CitationRow] = [] if rows is None else rows
        # cited URL/doc id keys (rows not of kind "text") -> (key, fetched, seen): both follow from the key
        self.sources: dict[str, tuple[str, bool, bool]] = {} if sources is None else sources
        self.explicit_index: set[int] = set() if explicit_index is None else explicit_index  # sentences cited so
        self.skipped_steps = skipped_steps  # hits and fetches past MAX_HITS
        self.skipped_citations = skipped_citations
        self.carried: dict[str, str] = {}  # cited keys found in the earlier turns of the session, and where


def citation_rows(trace: Trace, parsed: ParsedAnswer | None = None) -> list[CitationRow]:
    """Every cited source of every sentence (plus the trace's explicit citations), checked against the steps."""
    return _rows_of(trace, parsed).rows


def _rows_of(trace: Trace, parsed: ParsedAnswer | None = None, earlier: Earlier | None = None) -> _Rows:
    if parsed is None:
        parsed, cites = parse_answer(trace.answer), answer_citations(trace.answer)
    else:
        cites = citations_of(parsed)
    surface = _Surface(trace, earlier)
    rows: list[CitationRow] = []
    sources: dict[str, tuple[str, bool, bool]] = {}
    checked: dict[str, tuple[str, bool, bool]] = {}  # key -> (key, fetched, seen): both follow from the key
    for index, marker, target, kind, key in cites:
        got = checked.get(key) or checked.setdefault(key, surface.check(key))
        if kind != "text":
            sources[key] = got
        rows.append(_row(index, marker, target, kind, got))
    explicit = trace.citations or []
    explicit_index: set[int] = set()
    if explicit:
        _explicit_rows(explicit[:MAX_CITATIONS], parsed, surface, checked, rows, sources, explicit_index)
    skipped = max(len(explicit) - MAX_CITATIONS, 0)
    memo = _Rows(parsed, rows, sources, explicit_index, surface.skipped_steps, skipped)
    memo.carried = {k: where for k, where in surface.carried.items() if k in sources}
    return memo


def _explicit_rows(
    explicit: list[Citation],
    parsed: ParsedAnswer,
    surface: _Surface,
    checked: dict[str, tuple[str, bool, bool]],
    rows: list[CitationRow],
    sources: dict[str, tuple[str, bool, bool]],
    explicit_index: set[int],
) -> None:
    """Rows of the trace's explicit citations, each placed in its sentence by ``SentenceIndex`` (-1 if none)."""
    index_of = SentenceIndex(parsed.sentences) if any(c.sentence for c in explicit) else None
    for citation in explicit:
        target = citation.url or citation.doc_id
        if not target:
            continue
        kind = "url" if citation.url and is_url(citation.url) else ("doc_id" if citation.doc_id else "text")
        index = index_of.find(citation.sentence) if index_of is not None else -1
        key = normalize_url(target) if kind == "url" else target.strip()
        got = checked.get(key) or checked.setdefault(key, surface.check(key))
        if kind != "text":
            sources[key] = got
        explicit_index.add(index)
        rows.append(_row(index, citation.marker, target, kind, got))


_new, _set = object.__new__, object.__setattr__


def _row(index: int, marker: str | None, target: str, kind: str, got: tuple[str, bool, bool]) -> CitationRow:
    """``CitationRow(index, marker, target, kind, *got)``, built in a fraction of the time: a frozen dataclass's
    ``__init__`` sets each field through ``object.__setattr__``; this gives the instance, in one call, the ``__dict__``
    that leaves it with (the same fields in the same order: its equality, ``asdict``, pickling and encoding read
    nothing else)."""
    row = _new(CitationRow)
    _set(row, "__dict__", {
        "sentence_index": index, "marker": marker, "target": target, "kind": kind,
        "normalized": got[0], "fetched": got[1], "seen": got[2],
    })  # fmt: skip
    return row


def _blind_spot_reason(trace: Trace, kind: str) -> str | None:
    """Why a score resting on ``kind`` steps cannot be trusted: the steps of that kind the adapter could not read."""
    spots = [b for b in trace.blind_spots if b.kind == kind]
    if not spots:
        return None
    shown = "; ".join(f"{b.tool or kind}: {b.reason}" for b in spots[:3])
    more = f" (+{len(spots) - 3} more)" if len(spots) > 3 else ""
    what = "a cited URL may have come from it" if kind == "search" else "a cited URL may have been read there"
    return Reasons.STEPS_UNREADABLE.format(kind=kind, steps=shown + more, consequence=what)


@scorer(stage="citations", version="citations-1", scores=SPECS)
def citation_scorer() -> Scorer:
    """Scorer factory for ``citation.coverage``, ``citation.unfetched_rate`` and ``citation.fabricated_count``."""
    names = (CITATION_COVERAGE, CITATION_UNFETCHED_RATE, CITATION_FABRICATED_COUNT)
    # the outcomes that depend on no text, built once (Scores are frozen; their metadata is only read downstream)
    empty = tuple([absent(n, _EMPTY) for n in names])
    no_sentences = tuple([absent(n, _NO_SENTENCES) for n in names])
    no_source = absent(CITATION_UNFETCHED_RATE, _NO_SOURCE)
    none_fabricated = score(CITATION_FABRICATED_COUNT, 0.0, fabricated=[])

    def score_citations(trace: Trace, *, earlier: Earlier | None = None) -> Scored:
        # an empty answer can still carry the trace's explicit citations: rows for the store
        memo = _rows_of(trace, None, earlier)
        parsed = memo.parsed
        answer = trace.answer
        if not answer or answer.isspace():  # not answer.strip(), without copying the answer
            return _scored(empty, memo)
        sentences = parsed.sentences
        if not sentences:
            return _scored(no_sentences, memo)
        guard = _guard_notes(parsed, memo) if parsed.truncated or memo.skipped_citations or memo.skipped_steps else []
        explicit_index = memo.explicit_index
        if explicit_index:
            uncited = [
                s.text for i, s in enumerate(sentences) if not s.markers and not s.links and i not in explicit_index
            ]
        else:  # every link of a sentence is a row: a sentence is cited by its markers or links
            uncited = [s.text for s in sentences if not s.markers and not s.links]
        n = len(sentences)
        cited = n - len(uncited)
        comment = _first("uncited sentences", uncited) if uncited else None
        if guard:
            comment = "; ".join([*guard, *([comment] if comment else [])])
        coverage = Score(
            CITATION_COVERAGE,
            cited / n,
            None,
            comment,
            {"sentences": n, "cited": cited, "unresolved_markers": parsed.unresolved_markers},
        )
        sources = memo.sources
        blind = trace.blind_spots
        fetch_blind = _blind_spot_reason(trace, "fetch") if blind else None
        carried = memo.carried
        if not sources:
            unfetched_rate = no_source
        elif fetch_blind:
            unfetched_rate = absent(CITATION_UNFETCHED_RATE, fetch_blind)
        else:
            unfetched = sorted([k for k, got in sources.items() if not got[1]])
            unfetched_rate = Score(
                CITATION_UNFETCHED_RATE,
                len(unfetched) / len(sources),
                None,
                joined(_first("cited but never fetched", unfetched) if unfetched else None, carried_comment(carried)),
                {"cited": len(sources), "unfetched": unfetched, **({"carried": carried} if carried else {})},
            )
        search_blind = _blind_spot_reason(trace, "search") if blind else None
        if search_blind:
            fabricated_count = absent(CITATION_FABRICATED_COUNT, search_blind)
        elif guard:
            fabricated_count = absent(CITATION_FABRICATED_COUNT, Reasons.OVER_GUARD.format(notes="; ".join(guard)))
        else:
            fabricated = sorted([k for k, got in sources.items() if not got[2]])  # r.fabricated: no text rows here
            if not fabricated:
                fabricated_count = none_fabricated if not carried else Score(CITATION_FABRICATED_COUNT, 0.0, None,
                    carried_comment(carried), {"fabricated": [], "carried": carried})  # fmt: skip
            else:
                fabricated_count = Score(
                    CITATION_FABRICATED_COUNT,
                    float(len(fabricated)),
                    None,
                    joined(_first("cited but never seen in any search result or fetch", fabricated),
                           carried_comment(carried)),
                    {"fabricated": fabricated, **({"carried": carried} if carried else {})},
                )
        return _scored((coverage, unfetched_rate, fabricated_count), memo)

    return score_citations


def _scored(scores: tuple[Score, ...], memo: _Rows) -> Scored:
    """The scores with the trace's citation rows, and a note for each marker the reference list does not resolve."""
    unresolved = memo.parsed.unresolved_markers
    if not unresolved:  # most traces: no comprehension to run
        return Scored(scores, citations=tuple(memo.rows))
    notes = tuple([f"marker [{m}] has no reference in the answer's reference list" for m in unresolved])
    return Scored(scores, citations=tuple(memo.rows), notes=notes)


def _guard_notes(parsed: ParsedAnswer, memo: _Rows) -> list[str]:
    """What the per-trace guard left unread, in words (empty when the whole trace was read)."""
    notes = []
    if parsed.truncated:
        notes.append(f"answer longer than {MAX_ANSWER_CHARS:,} characters: only the start was parsed")
    if memo.skipped_citations:
        notes.append(f"{memo.skipped_citations} explicit citations past the first {MAX_CITATIONS:,} not read")
    if memo.skipped_steps:
        notes.append(f"{memo.skipped_steps} hits/fetches past the first {MAX_HITS:,} not read")
    return notes


def _first(label: str, items: list[str], limit: int = 5) -> str:
    shown = "; ".join(items[:limit])
    more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
    return f"{label}: {shown}{more}"
