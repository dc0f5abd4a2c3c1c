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
from collections.abc import Callable
from decimal import Decimal

from tracescore.reasons import Reasons
from tracescore.registry import ScoreSpec, reasons, scorer
from tracescore.scorers.evidence_numbers import Evidence
from tracescore.scorers.evidence_numbers import shown as _shown
from tracescore.scorers.numerals import Key, Numeral, numerals
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scorers.sentences import parse_answer
from tracescore.scores import Score, absent, score
from tracescore.trace import Trace

__all__ = ["GROUNDING_NUMBERS_CHECKED", "GROUNDING_UNSUPPORTED_NUMBERS", "Evidence", "numbers_scorer"]

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

_MAX_DERIVE = 300  # distinct evidence values tried two at a time for "may be derived from"
_HUNDRED = Decimal(100)
_MAX_NOTES = 20  # unsupported numbers named (closest, derived) in the comment; the count is of all


def _closest(claim: Numeral, evidence: Evidence) -> str | None:
    """The evidence number nearest ``claim``: within a factor of two for a value (the first stated of two as near),
    the same year for a date, the same letters for a name."""
    key = claim.key
    if claim.value is not None:
        found = _nearest(claim.value, evidence)
    elif key[0] in ("d", "ym"):
        found = evidence.first_like(str(key[0]), key[1], key)
    else:
        found = evidence.first_like("name", "".join(c for c in str(key[1]) if c.isalpha()), key)
    if found is None:
        return None
    text, where = found
    return f'closest: "{text}" ({where})'


def _nearest(x: Decimal, evidence: Evidence) -> tuple[str, str] | None:
    if x == 0:
        return None
    values = evidence.candidates()
    if values is None:
        values = evidence.values()
    near = sorted((abs(v - x), v) for v in values if v != x and Decimal("0.5") <= v / x <= 2)
    best: tuple[int, int, str, str] | None = None
    for i, (distance, v) in enumerate(near):
        if best is not None and distance > near[i - 1][0]:
            break  # every value as near as the best one has been tried: the first stated of them
        first = evidence.first(("n", v))
        if first is not None and (best is None or first[:2] < best[:2]):
            best = (first[0], first[1], first[2].text, evidence.parts[first[0]][1])
    return None if best is None else (best[2], best[3])


class _Stated:
    """The derived note's pool (the smallest stated values over 1, ``_MAX_DERIVE`` of them: candidates, sorted) and
    which of them the evidence states, told once per trace for the notes of every missing claim."""

    def __init__(self, evidence: Evidence) -> None:
        candidates, self.ints = evidence.candidates(), None
        if candidates is not None and len(candidates) - (over := bisect_right(candidates, 1)) <= _MAX_DERIVE:
            pool = candidates[over:]  # sorted and distinct already
            whole = evidence.whole_values  # the same as ints, when all are whole (most pools)
            if whole is not None and whole[-1] < _EXACT:  # too short for a sum or difference to be rounded
                self.ints = whole[over:]
        else:
            pool = sorted({v for v in (candidates if candidates is not None else evidence.values()) if v > 1})
            if len(pool) > _MAX_DERIVE:  # the 300 smallest stated values: past it only reading every number tells
                pool = sorted({v for v in evidence.values() if v > 1})[:_MAX_DERIVE]
        self.pool, self.evidence = pool, evidence
        self.told: dict[Decimal | int, bool] = {}  # an int finds its equal Decimal's entry (the same hash)
        self.whole = set(self.ints or ())
        # a Decimal is in the ints' set when its value is (the same hash): no set of Decimals to make
        self.maybe: set[int] | set[Decimal] = self.whole if self.ints is not None else set(pool)

    def have(self, v: Decimal) -> bool:  # stated (a candidate is only a digit run that may be one)
        if v not in self.maybe:
            return False
        if v not in self.told:
            self.told[v] = self.evidence.states_value(v)
        return self.told[v]

    def have_int(self, n: int) -> bool:
        """``have`` of a whole number, for the int pool (``ints``): told without making its Decimal where a look
        tells (most of the values the derived note tries)."""
        if n not in self.whole:
            return False
        if (told := self.told.get(n)) is None:
            told = self.told[n] = self.evidence.states_whole(n)
        return told


_EXACT = 10**27  # whole numbers under it add and subtract exactly in Decimal (28 digits)


def _derived(x: Decimal, stated: _Stated) -> str | None:
    """One operation on two stated numbers that gives ``x``: a sum, a difference, a share (as a percentage, to the
    claim's precision)."""
    pool, maybe, have = stated.pool, stated.maybe, stated.have
    exponent = x.as_tuple().exponent
    places = Decimal(1).scaleb(exponent if isinstance(exponent, int) else 0)
    if stated.ints is not None and -_EXACT < x < _EXACT and x == (n := int(x)):  # the sums and differences in ints
        ints, whole = stated.ints, stated.whole  # (an int's ~10 times cheaper than a Decimal's)
        # below x / 2 neither x - a (over a) nor a - x (negative; the pool is over 1) can be one of a pair
        for i in range(bisect_left(ints, (n + 1) // 2), len(ints)):
            if (n - (v := ints[i]) in whole and n - v <= v) or v - n in whole:
                if (pair := _pair_whole(n, v, stated.have_int)) is not None:
                    return pair
    else:
        for a in pool:
            if (x - a in maybe and x - a <= a) or a - x in maybe:
                if (pair := _pair(x, a, have)) is not None:
                    return pair
    if 0 < x <= _HUNDRED:  # a share a / b that rounds to x %: a within half a place of x·b/100 (found by bisection)
        half = places / 2
        for b in pool:
            low, high = (x - half) * b / _HUNDRED, (x + half) * b / _HUNDRED
            for a in pool[bisect_left(pool, low):bisect_right(pool, high)]:
                if a < b and (a / b * _HUNDRED).quantize(places) == x and have(b) and have(a):
                    return f"{_shown(a)} / {_shown(b)}"
    return None


def _pair(x: Decimal, a: Decimal, have: Callable[[Decimal], bool]) -> str | None:
    """``a`` + ``x - a`` or ``a`` - ``(a - x)`` when the evidence states both (the sum first)."""
    if not have(a):
        return None
    if x - a <= a and have(x - a):
        return f"{_shown(a)} + {_shown(x - a)}"
    if have(a - x):
        return f"{_shown(a)} - {_shown(a - x)}"
    return None


def _pair_whole(n: int, a: int, have: Callable[[int], bool]) -> str | None:
    """``_pair`` in ints (a whole number's digits are how ``_shown`` writes it)."""
    if not have(a):
        return None
    if n - a <= a and have(n - a):
        return f"{a} + {n - a}"
    if have(a - n):
        return f"{a} - {a - n}"
    return None


def _derivable(claim: Numeral) -> bool:
    """Whether a sum or share could be meant: not a year (1953 "derived" as 1954 - 1 says nothing), nor zero (any
    number less itself), nor a number word ("the other two")."""
    year = claim.text.isdigit() and len(claim.text) == 4 and 1000 <= int(claim.text) <= 2100
    return not year and claim.value != 0 and any(ch.isdigit() for ch in claim.text)


def _claims(trace: Trace) -> list[Numeral]:
    """The distinct numbers the answer's sentences state, in order, without the question's."""
    claims: dict[Key, Numeral] = {}
    for sentence in parse_answer(trace.answer).sentences:
        for n in numerals(sentence.text, whole=True):
            claims.setdefault(n.key, n)
    asked = {n.key for n in numerals(trace.question)} if claims and _may_ask(trace.question) else set()
    return [n for key, n in claims.items() if key not in asked]  # each key's first, as when the asked were skipped


# every number ``numerals`` reads holds a digit or a number word, and each number word one of these (cleaning a text
# only takes some out): a question holding none states no number
_WORD_PARTS = ("one", "tw", "thr", "thi", "fou", "fi", "six", "sev", "eig", "nin", "ten", "ele", "sec")


_DIGIT_CHARS = frozenset("0123456789")


def _may_ask(question: str) -> bool:
    """Whether ``question`` may state a number (reading it costs ~10 times this look; most state none)."""
    if not question.isascii():
        return bool(question)  # letters whose case folds to a number word's ("ſ"), digits other than 0-9
    lower = question.lower()
    return not _DIGIT_CHARS.isdisjoint(lower) or any(part in lower for part in _WORD_PARTS)


@scorer(stage="grounding", version="numbers-1", scores=SPECS)
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
    missing = [claim for claim in claims if not (evidence.states_value(claim.value) if claim.key[0] == "n"
                                                 and claim.value is not None else evidence.states(claim.key))]
    notes = []
    stated: _Stated | None = None
    for claim in missing[:_MAX_NOTES]:
        note = f'"{claim.text}" not in any evidence'
        derived = None
        if claim.value is not None and _derivable(claim):
            stated = stated or _Stated(evidence)
            derived = _derived(claim.value, stated)
        near = None if derived else _closest(claim, evidence)
        note += f"; may be derived from {derived}" if derived else f"; {near}" if near else ""
        notes.append(note)
    if len(missing) > _MAX_NOTES:
        notes.append(f"(+{len(missing) - _MAX_NOTES} more)")
    return score(GROUNDING_UNSUPPORTED_NUMBERS, len(missing), comment="; ".join(notes) or None)
