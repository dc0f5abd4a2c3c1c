"""``scorers/numbers.py`` as it was before its speed-up (#33: the derived note's pool and lookups, the question read
only when it may state a number), with ``Evidence.candidates`` as it was (``_candidates``: a regex over the joined
text): the reference ``tests/scorers/test_numbers_derived.py`` compares the fast scorer with. Frozen."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from decimal import Decimal, InvalidOperation

from tracescore.catalog import Reasons
from tracescore.scorers.evidence_numbers import Evidence
from tracescore.scorers.evidence_numbers import shown as _shown
from tracescore.scorers.numbers import GROUNDING_NUMBERS_CHECKED, GROUNDING_UNSUPPORTED_NUMBERS
from tracescore.scorers.numerals import Key, Numeral, numerals
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scorers.sentences import parse_answer
from tracescore.scores import Score, absent, score
from tracescore.trace import Trace

_TOKEN = re.compile(r"[0-9][0-9]*(?:[.,][0-9]+)*")
_RANGE = re.compile(r"(\d\d)\d\d(?=\s?[\u2013-]\s?(\d\d))")
_WORD_VALUES = tuple(Decimal(i) for i in range(1, 21))


def _candidates(evidence: Evidence) -> list[Decimal] | None:
    lower = evidence._index()
    if not lower:
        return None
    seen: set[Decimal] = set(_WORD_VALUES)
    for token in set(_TOKEN.findall(lower)):
        seen.update(_token_values(token))
    if "-" in lower or "\u2013" in lower:
        seen.update(Decimal(int(c) * 100 + int(y)) for c, y in _RANGE.findall(lower))
    seen.update([v * s for v in list(seen) for s in evidence._scales])
    return sorted(seen)


def _token_values(token: str) -> tuple[Decimal, ...]:
    got = []
    for cut in [i for i, ch in enumerate(token) if ch in ".,"] + [len(token)]:
        try:
            got.append(Decimal(token[:cut].replace(",", "")))
        except InvalidOperation:
            pass
    return tuple(got)


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
    values = _candidates(evidence)
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


def _derived(x: Decimal, evidence: Evidence) -> str | None:
    """One operation on two stated numbers that gives ``x``: a sum, a difference, a share (as a percentage, to the
    claim's precision)."""
    candidates = _candidates(evidence)
    pool = sorted({v for v in (candidates if candidates is not None else evidence.values()) if v > 1})
    if len(pool) > _MAX_DERIVE:  # the 300 smallest stated values: past it only reading every number tells them
        pool = sorted({v for v in evidence.values() if v > 1})[:_MAX_DERIVE]
    maybe = set(pool)
    told: dict[Decimal, bool] = {}

    def have(v: Decimal) -> bool:  # stated (a candidate is only a digit run that may be one)
        if v not in maybe:
            return False
        if v not in told:
            told[v] = evidence.states(("n", v))
        return told[v]

    exponent = x.as_tuple().exponent
    places = Decimal(1).scaleb(exponent if isinstance(exponent, int) else 0)
    for a in pool:
        if (x - a in maybe and x - a <= a) or a - x in maybe:
            if not have(a):
                continue
            if x - a <= a and have(x - a):
                return f"{_shown(a)} + {_shown(x - a)}"
            if have(a - x):
                return f"{_shown(a)} - {_shown(a - x)}"
    if 0 < x <= _HUNDRED:  # a share a / b that rounds to x %: a within half a place of x·b/100 (found by bisection)
        half = places / 2
        for b in pool:
            low, high = (x - half) * b / _HUNDRED, (x + half) * b / _HUNDRED
            for a in pool[bisect_left(pool, low):bisect_right(pool, high)]:
                if a < b and (a / b * _HUNDRED).quantize(places) == x and have(b) and have(a):
                    return f"{_shown(a)} / {_shown(b)}"
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
    asked = {n.key for n in numerals(trace.question)} if claims and trace.question else set()
    return [n for key, n in claims.items() if key not in asked]  # each key's first, as when the asked were skipped


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
    missing = [claim for claim in claims if not evidence.states(claim.key)]
    notes = []
    for claim in missing[:_MAX_NOTES]:
        note = f'"{claim.text}" not in any evidence'
        derived = _derived(claim.value, evidence) if claim.value is not None and _derivable(claim) else None
        near = None if derived else _closest(claim, evidence)
        note += f"; may be derived from {derived}" if derived else f"; {near}" if near else ""
        notes.append(note)
    if len(missing) > _MAX_NOTES:
        notes.append(f"(+{len(missing) - _MAX_NOTES} more)")
    return score(GROUNDING_UNSUPPORTED_NUMBERS, len(missing), comment="; ".join(notes) or None)
