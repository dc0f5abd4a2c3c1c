"""The values the evidence of a trace may state, found cheaply: the candidates the derived and closest notes of
``grounding.unsupported_numbers`` look among (``Evidence.candidates``), a superset of what reading it states.

Every stated value is read from a run of digits (a prefix of one, up to a "." or ","), a number word, a range of years
("2018–19") or one of these times a scale word. The runs lie in the maximal runs of [0-9.,] of the joined text: those
are found by translating its bytes (a regex over the text tries every place, ~7 ns a character), each distinct run read
once. The values are kept as ints while whole (most are): they sort ~10 times faster than Decimals, and the derived
note adds and subtracts them as ints.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache

__all__ = ["candidate_values"]

# the digit runs every stated value is read from; the joined text holds no digit but 0-9 (``evidence_numbers._WIDE``)
_TOKEN = re.compile(r"[0-9][0-9]*(?:[.,][0-9]+)*")
_RANGE = re.compile(r"(\d\d)\d\d(?=\s?[\u2013-]\s?(\d\d))")  # "2018–19" states 2019 (and "2018-2019-20" 2020)
_RUN_BYTES = bytes(c if chr(c) in "0123456789.," else 32 for c in range(256))  # all else a space
_ROUNDS = 10**28  # a whole number from it on has more digits than a Decimal product keeps
_MIXED = re.compile(rb"[0-9][.,]|[.,][0-9]")  # a run holding a digit and a "." or ","
_WORD_VALUES = range(1, 21)
_SMALLS = 1000
_SMALL = tuple(Decimal(v) for v in range(_SMALLS))  # made once: a Decimal costs ~10 times an int to make


def candidate_values(lower: str, scales: tuple[int, ...]) -> tuple[list[Decimal], list[int] | None, str]:
    """The candidates of the joined, lower-cased text (sorted), the same as ints when all are whole (else None), and
    its distinct maximal runs of [0-9.,] joined by spaces (a writing of digits is in the text only if in them)."""
    runs = set(lower.encode("utf-8", "surrogatepass").translate(_RUN_BYTES).split())
    spaced = b" ".join(runs)
    whole: set[int] = set(_WORD_VALUES)  # the number words
    other: set[Decimal] = set()
    if _MIXED.search(spaced) is None:  # each run digits only or "." and "," only (most texts): the digits read at once
        whole.update(map(int, spaced.translate(None, b".,").split()))
    else:
        for run in runs:
            if (digits := run.strip(b".,")).isdigit():  # most runs
                whole.add(int(digits))
            elif digits:
                for v in _token_values(digits):
                    (whole.add(v) if isinstance(v, int) else other.add(v))
    if ("-" in lower or "\u2013" in lower) and max(map(len, runs), default=0) >= 4:  # a range: a dash, 4 digits
        whole.update(int(c) * 100 + int(y) for c, y in _RANGE.findall(lower))
    if scales:  # each value times each scale, as Decimal multiplies them (to 28 digits)
        wholes, others = list(whole), list(other)
        for s in scales:
            other.update([v * s for v in others] + [Decimal(v) * s for v in wholes if v * s >= _ROUNDS])
            whole.update([v * s for v in wholes if v * s < _ROUNDS])
    joined = spaced.decode()
    if other:
        return sorted({*other, *map(Decimal, whole)}), None, joined
    ints = sorted(whole)
    return [_SMALL[v] if v < _SMALLS else Decimal(v) for v in ints], ints, joined


@lru_cache(maxsize=4096)
def _token_values(run: bytes) -> tuple[int | Decimal, ...]:
    """The values a run of digits, "." and "," may state: each of its tokens' prefixes up to a "." or ","
    ("1,234.5": 1, 1234, 1234.5); an int when whole."""
    got: list[int | Decimal] = []
    for token in _TOKEN.findall(run.decode()):
        for cut in [i for i, ch in enumerate(token) if ch in ".,"] + [len(token)]:
            digits = token[:cut].replace(",", "")
            if "." not in digits:
                got.append(int(digits))
                continue
            try:
                value = Decimal(digits)
            except InvalidOperation:
                continue
            got.append(int(value) if value == value.to_integral_value() else value)
    return tuple(got)
