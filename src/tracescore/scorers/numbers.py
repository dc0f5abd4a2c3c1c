"""Grounding without a judge: the numbers the answer states that none of the evidence the agent saw states.

``grounding.numbers_checked``: the distinct numbers the answer's sentences state (``scorers/numerals.py``: values,
dates, names with a number), leaving out the question's own numbers, citation markers, list numbering and numbers
in URLs. ``grounding.unsupported_numbers``: those that appear in none of the evidence (search hits' titles and
snippets, the text of every page fetched and read; a hit's URL is not evidence text), each named in the comment with
the closest number the evidence does state, and "may be derived from …" when one sum, difference or share of two
stated numbers gives it. Absent when no evidence was seen or the answer states no number; the unsupported count is
absent when a step could not be read (the number may be on the page no one read).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from decimal import Decimal

from tracescore.catalog import GROUNDING_NUMBERS_CHECKED, GROUNDING_UNSUPPORTED_NUMBERS, Reasons
from tracescore.scorers.numerals import Key, Numeral, numerals
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scorers.sentences import parse_answer
from tracescore.scores import Score, absent, score
from tracescore.trace import Trace, fetch_failed

__all__ = ["Evidence", "numbers_scorer"]

_MAX_DERIVE = 300  # distinct evidence values tried two at a time for "may be derived from"
_HUNDRED = Decimal(100)


class Evidence:
    """Every number the evidence states, by key, with where it was first seen ("page 2", "search 1")."""

    def __init__(self, trace: Trace) -> None:
        self.where: dict[Key, tuple[str, str]] = {}  # key → (text as written, where)
        self.seen = False
        for i, search in enumerate(trace.searches, start=1):
            for hit in search.hits:
                for part in (hit.title, hit.snippet):
                    if part:
                        self._add(part, f"search {i}")
        for i, fetch in enumerate(trace.fetches, start=1):
            if fetch.text and not fetch_failed(fetch.status):
                self._add(fetch.text, f"page {i}")

    def _add(self, text: str, where: str) -> None:
        self.seen = True
        for n in numerals(text):
            self.where.setdefault(n.key, (n.text, where))

    def states(self, key: Key) -> bool:
        """Whether the evidence states the number of ``key``; a full date also when it states its day and month
        ("on May 7") and its year."""
        if key in self.where:
            return True
        return key[0] == "d" and ("md", key[2], key[3]) in self.where and ("n", Decimal(key[1])) in self.where  # type: ignore[arg-type]

    def values(self) -> list[Decimal]:
        return [key[1] for key in self.where if key[0] == "n"]  # type: ignore[misc]


def _closest(claim: Numeral, evidence: Evidence, values: list[Decimal]) -> str | None:
    """The evidence number nearest ``claim``: within a factor of two for a value, the same year for a date, the
    same letters for a name."""
    key = claim.key
    if claim.value is not None:
        x = claim.value
        near = [v for v in values if v != x and x != 0 and Decimal("0.5") <= v / x <= 2]
        found: Key | None = ("n", min(near, key=lambda v: abs(v - x))) if near else None
    elif key[0] in ("d", "ym"):
        found = next((k for k in evidence.where if k[0] == key[0] and k[1] == key[1]), None)
    else:
        letters = "".join(c for c in str(key[1]) if c.isalpha())
        found = next((k for k in evidence.where if k[0] == "name" and k != key
                      and "".join(c for c in str(k[1]) if c.isalpha()) == letters), None)  # fmt: skip
    if found is None:
        return None
    text, where = evidence.where[found]
    return f'closest: "{text}" ({where})'


def _derived(x: Decimal, values: list[Decimal]) -> str | None:
    """One operation on two stated numbers that gives ``x``: a sum, a difference, a share (as a percentage, to the
    claim's precision)."""
    pool = sorted({v for v in values if v > 1})[:_MAX_DERIVE]  # "a + 1" derives anything
    have = set(pool)
    exponent = x.as_tuple().exponent
    places = Decimal(1).scaleb(exponent if isinstance(exponent, int) else 0)
    for a in pool:
        if x - a in have and x - a <= a:
            return f"{_shown(a)} + {_shown(x - a)}"
        if a - x in have:
            return f"{_shown(a)} - {_shown(a - x)}"
    if 0 < x <= _HUNDRED:  # a share a / b that rounds to x %: a within half a place of x·b/100 (found by bisection)
        half = places / 2
        for b in pool:
            low, high = (x - half) * b / _HUNDRED, (x + half) * b / _HUNDRED
            for a in pool[bisect_left(pool, low):bisect_right(pool, high)]:
                if a < b and (a / b * _HUNDRED).quantize(places) == x:
                    return f"{_shown(a)} / {_shown(b)}"
    return None


def _derivable(claim: Numeral) -> bool:
    """Whether a sum or share could be meant: not a year (1953 "derived" as 1954 - 1 says nothing) nor a number word
    ("the other two")."""
    year = claim.text.isdigit() and len(claim.text) == 4 and 1000 <= int(claim.text) <= 2100
    return not year and any(ch.isdigit() for ch in claim.text)


def _shown(value: Decimal) -> str:
    return f"{value.normalize():f}"


def _claims(trace: Trace) -> list[Numeral]:
    """The distinct numbers the answer's sentences state, in order, without the question's."""
    asked = {n.key for n in numerals(trace.question)} if trace.question else set()
    claims: dict[Key, Numeral] = {}
    for sentence in parse_answer(trace.answer).sentences:
        for n in numerals(sentence.text, whole=True):
            if n.key not in asked:
                claims.setdefault(n.key, n)
    return list(claims.values())


def numbers_scorer() -> Scorer:
    """Scorer factory for ``grounding.unsupported_numbers`` and ``grounding.numbers_checked``."""
    no_evidence = Scored(tuple(absent(n, Reasons.NO_EVIDENCE_SEEN.text) for n in _NAMES))
    no_number = Scored(tuple(absent(n, Reasons.NO_NUMBER.text) for n in _NAMES))

    def score_numbers(trace: Trace) -> Scored:
        evidence = Evidence(trace)
        if not evidence.seen:
            return no_evidence
        claims = _claims(trace) if trace.answer else []
        if not claims:
            return no_number
        checked = score(GROUNDING_NUMBERS_CHECKED, len(claims), comment=", ".join(f'"{c.text}"' for c in claims))
        return Scored((_unsupported(trace, claims, evidence), checked))

    return score_numbers


_NAMES = (GROUNDING_UNSUPPORTED_NUMBERS, GROUNDING_NUMBERS_CHECKED)


def _unsupported(trace: Trace, claims: list[Numeral], evidence: Evidence) -> Score:
    spots = [b for b in trace.blind_spots if b.kind == "fetch"]
    if spots:
        shown = "; ".join(f"{b.tool or b.kind}: {b.reason}" for b in spots[:3])
        more = f" (+{len(spots) - 3} more)" if len(spots) > 3 else ""
        reason = Reasons.STEPS_UNREADABLE.format(kind="fetch", steps=shown + more,
                                                 consequence="a number may be stated on the page not read")
        return absent(GROUNDING_UNSUPPORTED_NUMBERS, reason)
    values = evidence.values()
    notes = []
    for claim in claims:
        if evidence.states(claim.key):
            continue
        note = f'"{claim.text}" not in any evidence'
        derived = _derived(claim.value, values) if claim.value is not None and _derivable(claim) else None
        near = _closest(claim, evidence, values)
        note += f"; may be derived from {derived}" if derived else f"; {near}" if near else ""
        notes.append(note)
    return score(GROUNDING_UNSUPPORTED_NUMBERS, len(notes), comment="; ".join(notes) or None)
