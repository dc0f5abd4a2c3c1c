"""The numbers a text states, each with the key it compares by: the reader behind ``grounding.unsupported_numbers``
(``scorers/numbers.py``).

What is read (in lower case; ASCII digits only):

- a **value**: an integer or decimal (``1,200``, ``4.50``), with a currency sign, an ordinal suffix (``3rd``), a scale
  word (``1.2 thousand``, ``5 bn``) and a percent sign or word (``12%``, ``12 per cent``) where stated; a number word
  one to twenty or an ordinal word first to twentieth (``three``, ``third``). Its key is the value at its scale:
  ``1,200`` = ``1200`` = ``1.2 thousand``, ``12%`` = ``12 percent``, ``three`` = ``3rd`` = ``3``. Digits run on after
  letters are read too (``Spain1986`` states 1986).
- a **full date**: a valid calendar date written as one unit: ``2003-06-11`` (also with a time after it),
  ``2003.06.11``, ``11.06.2003`` (day, month, year), ``June 11, 2003``, ``June 11 2003``, ``11 June 2003``, ``11th of
  June, 2003``. An impossible date (``January 32, 2017``, ``2017-02-30``) is no date: read from a claim, it is one
  that no evidence states.
- a **month and year** (``June 2003``), a **day and month** with the month capitalised (``June 11``, ``11 June``),
  a **year range** ``2018–19`` (the two years).
- a **name with a number**, first letter capitalised: ``GPT-4``, ``F16``, ``COVID-19``, ``Windows 10`` (a word and one
  or two digits, the word not a preposition or a month); its key is the name without its space or hyphen.

Read as a claim (``whole``), each of these is one number. Read as evidence, a full date also states its month and
year, its day and month, and its year; a name, in any case, also states its digits as a value; a day and month
with the month in lower case ("5 may") is the number 5. Citation markers (``[3]``), list numbering at the start of a
line (``1.``, ``2)``) and URLs are not read.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from types import MappingProxyType

# a value (an int, or a Decimal when written with a point), or ("d", y, m, d), ("ym", y, m), ("md", m, d),
# ("name", its letters and digits)
Key = int | Decimal | tuple[object, ...]

_MONTH_NAMES = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
                "november", "december")  # fmt: skip
_MONTHS = MappingProxyType({name[:3]: i for i, name in enumerate(_MONTH_NAMES, start=1)})
# alternations of words are grouped by first letter (then one branch is tried at a place, not every word)
_MONTH = r"(?:j(?:an(?:uary)?|une?|uly?)|f(?:eb(?:ruary)?)|m(?:ar(?:ch)?|ay)|a(?:pr(?:il)?|ug(?:ust)?)" \
         r"|s(?:ep(?:t(?:ember)?)?)|o(?:ct(?:ober)?)|n(?:ov(?:ember)?)|d(?:ec(?:ember)?))\.?"
NUMBER_WORDS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
                "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen", "twenty")
ORDINAL_WORDS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth",
                 "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth",
                 "eighteenth", "nineteenth", "twentieth")
_WORD_VALUES = MappingProxyType({w: i for words in (NUMBER_WORDS, ORDINAL_WORDS) for i, w in enumerate(words, 1)})
_SCALES = MappingProxyType({"thousand": 10**3, "million": 10**6, "mn": 10**6, "billion": 10**9, "bn": 10**9,
                            "trillion": 10**12})
# words a number follows without making a name with it ("In 12 cases")
_NOT_NAMES = frozenset(
    "a about after against all almost and around as at before below between by during each every for from in into"
    " just last less more most nearly next of on only or over per roughly since some than the these those to top"
    " under until up with within".split()
)



def _by_first_letter(words: tuple[str, ...]) -> str:
    """An alternation of ``words`` grouped by first letter, longest first within each."""
    groups: dict[str, list[str]] = {}
    for word in sorted(words, key=len, reverse=True):
        groups.setdefault(word[0], []).append(word[1:])
    return "(?:" + "|".join(f"{first}(?:{'|'.join(rest)})" for first, rest in groups.items()) + ")"


_NUM_REST = r"[0-9]{0,2}(?:,[0-9]{3})+(?:\.[0-9]+)?(?![0-9])|[0-9]*(?:\.[0-9]+)?"  # after the first digit
_ORD = r"(?:st|nd|rd|th)?"
_SCALE = r"(?:\s*(?P<scale>thousand|million|billion|trillion|bn|mn)(?![a-z]))?"
_PERCENT = r"(?:\s*(?:%|percent(?![a-z])|per\s?cent(?![a-z])))?"
_YEAR = r"(?P<year>[0-9]{4})(?![0-9])"
_NOT_INSIDE = r"(?<![0-9.,][0-9])"  # a digit not inside another number
_LEAD = rf"[0-9]{_NOT_INSIDE}"  # a number's first digit
# each form a named group, tried in this order at each place (on the text in lower case, after a space); a form led
# by a digit starts with {lead} (_LEAD), one led by a word with the character before it, {before}
_DIGIT_FORMS = (
    r"(?P<iso>{lead}[0-9]{3}-[0-9]{2}-[0-9]{2})(?:(?=t[0-9])|(?![0-9a-z_]|\.[0-9]))",
    r"(?P<dots>{lead}(?:[0-9]{3}\.[0-9]{1,2}\.[0-9]{1,2}|[0-9]?\.[0-9]{1,2}\.[0-9]{4}))(?![0-9a-z_]|\.[0-9])",
    r"(?P<range>{lead}[0-9]{3}\s?[\u2013-]\s?[0-9]{2})(?![0-9a-z_\u2013-])",
    rf"(?P<daymonth>(?P<day>{{lead}}[0-9]?){_ORD}\s+(?:of\s+)?(?P<month>{_MONTH})(?![a-z])(?:,?\s+{_YEAR})?)",
    rf"(?P<value>{{currency}}(?P<digits>{{lead}}(?:{_NUM_REST})){_ORD}{_SCALE}{_PERCENT})",
)
_WORD_FORMS = (
    rf"(?P<monthday>{{before}}(?P<month2>{_MONTH})\s+(?:of\s+)?(?:(?P<year2>[0-9]{{4}})(?![0-9])"
    rf"|(?P<day2>[0-9]{{1,2}}){_ORD}(?:,?\s+(?P<year3>[0-9]{{4}})(?![0-9])|(?![0-9a-z]|[.,:][0-9]))))",
    rf"(?P<word>{{before}}(?P<w>{_by_first_letter(NUMBER_WORDS + ORDINAL_WORDS)})(?![a-z])"
    rf"{_SCALE.replace('scale', 'scale2')}"
    rf"{_PERCENT})",
)


def _led(led_by_digit: tuple[str, ...], led_by_word: tuple[str, ...]) -> str:
    """One pattern of the forms, each after one character that a class matches (a digit, or the character before a
    word), so the engine skips letters in C and tries the forms only there."""
    pattern = rf"[^a-z](?:(?<=[0-9]){_NOT_INSIDE}(?:{'|'.join(led_by_digit)})|(?<![0-9])(?:{'|'.join(led_by_word)}))"
    return pattern.replace("{currency}", "").replace("{lead}", "").replace("{before}", "")


def _ungrouped(pattern: str) -> str:
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


# a name with a number (read from claims only; the evidence's digits are read as values, and a name is looked up in
# its text): letters, a hyphen or not, digits (``gpt-4``, ``f16``), or a word, a space and one or two digits
_NAME = (r"(?P<name>(?P<letters>[a-z]+)-?(?P<nd>[0-9]+(?:\.[0-9]+)?)[a-z]*(?![a-z0-9])"
         r"|(?P<word2>[a-z]{2,})\s(?P<nd2>[0-9]{1,2})"
         r"(?![0-9a-z]|[.,][0-9]|\s*(?:%|percent|per\s?cent|st|nd|rd|th)|\s*[\u2013-]\s*[0-9]))")
_MONEY = rf"(?P<money>(?<=[$€£¥]){_ungrouped(_DIGIT_FORMS[-1]).replace('{lead}', _LEAD)})"  # a value after its sign
# a token read on its own: its form (each form as the scan reads it, led by a digit or the character before a word)
_GROUPED = re.compile("|".join(_DIGIT_FORMS + _WORD_FORMS).replace("{currency}", "").replace("{lead}", _LEAD)
                      .replace("{before}", "[^a-z0-9]"))
SCAN = re.compile(_ungrouped(_led(_DIGIT_FORMS, _WORD_FORMS)))  # the evidence's: findall gives the tokens
_CLAIM = re.compile(_led(_DIGIT_FORMS, (*_WORD_FORMS, _NAME, _MONEY)))  # a claim's: each form's place and parts
_URL = re.compile(r"(?:https?://|www\.)\S+|\]\([^)\s]*\)", re.IGNORECASE)
_MARKER = re.compile(r"\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\]")
_DIGITS = re.compile(r"[0-9]+")
_LIST_NUMBER = re.compile(r"\n\s*\d{1,3}[.)](?=\s)")  # led by the line break (clean adds one at the start)


@dataclass(frozen=True, slots=True)
class Number:
    """One number a text states: ``text`` as written, ``key`` what it compares by."""

    text: str
    key: Key

    @property
    def value(self) -> int | Decimal | None:
        """The value, for a number that is one (not a date or a name)."""
        return None if isinstance(self.key, tuple) else self.key


def shown(value: int | Decimal) -> str:
    """A value written plainly: ``1200``, ``4.5``."""
    return str(value) if isinstance(value, int) else f"{value.normalize():f}"


def clean(text: str) -> str:
    """The text without URLs, citation markers and list numbering (each replaced by a space)."""
    if "://" in text or "www." in text or "](" in text:
        text = _URL.sub(" ", text)
    if "[" in text:
        text = _MARKER.sub(" ", text)
    return _LIST_NUMBER.sub("\n ", "\n" + text)[1:]


def lower_case(text: str) -> str:
    """``text`` in lower case, each character still at its place (a letter whose lower case is longer is kept)."""
    lower = text.lower()
    return lower if len(lower) == len(text) else "".join(c if len(c.lower()) != 1 else c.lower() for c in text)


def read(text: str, *, whole: bool = False) -> list[Number]:
    """Every number ``text`` states, in order; ``whole``: read as a claim (see the module's docstring). Read as
    evidence, a number's text is as written in lower case."""
    text = " " + clean(text)  # a word's form starts at the character before it
    lower = lower_case(text)
    if not whole:
        return [Number(token, key) for token, keys in tokens(lower) for key in keys]
    found: list[Number] = []
    pos = 0
    while (m := _CLAIM.search(lower, pos)) is not None:
        kind = m.lastgroup
        start = m.start() + (kind in ("monthday", "word", "name"))  # not the character before the word
        pos, written = m.end(), text[start:m.end()].strip()
        if kind == "name":
            word = m.group("word2")
            if text[start].isupper() and not (word and (word in _NOT_NAMES or word[:3] in _MONTHS)):
                found.append(Number(written, ("name", name_key(m.group("name")))))
            else:  # no name: its digits are read next
                pos = m.start("nd" if m.group("letters") else "nd2")
            continue
        no_year = kind in ("daymonth", "monthday") and not (m.group("year") or m.group("year2") or m.group("year3"))
        if no_year and not text[m.start("month" if kind == "daymonth" else "month2")].isupper():
            if kind == "daymonth":  # "5 may": the day (from the digit that leads the match) is a number
                found.append(Number(text[m.start():m.end("day")], int(lower[m.start():m.end("day")])))
                pos = m.end("day")
            else:  # "may 5": the digits are read next
                pos = m.start("day2")
            continue
        found += [Number(written, key) for key in _keys_of(m.group(), whole=True)]
    return found


def tokens(lower: str) -> list[tuple[str, tuple[Key, ...]]]:
    """The numbers of a cleaned text in lower case after a space, read as evidence: (each token as written, without
    the character before a word, and the keys it states), in order."""
    return [(token if token[0].isdigit() else token[1:], token_keys(token)) for token in SCAN.findall(lower)]


def name_key(written: str) -> str:
    """A name's key: lower case, without its space or hyphen."""
    return "".join(written.lower().split()).replace("-", "")


@lru_cache(maxsize=8192)
def token_keys(token: str) -> tuple[Key, ...]:
    """The keys a token of the evidence (a match of ``SCAN``, in lower case) states; the same tokens recur across
    pages and traces, so each is read once."""
    return _keys_of(token, whole=False)


def _keys_of(token: str, *, whole: bool) -> tuple[Key, ...]:
    m = _GROUPED.fullmatch(token.lstrip("$€£¥"))
    if m is None:  # read in its place, the token matched a form its edges then allowed: its digits are values
        return tuple(int(d) for d in _DIGITS.findall(token))
    kind = m.lastgroup
    if kind == "value":
        return _value(m.group("digits"), m.group("scale"))
    if kind == "word":
        return _value(str(_WORD_VALUES[m.group("w")]), m.group("scale2"))
    if kind == "range":
        first, second = _DIGITS.findall(token)
        return int(first), int(first) // 100 * 100 + int(second)
    if kind == "iso":
        year, month, day = (int(d) for d in _DIGITS.findall(token)[:3])
    elif kind == "dots":
        a, b, c = _DIGITS.findall(token)
        year, month, day = (int(a), int(b), int(c)) if len(a) == 4 else (int(c), int(b), int(a))
    elif kind == "daymonth":
        day, month = int(m.group("day")), _MONTHS[m.group("month")[:3]]
        year = int(m.group("year")) if m.group("year") else 0
    else:  # monthday
        month = _MONTHS[m.group("month2")[:3]]
        if m.group("year2"):
            year = int(m.group("year2"))
            return (("ym", year, month),) if whole else (("ym", year, month), year)
        day, year = int(m.group("day2")), int(m.group("year3") or 0)
    return _date(year, month, day, whole=whole)


def _value(digits: str, scale: str | None) -> tuple[Key, ...]:
    """A value: an int when written without a decimal point, else a Decimal (equal values compare and hash alike
    either way)."""
    digits = digits.replace(",", "")
    try:
        number: int | Decimal = Decimal(digits) if "." in digits else int(digits)
    except InvalidOperation:  # "1..2"
        return ()
    return (number * _SCALES[scale] if scale else number,)


def _date(year: int, month: int, day: int, *, whole: bool) -> tuple[Key, ...]:
    """A date (``year`` 0: a day and month with no year). As a claim one key; as evidence, a full date also states its
    month and year, its day and month and its year. An impossible date read as a claim is a key no evidence holds;
    read as evidence, its numbers are read as values instead."""
    if year == 0:
        return (("md", month, day),) if whole else (("md", month, day), day) if 1 <= day <= 31 else (day,)
    if whole:
        return (("d", year, month, day),)
    try:
        datetime.date(year, month, day)
    except ValueError:
        return day, year
    return ("d", year, month, day), ("ym", year, month), ("md", month, day), year
