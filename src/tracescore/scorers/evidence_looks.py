"""Quick answers of ``Evidence`` (``scorers/evidence_numbers.py``, which mixes these in): whether the evidence
states a value, told without a lookup where a look at the joined text tells. The derived note
(``scorers/numbers.py``) asks it of many values, most of them stated plainly or written nowhere."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal

from tracescore.scorers.evidence_anchors import shown
from tracescore.scorers.numerals import NUMBER_WORDS, ORDINAL_WORDS, Key, Numeral, plain_number

__all__ = ["QuickLooks"]


class QuickLooks:
    """``Evidence``'s quick answers (its fields and lookups, declared here, are ``Evidence``'s own)."""

    _where: dict[Key, tuple[str, str]] | None
    _firsts_looked: dict[Key, tuple[int, int, Numeral] | None]
    _runs: str | None
    _whole_values: list[int] | None
    _held: dict[str, bool]
    _text: str
    _lower: str | None
    _scales_held: tuple[int, ...] | None
    _index: Callable[[], str]
    _anchors: Callable[[Key], Sequence[tuple[str, str]]]
    states: Callable[[Key], bool]

    @property
    def whole_values(self) -> list[int] | None:
        """The candidates (``candidates``) as ints when all are whole, once they are read; else None."""
        return self._whole_values

    def states_value(self, value: Decimal) -> bool:
        """``self.states(("n", value))``, told without a lookup where a look at the joined text tells (the derived
        note asks it of many values, most stated plainly or written nowhere): true where its digits stand plainly
        (``plain_number``: ``first`` stops there or at a place before), false when the text holds none of its writings
        (``first`` has no place to look at)."""
        key: Key = ("n", value)
        if self._where is not None or key in self._firsts_looked or not (lower := self._index()):
            return self.states(key)
        digits, runs = shown(value), self._runs
        at = lower.find(digits) if runs is None or digits in runs else -1
        if at < 0:
            absent: list[str] = []  # a writing holding one not there is not there ("fifteenth", "fifteen")
            for anchor, _ in self._anchors(key):
                if anchor == digits or any(a in anchor for a in absent):
                    continue
                if runs is not None and not anchor.strip("0123456789.,"):  # digits lie in the runs (``candidates``)
                    there = anchor in runs
                else:
                    there = _holds(self._held, lower, anchor)
                if there:
                    break
                absent.append(anchor)
            else:
                return False
        if at >= 0 and self._plain_at(lower, digits, at):
            return True
        return self.states(key)

    def _plain_at(self, lower: str, digits: str, at: int) -> bool:
        """Whether ``digits`` stand plainly (``plain_number``) at one of their first places from ``at`` (their first):
        where a space is before them and no digit after (plain digits are so: the "70" of a "7" is passed over).
        A few places only: a value whose digits stand in many other numbers is looked up."""
        end, after = len(lower), len(digits)
        for _ in range(_PLAIN_TRIES):
            if at < 0:
                return False
            if lower[at - 1] == " " and (at + after == end or lower[at + after] not in _DIGIT_CHARS) and (
                    plain_number(self._text, lower, at) == digits):
                return True
            at = lower.find(digits, at + 1)
        return False

    def states_whole(self, n: int) -> bool:
        """``states_value`` of a whole ``n`` over 1 of the int pool (the runs and scales known: ``candidates``), where
        a look tells without its Decimal: its digits plain, or (under 21, with no scale word) neither its number word
        nor its ordinal (the rest of its writings) in the text while its digits are in no run."""
        lower, digits = self._lower, str(n)
        if lower and self._runs is not None and self._where is None and ("n", n) not in self._firsts_looked:
            if digits in self._runs:
                if self._plain_at(lower, digits, lower.find(digits)):
                    return True
            elif n <= 20 and self._scales_held == ():
                word, ordinal = NUMBER_WORDS[n - 1], ORDINAL_WORDS[n - 1]
                if not _holds(self._held, lower, word) and (word in ordinal or not _holds(self._held, lower,
                                                                                                  ordinal)):
                    return False
        return self.states_value(Decimal(n))


_PLAIN_TRIES = 8  # places of a value's digits looked at for a plain one before it is looked up
_DIGIT_CHARS = frozenset("0123456789")
_STEMS = ("teen", "twent")  # in the words of 13 to 20: none of them is there when these are not


def _holds(held: dict[str, bool], lower: str, text: str) -> bool:
    """Whether ``lower`` holds ``text``, each text (and stem) looked for once per trace."""
    if text not in held:
        held[text] = all(_holds(held, lower, stem) for stem in _STEMS if stem in text and stem != text) and (
            text in lower)
    return held[text]
