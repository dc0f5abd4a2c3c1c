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
from tracescore.scorers.numerals import NUMBER_WORDS, ORDINAL_WORDS, Key, Numeral, numerals
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scorers.sentences import parse_answer
from tracescore.scores import Score, absent, score
from tracescore.trace import Trace, fetch_failed

__all__ = ["Evidence", "numbers_scorer"]

_MAX_DERIVE = 300  # distinct evidence values tried two at a time for "may be derived from"
_HUNDRED = Decimal(100)
_MAX_NOTES = 20  # unsupported numbers named (closest, derived) in the comment; the count is of all


class Evidence:
    """The numbers the evidence states: a claim is looked up by the text it could be written as (its digits, its
    number word, its year, its month), each place found read whole (a window widened to whitespace), always so,
    whatever was read before; every number the evidence states, with where it was first seen ("page 2", "search
    1"), is read only when a note (closest, derived) needs it."""

    def __init__(self, trace: Trace) -> None:
        self.parts: list[tuple[str, str]] = []  # (text, where)
        for i, search in enumerate(trace.searches, start=1):
            for hit in search.hits:
                for part in (hit.title, hit.snippet):
                    if part:
                        self.parts.append((part, f"search {i}"))
        for i, fetch in enumerate(trace.fetches, start=1):
            if fetch.text and not fetch_failed(fetch.status):
                self.parts.append((fetch.text, f"page {i}"))
        self.seen = bool(self.parts)
        self._where: dict[Key, tuple[str, str]] | None = None
        self._joined: str | None = None  # every part, one per line: one search per anchor
        self._lower = ""

    @property
    def where(self) -> dict[Key, tuple[str, str]]:
        """Every number the evidence states → (its text as written, where it was first seen)."""
        if self._where is None:
            self._where = {}
            for text, where in self.parts:
                for n in numerals(text):
                    self._where.setdefault(n.key, (n.text, where))
        return self._where

    def states(self, key: Key) -> bool:
        """Whether the evidence states the number of ``key``; a full date also when it states its day and month
        ("on May 7") and its year."""
        if self._found(key):
            return True
        return key[0] == "d" and self._found(("md", key[2], key[3])) and self._found(("n", Decimal(key[1])))  # type: ignore[arg-type]

    def _found(self, key: Key) -> bool:
        if self._where is not None:  # every number already read (a note needed them, or a common anchor did)
            return key in self._where
        if self._joined is None:
            self._joined = "\n".join(text for text, _ in self.parts)
            lower = self._joined.lower()  # a character whose lower case is longer ("İ") would shift every offset
            self._lower = lower if len(lower) == len(self._joined) else self._joined
        text, lower = self._joined, self._lower
        windows = 0
        for anchor in _anchors(key):
            at = lower.find(anchor)
            while at >= 0:
                windows += 1
                if windows > _MAX_WINDOWS:  # a common anchor ("1"): reading every number once costs less
                    return key in self.where
                if key in {n.key for n in numerals(_window(text, at, len(anchor)))}:
                    return True
                at = lower.find(anchor, at + 1)
        return False

    def values(self) -> list[Decimal]:
        return [key[1] for key in self.where if key[0] == "n"]  # type: ignore[misc]


_MAX_WINDOWS = 16  # places read for one claim before every number of the evidence is read instead
_WINDOW = 60  # characters read on each side of a place a number may be written, widened to whitespace
_MONTH_PREFIX = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")


def _window(text: str, at: int, size: int) -> str:
    start, end = max(0, at - _WINDOW), min(len(text), at + size + _WINDOW)
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    while end < len(text) and not text[end].isspace():
        end += 1
    return text[start:end]


def _anchors(key: Key) -> list[str]:
    """The lower-cased texts one of which any writing of ``key`` contains."""
    kind = key[0]
    if kind == "n":
        return _value_anchors(key[1])  # type: ignore[arg-type]
    if kind in ("d", "ym"):
        return [str(key[1])]
    if kind == "md":
        return [_MONTH_PREFIX[key[1] - 1], f"-{key[1]:02d}-{key[2]:02d}"]  # type: ignore[operator]
    name = str(key[1])
    letters = name[: len(name) - len(name.lstrip("abcdefghijklmnopqrstuvwxyz"))]
    return [letters] if len(letters) >= 3 else ["".join(c for c in name if c.isdigit()) or name]


def _value_anchors(value: Decimal) -> list[str]:
    anchors = []
    for scale in (1, 10**3, 10**6, 10**9, 10**12):
        q = value / scale
        if scale > 1 and q < 1:
            break
        anchors.append(_shown(q))
        if q == q.to_integral_value() and q >= 1000:
            anchors.append(f"{int(q):,}")
    if value == value.to_integral_value() and 1000 <= value <= 2100:  # the end of a range of years, "1616–17"
        anchors += [f"-{int(value) % 100:02d}", f"\u2013{int(value) % 100:02d}"]
    if value == value.to_integral_value() and 1 <= value <= 20:
        anchors += [NUMBER_WORDS[int(value) - 1], ORDINAL_WORDS[int(value) - 1]]
    return anchors


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
    missing = [claim for claim in claims if not evidence.states(claim.key)]
    values = evidence.values() if missing else []
    notes = []
    for claim in missing[:_MAX_NOTES]:
        note = f'"{claim.text}" not in any evidence'
        derived = _derived(claim.value, values) if claim.value is not None and _derivable(claim) else None
        near = _closest(claim, evidence, values)
        note += f"; may be derived from {derived}" if derived else f"; {near}" if near else ""
        notes.append(note)
    if len(missing) > _MAX_NOTES:
        notes.append(f"(+{len(missing) - _MAX_NOTES} more)")
    return score(GROUNDING_UNSUPPORTED_NUMBERS, len(missing), comment="; ".join(notes) or None)
