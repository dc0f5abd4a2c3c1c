"""The numbers the evidence of a trace states, read lazily: behind ``grounding.unsupported_numbers``
(``scorers/numbers.py``).

Reading every number of every page is what costs (a 15 KB page holds hundreds), so a number is looked up by the texts
any writing of it contains (its digits at each scale, its number word, its year, its month, a name's forms): only
the parts (a hit's title or snippet, a page) holding one of them are read, each at most once per trace, whole, by
``numerals`` — so the answer is the same as reading everything (``where``), which is done only when a lookup cannot
be narrowed (a text whose case folding or digits the lookup does not cover). The closest-number and derived notes
look among the digit runs of the evidence for candidates and read only the parts of the ones they would name.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal

from tracescore.scorers import numerals as _numerals
from tracescore.scorers.evidence_anchors import by_two as _by_two
from tracescore.scorers.evidence_anchors import cleaned as _cleaned
from tracescore.scorers.evidence_anchors import fused as _fused
from tracescore.scorers.evidence_anchors import heads_at as _heads_at
from tracescore.scorers.evidence_anchors import held_scales as _held_scales
from tracescore.scorers.evidence_anchors import held_ws as _held_ws
from tracescore.scorers.evidence_anchors import led_pattern as _led_pattern
from tracescore.scorers.evidence_anchors import led_split as _led_split
from tracescore.scorers.evidence_anchors import name_forms as _name_forms
from tracescore.scorers.evidence_anchors import name_heads as _name_heads
from tracescore.scorers.evidence_anchors import part_starts as _part_starts
from tracescore.scorers.evidence_anchors import shown
from tracescore.scorers.evidence_anchors import value_anchors as _value_anchors
from tracescore.scorers.evidence_looks import QuickLooks
from tracescore.scorers.evidence_values import candidate_values
from tracescore.scorers.numerals import NOT_PLAIN, Key, Numeral, numerals, reading
from tracescore.trace import Trace, fetch_failed

__all__ = ["Evidence", "shown"]

_SEP = _numerals.PART_SEP  # between parts: no number spans it
_MONTH_PREFIX = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_WIDE = re.compile(r"[\u0131\u017f]|(?![0-9])\d")  # "ı", "ſ" match i, s without case; digits other than 0-9
_MAX_PLACES = 64  # places read around for one lookup before every part is read whole instead
_PER_MATCH = 8  # a number's place in the order read: where its match starts × 8 + its place among the match's
_SPAN = 120  # how far before a place a plain word is looked for
# a plain word (``numerals.NOT_PLAIN``) followed by a space and a letter — not a name's word before its number
_LAST_PLAIN = re.compile(rf"(?s:.*)(?<!\S)(?!{'|'.join(_MONTH_PREFIX)}|(?:{'|'.join(NOT_PLAIN)})(?![a-z]))"
                         r"([a-z]+)(?=\s+[a-z])")  # the last one (a word starting as a month does is not plain)


class Evidence(QuickLooks):
    """The evidence of a trace (search hits' titles and snippets, fetched pages read) and the numbers it states."""

    def __init__(self, trace: Trace) -> None:
        self.parts: list[tuple[str, str]] = []  # (text, where)
        for i, search in enumerate(trace.searches, start=1):
            where = f"search {i}"
            self.parts += [(part, where) for hit in search.hits for part in (hit.title, hit.snippet) if part]
        for i, fetch in enumerate(trace.fetches, start=1):
            if fetch.text and not fetch_failed(fetch.status):
                self.parts.append((fetch.text, f"page {i}"))
        self.seen = bool(self.parts)
        self._where: dict[Key, tuple[str, str]] | None = None
        self._read: dict[int, list[Numeral]] = {}
        self._lower: str | None = None  # every part lower-cased, joined by _SEP; "" when a lookup cannot be narrowed
        self._starts: list[int] = []
        self._text = ""  # the cleaned joined text (original case) the numbers are read from
        self._near: dict[int, list[tuple[int, Numeral]]] = {}
        self._heads: dict[str, list[int] | None] = {}
        self._named: dict[tuple[str, Key | None], tuple[int, int, Numeral] | None] = {}  # ``_first_named``
        self._reads: dict[int, tuple[list[tuple[int, list[Numeral]]], Iterator[tuple[int, list[Numeral]]]]] = {}
        self._firsts: dict[Key, tuple[int, int, Numeral]] = {}  # every part read whole, as far as read (``_scan``)
        self._stream: Iterator[tuple[int, int, Numeral]] | None = None
        self._at: dict[tuple[tuple[str, str], ...], list[int] | None] = {}  # ``_places`` of each set of anchors
        self._values: list[Decimal] | None = None
        self._runs: str | None = None  # the distinct maximal runs of [0-9.,] joined by spaces (``candidates``)
        self._whole_values: list[int] | None = None  # the candidates as ints when all are whole
        self._held: dict[str, bool] = {}  # texts the joined text holds (``states_value``)
        self._firsts_looked: dict[Key, tuple[int, int, Numeral] | None] = {}  # ``first`` of each key looked up
        self._ws_held: tuple[str, ...] | None = None  # ``_ws``, ``_scales``: found when first needed
        self._scales_held: tuple[int, ...] | None = None
        self._leds: dict[str, list[int]] = {}  # ``_led`` of each head
        self._led_by: dict[str, dict[str, list[int]]] = {}  # ``_led`` of each head, by the two characters after it

    @property
    def where(self) -> dict[Key, tuple[str, str]]:
        """Every number the evidence states → (its text as written, where it was first seen)."""
        if self._where is None:
            self._where = {}
            for i, (_, where) in enumerate(self.parts):
                for n in self._numerals(i):
                    self._where.setdefault(n.key, (n.text, where))
        return self._where

    def values(self) -> list[Decimal]:
        """Every value the evidence states, in the order first stated."""
        return [key[1] for key in self.where if key[0] == "n"]  # type: ignore[misc]

    def _numerals(self, i: int) -> list[Numeral]:
        if i not in self._read:
            self._read[i] = numerals(self.parts[i][0])
        return self._read[i]

    def _index(self) -> str:
        """The evidence as one text: each part cleaned as ``numerals`` cleans it, joined by _SEP (which no number
        spans), lower-cased; "" when a lookup cannot be narrowed."""
        if self._lower is None:
            self._lower = ""
            pieces, text = _cleaned([part for part, _ in self.parts])
            lower = text.lower()
            if len(lower) != len(text) or (not text.isascii() and _WIDE.search(text)):
                return ""  # case folding or digits the lookup does not cover: read everything
            self._starts = _part_starts(pieces, text)
            if len(self._starts) != len(self.parts):
                return ""
            self._text, self._lower = text, lower
        return self._lower

    @property
    def _ws(self) -> tuple[str, ...]:
        """The whitespace characters (what \\s matches) the evidence holds: the ones a name or range may be spaced
        with."""
        if self._ws_held is None:
            self._ws_held = _held_ws(self._text)
        return self._ws_held

    @property
    def _scales(self) -> tuple[int, ...]:
        """The scales whose word the evidence holds (looked for once a lookup needs them: ~50 us a word)."""
        if self._scales_held is None:
            self._scales_held = _held_scales(self._lower or "")
        return self._scales_held

    def first(self, key: Key) -> tuple[int, int, Numeral] | None:
        """Where ``key`` is first stated: (part, place in the order read, the number), or None."""
        if key not in self._firsts_looked:  # the derived and closest notes look some values up again
            value = key[1] if key[0] == "n" else None
            self._firsts_looked[key] = self._first_of(lambda k: k == key, lambda lower: self._places(
                lower, self._anchors(key)), key, value)  # type: ignore[arg-type]
        return self._firsts_looked[key]

    def _first_of(self, ok: Callable[[Key], bool], narrow: Callable[[str], list[int] | None], key: Key | None = None,
                  value: Decimal | None = None) -> tuple[int, int, Numeral] | None:
        """The first number (in the order every part is read) whose key is ``ok``: read around each place
        ``narrow`` names, in order (every part, whole, when it names None); ``key``: the one key ``ok`` accepts,
        ``value`` its value. A place of plain digits (``plain_number``, most places) is not read: the part states
        them there and nothing else there; a number stated before them (as a value: not a name) holds an earlier
        place, looked at before."""
        lower = self._index()
        places = narrow(lower) if lower else None
        if places is None:
            return self._scan(ok, bool(lower), key)
        for at in places:
            if value is not None and (digits := _numerals.plain_number(self._text, lower, at)) is not None:
                if (number := Decimal(digits)) == value:
                    return bisect_right(self._starts, at) - 1, at * _PER_MATCH, Numeral(digits, ("n", number), number)
                continue
            for j, n in self._around(at):
                if ok(n.key):
                    return bisect_right(self._starts, at) - 1, j, n
        return None

    def _scan(self, ok: Callable[[Key], bool], placed: bool, key: Key | None) -> tuple[int, int, Numeral] | None:
        """The first number whose key is ``ok`` when every part is read whole, in order: read once per trace, as
        far as the lookups that cannot be narrowed need, each key kept where it is first stated."""
        if key is not None and key in self._firsts:
            return self._firsts[key]
        if key is None and (hit := next((h for k, h in self._firsts.items() if ok(k)), None)) is not None:
            return hit
        if self._stream is None:
            self._stream = (hit for i in range(len(self.parts)) for hit in self._whole(i, placed))
        for hit in self._stream:
            if hit[2].key not in self._firsts:  # a key read before is not ``ok`` (it was looked at above)
                self._firsts[hit[2].key] = hit
                if ok(hit[2].key):
                    return hit
        return None

    def _whole(self, i: int, placed: bool) -> Iterator[tuple[int, int, Numeral]]:
        """Every number of part ``i``: (``i``, its place in the order read, the number); the place is where its
        match starts in the joined text when ``placed``."""
        if not placed:
            yield from ((i, j, n) for j, n in enumerate(self._numerals(i)))
            return
        start = self._starts[i]
        end = self._starts[i + 1] if i + 1 < len(self._starts) else len(self._text)
        for at, some in reading(self._text, start):
            if at >= end:
                return
            yield from ((i, at * _PER_MATCH + k, n) for k, n in enumerate(some))

    def _around(self, at: int) -> list[tuple[int, Numeral]]:
        """The numbers read from a place before ``at`` where reading the whole part would be in the same state
        (``_sync``) up to the match holding ``at``: the same numbers reading everything gives there."""
        if at not in self._near:
            sync = self._sync(at)
            if sync not in self._reads:  # every place with the same sync point reads the same matches from it
                self._reads[sync] = ([], reading(self._text, sync))
            read, rest = self._reads[sync]
            while not read or read[-1][0] <= at:
                if (match := next(rest, None)) is None:
                    break
                read.append(match)
            got = []
            for start, some in read:
                if start > at:
                    break
                got += [(start * _PER_MATCH + k, n) for k, n in enumerate(some)]
            self._near[at] = got
        return self._near[at]

    def _sync(self, at: int) -> int:
        """The end of the last plain word (``_LAST_PLAIN``) shortly before ``at`` in its part, else the part's
        start. No match of ``numerals`` touches such a word, so the matches read from its end are those reading the
        whole part finds after it."""
        start = self._starts[bisect_right(self._starts, at) - 1]
        if at - start <= _SPAN:
            return start
        m = _LAST_PLAIN.match(self._lower or "", at - _SPAN, at)
        return m.end(1) if m else start

    def _places(self, lower: str, anchors: Sequence[tuple[str, str]]) -> list[int] | None:
        """The places of the anchors where a number can be written, in order (None: too many, read every part).
        A place is passed over when no writing can be there: digits after a digit 1-9 ("130" is not 30, nor
        "0.05" 5 × 10^k: the digits that count differ), a word, a name, a month or a year run on from a letter or
        digit before it (``numerals`` reads them from a word boundary), a word or a name running on after."""
        memo = tuple(anchors)
        if memo not in self._at:
            self._at[memo] = self._find_places(lower, memo)
        return self._at[memo]

    def _find_places(self, lower: str, anchors: Sequence[tuple[str, str]]) -> list[int] | None:
        found: set[int] = set()
        end = len(lower)
        words = bool(anchors) and anchors[0][1] == "word" and all(mode == "word" for _, mode in anchors)
        fused = _fused(tuple(a for a, _ in anchors)) if words else None
        if fused is not None:  # a name's writings in one pass: each place holds one of them
            split = _led_split(tuple(a for a, _ in anchors))
            for at, after in (self._led_spans(lower, *split) if split is not None
                              else ((m.start(), m.end(1)) for m in fused.finditer(lower))):
                if not ((at > 0 and _word(lower[at - 1])) or (after < end and _word(lower[after]))):
                    found.add(at)
                    if len(found) > _MAX_PLACES:
                        return None
            return sorted(found)
        for anchor, mode in anchors:
            at = lower.find(anchor)
            while at >= 0:
                if mode == "digits":
                    skip = at > 0 and lower[at - 1] in "123456789"
                else:
                    skip = mode != "" and at > 0 and _word(lower[at - 1])
                    after = at + len(anchor)
                    skip = skip or (mode == "word" and after < end and _word(lower[after]))
                if not skip:
                    found.add(at)
                    if len(found) > _MAX_PLACES:
                        return None
                at = lower.find(anchor, at + 1)
        return sorted(found)

    def _led(self, lower: str, head: str) -> list[int]:
        """Where ``head`` stands before a number (``led_pattern``): shared by the names with these letters before
        their number, and by the names with these letters (``first_like``)."""
        if head not in self._leds:
            self._leds[head] = [m.start() for m in _led_pattern(head).finditer(lower)]
        return self._leds[head]

    def _led_spans(self, lower: str, head: str, tails: tuple[str, ...]) -> Iterator[tuple[int, int]]:
        """(where, where it ends) of each writing of a name found by its head (``led_split``): the places of the
        head are kept by what follows it (a hyphen or space or nothing, a digit), so each tail looks at its own."""
        if head not in self._led_by:
            self._led_by[head] = _by_two(lower, len(head), self._led(lower, head))
        by = self._led_by[head]
        for tail in tails:  # one tail at most follows a head (``_fused``)
            near = by.get(tail[:2], ()) if len(tail) > 1 else [at for two, ats in by.items() if two[:1] == tail
                                                                for at in ats]
            for at in near:
                if lower.startswith(tail, at + len(head)):
                    yield at, at + len(head) + len(tail)

    def states(self, key: Key) -> bool:
        """Whether the evidence states the number of ``key``; a full date also when it states its day and month
        ("on May 7") and its year."""
        if self._known(key):
            return True
        return key[0] == "d" and self._known(("md", key[2], key[3])) and self._known(("n", Decimal(key[1])))  # type: ignore[arg-type]

    def _known(self, key: Key) -> bool:
        if self._where is not None:
            return key in self._where
        if key[0] == "n" and key[1] and key not in self._firsts_looked and self._plainly(key[1]):  # type: ignore[arg-type]
            return True
        return self.first(key) is not None

    def _plainly(self, value: Decimal) -> bool:
        """Whether the evidence states ``value`` as plain digits (``plain_number``) somewhere: then it states it,
        wherever it does first (which only ``first`` tells, looking at every writing at every scale; 0 is "0" at
        every scale: ``first`` looks it up as fast)."""
        lower = self._index()
        digits = shown(value)
        if not lower or not digits.isdigit():
            return False
        at, tries = lower.find(" " + digits), 0  # plain digits follow a space
        while at >= 0 and tries < _MAX_PLACES:
            if _numerals.plain_number(self._text, lower, at + 1) == digits:
                return True
            at, tries = lower.find(" " + digits, at + 1), tries + 1
        return False

    def stated(self, key: Key) -> tuple[str, str] | None:
        """(the number as first written, where) when the evidence states ``key``."""
        if self._where is not None:
            return self._where.get(key)
        found = self.first(key)
        return None if found is None else (found[2].text, self.parts[found[0]][1])

    def first_like(self, kind: str, like: object, key: Key) -> tuple[str, str] | None:
        """The first number of ``kind`` (a date with the same year, a name with the same letters), other than
        ``key``, that the evidence states: (its text, where)."""
        if kind == "name":
            letters = str(like)

            def like_but(other: Key | None) -> Callable[[Key], bool]:
                return lambda k: k[0] == "name" and k != other and _letters(k) == letters
            ok = like_but(key)

            def narrow(lower: str) -> list[int] | None:
                if letters not in self._heads:  # every claim with these letters looks at the same places
                    found = _heads_at(lower, letters, self._led(lower, letters))
                    self._heads[letters] = found if len(found) <= _MAX_PLACES else None
                return self._heads[letters]
        else:

            def ok(k: Key) -> bool:
                return k[0] == kind and k[1] == like

            def narrow(lower: str) -> list[int] | None:
                return self._places(lower, [(f"{like:04d}", "head")])  # a date's year is four digits
        if self._where is not None:
            k = next((k for k in self._where if ok(k)), None)
            return None if k is None else self._where[k]
        if kind != "name":
            found = self._first_of(ok, narrow)
        elif (found := self._first_named(letters, None, like_but(None), narrow)) and found[2].key == key:
            found = self._first_named(letters, key, ok, narrow)  # else the first with the letters is not ``key``
        return None if found is None else (found[2].text, self.parts[found[0]][1])

    def _first_named(self, letters: str, other: Key | None, ok: Callable[[Key], bool],
                     narrow: Callable[[str], list[int] | None]) -> tuple[int, int, Numeral] | None:
        """``_first_of(ok, narrow)`` for a name with ``letters`` other than ``other`` (once per trace: several claims
        share letters), without finding every place such a name can start (two passes over the evidence): the first
        place where all the letters stand before a number (``_led``, found for ``states``) that reads one ``ok``
        bounds the answer, and only the places up to it are found and read, in order. Past 64 places every part is
        read whole instead, which gives the same first one (as reading around every place does)."""
        if (letters, other) not in self._named:
            found, lower = None, self._index()
            if lower and letters not in self._heads:
                led, pattern = self._led(lower, letters), _name_heads(letters)
                stop = next((at for at in led if pattern.match(lower, at) and any(ok(n.key) for _, n in
                                                                                  self._around(at))), None)
                places = [] if stop is None else _heads_at(lower, letters, led, stop)
                found = next(((bisect_right(self._starts, at) - 1, j, n) for at in
                              (places if len(places) <= _MAX_PLACES else ()) for j, n in self._around(at)
                              if ok(n.key)), None)  # as ``_first_of`` reads them
            self._named[letters, other] = found or self._first_of(ok, narrow)
        return self._named[letters, other]

    def candidates(self) -> list[Decimal] | None:
        """Every value the evidence may state (a superset, sorted), None when past the derived note's pool."""
        if self._values is None:
            lower = self._index()
            if not lower:
                return None
            self._values, self._whole_values, self._runs = candidate_values(lower, self._scales)
        return self._values

    def _anchors(self, key: Key) -> Sequence[tuple[str, str]]:
        """The lower-cased texts one of which any writing of ``key`` contains, each with what may stand beside it
        (``_parts``)."""
        kind = key[0]
        if kind == "n":
            return self._value_anchors(key[1])  # type: ignore[arg-type]
        if kind in ("d", "ym"):
            return [(f"{key[1]:04d}", "head")]  # a date's year is four digits
        if kind == "md":
            return [(_MONTH_PREFIX[key[1] - 1], "head"), (f"-{key[1]:02d}-{key[2]:02d}", "")]  # type: ignore[operator]
        return [(form, "word") for form in _name_forms(str(key[1]), self._ws)]

    def _value_anchors(self, value: Decimal) -> Sequence[tuple[str, str]]:
        # 0 is "0" at every scale; only a year's range is spaced: neither needs a pass over the evidence then
        year = value == value.to_integral_value() and 1000 <= value <= 2100
        return _value_anchors(value, self._scales if value else (), self._ws if year else ())


_word = _numerals.word_char  # what \w matches


def _letters(key: Key) -> str:
    return "".join(c for c in str(key[1]) if c.isalpha())
