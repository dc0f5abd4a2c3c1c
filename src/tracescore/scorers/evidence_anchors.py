"""What the lookups of ``evidence_numbers`` look for in the evidence: the texts any writing of a number contains (its
anchors), the places a name with some letters can start, and the parts cleaned as ``numerals`` cleans them."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from decimal import Decimal
from functools import lru_cache
from itertools import accumulate, repeat
from operator import contains
from types import MappingProxyType

from tracescore.scorers import numerals as _numerals
from tracescore.scorers.numerals import NUMBER_WORDS, ORDINAL_WORDS, clean

__all__ = ["by_two", "cleaned", "fused", "heads_at", "held_scales", "held_ws", "led_pattern", "led_split",
           "name_forms", "name_heads", "part_starts", "shown", "value_anchors"]

_SEP = _numerals.PART_SEP
_SCALES = MappingProxyType({"thousand": 10**3, "million": 10**6, "mn": 10**6, "billion": 10**9, "bn": 10**9,
                            "trillion": 10**12})
_WS = tuple(" \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
            "\u200a\u2028\u2029\u202f\u205f\u3000")  # what \s matches; the ASCII ones first
# where ``clean`` may find a list number in parts joined by _SEP (each part after the first follows its "\n")
_LIST_HEAD = re.compile(r"\s*\d{1,3}[.)]")
_LIST_LINE = re.compile(r"\n\s*\d{1,3}[.)]")
_LED = re.compile(r"[\s\-]?[0-9]")  # how a name's number follows its letters: a hyphen, one space or nothing
_ZERO = bytes.maketrans(b"123456789", b"000000000")
_ZERO_BYTE, _DOT_BYTE = ord("0"), ord(".")


def shown(value: Decimal) -> str:
    return f"{value.normalize():f}"


def cleaned(parts: list[str]) -> tuple[list[str], str]:
    """Each part as ``clean`` leaves it, and them joined by _SEP. Parts that together hold no character a URL, a
    marker or a list number needs are each left as they are: checked once over the joined text rather than part by
    part (~200 calls in a heavy trace)."""
    text = _SEP.join(parts)
    if not ("/" in text or "[" in text or ("]" in text and "](" in text) or _LIST_HEAD.match(text)
            or _LIST_LINE.search(text) or "www." in text):  # the cheapest first ("www." takes ~35 us on 65 KB)
        return parts, text
    done: dict[str, str] = {}  # each part cleaned on its own ("2)" ending a part is not a list number)
    pieces = [done.get(part) or done.setdefault(part, clean(part)) for part in parts]
    return pieces, _SEP.join(pieces)


def part_starts(pieces: list[str], text: str) -> list[int]:
    """Where each piece starts in ``text``, them joined by _SEP; where each _SEP ends when a piece holds "\x00"
    (one holding _SEP makes more starts than pieces: the lookups then read every part whole)."""
    if not any(map(contains, pieces, repeat("\x00"))):  # each starts after those before it and their separators
        return list(accumulate((len(piece) + len(_SEP) for piece in pieces[:-1]), initial=0))
    starts, at = [], 0
    while at >= 0:
        starts.append(at)
        at = text.find(_SEP, at)
        at = at + len(_SEP) if at >= 0 else -1
    return starts


def held_ws(text: str) -> tuple[str, ...]:
    return tuple(w for w in (_WS[:10] if text.isascii() else _WS) if w in text)


def held_scales(lower: str) -> tuple[int, ...]:
    illion = "illion" in lower  # one pass for million, billion, trillion (a 65 KB page takes ~50 us a word)
    return tuple(sorted({s for word, s in _SCALES.items() if (illion or "illion" not in word) and word in lower}))


@lru_cache(maxsize=4096)
def value_anchors(value: Decimal, scales: tuple[int, ...], ws: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    anchors = []
    for scale in (1, *scales):  # the digits at each scale a word of the evidence gives ("0.5 million")
        q = value / scale
        anchors.append((shown(q), "digits"))
        if q >= 1000:
            anchors.append((f"{q.normalize():,f}", "digits"))
        if q == q.to_integral_value() and 1 <= q <= 20:  # its number word, at each scale ("twenty million")
            anchors += [(NUMBER_WORDS[int(q) - 1], "word"), (ORDINAL_WORDS[int(q) - 1], "word")]
    if value == value.to_integral_value() and 1000 <= value <= 2100:  # the end of a range of years, "1616–17"
        yy = f"{int(value) % 100:02d}"
        anchors += [(f"{dash}{w}{yy}", "") for dash in ("-", "\u2013") for w in ("", *ws)]
    return tuple(dict.fromkeys(anchors))


@lru_cache(maxsize=1024)
def fused(forms: tuple[str, ...]) -> re.Pattern[str] | None:
    """One pattern finding every place where one of ``forms`` starts (found with ``str.find`` one by one otherwise):
    their common head, then what follows it in each. None unless the forms are several and differ in the first
    letter after the head (one form per place), and the head overlaps no other writing of itself (a place
    inside a match is then no place)."""
    head = os.path.commonprefix(forms)
    tails = [form[len(head):] for form in forms]
    if len(forms) < 2 or not head or any(head.startswith(head[k:]) for k in range(1, len(head))):
        return None
    if not all(tails) or len({tail[0] for tail in tails}) != len(tails):
        return None
    return re.compile(re.escape(head) + "(?=(" + "|".join(re.escape(tail) for tail in tails) + "))")


@lru_cache(maxsize=1024)
def led_split(forms: tuple[str, ...]) -> tuple[str, tuple[str, ...]] | None:
    """(the head, what follows it in each form) of forms ``fused`` finds when the head is letters and each form goes
    on as a name's number does (``_LED``): their places are then among those of ``led_pattern(head)``, which every
    name with the same letters before its number shares."""
    head = os.path.commonprefix(forms)
    tails = tuple(form[len(head):] for form in forms)
    return (head, tails) if head.isalpha() and all(_LED.match(tail) for tail in tails) else None


@lru_cache(maxsize=256)
def led_pattern(head: str) -> re.Pattern[str]:
    """Where ``head`` (letters) stands before a number; no two places overlap (a letter follows none)."""
    return re.compile(re.escape(head) + r"(?=[\s\-]?[0-9])")


@lru_cache(maxsize=256)
def name_heads(letters: str) -> re.Pattern[str]:
    """What every (lower-cased) name with these letters holds: some leading letters, a hyphen or one space or
    nothing, digits, the other letters (``numerals``' name forms)."""
    return re.compile("|".join(re.escape(letters[:j]) + r"[\s-]?\d+(?:\.\d+)?" + re.escape(letters[j:])
                               for j in range(1, len(letters) + 1)))


@lru_cache(maxsize=256)
def _after_digit(letters: str) -> re.Pattern[bytes]:
    """A digit (each read as 0) before the letters after the first ``j`` of them, for some ``j`` ≥ 1."""
    return re.compile(b"0(?=" + b"|".join(re.escape(letters[j:].encode()) for j in range(1, len(letters))) + b")")


def heads_at(lower: str, letters: str, led: Sequence[int], stop: int | None = None) -> list[int]:
    """Where the matches of ``name_heads(letters)`` in ``lower`` start, as ``finditer`` finds them (~190 us over a
    heavy trace's evidence, whose "claim" holds many a "c"): ``led``, where all the letters stand before a number
    (``led_pattern(letters)``), and the few places before a number that goes on with the rest of the letters (found
    in one pass with every digit read as 0) are the only places a match can start; each is matched there. With
    ``stop``, only those up to it: the pass then reads no further than a match starting there can reach back from
    (a name's digits run on past ``stop`` at most to the end of the run of digits and dots there)."""
    pattern = name_heads(letters)
    if len(letters) < 2 or not lower.isascii() or not letters.isascii():
        return [m.start() for m in pattern.finditer(lower) if stop is None or m.start() <= stop]
    if stop is None:
        zeroed = lower.encode("ascii").translate(_ZERO)
    else:
        cut = stop + len(letters) + 1  # a start up to ``stop`` has its digits start before this, or run on over it
        while cut < len(lower) and lower[cut] in "0123456789.":
            cut += 1
        zeroed = lower[:cut + len(letters)].encode("ascii").translate(_ZERO)  # and its letters after them
    starts = set(led)
    for m in _after_digit(letters).finditer(zeroed):
        runs = [last := m.start()]  # where the digits (a decimal's: either run) start before the letters
        while runs[0] > 0 and zeroed[runs[0] - 1] == _ZERO_BYTE:
            runs[0] -= 1
        if runs[0] >= 2 and zeroed[runs[0] - 1] == _DOT_BYTE and zeroed[runs[0] - 2] == _ZERO_BYTE:
            runs.append(runs[0] - 2)
            while runs[1] > 0 and zeroed[runs[1] - 1] == _ZERO_BYTE:
                runs[1] -= 1
        for j in range(1, len(letters)):
            if lower.startswith(letters[j:], last + 1):  # the first j letters, a hyphen or space or not, digits
                starts.update(at for run in runs for at in (run - j, run - j - 1) if at >= 0)
    found: list[int] = []
    end = 0
    for at in sorted(starts):  # as finditer: a match starts at or after the end of the one before
        if stop is not None and at > stop:
            break
        if at >= end and (match := pattern.match(lower, at)) is not None:
            found.append(at)
            end = match.end()
    return found


def by_two(lower: str, skip: int, places: list[int]) -> dict[str, list[int]]:
    """The places, by the two characters ``skip`` after each."""
    by: dict[str, list[int]] = {}
    for at in places:
        by.setdefault(lower[at + skip:at + skip + 2], []).append(at)
    return by


def name_forms(name: str, ws: tuple[str, ...]) -> list[str]:
    """The lower-cased writings of a name key ("gpt4o"): "gpt4o", "gpt-4o", and "covid 19" with any one space."""
    lead = len(name) - len(name.lstrip("abcdefghijklmnopqrstuvwxyz"))
    if not lead or not name[lead:lead + 1].isdigit():
        return [name]
    head, rest = name[:lead], name[lead:]
    return [name, f"{head}-{rest}", *(f"{head}{w}{rest}" for w in ws)]
