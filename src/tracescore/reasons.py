"""Every absence reason once, with its class: **does not apply** (a fact about the trace now, or the configuration
no longer produces the score) or **not computed** (this run could not: the earlier score stays). The scorers write
the reasons declared here (``Reasons``); ``absence_kind`` reads a written one back (undeclared → not computed, the
safe side). ``tracescore.catalog`` says which score can be absent for which reason (each scorer declares its own).
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

# -- absence reasons ----------------------------------------------------------------------------------------------
Absence = Literal["does not apply", "not computed"]
DOES_NOT_APPLY: Absence = "does not apply"
NOT_COMPUTED: Absence = "not computed"


@dataclass(frozen=True)
class Reason:
    """One absence reason: ``text`` as written, a ``{field}`` filled per trace (``format``); ``kind`` its class, or
    None for a reason that wraps another (``{reason}``) and takes that one's class."""

    text: str
    kind: Absence | None

    def __str__(self) -> str:
        return self.text

    def format(self, **fields: object) -> str:
        return self.text.format(**fields)

    @property
    def pattern(self) -> re.Pattern[str]:
        """The reasons this one writes: its fixed text, each field any text."""
        parts = [re.escape(lit) + ("" if name is None else f"(?P<{name}>.*)")
                 for lit, name, _, _ in string.Formatter().parse(self.text)]
        return re.compile("".join(parts), re.DOTALL)


def _dna(text: str) -> Reason:
    return Reason(text, DOES_NOT_APPLY)


def _nc(text: str) -> Reason:
    return Reason(text, NOT_COMPUTED)


_NO_WORD = "has no word after normalisation (SQuAD: case, punctuation, articles); fix the label"


class Reasons:
    """Every absence reason the scorers and the engine write (a namespace: ``Reasons.NO_SEARCH_STEP``)."""

    # does not apply: the trace has no such thing now (labels, answer, citations, searches)
    NO_SEARCH_STEP = _dna("no search step in trace")
    NO_REQUIRED_LABEL = _dna("no required_doc_ids label")
    REFUSAL_RECALL = _dna("refusal case: required_doc_ids is empty, scored on the answer")
    NO_REQUIRED_HIT = _dna("no required doc came back in any search call")
    EMPTY_REQUIRED_ID = _dna("required_doc_ids holds an empty id ({required!r}); fix the label")
    STALE_LABEL = _dna("stale label: {pairs}; update the label")
    NO_ANSWER_LABEL = _dna("no expected_answer_contains or expect_refusal label")
    NO_GOLD_LABEL = _dna("no gold_answer label")
    EMPTY_EXPECTED_ENTRY = _dna("expected_answer_contains entry {entry!r} " + _NO_WORD)
    EMPTY_GOLD = _dna("gold_answer label {gold!r} " + _NO_WORD)
    EMPTY_ANSWER = _dna("empty answer")
    NO_SENTENCES = _dna("answer has no sentences")
    NOTHING_CITED = _dna("answer cites no URL or doc id")
    NO_CLAIM = _dna("answer makes no factual claim")
    NO_CITED_CLAIM = _dna("no claim cites a source")
    SURFACE_REFUSAL = _dna("refusal case: no gold answer for the surface to support")
    NO_GOLD_OR_EXPECTED = _dna("no gold_answer or expected_answer_contains label")
    SURFACE_NO_SEARCH = _dna("no search step")
    NO_SUPPORTING_SURFACE = _dna("no search result's surface supports the gold answer")
    NO_PAGE_FETCHED = _dna("no page fetched")
    NO_CITED_URL = _dna("no cited URL")
    NO_ANSWER_DECIDED = _dna("answer undecided: no answer label")
    # does not apply, multi-hop (#34): the hop scores are written only when the trace has a ``hops`` label
    EMPTY_HOP_ID = _dna("hops holds an empty id ({hops!r}); fix the label")
    HOP_NEVER_FOUND = _dna("hop order undecided: hop(s) {hops} never came back")
    # does not apply: the configuration says the score is no longer produced (a scorer, a stage or a k gone is a
    # score missing from a clean result: SETUP_DROPPED)
    JUDGE_OFF = _dna("judge turned off ([scoring] judge = false)")
    SETUP_DROPPED = _dna("no longer produced by the scoring setup")
    # not computed this time: the judge failed, was out of budget or unavailable, a step could not be read, a limit
    JUDGE_ERROR = _nc("judge_error")
    BUDGET = _nc("judge budget spent (${spent:.4f} of max ${limit:.4f})")
    NO_JUDGE = _nc("no judge configured")  # ANTHROPIC_API_KEY unset: only the config turns the judge off
    JUDGE_OFF_FLAG = _nc("judge turned off (--no-judge)")
    NO_SDK = _nc("judge unavailable: anthropic SDK not installed (pip install 'tracescore[judge]')")
    STEPS_UNREADABLE = _nc("{kind} step(s) could not be read ({steps}); {consequence}")
    STEP_UNREADABLE = _nc("a {kind} step could not be read: {why}")
    OVER_GUARD = _nc("trace over the scoring guard: {notes}")
    LINKS_UNKNOWN = _nc("no cited URL could be checked ({unknown} unknown)")
    RETRIEVAL_NOT_SCORED = _nc("retrieval was not scored")
    UNGIVEN = _nc("not computed")  # an absent score that carries no reason
    SCORER_ERROR = _nc("scorer error: {error}")  # the scorer raised on this trace: "<type>: <first line>"
    # the class of the reason it wraps
    RETRIEVAL_UNDECIDED = Reason("retrieval undecided: {reason}", None)
    # not computed this time: [scoring] judge_sample left the trace out (engine/sampling.py); judged on another run
    NOT_SAMPLED = _nc("not sampled (judge_sample {rate:g})")
    # not computed this time: [job] max_cost_per_day / max_calls_per_day spent (engine/daily.py); judged the next UTC
    # day or by ``backfill --judge-only``
    DAILY_BUDGET = _nc("daily judge budget spent ({spent} of max {limit} on {day} UTC)")
    # not written this time: ``backfill --judge-only`` sends the judged scores only, the deterministic ones stay
    JUDGE_ONLY = _nc("not re-scored (backfill --judge-only)")
    # not written this time: a trace judged again by ``run`` (its judge had failed) keeps the scores whose value did
    # not change as they are on the platform (engine/heal.py)
    UNCHANGED = _nc("unchanged since written")
    # #33: the numbers of the answer against the evidence
    NO_EVIDENCE_SEEN = _dna("no search result or fetched page text seen")
    NO_NUMBER = _dna("answer states no number")
    NO_TOOL_STEP = _dna("no search or fetch step in trace")
    # #33: the trajectory's use of the question and the pages, and the age of the cited sources
    NO_QUESTION = _dna("trace has no question")
    NO_QUESTION_WORD = _dna("question has no content word (only stop words)")
    NO_FIRST_QUERY = _dna("the first search call recorded no query")
    NOT_ALL_FOUND = _dna("required doc(s) never came back in any search call: {missing}")
    NO_TIMESTAMP = _dna("trace has no timestamp to date its sources against")
    NO_CITED_FETCH = _dna("no cited source was fetched")
    NO_SOURCE_DATE = _dna("no cited source the agent fetched has a findable date ({sources})")
    # #48: the session scores, from the scored turns of one conversation (scorers/session.py)
    SESSION_TURN = Reason("turn {turn} of the session: {reason}", None)  # the class of the turn's own reason
    NO_FAILED_TURN = _dna("no turn of the session failed")
    NO_SESSION_CLAIM = _dna("no turn of the session makes a judged claim")
    NO_SESSION_ANSWER = _dna("no turn of the session has an answer to check")
    NO_CLAIM_COUNTS = _nc("its claim verdicts were not recorded")
    TURN_NOT_SCORED = _nc("not scored")


REASONS: tuple[Reason, ...] = tuple(v for v in vars(Reasons).values() if isinstance(v, Reason))


# -- reading a written reason ---------------------------------------------------------------------------------------
_FIXED = {r.text: r for r in REASONS if "{" not in r.text}
_TEMPLATED = sorted((r for r in REASONS if "{" in r.text), key=lambda r: -len(r.text.split("{", 1)[0]))
_PATTERNS = [(r, r.pattern) for r in _TEMPLATED]


@lru_cache(maxsize=4096)
def declared_reason(reason: str) -> Reason | None:
    """The declared reason that writes ``reason`` (exact, else the templated one it fills), or None."""
    found = _FIXED.get(reason)
    if found is not None:
        return found
    for declared, pattern in _PATTERNS:
        if pattern.fullmatch(reason):
            return declared
    return None


@lru_cache(maxsize=4096)
def absence_kind(reason: str | None) -> Absence:
    """The class of an absence reason: a wrapping reason takes its inner one's; undeclared → not computed."""
    if reason is None:
        return NOT_COMPUTED
    declared = declared_reason(reason)
    if declared is None:
        return NOT_COMPUTED
    if declared.kind is not None:
        return declared.kind
    match = declared.pattern.fullmatch(reason)
    return absence_kind(match.group("reason") if match else None)
