"""Grounding without a judge: the numbers the answer states that none of the evidence the agent saw states.

A number the answer states is **stated** by the evidence when reading the evidence gives a number with the same key
(``scorers/number_reader.py``: a value at its scale, so ``1,200`` = ``1.2 thousand`` and ``12%`` = ``12 percent`` =
``12``; a full date, stated only by that date written as one unit — never by its day and month in one place and its
year in another; a month and year, stated by itself or by a full date in it; a day and month; a name with a number
such as ``COVID-19``). The evidence is every search hit's title and snippet and the text of every page fetched that
did not fail; a hit's URL is not evidence text.

``grounding.numbers_checked``: the distinct numbers the answer's sentences state, leaving out the question's own,
citation markers, list numbering and numbers in URLs. ``grounding.unsupported_numbers``: those the evidence does not
state, each named in the comment (the first 20) with "may be derived from …" when one sum, difference or share (as a
percentage, to the claim's precision) of two stated values over 1 gives it (not for a year, zero or a number word),
else the closest stated number: the nearest value within a factor of two (the first stated of two as near), a full
date or month of the same year, a name with the same letters. Absent when no evidence was seen or the answer states
no number; the unsupported count is absent when a fetch could not be read (the number may be on that page).

The evidence is read once per trace, every number of every part, into an index from key to where it is first stated;
each claim is then one look-up, and the notes read the same index.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from decimal import Decimal
from itertools import accumulate

from tracescore.reasons import Reasons
from tracescore.registry import ScoreSpec, reasons, scorer
from tracescore.scorers.number_reader import SCAN, Key, Number, clean, lower_case, name_key, read, shown, token_keys
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scorers.sentences import parse_answer
from tracescore.scores import Score, absent, score
from tracescore.session import Earlier, EarlierTurn
from tracescore.trace import Trace, fetch_failed

GROUNDING_UNSUPPORTED_NUMBERS = "grounding.unsupported_numbers"
GROUNDING_NUMBERS_CHECKED = "grounding.numbers_checked"
_WHY = Reasons
SPECS = (
    ScoreSpec(GROUNDING_UNSUPPORTED_NUMBERS, "numeric", "lower", 0,
              absent=reasons(_WHY.NO_EVIDENCE_SEEN, _WHY.NO_NUMBER, _WHY.STEPS_UNREADABLE),
              definition="numbers the answer states (values, dates, names with a number; not the question's,"
              " markers, list numbers or URLs) that no evidence the agent saw states; absent when a fetch could not"
              " be read"),
    ScoreSpec(GROUNDING_NUMBERS_CHECKED, "numeric", None, 0, absent=reasons(_WHY.NO_EVIDENCE_SEEN, _WHY.NO_NUMBER),
              definition="distinct numbers the answer states, checked against the evidence"),
)  # fmt: skip

_MAX_NOTES = 20  # unsupported numbers named in the comment; the count is of all
_MAX_DERIVE = 300  # the smallest stated values over 1 tried two at a time for "may be derived from"
_HUNDRED = Decimal(100)
_NAMES = (GROUNDING_UNSUPPORTED_NUMBERS, GROUNDING_NUMBERS_CHECKED)


def evidence_parts(trace: Trace | EarlierTurn) -> list[tuple[str, str]]:
    """The evidence texts of a trace (or of an earlier turn of its session), in order, each with where it is
    (``search 2``, ``page 1``)."""
    searches = [s for s in trace.steps if s.kind == "search"]
    fetches = [s for s in trace.steps if s.kind == "fetch"]
    parts = [(text, f"search {i}") for i, search in enumerate(searches, start=1) for hit in search.hits
             for text in (hit.title, hit.snippet) if text]  # fmt: skip
    parts += [(fetch.text, f"page {i}") for i, fetch in enumerate(fetches, start=1)
              if fetch.text and not fetch_failed(fetch.status)]  # fmt: skip
    return parts


def _earlier_parts(earlier: Earlier | None) -> list[tuple[str, str]]:
    """The evidence texts of the session's earlier turns, each place naming its turn (``page 1 of turn 1, trace
    t1``)."""
    if earlier is None:
        return []
    return [(text, f"{where} of {turn.where}") for turn in earlier.turns for text, where in evidence_parts(turn)]


class Evidence:
    """Every number the evidence states, read once: ``first[key]`` is (its token, the part it is first stated in).
    A name with a number is looked up in the text instead (``states``)."""

    def __init__(self, parts: list[tuple[str, str]]) -> None:
        # the parts cleaned (no URLs, markers, list numbers), each after a space, in one text: between two parts a
        # character no form reads across; the reader reads it in lower case
        texts = [" " + clean(part) for part, _ in parts]
        self.text = "\x00".join(texts)
        self.lower = lower_case(self.text)
        self.starts = list(accumulate((len(text) + 1 for text in texts[:-1]), initial=0))
        self.wheres = [where for _, where in parts]
        self.first: dict[Key, tuple[str, int]] = {}
        for m in SCAN.finditer(self.lower):
            token = m.group()
            for key in token_keys(token):
                if key not in self.first:
                    self.first[key] = (token, self._part(m.start()))
        self._sorted: list[int | Decimal] | None = None

    def _part(self, at: int) -> int:
        """The part the text's character ``at`` is in."""
        return bisect_right(self.starts, at) - 1

    def states(self, key: Key) -> bool:
        """Whether the evidence states ``key``."""
        if isinstance(key, tuple) and key[0] == "name":
            return self._name(str(key[1]), same=True) is not None
        return key in self.first

    def written(self, key: Key) -> tuple[str, str]:
        """Where ``key`` is first stated: (its text as written there, the part's place)."""
        token, part = self.first[key]
        token = token if token[0].isdigit() else token[1:]  # a word's token starts with the character before it
        at = self.lower.find(token, self.starts[part])
        return " ".join(self.text[at:at + len(token)].split()), self.wheres[part]

    def _name(self, name: str, *, same: bool) -> tuple[str, str] | None:
        """The first writing of the name ``name`` (``same``), or of another name with its letters before its number:
        (as written, where)."""
        letters = name[:len(name) - len(name.lstrip("abcdefghijklmnopqrstuvwxyz"))]
        number = re.escape(name[len(letters):]) if same else r"[0-9]+(?:\.[0-9]+)?[a-z]*"
        # led by the letters (the engine finds them in C), then that they start a word
        pattern = re.compile(rf"{letters}(?<![a-z0-9]{letters})[\s-]?{number}(?![a-z0-9])")
        for m in pattern.finditer(self.lower):
            if same or name_key(m.group()) != name:
                return self.text[m.start():m.end()], self.wheres[self._part(m.start())]
        return None

    @property
    def values(self) -> list[int | Decimal]:
        """The stated values (not dates or names), sorted."""
        if self._sorted is None:
            self._sorted = sorted(k for k in self.first if not isinstance(k, tuple))
        return self._sorted

    def closest(self, claim: Number) -> str | None:
        """The stated number nearest ``claim``, as the note names it."""
        key = claim.key
        if claim.value is not None:
            found = self._nearest(claim.value)
        elif isinstance(key, tuple) and key[0] in ("d", "ym"):
            found = next((k for k in self.first if isinstance(k, tuple) and k[:2] == key[:2]), None)
        elif isinstance(key, tuple) and key[0] == "name":
            near = self._name(str(key[1]), same=False)
            return None if near is None else f'closest: "{near[0]}" ({near[1]})'
        else:
            found = None
        if found is None:
            return None
        text, where = self.written(found)
        return f'closest: "{text}" ({where})'

    def _nearest(self, x: int | Decimal) -> Key | None:
        """The value nearest ``x`` within a factor of two (of two as near, the first stated)."""
        if x == 0:
            return None
        values, at = self.values, bisect_left(self.values, x)
        below = values[at - 1] if at > 0 else None  # x itself is not stated
        above = values[at] if at < len(values) else None
        near = [v for v in (below, above) if v is not None and Decimal("0.5") <= Decimal(v) / Decimal(x) <= 2]
        if not near:
            return None
        distance = {v: abs(Decimal(v) - Decimal(x)) for v in near}
        tied = [v for v in near if distance[v] == min(distance.values())]
        if len(tied) == 1:
            return tied[0]
        order: dict[Key, int] = {k: i for i, k in enumerate(self.first)}
        return min(tied, key=lambda v: order[v])

    def derived(self, x: int | Decimal) -> str | None:
        """One operation on two stated values over 1 (the smallest 300) that gives ``x``: a sum, a difference, or a
        share as a percentage rounded to ``x``'s places."""
        pool = self.values[bisect_right(self.values, 1):][:_MAX_DERIVE]
        have = set(pool)
        for a in pool:
            if x - a in have and x - a <= a:
                return f"{shown(a)} + {shown(x - a)}"
            if a - x in have:
                return f"{shown(a)} - {shown(a - x)}"
        if not 0 < x <= _HUNDRED:
            return None
        exponent = Decimal(x).as_tuple().exponent
        places = Decimal(1).scaleb(exponent if isinstance(exponent, int) else 0)
        half = places / 2
        for b in pool:
            low, high = (x - half) * b / _HUNDRED, (x + half) * b / _HUNDRED
            for a in pool[bisect_left(pool, low):bisect_right(pool, high)]:
                if a < b and (Decimal(a) / Decimal(b) * _HUNDRED).quantize(places) == x:
                    return f"{shown(a)} / {shown(b)}"
        return None


def _only_earlier(evidence: Evidence, key: Key, own: int) -> bool:
    """Whether ``key`` is first stated in an earlier turn's part (past the trace's own ``own`` parts); a name with a
    number is looked up in the text, so it is said only when no part of the trace's own states it."""
    if key in evidence.first:
        return evidence.first[key][1] >= own
    return False


def _derivable(claim: Number) -> bool:
    """Whether a sum or share could be meant: not a year (1953 "derived" as 1954 - 1 says nothing), nor zero (any
    number less itself), nor a number word ("the other two")."""
    year = claim.text.isdigit() and len(claim.text) == 4 and 1000 <= int(claim.text) <= 2100
    return not year and claim.value != 0 and any(ch.isdigit() for ch in claim.text)


def claims(trace: Trace) -> list[Number]:
    """The distinct numbers the answer's sentences state, in order (each key's first writing), without the
    question's own."""
    found: dict[Key, Number] = {}
    for sentence in parse_answer(trace.answer).sentences:
        for number in read(sentence.text, whole=True):
            found.setdefault(number.key, number)
    asked = set()
    if found and trace.question:  # its numbers as a claim states them (names) and as evidence does (a date's year)
        asked = {n.key for whole in (True, False) for n in read(trace.question, whole=whole)}
    return [n for key, n in found.items() if key not in asked]


@scorer(stage="grounding", version="numbers-2", scores=SPECS)  # 2 (#44): a full date stated as one unit
def numbers_scorer() -> Scorer:
    """Scorer factory for ``grounding.unsupported_numbers`` and ``grounding.numbers_checked``."""
    no_evidence = Scored(tuple(absent(n, Reasons.NO_EVIDENCE_SEEN.text) for n in _NAMES))
    no_number = Scored(tuple(absent(n, Reasons.NO_NUMBER.text) for n in _NAMES))

    def score_numbers(trace: Trace, *, earlier: Earlier | None = None) -> Scored:
        own = evidence_parts(trace)
        parts = own + _earlier_parts(earlier) if earlier is not None else own
        if not parts:
            return no_evidence
        stated = claims(trace) if trace.answer else []
        if not stated:
            return no_number
        checked = score(GROUNDING_NUMBERS_CHECKED, len(stated), comment=", ".join(f'"{c.text}"' for c in stated))
        return Scored((_unsupported(trace, stated, parts, len(own)), checked))

    return score_numbers


def _unsupported(trace: Trace, stated: list[Number], parts: list[tuple[str, str]], own: int) -> Score:
    """The unsupported count; ``parts`` past the first ``own`` are the earlier turns': a number stated only there is
    stated, and the comment says where (``"42" stated on page 1 of turn 1, trace t1``)."""
    spots = [b for b in trace.blind_spots if b.kind == "fetch"]
    if spots:
        shown_spots = "; ".join(f"{b.tool or b.kind}: {b.reason}" for b in spots[:3])
        more = f" (+{len(spots) - 3} more)" if len(spots) > 3 else ""
        reason = Reasons.STEPS_UNREADABLE.format(kind="fetch", steps=shown_spots + more,
                                                 consequence="a number may be stated on the page not read")
        return absent(GROUNDING_UNSUPPORTED_NUMBERS, reason)
    evidence = Evidence(parts)
    missing = [claim for claim in stated if not evidence.states(claim.key)]
    notes = []
    for claim in missing[:_MAX_NOTES]:
        derived = evidence.derived(claim.value) if claim.value is not None and _derivable(claim) else None
        near = None if derived else evidence.closest(claim)
        notes.append(f'"{claim.text}" not in any evidence'
                     + (f"; may be derived from {derived}" if derived else f"; {near}" if near else ""))
    if len(missing) > _MAX_NOTES:
        notes.append(f"(+{len(missing) - _MAX_NOTES} more)")
    if len(parts) > own:
        carried = [claim for claim in stated if claim not in missing and _only_earlier(evidence, claim.key, own)]
        notes += [f'"{c.text}" stated on {evidence.written(c.key)[1]}' for c in carried[:_MAX_NOTES]]
    return score(GROUNDING_UNSUPPORTED_NUMBERS, len(missing), comment="; ".join(notes) or None)
