"""The search trajectory the agent took, counted (the ``trajectory`` stage): the calls, the repeated queries, the
characters read (its reading budget), the first query's overlap with the question, the pages read but never cited and
the searches after everything required had come back (wasted budget); each score's meaning is its ``SPECS`` entry.

A step the adapter saw but could not read is a step like any other (a blind spot, ``Trace.blind_spots``, says which
of the steps could not be read; it is not a call of its own): it counts once, as a call; a score resting on what it
held (its query, its text, its order) is absent with that reason. A trace with no search or fetch step at all is not
a search agent's: its counts are absent, not 0.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from json.encoder import encode_basestring
from types import MappingProxyType

from tracescore.reasons import Reasons
from tracescore.registry import ScoreSpec, reasons, scorer
from tracescore.scorers.cited import cited_keys
from tracescore.scorers.retrieval import all_found_after
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scorers.sentences import parse_answer
from tracescore.scores import Score, absent, score
from tracescore.trace import BlindSpot, SearchStep, Trace, fetch_failed
from tracescore.urls import is_url, normalize_url

SEARCH_CALLS = "trajectory.search_calls"  # the trajectory's own stage since #43
FETCH_CALLS = "trajectory.fetch_calls"
SEARCH_REPEATED_QUERIES = "trajectory.repeated_queries"
FETCH_CHARS = "trajectory.fetch_chars"
SEARCH_QUERY_OVERLAP = "trajectory.query_overlap"
FETCH_UNUSED_RATE = "trajectory.unused_fetch_rate"
SEARCH_AFTER_FOUND = "trajectory.searches_after_found"
RENAMED = MappingProxyType({  # the names before #43: superseded on the platforms (sinks/removals.py), hinted at
    "search.calls": SEARCH_CALLS, "fetch.calls": FETCH_CALLS, "search.repeated_queries": SEARCH_REPEATED_QUERIES,
    "fetch.chars": FETCH_CHARS, "search.query_overlap": SEARCH_QUERY_OVERLAP, "fetch.unused_rate": FETCH_UNUSED_RATE,
    "search.after_found": SEARCH_AFTER_FOUND})  # fmt: skip
_WHY = Reasons
_RETRIEVAL = (_WHY.NO_SEARCH_STEP, _WHY.NO_REQUIRED_LABEL, _WHY.REFUSAL_RECALL, _WHY.EMPTY_REQUIRED_ID)
SPECS = (
    ScoreSpec(SEARCH_CALLS, "numeric", None, 0, absent=reasons(_WHY.NO_TOOL_STEP, _WHY.STEPS_UNREADABLE),
              definition="search calls the agent made (an unreadable one counted once); absent when the trace has"
              " no search or fetch step"),
    ScoreSpec(FETCH_CALLS, "numeric", None, 0, absent=reasons(_WHY.NO_TOOL_STEP, _WHY.STEPS_UNREADABLE),
              definition="fetch calls the agent made (unreadable and failed ones included, each once); absent when"
              " the trace has no search or fetch step"),
    ScoreSpec(SEARCH_REPEATED_QUERIES, "numeric", None, 0, absent=reasons(_WHY.NO_SEARCH_STEP, _WHY.STEPS_UNREADABLE),
              definition="searches whose normalised query (case, spacing, end punctuation) the agent already sent"
              " in this trace"),
    ScoreSpec(FETCH_CHARS, "numeric", None, 0, absent=reasons(_WHY.NO_PAGE_FETCHED, _WHY.STEPS_UNREADABLE),
              definition="characters of fetched text the agent read, fetches that did not fail (its reading budget)"),
    ScoreSpec(SEARCH_QUERY_OVERLAP, "numeric", None, 0, 1,
              absent=reasons(_WHY.NO_SEARCH_STEP, _WHY.STEPS_UNREADABLE, _WHY.NO_QUESTION, _WHY.NO_QUESTION_WORD,
                             _WHY.NO_FIRST_QUERY),
              definition="share of the question's content words (not stop words) present in the agent's first query"),
    ScoreSpec(FETCH_UNUSED_RATE, "numeric", None, 0, 1,
              absent=reasons(_WHY.EMPTY_ANSWER, _WHY.NO_SENTENCES, _WHY.NO_PAGE_FETCHED, _WHY.NOTHING_CITED,
                             _WHY.STEPS_UNREADABLE),
              definition="pages fetched (read, distinct) that no answer sentence cites / pages fetched; absent when"
              " the answer cites nothing"),
    ScoreSpec(SEARCH_AFTER_FOUND, "numeric", None, 0,
              absent=reasons(*_RETRIEVAL, _WHY.STEPS_UNREADABLE, _WHY.NOT_ALL_FOUND),
              definition="search calls made after every required document (group) was already among the hits, at"
              " any rank: wasted budget"),
)  # fmt: skip
_EDGES = "\"'`“”‘’.,;:!?()[]{} "
_SHARED = 64  # (name, value) Scores one trajectory scorer keeps to share; past this a trace's Score is its own


def normalise_query(query: str) -> str:
    """The query as compared for repeats: case-folded, whitespace collapsed, quotes and punctuation at its ends
    dropped."""
    # split() and join, not re.sub(r"\s+", " "): str.split and the regex's \s both split on str.isspace, and the
    # whitespace split drops at the ends the regex turned into " ", which the strip removes anyway (" " is an edge)
    return " ".join(query.casefold().split()).strip(_EDGES)


def _unreadable(spots: list[BlindSpot], kind: str, what: str) -> str | None:
    spots = [b for b in spots if b.kind == kind]
    if not spots:
        return None
    shown = "; ".join(f"{b.tool or kind}: {b.reason}" for b in spots[:3])
    more = f" (+{len(spots) - 3} more)" if len(spots) > 3 else ""
    return Reasons.STEPS_UNREADABLE.format(kind=kind, steps=shown + more, consequence=what)


_RUN = re.compile(r"\w+")


def _words(text: str) -> list[str]:
    r"""The runs of letters and digits of ``text``, in order: ``re.findall(r"[^\W_]+", text)``. ``[^\W_]`` is ``\w``
    less "_", so they are the ``\w+`` runs cut at "_"; ``\w+`` scans twice as fast as the negated class."""
    runs = _RUN.findall(text)
    return runs if "_" not in text else [part for run in runs for part in run.split("_") if part]


# The stop words a question's content words leave out: articles, pronouns, auxiliaries, prepositions, conjunctions and
# the question words (a fixed English list: the share must not move with a library's release).
_STOP = frozenset(
    """
a an the this that these those there here it its they them their theirs he him his she her hers we us our you
your i me my mine who whom whose what which when where why how is are was were be been being am do does did
done doing has have had having can could will would shall should may might must of in on at to for from by with
about into onto over under after before between through during without within upon as than then so and or but nor
if not no yes any all some each every both either neither more most much many few such own same other s t
""".split()
)
FIRST_QUERY = "first query: "
"""How ``trajectory.query_overlap``'s comment begins: the first query follows as a JSON string (``first_query``)."""


def content_words(text: str) -> list[str]:
    """The words of ``text`` that carry content, case-folded, in order, each once: letters and digits runs, not a
    stop word."""
    return list(dict.fromkeys(word for word in _words(text.casefold()) if word not in _STOP))


def first_query(comment: str | None) -> str | None:
    """The first query named in a ``trajectory.query_overlap`` comment (the report's query column), else None."""
    if not comment or not comment.startswith(FIRST_QUERY):
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(comment, len(FIRST_QUERY))
    except ValueError:
        return None
    return value if isinstance(value, str) else None


# json.dumps(query, ensure_ascii=False) builds a JSONEncoder per call; that encoder's encode of a str returns this
# function's result (C in CPython), after a Python call and an isinstance test
_quoted = encode_basestring


class _Steps:
    """What every trajectory score reads of one trace, taken once: its search and fetch steps, its blind spots and
    the call counts (the steps of each kind: an unreadable step is one of them, counted once), the queries in order
    (read here once: the repeats and the overlap both read them)."""

    __slots__ = ("searches", "fetches", "spots", "n_searches", "n_fetches", "queries")

    def __init__(self, trace: Trace) -> None:
        # one look at each step's kind (a class attribute of the struct, a field of the model) for both lists, not
        # trace.searches and trace.fetches (an isinstance pass each); a step is a search or a fetch
        steps = trace.steps
        self.searches = searches = [step for step in steps if step.kind == "search"]
        self.fetches = [step for step in steps if step.kind != "search"] if len(searches) < len(steps) else []
        self.queries = [step.query for step in searches]
        self.spots = trace.blind_spots
        self.n_searches = len(searches)
        self.n_fetches = len(steps) - len(searches)

    def unreadable(self, kind: str, what: str) -> str | None:
        return _unreadable(self.spots, kind, what) if self.spots else None


class _Scores:
    """One scorer's Scores that do not depend on the trace (the fixed absences) or repeat across traces (a count, a
    0 with the same metadata): built once and shared, as ``retrieval_scorer`` shares its own (a Score is immutable)."""

    def __init__(self) -> None:
        self.no_search = {name: absent(name, Reasons.NO_SEARCH_STEP.text)
                          for name in (SEARCH_REPEATED_QUERIES, SEARCH_QUERY_OVERLAP, SEARCH_AFTER_FOUND)}  # fmt: skip
        self.no_page = {name: absent(name, Reasons.NO_PAGE_FETCHED.text) for name in (FETCH_CHARS, FETCH_UNUSED_RATE)}
        self.fixed = {(name, reason.text): absent(name, reason.text) for name, reason in (
            (SEARCH_QUERY_OVERLAP, Reasons.NO_QUESTION), (SEARCH_QUERY_OVERLAP, Reasons.NO_QUESTION_WORD),
            (SEARCH_QUERY_OVERLAP, Reasons.NO_FIRST_QUERY), (FETCH_UNUSED_RATE, Reasons.EMPTY_ANSWER),
            (FETCH_UNUSED_RATE, Reasons.NO_SENTENCES), (FETCH_UNUSED_RATE, Reasons.NOTHING_CITED),
            (SEARCH_AFTER_FOUND, Reasons.NO_REQUIRED_LABEL), (SEARCH_AFTER_FOUND, Reasons.REFUSAL_RECALL))}  # fmt: skip
        self._shared: dict[tuple[str, int | tuple[int, int]], Score] = {}
        # the last question seen and its content words, as one pair (scoring threads may share this scorer: each
        # reads and sets the pair whole): a run's traces often share their question
        self._question: tuple[str, list[str]] = ("", [])

    def absent(self, name: str, reason: str) -> Score:
        return self.fixed[name, reason]

    def shared(self, name: str, value: int | tuple[int, int], make: Callable[[], Score]) -> Score:
        """``make()``, the Score of ``name`` that ``value`` alone determines: built once, for the first ``_SHARED``
        (name, value) pairs seen."""
        got = self._shared.get((name, value))
        if got is None:
            got = make()
            if len(self._shared) < _SHARED:
                self._shared[name, value] = got
        return got

    def count(self, name: str, value: int) -> Score:
        got = self._shared.get((name, value))  # shared() without building its lambda: most counts are shared
        return got if got is not None else self.shared(name, value, lambda: score(name, value))

    def wanted(self, question: str) -> list[str]:
        """``content_words(question)``, kept for the next trace (read-only: the metadata gets the missing ones)."""
        last, words = self._question
        if question != last:
            words = content_words(question)
            self._question = question, words
        return words


def _calls(steps: _Steps, kind: str, shared: _Scores) -> Score:
    """``SEARCH_CALLS`` / ``FETCH_CALLS``: the steps of the kind; absent when there is none but a blind spot of the
    kind says a call of it may have been made (a declared built-in search whose calls the output does not show)."""
    name, count = (SEARCH_CALLS, steps.n_searches) if kind == "search" else (FETCH_CALLS, steps.n_fetches)
    if not count and (reason := steps.unreadable(kind, "how many calls were made is not known")) is not None:
        return absent(name, reason)
    return shared.count(name, count)


def _repeated(steps: _Steps, shared: _Scores) -> Score:
    if not steps.n_searches:
        return shared.no_search[SEARCH_REPEATED_QUERIES]
    reason = steps.unreadable("search", "its query may repeat another")
    if reason is not None:
        return absent(SEARCH_REPEATED_QUERIES, reason)
    if len(steps.searches) < 2:  # a query can only repeat an earlier one
        return shared.count(SEARCH_REPEATED_QUERIES, 0)
    # normalise_query inlined: no repeat when the normalised queries are all distinct (an empty one, skipped below,
    # can only make two equal, which takes the counting loop)
    queries = [" ".join(query.casefold().split()).strip(_EDGES) for query in steps.queries]
    if len(set(queries)) == len(queries):
        return shared.count(SEARCH_REPEATED_QUERIES, 0)
    sent: set[str] = set()
    repeats: list[str] = []
    for raw, query in zip(steps.queries, queries, strict=True):
        if not query:
            continue  # no query recorded: nothing to compare
        if query in sent:
            repeats.append(raw)
        sent.add(query)
    if not repeats:
        return shared.count(SEARCH_REPEATED_QUERIES, 0)
    comment = "; ".join(f"repeated: {q!r}" for q in repeats[:5]) + (f" (+{len(repeats) - 5} more)"
                                                                    if len(repeats) > 5 else "")  # fmt: skip
    return score(SEARCH_REPEATED_QUERIES, len(repeats), comment=comment)


def _read(status: int | str | None) -> bool:
    """Whether a fetch of this status was read: ``fetch_failed``'s one rule (200, the usual status, asked first)."""
    return status is None or status == 200 or not fetch_failed(status)


def _chars(steps: _Steps, shared: _Scores) -> Score:
    """Characters of the pages read: fetches that did not fail, a page read twice counted twice (fetches that all
    failed read 0: a count, not a rate)."""
    if not steps.n_fetches:
        return shared.no_page[FETCH_CHARS]
    reason = steps.unreadable("fetch", "its text was not counted")
    if reason is not None:
        return absent(FETCH_CHARS, reason)
    return score(FETCH_CHARS, sum([len(step.text) for step in steps.fetches if _read(step.status)]))


def _overlap(trace: Trace, steps: _Steps, shared: _Scores) -> Score:
    if not steps.n_searches:
        return shared.no_search[SEARCH_QUERY_OVERLAP]
    reason = steps.unreadable("search", "the first query may be its")
    if reason is not None:
        return absent(SEARCH_QUERY_OVERLAP, reason)
    if not trace.question.strip():
        return shared.absent(SEARCH_QUERY_OVERLAP, Reasons.NO_QUESTION.text)
    wanted = shared.wanted(trace.question)
    if not wanted:
        return shared.absent(SEARCH_QUERY_OVERLAP, Reasons.NO_QUESTION_WORD.text)
    first = steps.queries[0]  # a search step there: a blind one would have made it absent above
    if not first.strip():
        return shared.absent(SEARCH_QUERY_OVERLAP, Reasons.NO_FIRST_QUERY.text)
    sent = set(_words(first.casefold()))
    missing = [w for w in wanted if w not in sent]
    comment = FIRST_QUERY + _quoted(first)
    if missing:
        comment += "; question words not in it: " + ", ".join(missing[:10]) + (" …" if len(missing) > 10 else "")
    later = [q for q in steps.queries[1:] if q.strip()]
    if later:
        comment += "; later queries: " + ", ".join(map(_quoted, later[:5])) + (f" (+{len(later) - 5} more)"
                                                                               if len(later) > 5 else "")  # fmt: skip
    return score(SEARCH_QUERY_OVERLAP, (len(wanted) - len(missing)) / len(wanted), comment=comment,
                 words=len(wanted), missing=missing)  # fmt: skip


def _unused(trace: Trace, steps: _Steps, shared: _Scores) -> Score:
    """Pages read (distinct, fetches that did not fail) that no citation names / pages read."""
    if not steps.n_fetches:
        return shared.no_page[FETCH_UNUSED_RATE]
    if not trace.answer.strip():
        return shared.absent(FETCH_UNUSED_RATE, Reasons.EMPTY_ANSWER.text)
    if not parse_answer(trace.answer).sentences:
        return shared.absent(FETCH_UNUSED_RATE, Reasons.NO_SENTENCES.text)
    cited = set(cited_keys(trace))
    if not cited:
        return shared.absent(FETCH_UNUSED_RATE, Reasons.NOTHING_CITED.text)
    reason = steps.unreadable("fetch", "its page may be one the answer cites or not")
    if reason is not None:
        return absent(FETCH_UNUSED_RATE, reason)
    # a page (its URL, else its doc id) -> whether a citation names it by a key of one of its fetches (its URL, its
    # doc id): what "no key of the page's is cited" asks, without a set of keys per page. A fetch's key that is None
    # or "" is no key: "" leaves cited (an explicit citation's blank URL keys as ""), so neither is in it
    cited.discard("")
    pages: dict[str, bool] = {}
    for step in steps.fetches:
        if not _read(step.status):
            continue
        url = normalize_url(step.url) if step.url else None
        doc = step.doc_id.strip() if step.doc_id else None
        if page := url or doc:
            pages[page] = pages.get(page, False) or url in cited or doc in cited
    if not pages:
        return shared.no_page[FETCH_UNUSED_RATE]
    unused = [page for page, used in pages.items() if not used]
    if not unused:
        return shared.shared(FETCH_UNUSED_RATE, len(pages),
                             lambda: score(FETCH_UNUSED_RATE, 0.0, pages=len(pages), unused=[]))  # fmt: skip
    comment = "fetched, never cited: " + "; ".join(unused[:5]) + (f" (+{len(unused) - 5} more)" if len(unused) > 5
                                                                   else "")  # fmt: skip
    return score(FETCH_UNUSED_RATE, len(unused) / len(pages), comment=comment, pages=len(pages), unused=unused)


def _plain_keys(required: list[str | list[str]]) -> list[str] | None:
    """The keys ``required`` is compared by when it is plain ids, none of them a URL (is_url needs "://"): each
    stripped; else None (a group, or a URL: ``all_found_after`` compares those)."""
    for entry in required:
        if type(entry) is not str or "://" in entry:
            return None
    return [entry.strip() for entry in required]  # type: ignore[union-attr]  # every entry a str, as checked


def _plain_found_after(searches: list[SearchStep], required: list[str | list[str]],
                       left: set[str]) -> tuple[int | None, list[str]]:  # fmt: skip
    """``all_found_after(searches, required)`` when ``required`` is plain ids, no URL among them (``left``, their
    keys): each hit answers by its stripped doc_id, a hit without one by its URL's key; the required keys not seen
    yet are struck off a call's hits at a time, by set operations when every hit has a doc_id."""
    for index, search in enumerate(searches):
        hits = search.hits
        ids = [hit.doc_id for hit in hits]
        if all(ids):
            left.difference_update(map(str.strip, ids))  # type: ignore[arg-type]  # every id a str, as checked
        else:
            for hit, doc_id in zip(hits, ids, strict=True):
                if doc_id:
                    left.discard(doc_id.strip())
                elif hit.url:
                    left.discard(normalize_url(hit.url) if is_url(hit.url) else hit.url.strip())
        if not left:
            return index, []
    return None, [entry for entry in required if isinstance(entry, str) and entry.strip() in left]  # all str


def _after_found(trace: Trace, steps: _Steps, shared: _Scores) -> Score:
    """Search calls after the one whose hits completed ``required_doc_ids`` (groups: any member)."""
    required = trace.labels.required_doc_ids
    if not steps.n_searches:
        return shared.no_search[SEARCH_AFTER_FOUND]
    if required is None:
        return shared.absent(SEARCH_AFTER_FOUND, Reasons.NO_REQUIRED_LABEL.text)
    if not required:
        return shared.absent(SEARCH_AFTER_FOUND, Reasons.REFUSAL_RECALL.text)
    keys = _plain_keys(required)
    if not (all(keys) if keys is not None else
            all(m.strip() for entry in required for m in ([entry] if isinstance(entry, str) else entry))):  # fmt: skip
        return absent(SEARCH_AFTER_FOUND, Reasons.EMPTY_REQUIRED_ID.format(required=required))
    reason = steps.unreadable("search", "it may have found them earlier")
    if reason is not None:
        return absent(SEARCH_AFTER_FOUND, reason)
    found, missing = (all_found_after(steps.searches, required) if keys is None else
                      _plain_found_after(steps.searches, required, set(keys)))  # fmt: skip
    if found is None:
        return absent(SEARCH_AFTER_FOUND, Reasons.NOT_ALL_FOUND.format(missing=", ".join(missing)))
    after = len(steps.searches) - found - 1
    if not after:  # the last search found them: 0, no comment, the metadata its position alone
        return shared.shared(SEARCH_AFTER_FOUND, found + 1, lambda: score(SEARCH_AFTER_FOUND, 0, found_at=found + 1))
    calls = len(steps.searches)  # the Score is the found call's and the calls' alone: shared too
    return shared.shared(SEARCH_AFTER_FOUND, (found, calls), lambda: score(
        SEARCH_AFTER_FOUND, after, comment=f"every required doc among the hits of search {found + 1} of {calls}",
        found_at=found + 1))  # fmt: skip


@scorer(stage="trajectory", version="trajectory-2", scores=SPECS)  # 2 (#43): fetch_chars counts no failed fetch
def trajectory_scorer() -> Scorer:
    """Scorer factory for the trajectory scores."""
    shared = _Scores()
    no_steps = Reasons.NO_TOOL_STEP.text
    none = Scored((absent(SEARCH_CALLS, no_steps), absent(FETCH_CALLS, no_steps),
                   shared.no_search[SEARCH_REPEATED_QUERIES], shared.no_page[FETCH_CHARS],
                   shared.no_search[SEARCH_QUERY_OVERLAP], shared.no_page[FETCH_UNUSED_RATE],
                   shared.no_search[SEARCH_AFTER_FOUND]))  # fmt: skip

    def score_trajectory(trace: Trace) -> Scored:
        if not trace.steps and not trace.blind_spots:
            return none
        steps = _Steps(trace)
        return Scored((_calls(steps, "search", shared), _calls(steps, "fetch", shared),
                       _repeated(steps, shared), _chars(steps, shared), _overlap(trace, steps, shared),
                       _unused(trace, steps, shared), _after_found(trace, steps, shared)))  # fmt: skip

    return score_trajectory
