"""The score catalog: every score once — name, stage, type, direction, range, producing scorer and version,
definition and the reasons it can be absent for — and every absence reason, with its class.

It is the public contract and the one place a score name is written: scorers, sinks, reports and the gate import
the names below (``GROUNDING_RATE``) or read the entries; gate directions, sink data types, score versions, report
sections, the README table and the package tests read it; a score name that a user types (``--min``, ``[gate]``) is
checked against it.

An absence is either **does not apply** (a fact about the trace now, or the configuration no longer produces the
score: the platform sinks remove an earlier score of ours) or **not computed** (this run could not: the earlier score
stays, on the platform and as the current value in the store, marked stale). The scorers write the reasons declared
here (``Reasons``), each score only its own (``Entry.reasons``, plus ``ANY_SCORE``); a reason not declared is treated
as not computed, the safe side.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

from tracescore.reasons import (
    DOES_NOT_APPLY,
    NOT_COMPUTED,
    REASONS,
    Absence,
    Reason,
    Reasons,
    absence_kind,
    declared_reason,
)

__all__ = [
    "ANSWER_CORRECT", "ANSWER_EXACT_MATCH", "ANSWER_SEMANTIC_MATCH", "ANSWER_TOKEN_F1", "ANY_SCORE", "CATALOG",
    "CITATION_COVERAGE", "CITATION_DEAD_RATE", "CITATION_DRIFT_RATE", "CITATION_FABRICATED_COUNT",
    "CITATION_SUPPORT_RATE", "CITATION_UNFETCHED_RATE", "DIAGNOSIS", "DOES_NOT_APPLY", "GROUNDING_HALLUCINATION_RATE",
    "GROUNDING_RATE", "GROUNDING_UNVERIFIED_QUOTES", "NOT_COMPUTED", "REASONS", "RECALL_PREFIX",
    "RETRIEVAL_FIRST_HIT_RANK", "RETRIEVAL_HOP_ORDER", "RETRIEVAL_HOPS_FOUND", "RETRIEVAL_RECALL_AT_K",
    "RENAMED", "RETRIEVAL_RETRIEVED_ANY", "STAGES", "SURFACE_BLIND",
    "SURFACE_CONTRADICTION_RATIO", "SURFACE_DISCOVERED_SUPPORT", "SURFACE_FETCH_YIELD", "SURFACE_FIRST_SUPPORT_RANK",
    "SURFACE_MISSED", "SURFACE_NOOP", "SURFACE_SMART", "SURFACE_SUPPORT_ANY", "Absence", "Entry", "Reason", "Reasons",
    "Versions", "absence_kind", "declared_reason", "entry", "is_known", "names_of", "recall_name",
]  # fmt: skip
__all__ += ["FETCH_CALLS", "FETCH_CHARS", "GROUNDING_NUMBERS_CHECKED", "GROUNDING_UNSUPPORTED_NUMBERS",
            "SEARCH_CALLS", "SEARCH_REPEATED_QUERIES"]  # #33
__all__ += ["CITATION_STALE_RATE", "FETCH_UNUSED_RATE", "SEARCH_AFTER_FOUND", "SEARCH_QUERY_OVERLAP"]  # #33 signals

Stage = Literal["retrieval", "trajectory", "grounding", "citations", "answer", "diagnosis", "surface"]
Kind = Literal["NUMERIC", "BOOLEAN", "CATEGORICAL"]
STAGES: tuple[Stage, ...] = ("retrieval", "trajectory", "grounding", "citations", "answer", "surface", "diagnosis")

# -- the score names: written here once; everything else imports them ----------------------------------------------
RETRIEVAL_RECALL_AT_K = "retrieval.recall_at_{k}"  # k is part of the name: recall_name(k)
RECALL_PREFIX = RETRIEVAL_RECALL_AT_K.partition("{k}")[0]  # every recall name starts so
RETRIEVAL_FIRST_HIT_RANK = "retrieval.first_hit_rank"
RETRIEVAL_RETRIEVED_ANY = "retrieval.retrieved_any"
RETRIEVAL_HOPS_FOUND = "retrieval.hops_found"  # written only when the trace has a ``hops`` label
RETRIEVAL_HOP_ORDER = "retrieval.hop_order"
GROUNDING_RATE = "grounding.rate"
GROUNDING_HALLUCINATION_RATE = "grounding.hallucination_rate"
GROUNDING_UNVERIFIED_QUOTES = "grounding.unverified_quotes"
CITATION_COVERAGE = "citation.coverage"
CITATION_UNFETCHED_RATE = "citation.unfetched_rate"
CITATION_FABRICATED_COUNT = "citation.fabricated_count"
CITATION_SUPPORT_RATE = "citation.support_rate"
CITATION_DRIFT_RATE = "citation.drift_rate"
CITATION_DEAD_RATE = "citation.dead_rate"
ANSWER_CORRECT = "answer.correct"
ANSWER_TOKEN_F1 = "answer.token_f1"
ANSWER_EXACT_MATCH = "answer.exact_match"
ANSWER_SEMANTIC_MATCH = "answer.semantic_match"
DIAGNOSIS = "diagnosis"
SURFACE_SUPPORT_ANY = "surface.support_any"
SURFACE_FIRST_SUPPORT_RANK = "surface.first_support_rank"
SURFACE_SMART = "surface.smart"
SURFACE_MISSED = "surface.missed"
SURFACE_BLIND = "surface.blind"
SURFACE_NOOP = "surface.noop"
SURFACE_CONTRADICTION_RATIO = "surface.contradiction_ratio"
SURFACE_FETCH_YIELD = "surface.fetch_yield"
SURFACE_DISCOVERED_SUPPORT = "surface.discovered_support"
# #33: grounding without a judge (scorers/numbers.py)
GROUNDING_UNSUPPORTED_NUMBERS = "grounding.unsupported_numbers"
GROUNDING_NUMBERS_CHECKED = "grounding.numbers_checked"
# #33: the search trajectory (scorers/trajectory.py), its own stage since #43
SEARCH_CALLS = "trajectory.search_calls"
FETCH_CALLS = "trajectory.fetch_calls"
SEARCH_REPEATED_QUERIES = "trajectory.repeated_queries"
FETCH_CHARS = "trajectory.fetch_chars"
# #33 (signals): the rest of the trajectory (scorers/trajectory.py) and stale sources (scorers/stale.py)
SEARCH_QUERY_OVERLAP = "trajectory.query_overlap"
FETCH_UNUSED_RATE = "trajectory.unused_fetch_rate"
SEARCH_AFTER_FOUND = "trajectory.searches_after_found"
CITATION_STALE_RATE = "citation.stale_rate"

RENAMED: dict[str, str] = {
    "search.calls": SEARCH_CALLS, "fetch.calls": FETCH_CALLS, "search.repeated_queries": SEARCH_REPEATED_QUERIES,
    "fetch.chars": FETCH_CHARS, "search.query_overlap": SEARCH_QUERY_OVERLAP, "fetch.unused_rate": FETCH_UNUSED_RATE,
    "search.after_found": SEARCH_AFTER_FOUND,
}  # fmt: skip
"""Old score name -> its name now (#43: the trajectory scores under their stage). A platform score of ours under an
old name is superseded by the new name's score on the next write of its trace (``sinks/removals.py``), as an older
version is; a name a user types is pointed at the new one (the gate's hint)."""


class Versions:
    """Every score version, and the only place one lives: a score's version is its entry's (``Entry.version``),
    written with each score (sinks, store); bump it here when what a scorer computes changes meaning."""

    RETRIEVAL = "retrieval-1"
    CITATIONS = "citations-1"
    ANSWER = "answer-1"
    DIAGNOSIS = "diagnosis-1"
    GROUNDING = "grounding-1"  # scorers/grounding.toml; a judged score's metadata carries the live rubric version
    SURFACE = "surface-1"  # scorers/surface.toml
    SEMANTIC = "semantic-1"  # scorers/semantic.toml
    LINKS = "links-1"  # the link checker
    NUMBERS = "numbers-2"  # scorers/numbers.py, scorers/number_reader.py; 2 (#44): a full date stated as one unit
    TRAJECTORY = "trajectory-2"  # #33: scorers/trajectory.py; 2 (#43): fetch_chars counts no failed fetch
    STALE = "stale-2"  # #33: scorers/stale.py; 2 (#43): every date of the page, the latest wins


# -- the reasons a score of each stage can be absent for (each entry says its own) ---------------------------------
_WHY = Reasons
ANY_SCORE: tuple[Reason, ...] = (_WHY.SETUP_DROPPED, _WHY.UNGIVEN, _WHY.JUDGE_ONLY, _WHY.UNCHANGED)
"""The reasons any score can be absent for: its scorer no longer runs (the mirror), it carries no reason, or a
``backfill --judge-only`` or a ``run`` judging a trace again did not send it again (the mirror)."""
_JUDGED = (_WHY.NO_JUDGE, _WHY.JUDGE_OFF, _WHY.JUDGE_OFF_FLAG, _WHY.NO_SDK, _WHY.JUDGE_ERROR, _WHY.BUDGET,
           _WHY.NOT_SAMPLED, _WHY.DAILY_BUDGET)
_RETRIEVAL = (_WHY.NO_SEARCH_STEP, _WHY.NO_REQUIRED_LABEL, _WHY.REFUSAL_RECALL, _WHY.EMPTY_REQUIRED_ID)
_TEXT = (_WHY.EMPTY_ANSWER, _WHY.NO_SENTENCES)
_GROUNDED = (*_JUDGED, *_TEXT, _WHY.NO_CLAIM)
_CITED = (*_GROUNDED, _WHY.NO_CITED_CLAIM)
_SURFACE = (*_JUDGED, _WHY.SURFACE_REFUSAL, _WHY.NO_GOLD_OR_EXPECTED, _WHY.SURFACE_NO_SEARCH, _WHY.STEP_UNREADABLE)
_SURFACED = (*_SURFACE, _WHY.NO_SUPPORTING_SURFACE)
_GOLD = (_WHY.NO_GOLD_LABEL, _WHY.EMPTY_GOLD)


@dataclass(frozen=True)
class Entry:
    """One score of the catalog. ``direction``: +1 higher is better, -1 lower is better, 0 neither (no regression).
    ``low``/``high``: the range its values (and so a run's mean) lie in: rates and booleans 0..1, counts ≥ 0, ranks
    ≥ 1; a gate limit outside it, or at the edge it can never cross, could never fail. ``reasons``: what it can be
    absent for (besides ``ANY_SCORE``)."""

    name: str
    stage: Stage
    kind: Kind
    direction: int
    scorer: str
    version: str
    judged: bool
    definition: str
    reasons: tuple[Reason, ...]
    low: float = 0.0
    high: float = 1.0

    def matches(self, name: str) -> bool:
        """Whether ``name`` is this entry's score (``retrieval.recall_at_{k}`` matches any k)."""
        if "{k}" in self.name:
            return re.fullmatch(re.escape(self.name).replace(r"\{k\}", r"[1-9][0-9]*"), name) is not None
        return name == self.name


_e = Entry
_COUNT, _RANK = (0.0, math.inf), (1.0, math.inf)
_V = Versions

CATALOG: tuple[Entry, ...] = (
    _e(RETRIEVAL_RECALL_AT_K, "retrieval", "NUMERIC", 1, "retrieval", _V.RETRIEVAL, False,
       "share of required_doc_ids among the first k hits of any search call", (*_RETRIEVAL, _WHY.STALE_LABEL)),
    _e(RETRIEVAL_FIRST_HIT_RANK, "retrieval", "NUMERIC", -1, "retrieval", _V.RETRIEVAL, False,
       "best rank, within its own search call, of any required doc; absent when none came back",
       (*_RETRIEVAL, _WHY.NO_REQUIRED_HIT), *_RANK),
    _e(RETRIEVAL_RETRIEVED_ANY, "retrieval", "BOOLEAN", 1, "retrieval", _V.RETRIEVAL, False,
       "any hit came back at all", (_WHY.NO_SEARCH_STEP, _WHY.STEPS_UNREADABLE)),
    _e(GROUNDING_RATE, "grounding", "NUMERIC", 1, "grounding", _V.GROUNDING, True,
       "supported claims / claims", _GROUNDED),
    _e(GROUNDING_HALLUCINATION_RATE, "grounding", "NUMERIC", -1, "grounding", _V.GROUNDING, True,
       "(unsupported + contradicted) / claims", _GROUNDED),
    _e(GROUNDING_UNVERIFIED_QUOTES, "grounding", "NUMERIC", -1, "grounding", _V.GROUNDING, True,
       "supported verdicts whose quote was not found in the named document (downgraded)", _GROUNDED, *_COUNT),
    _e(CITATION_COVERAGE, "citations", "NUMERIC", 1, "citations", _V.CITATIONS, False,
       "answer sentences that carry a citation / answer sentences", _TEXT),
    _e(CITATION_UNFETCHED_RATE, "citations", "NUMERIC", -1, "citations", _V.CITATIONS, False,
       "cited URLs the agent never fetched / cited URLs; absent when a fetch could not be read",
       (*_TEXT, _WHY.NOTHING_CITED, _WHY.STEPS_UNREADABLE)),
    _e(CITATION_FABRICATED_COUNT, "citations", "NUMERIC", -1, "citations", _V.CITATIONS, False,
       "cited URLs that never appeared in any search result or fetch; absent when a search could not be read",
       (*_TEXT, _WHY.STEPS_UNREADABLE, _WHY.OVER_GUARD), *_COUNT),
    _e(CITATION_SUPPORT_RATE, "citations", "NUMERIC", 1, "grounding", _V.GROUNDING, True,
       "cited claims whose cited source supports them", _CITED),
    _e(CITATION_DRIFT_RATE, "citations", "NUMERIC", -1, "grounding", _V.GROUNDING, True,
       "cited claims supported by another fetched source but not by the one cited", _CITED),
    _e(ANSWER_CORRECT, "answer", "BOOLEAN", 1, "answer", _V.ANSWER, False,
       "expected_answer_contains all present (or refusal when expected)",
       (_WHY.NO_ANSWER_LABEL, _WHY.EMPTY_EXPECTED_ENTRY)),
    _e(ANSWER_TOKEN_F1, "answer", "NUMERIC", 1, "answer", _V.ANSWER, False,
       "SQuAD-style normalised token F1 against gold_answer", _GOLD),
    _e(ANSWER_EXACT_MATCH, "answer", "BOOLEAN", 1, "answer", _V.ANSWER, False,
       "SQuAD-style normalised exact match against gold_answer", _GOLD),
    _e(DIAGNOSIS, "diagnosis", "CATEGORICAL", 0, "diagnosis", _V.DIAGNOSIS, False,
       "the stage contingency cell (retrieval_fail/ungrounded/grounded × right/wrong)",
       (_WHY.RETRIEVAL_NOT_SCORED, _WHY.RETRIEVAL_UNDECIDED, _WHY.NO_ANSWER_DECIDED)),
    _e(SURFACE_SUPPORT_ANY, "surface", "BOOLEAN", 1, "surface", _V.SURFACE, True,
       "some search result's surface (title, URL, snippet, metadata) supports the gold answer before any fetch",
       _SURFACE),
    _e(SURFACE_FIRST_SUPPORT_RANK, "surface", "NUMERIC", -1, "surface", _V.SURFACE, True,
       "best rank, within its own search call, of a result whose surface supports; absent when none does",
       _SURFACED, *_RANK),
    _e(SURFACE_SMART, "surface", "NUMERIC", 0, "surface", _V.SURFACE, True,
       "URLs whose surface supports the gold answer and that the agent fetched", _SURFACE, *_COUNT),
    _e(SURFACE_MISSED, "surface", "NUMERIC", -1, "surface", _V.SURFACE, True,
       "URLs whose surface supports the gold answer and that the agent never fetched", _SURFACE, *_COUNT),
    _e(SURFACE_BLIND, "surface", "NUMERIC", -1, "surface", _V.SURFACE, True,
       "URLs whose surface does not support the gold answer and that the agent fetched", _SURFACE, *_COUNT),
    _e(SURFACE_NOOP, "surface", "NUMERIC", 0, "surface", _V.SURFACE, True,
       "URLs whose surface does not support the gold answer and that the agent did not fetch", _SURFACE, *_COUNT),
    _e(SURFACE_CONTRADICTION_RATIO, "surface", "NUMERIC", -1, "surface", _V.SURFACE, True,
       "results whose surface contradicts the gold answer / results whose surface supports it; absent when none",
       _SURFACED, *_COUNT),
    _e(SURFACE_FETCH_YIELD, "surface", "NUMERIC", 1, "surface", _V.SURFACE, True,
       "fetched pages that support the gold answer / pages fetched; absent when nothing was fetched",
       (*_SURFACE, _WHY.NO_PAGE_FETCHED)),
    _e(SURFACE_DISCOVERED_SUPPORT, "surface", "NUMERIC", 0, "surface", _V.SURFACE, True,
       "fetched pages that support the gold answer while their surface did not (post-fetch discovery)",
       _SURFACE, *_COUNT),
    _e(ANSWER_SEMANTIC_MATCH, "answer", "BOOLEAN", 1, "semantic", _V.SEMANTIC, True,
       "the final answer is gold_answer up to harmless formatting and naming variants (exact match needs no call)",
       (*_JUDGED, _WHY.NO_GOLD_LABEL)),
    _e(CITATION_DEAD_RATE, "citations", "NUMERIC", -1, "links", _V.LINKS, False,
       "cited URLs that no longer resolve (404/410/DNS/timeout) / cited URLs decided; --check-links only",
       (_WHY.NO_CITED_URL, _WHY.LINKS_UNKNOWN)),
    _e(RETRIEVAL_HOPS_FOUND, "retrieval", "NUMERIC", 1, "retrieval", _V.RETRIEVAL, False,
       "hops (groups of a hops label) any of whose documents came back in any search call / hops; with a hops"
       " label only", (_WHY.NO_SEARCH_STEP, _WHY.EMPTY_HOP_ID)),
    _e(RETRIEVAL_HOP_ORDER, "retrieval", "BOOLEAN", 1, "retrieval", _V.RETRIEVAL, False,
       "every hop's document came back only after a document of the hop before was fetched; with a hops label only",
       (_WHY.NO_SEARCH_STEP, _WHY.EMPTY_HOP_ID, _WHY.HOP_NEVER_FOUND)),
    # #33: grounding without a judge
    _e(GROUNDING_UNSUPPORTED_NUMBERS, "grounding", "NUMERIC", -1, "numbers", _V.NUMBERS, False,
       "numbers the answer states (values, dates, names with a number; not the question's, markers, list numbers or"
       " URLs) that no evidence the agent saw states; absent when a fetch could not be read",
       (_WHY.NO_EVIDENCE_SEEN, _WHY.NO_NUMBER, _WHY.STEPS_UNREADABLE), *_COUNT),
    _e(GROUNDING_NUMBERS_CHECKED, "grounding", "NUMERIC", 0, "numbers", _V.NUMBERS, False,
       "distinct numbers the answer states, checked against the evidence", (_WHY.NO_EVIDENCE_SEEN, _WHY.NO_NUMBER),
       *_COUNT),
    # #33: the search trajectory
    _e(SEARCH_CALLS, "trajectory", "NUMERIC", 0, "trajectory", _V.TRAJECTORY, False,
       "search calls the agent made (an unreadable one counted once); absent when the trace has no search or fetch"
       " step", (_WHY.NO_TOOL_STEP, _WHY.STEPS_UNREADABLE), *_COUNT),
    _e(FETCH_CALLS, "trajectory", "NUMERIC", 0, "trajectory", _V.TRAJECTORY, False,
       "fetch calls the agent made (unreadable and failed ones included, each once); absent when the trace has no"
       " search or fetch step", (_WHY.NO_TOOL_STEP, _WHY.STEPS_UNREADABLE), *_COUNT),
    _e(SEARCH_REPEATED_QUERIES, "trajectory", "NUMERIC", 0, "trajectory", _V.TRAJECTORY, False,
       "searches whose normalised query (case, spacing, end punctuation) the agent already sent in this trace",
       (_WHY.NO_SEARCH_STEP, _WHY.STEPS_UNREADABLE), *_COUNT),
    _e(FETCH_CHARS, "trajectory", "NUMERIC", 0, "trajectory", _V.TRAJECTORY, False,
       "characters of fetched text the agent read, fetches that did not fail (its reading budget)",
       (_WHY.NO_PAGE_FETCHED, _WHY.STEPS_UNREADABLE),
       *_COUNT),
    # #33 (signals): the rest of the trajectory, and stale sources
    _e(SEARCH_QUERY_OVERLAP, "trajectory", "NUMERIC", 0, "trajectory", _V.TRAJECTORY, False,
       "share of the question's content words (not stop words) present in the agent's first query",
       (_WHY.NO_SEARCH_STEP, _WHY.STEPS_UNREADABLE, _WHY.NO_QUESTION, _WHY.NO_QUESTION_WORD, _WHY.NO_FIRST_QUERY)),
    _e(FETCH_UNUSED_RATE, "trajectory", "NUMERIC", 0, "trajectory", _V.TRAJECTORY, False,
       "pages fetched (read, distinct) that no answer sentence cites / pages fetched; absent when the answer cites"
       " nothing", (*_TEXT, _WHY.NO_PAGE_FETCHED, _WHY.NOTHING_CITED, _WHY.STEPS_UNREADABLE)),
    _e(SEARCH_AFTER_FOUND, "trajectory", "NUMERIC", 0, "trajectory", _V.TRAJECTORY, False,
       "search calls made after every required document (group) was already among the hits, at any rank: wasted"
       " budget", (*_RETRIEVAL, _WHY.STEPS_UNREADABLE, _WHY.NOT_ALL_FOUND), *_COUNT),
    _e(CITATION_STALE_RATE, "citations", "NUMERIC", -1, "stale", _V.STALE, False,
       "cited, fetched sources dated more than [scoring] stale_after before the trace / those with a findable date",
       (*_TEXT, _WHY.NOTHING_CITED, _WHY.NO_TIMESTAMP, _WHY.NO_CITED_FETCH, _WHY.NO_SOURCE_DATE)),
)


def entry(name: str) -> Entry | None:
    """The catalog entry of a score name (``retrieval.recall_at_3`` → the recall entry), or None."""
    for e in CATALOG:
        if e.matches(name):
            return e
    return None


def names_of(scorer: str) -> tuple[str, ...]:
    """The names a scorer writes, in catalog order (recall as its ``{k}`` template)."""
    return tuple(e.name for e in CATALOG if e.scorer == scorer)


def is_known(name: str) -> bool:
    """Whether ``name`` is a catalog score (a versioned name ``x@v`` counts as ``x``)."""
    return entry(name.split("@", 1)[0]) is not None


def recall_name(k: int) -> str:
    """The recall score's name at cut-off ``k`` (k is part of the name so series never mix)."""
    return RETRIEVAL_RECALL_AT_K.format(k=k)
