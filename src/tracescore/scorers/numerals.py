"""The numbers a text states, normalised so equal values compare equal: the reading behind
``grounding.unsupported_numbers`` (``scorers/numbers.py``).

A number is an integer, a decimal, a percentage, an amount of money, a year or a full date, an ordinal or a number
word (one to twenty, first to twentieth), with its scale word (``1.2 thousand`` = ``1,200``) and its unit where stated;
values compare by value (``12%`` = ``12 percent``, ``three`` = ``3``), dates by day (``2026-05-17`` = ``May 17,
2026``; a month and year by month). A number that is part of a name (``COVID-19``, ``F-16``, ``GPT-4``, ``Windows
10``) is the whole name. Citation markers, list numbering and numbers inside URLs are not numbers of the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from types import MappingProxyType

__all__ = ["NOT_PLAIN", "NUMBER_WORDS", "ORDINAL_WORDS", "PART_SEP", "Key", "Numeral", "clean", "fold", "numerals",
           "plain_number", "reading", "word_char"]

Key = tuple[object, ...]  # ("n", Decimal) a value, ("d", y, m, d) a day, ("ym", y, m) a month, ("md", m, d) a day
# of no stated year, ("name", text)

_MONTHS = MappingProxyType({m[:3].lower(): i for i, m in enumerate(
    ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November",
     "December"], start=1)})  # fmt: skip
_MONTH = r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?" \
         r"|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty")  # fmt: skip
ORDINAL_WORDS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
                  "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
                  "eighteenth", "nineteenth", "twentieth")  # fmt: skip
_WORD_VALUE = MappingProxyType({w: i for words in (NUMBER_WORDS, ORDINAL_WORDS)
                                for i, w in enumerate(words, start=1)})  # fmt: skip
_SCALES = MappingProxyType({"thousand": 10**3, "million": 10**6, "mn": 10**6, "billion": 10**9, "bn": 10**9,
                            "trillion": 10**12})
# capitalised words a number follows without being part of a name with it ("In 12 cases", "May 17")
_NOT_NAMES = frozenset(
    "a about after against all almost and around as at before below between by during each every for from in into"
    " just last less more most nearly next of on only or over per roughly since some than the these those to top"
    " under until up with within".split()
)

# a plain word: letters only, not a month, "of", a scale or percent word, a currency or a number word (each of which
# a match can hold or end with)
NOT_PLAIN = ("of", "per", "cent", "percent", "usd", "eur", "gbp", "us", *_SCALES, *NUMBER_WORDS, *ORDINAL_WORDS)
_UNPLAIN = frozenset(NOT_PLAIN)
PART_SEP = "\n\x00\n"  # between the parts of a trace's evidence read as one text: no number spans it
_ASCII_LOWER = "abcdefghijklmnopqrstuvwxyz"
_CURRENCY_ENDS = ("usd", "eur", "gbp")
_REACH = 40  # how far before digits their word is looked for
_DIGITS = re.compile(r"[0-9]+")
# plain digits (``plain_number``) and what may follow them: a space and a word (then not a letter, digit or "_"),
# punctuation not before a digit, the end of a part or of the text
_PLAIN_AFTER = re.compile(r"([0-9]++)(?: ([a-z]++)(?![0-9_])|[.,;:)](?![0-9])|\n\x00\n|\Z)")
# every run of digits, with what follows it when ``_PLAIN_AFTER`` would match there ("" at the end, else None)
_PLAIN_RUN = re.compile(r"([0-9]++)( ([a-z]++)(?![0-9_])|[.,;:)](?![0-9])|\n\x00\n|\Z)?")
_NUMBER_WORD_BYTES = frozenset(w.encode() for w in NUMBER_WORDS + ORDINAL_WORDS)
_LETTERS_ONLY = bytes(ch if 97 <= ch <= 122 else 32 for ch in range(256))  # every byte but a-z a space
_DIGIT_OR_UNDERSCORE = frozenset("0123456789_")
# what after its digits makes a name no name (the pattern's look-ahead r"[.,]\d|\s*(?:%|percent|per\s?cent|st|nd
# |rd|th)|\s*[\u2013-]\s*\d"): after plain digits, a word starting as a suffix or a percent word
_SUFFIXES = frozenset(("st", "nd", "rd", "th"))

_NUM = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SCALE = r"(?:\s*(?P<scale{}>thousand|million|billion|trillion|bn|mn)\b)?"
_PERCENT = r"(?:\s*(?:%|percent\b|per\s?cent\b))?"
_PATTERN = re.compile(
    rf"(?P<iso>(?<![\w.])(?P<iy>\d{{4}})-(?P<im>\d{{2}})-(?P<id>\d{{2}})(?:(?=T\d)|(?!\w|\.\d)))"
    r"|(?P<range>(?<![\w.,])(?P<ra>\d{4})\s?[\u2013-]\s?(?P<rb>\d{2})\b(?![\u2013-]))"
    rf"|(?P<mdy>\b(?P<m1>{_MONTH})\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<y1>\d{{4}})\b)"
    rf"|(?P<dmy>(?<![\w.])(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m2>{_MONTH}),?\s+(?P<y2>\d{{4}})\b)"
    rf"|(?P<my>\b(?P<m3>{_MONTH})\s+(?:of\s+)?(?P<y3>\d{{4}})\b)"
    rf"|(?P<md>\b(?P<m4>{_MONTH})\s+(?P<d4>\d{{1,2}})(?:st|nd|rd|th)?\b(?![.,:]?\d))"
    rf"|(?P<dm>(?<![\w.,])(?P<d5>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m5>{_MONTH})(?![a-z]))"
    r"|(?P<name>\b[A-Z][A-Za-z]*-?\d+(?:\.\d+)?[A-Za-z]*\b"
    r"|\b(?P<nw>[A-Z][A-Za-z]+)\s(?P<nn>\d{1,2})\b(?![.,]\d|\s*(?:%|percent|per\s?cent|st|nd|rd|th)|\s*[\u2013-]\s*\d))"
    rf"|(?P<num>(?P<cur>US\$|[$€£¥]|(?:USD|EUR|GBP)\s?)?(?<![\w.,])(?P<digits>{_NUM})(?![\d])"
    rf"(?:st|nd|rd|th)?{_SCALE.format(1)}{_PERCENT})"
    rf"|(?P<word>\b(?P<w>{'|'.join(NUMBER_WORDS + ORDINAL_WORDS)})\b{_SCALE.format(2)}{_PERCENT})",
    re.IGNORECASE,
)
_CASED = re.compile(r"[A-Z]")  # the name alternatives are case-sensitive: checked on the match
_URL = re.compile(r"(?:https?://|www\.)\S+|\]\([^)\s]*\)", re.IGNORECASE)
_MARKER = re.compile(r"\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\]")
# list numbering: r"^\s*\d{1,3}[.)](?=\s)" with re.MULTILINE, found from the text's start and its newlines (a
# pattern starting with a newline is searched for as fast as a string, one starting with ^ is tried everywhere)
_FIRST_LIST_NUMBER = re.compile(r"\s*\d{1,3}[.)](?=\s)")
_LINE_LIST_NUMBER = re.compile(r"\n\s*\d{1,3}[.)](?=\s)")
_NAME_SEPARATORS = re.compile(r"[\s-]+")
_DIGIT = re.compile(r"\d")
_DAY = re.compile(r"\d{1,2}(?:st|nd|rd|th)?", re.IGNORECASE)  # a day refused as a date ("5 may"): the number alone
# every match of _PATTERN holds a digit or a number word, with at most two runs of whitespace before the first one
# ("May of 2026"): the full pattern is tried only from the word before each of these (two words after "of")
_TRIGGER = re.compile(rf"\d|\b(?:{'|'.join(NUMBER_WORDS + ORDINAL_WORDS)})\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Numeral:
    """One number a text states: ``text`` as written, ``key`` what it compares by, ``value`` (None for a date or a
    name) what a near number is measured against."""

    text: str
    key: Key
    value: Decimal | None


# the letters outside ASCII that a case-insensitive pattern matches as an ASCII one ("ſix" matches "six", "fırst"
# "first"): a matched word is folded to ASCII before it is looked up
_FOLD = MappingProxyType(str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"}))


def fold(word: str) -> str:
    """``word`` lower-cased as a case-insensitive pattern read it: "ſIX", "fİrst" → "six", "first"."""
    return word.lower() if word.isascii() else word.translate(_FOLD).lower()


def _month(text: str) -> int:
    return _MONTHS[fold(text[:3])]


def _day(text: str, y: str, m: int, d: str) -> list[Numeral]:
    """A full date, and its year (a date states its year)."""
    day, year = int(d), int(y)
    if not 1 <= m <= 12 or not 1 <= day <= 31:
        return [Numeral(text, ("n", Decimal(year)), Decimal(year))]
    return [Numeral(text, ("d", year, m, day), None), Numeral(text, ("ym", year, m), None),
            Numeral(text, ("md", m, day), None), Numeral(text, ("n", Decimal(year)), Decimal(year))]  # fmt: skip


def _value(match: re.Match[str], digits: str) -> Decimal | None:
    try:
        value = Decimal(digits.replace(",", ""))
    except InvalidOperation:
        return None
    scale = match.group("scale1") or match.group("scale2")
    return value * _SCALES[fold(scale)] if scale else value


def _one(match: re.Match[str]) -> list[Numeral]:
    text = match.group(0).strip()
    g = match.group
    if g("range"):  # "2018–19": two years
        first = int(g("ra"))
        return [Numeral(text, ("n", Decimal(y)), Decimal(y)) for y in (first, first // 100 * 100 + int(g("rb")))]
    if g("md") or g("dm"):
        month, day = (_month(g("m4")), int(g("d4"))) if g("md") else (_month(g("m5")), int(g("d5")))
        return [Numeral(text, ("md", month, day), None)] if 1 <= day <= 31 else []
    if g("iso"):
        return _day(text, g("iy"), int(g("im")), g("id"))
    if g("mdy"):
        return _day(text, g("y1"), _month(g("m1")), g("d1"))
    if g("dmy"):
        return _day(text, g("y2"), _month(g("m2")), g("d2"))
    if g("my"):
        year = int(g("y3"))
        return [Numeral(text, ("ym", year, _month(g("m3"))), None), Numeral(text, ("n", Decimal(year)), Decimal(year))]
    if g("name"):
        return [Numeral(text, ("name", _NAME_SEPARATORS.sub("", text).lower()), None)]
    digits = g("digits") if g("num") else str(_WORD_VALUE[fold(g("w"))])
    value = _value(match, digits)
    return [] if value is None else [Numeral(text, ("n", value), value)]


def _names_ok(match: re.Match[str]) -> bool:
    """The name alternatives are cased: a capital first letter, the spaced form after a word that is not a
    preposition or a month ("In 12 cases", "May 17" are numbers); so is a day without a year ("5 may" is 5)."""
    if match.group("md") or match.group("dm"):
        return (match.group("m4") or match.group("m5"))[0].isupper()
    if match.group("name") is None:
        return True
    if not _CASED.match(match.group(0)):
        return False
    word = match.group("nw")
    return word is None or (word.lower() not in _NOT_NAMES and word[:3].lower() not in _MONTHS)


def clean(text: str) -> str:
    """The text without URLs, citation markers and list numbering (each replaced by a space)."""
    if "/" in text or "www." in text or "](" in text:
        text = _URL.sub(" ", text)
    if "[" in text:
        text = _MARKER.sub(" ", text)
    head = ""
    # list numbering at the start is after only whitespace: most texts start with neither it nor a digit
    if ((ch := text[:1]).isspace() or ch.isdigit()) and (first := _FIRST_LIST_NUMBER.match(text)) is not None:
        head, text = " ", text[first.end():]
    return head + _LINE_LIST_NUMBER.sub("\n ", text) if "\n" in text else head + text


def _next(text: str, pos: int) -> re.Match[str] | None:
    """``_PATTERN.search(text, pos)``, the pattern tried only from three words before the next digit or number word."""
    trigger = _TRIGGER.search(text, pos)
    if trigger is None:
        return None
    at = trigger.start()
    for words in range(3):
        end = at
        while at > pos and not text[at - 1].isspace():
            at -= 1
        if words == 2 or (words == 1 and text[at:end].lower() != "of"):  # only "May of 2026" spans three words
            break
        while at > pos and text[at - 1].isspace():
            at -= 1
    return _PATTERN.search(text, at)


def numerals(text: str, *, whole: bool = False) -> list[Numeral]:
    """Every number ``text`` states, in order. Read as a claim (``whole``), a date is one number and a name with a
    number is the name; read as evidence, a date also states its month and year, and a name (in any case) also
    states the numbers in it, so evidence is read generously."""
    text = clean(text)
    if whole and (plain := _plain_numerals(text)) is not None:
        return plain
    found: list[Numeral] = []
    for _, some in reading(text, 0, whole=whole):
        found += some
    return found


def word_char(ch: str) -> bool:
    """What ``\\w`` matches."""
    return ch.isalnum() or ch == "_"


def _plain_numerals(text: str) -> list[Numeral] | None:
    """``numerals(text, whole=True)`` of a cleaned ASCII text holding no number word and only plain digit runs
    (``plain_number``), without the pattern: every match holds a digit or a number word, so each match is then at
    one plain run: its value, or the name "Word 12" the pattern claims when the word is capitalised (and
    ``_names_ok`` keeps it). None when the text is not so plain."""
    if not text.isascii():
        return None
    lower = text.lower()
    # a number word is a whole run of letters: the runs are the words left when every other byte is a space
    if not _NUMBER_WORD_BYTES.isdisjoint(lower.encode().translate(_LETTERS_ONLY).split()):
        return None
    found = []
    for run in _PLAIN_RUN.finditer(lower):
        # ``plain_number`` inlined (the text is ASCII: its last test holds), keeping the word it found
        digits, after, follow = run.groups()
        at = run.start()
        if after is None or at < 2 or lower[at - 1] != " ":
            return None
        low = at - _REACH if at > _REACH else 0
        head = lower[low:at - 1]
        rest = head.rstrip(_ASCII_LOWER)
        word = head[len(rest):]
        if (rest[-1] in _DIGIT_OR_UNDERSCORE if rest else low > 0) or not word or word in _UNPLAIN \
                or word[:3] in _MONTHS or word[-3:] in _CURRENCY_ENDS:  # ``_plain_word``
            return None  # (in ASCII lower case, a word character not a letter is a digit or "_")
        if follow is not None and (follow in _UNPLAIN or follow[:3] in _MONTHS or follow[-3:] in _CURRENCY_ENDS):
            return None
        # the pattern's "Word 12" name, kept unless ``_names_ok`` drops it or what follows the digits refuses it
        if len(digits) <= 2 and len(word) >= 2 and text[at - 1 - len(word)].isupper() and word not in _NOT_NAMES \
                and (follow is None or (follow[:2] not in _SUFFIXES and not follow.startswith("percent"))):
            found.append(_plain_name(text[at - 1 - len(word):run.end(1)], word + digits))
        else:  # no name, or one dropped (as ``_names_ok`` drops it): the number on its own
            found.append(_plain_value(digits))
    return found


# the same few small numbers and names recur across answers: a numeral (~0.5 us to build) is made once
@lru_cache(maxsize=4096)
def _plain_value(digits: str) -> Numeral:
    value = Decimal(digits)
    return Numeral(digits, ("n", value), value)


@lru_cache(maxsize=4096)
def _plain_name(text: str, key: str) -> Numeral:
    """The name ``text`` ("Word 12"), ``key`` it without its space, lower-cased (as ``_one`` keys a name)."""
    return Numeral(text, ("name", key), None)


def _plain_word(word: str) -> bool:
    return bool(word) and word not in _UNPLAIN and word[:3] not in _MONTHS and word[-3:] not in _CURRENCY_ENDS


def plain_number(text: str, lower: str, at: int) -> str | None:
    """The digits at ``at`` of a cleaned text (``lower``: it lower-cased, as long) when they stand plainly: after a
    space and a plain word (``NOT_PLAIN``: letters only, after no letter, digit or "_", not a month and not ending
    as a currency does, "busd 5"), before the end of the text or part (``PART_SEP``), a space and a plain word, or
    one of ``.,;:)`` not followed by a digit; all in ASCII. No match of the pattern then starts before the digits and
    holds them but a name of the word before (read as evidence, reading starts again at the digits; a claim's name
    is the claim: ``_plain_numerals``) — dates, years, currency and ranges need a month, "of", a currency, a dash or
    more digits about them — and the one match starting at them is a number with no scale, percent or suffix:
    reading the text as evidence states exactly these digits there. None when they do not stand so plainly (read
    the text then). It answers most lookups and claims without the pattern (~0.3 us a character to search)."""
    if at < 2 or lower[at - 1] != " " or (after := _PLAIN_AFTER.match(lower, at)) is None:
        return None
    low = max(at - _REACH, 0)
    head = lower[low:at - 1]
    rest = head.rstrip(_ASCII_LOWER)
    word = head[len(rest):]
    if (word_char(rest[-1]) if rest else low > 0) or not _plain_word(word):
        return None  # a letter, digit or "_" before the word, or a word longer than the reach
    if after.group(2) is not None and not _plain_word(after.group(2)):
        return None
    start = at - 1 - len(word)
    return after.group(1) if text[max(start - 1, 0):after.end() + 1].isascii() else None


def reading(text: str, pos: int, *, whole: bool = False) -> Iterator[tuple[int, list[Numeral]]]:
    """The numbers of ``text`` (already ``clean``) read from ``pos`` on: (where the match starts, its numbers)."""
    while (match := _next(text, pos)) is not None:
        named = match.group("name") is not None
        if named and not whole:
            yield match.start(), _one(match)
            pos = _DIGIT.search(text, match.start()).start()  # type: ignore[union-attr]  # a name holds a digit
        elif _names_ok(match):
            yield match.start(), _one(match)[:1] if whole and not match.group("range") else _one(match)
            pos = match.end()
        elif match.group("dm"):  # "5 may": a day before a month in lower case is the number alone
            day = _DAY.match(text, match.start())
            assert day is not None  # noqa: S101 - the dm alternative starts with one
            yield match.start(), [Numeral(day.group(0), ("n", Decimal(match.group("d5"))), Decimal(match.group("d5")))]
            pos = day.end()  # searching again from the digit found the same refused date, for ever
        else:  # "In 12", "covid-19": not a name of the claim; read the number on its own
            pos = _DIGIT.search(text, match.start()).start()  # type: ignore[union-attr]
