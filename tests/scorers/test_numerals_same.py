"""The claim reading's fast paths (``numerals.clean``, ``_plain_numerals``, ``numerals(..., whole=True)``) against
the module as it was (``old_numerals.py``) and against reading with the pattern: on fixtures and on tens of thousands
of generated sentences holding numbers in every form the module reads (integers, decimals, thousands, percentages,
money, years, ranges, dates, ordinals, number words, scale words), names ("Claim 3", "COVID-19"), citation markers,
URLs, list numbering and non-ASCII letters and digits."""

from __future__ import annotations

import random

from tests.scorers import old_numerals
from tracescore.scorers import numerals as new

_FIXTURES = (
    "Returns are accepted within 30 days [1].", "Refunds take 4 business days [2].",
    "Claim 0 about returns within 0 days [1].", "Claim 3 about returns within 30 days [4].",
    "In 12 cases the Result 7 held.", "Claim 5th place", "Claim 5 percent", "Claim 5 percentage", "Claim 5 the end",
    "Claim 5 stuff", "Claim 5 nd", "Claim 5 thousand", "Claim 5 st", "Claim 5, 6", "Claim 5.5", "Claim 5-6",
    "Claim 123 about", "Ab 12 cd", "A 12 cd", "May 17 2026", "5 may be", "COVID-19 hit in 2020.", "GPT-4 and F-16",
    "1. First item\n2. Second 12 item\n 3) third", "  4. item 5 days", "see https://x.example/a/10 and www.y.example/5",
    "[text](http://z/7) is 8 days", "[1, 2] and [3; 4] cite 9 days", "ſix days", "fırst 3 days", "İn 4 days", "٣ days",
    "café 5 days", "x_y 5 days", "_a 5 days", "Claim 5\n\x00\nnext", "Claim 5", "Claim 5.", "Claim 5)", "Claim 5:",
    "12 days", " 12 days", "a 12", "Win 12 busd", "Win 12 usd", "Within 12 days", "WITHIN 12 DAYS", "Jan 12", "Mar 5 x",
    "Abcdefghijklmnopqrstuvwxyzabcdefghijklm 12 days", "Abcdefghijklmnopqrstuvwxyzabcdefghijkl 12 days",
    "x Abcdefghijklmnopqrstuvwxyzabcdefghijklm 12 days", "x Abcdefghijklmnopqrstuvwxyzabcdefghijkl 12 days",
    "", " ", "1", "1.", "\n1. x", "\t7) x", "US$ 5", "$5 and €6", "12% of 3 per cent", "1.2 thousand", "2 bn", "3mn",
    "2018–19 season", "2026-05-17", "May 17, 2026", "17th of May 2026", "May of 2026", "one two twenty twentieth days",
)  # fmt: skip

_PIECES = ("days", "policy", "the", "a", "of", "in", "at", "by", "may", "May", "March", "sept", "Dec", "june", "claim",
           "Claim", "Result", "result", "within", "Within", "about", "In", "GPT", "F", "COVID", "million", "thousand",
           "bn", "mn", "percent", "percentage", "per", "cent", "%", "$", "US$", "€", "USD", "usd", "busd", "EUR",
           "first", "two", "twenty", "five", "ninth", "Seventh", "ONE", "st", "th", "nd", "rd", "stuff", "nda", "x_y",
           "_a", "é", "café", "ſix", "ſt", "fırst", "İn", "K", "٣", "ab" * 12, "Ab" * 19, "Abc" * 13, "report",
           "refund", "Windows", "[1]", "[2, 3]", "[4; 5]", "[12]", "https://h.example/p/10", "www.x.example/5",
           "[t](http://u/6)", "](x)", "/", "[", "]")  # fmt: skip
_GLUE = (" ", " ", " ", " ", " ", "  ", "", "\n", "\n1. ", "\n 2) ", ", ", ". ", "; ", ": ", ") ", "(", "-", "–",
         " - ", ".", ",", "\t", "\n\x00\n")  # fmt: skip


def _number(r: random.Random) -> str:
    k = r.random()
    if k < 0.45:
        return str(r.choice([0, 1, 2, 3, 5, 7, 10, 12, 19, 20, 30, 45, 90, 99, 100, 300, 1200, 1998, 2019, 2024]))
    forms = (f"{r.randint(0, 99)}.{r.randint(0, 99)}", f"{r.randint(1, 999)},{r.randint(0, 999):03d}",
             f"{r.randint(1990, 2030)}-{r.randint(1, 13):02d}-{r.randint(1, 32):02d}",
             f"{r.randint(1, 31)}{r.choice(['st', 'th', 'nd', 'rd'])}", f"{r.randint(0, 9)}{r.randint(0, 9)}",
             f"{r.randint(2000, 2030)}–{r.randint(0, 99):02d}", f"{r.randint(1, 99)}%", f"{r.randint(1, 9)}.5 million",
             f"${r.randint(1, 999)}", f"{r.randint(1, 28)} {r.choice(['May', 'June', 'Sept', 'Dec'])} 2024")
    return r.choice(forms)


def _sentence(r: random.Random) -> str:
    out = [r.choice(("", "", "", "1. ", " 2) ", "  "))]
    for _ in range(r.randint(1, 9)):
        out.append(_number(r) if r.random() < 0.35 else r.choice(_PIECES))
        out.append(" " if r.random() < 0.5 else r.choice(_GLUE))
    return "".join(out) + r.choice(("", ".", " [1].", "?"))


_PLAIN_WORDS = ("Claim", "claim", "Result", "Step", "Within", "within", "about", "returns", "days", "take", "Refunds",
                "In", "the", "Tier", "X", "Ab", "May", "Of", "the", "st", "th", "nds", "percentage", "stuff", "busd")
_PLAIN_GLUE = (" ", " ", " ", " ", ". ", ", ", "; ", ": ", ") ", "  ", ".", "\n")


def _plain_sentence(r: random.Random) -> str:
    """A sentence of plain words and small spaced numbers: the ones read without the pattern ("Claim 3")."""
    out = []
    for _ in range(r.randint(1, 8)):
        number = str(r.choice((0, 1, 3, 9, 10, 12, 30, 99, 100, 2024)))
        out.append(number if r.random() < 0.4 else r.choice(_PLAIN_WORDS))
        out.append(" " if r.random() < 0.7 else r.choice(_PLAIN_GLUE))
    return "".join(out) + r.choice(("", ".", " [1].", " [2, 3]."))


def _slow(text: str) -> list[new.Numeral]:
    """A claim read with the pattern (no fast path)."""
    return [n for _, some in new.reading(new.clean(text), 0, whole=True) for n in some]


def _plain(found: list[new.Numeral] | list[old_numerals.Numeral] | None) -> list[tuple[object, ...]] | None:
    """The numerals as tuples (the old module's class is its own)."""
    return None if found is None else [(n.text, n.key, n.value) for n in found]


def _same(text: str) -> bool:
    """Whether the fast paths read ``text`` as the old module and the pattern do; true when they take it."""
    assert new.clean(text) == old_numerals.clean(text), text
    cleaned = new.clean(text)
    fast = new._plain_numerals(cleaned)
    assert _plain(fast) == _plain(old_numerals._plain_numerals(cleaned)), text
    if fast is not None:
        assert fast == _slow(text), text
    claims = new.numerals(text, whole=True)
    assert _plain(claims) == _plain(old_numerals.numerals(text, whole=True)) == _plain(_slow(text)), text
    assert _plain(new.numerals(text)) == _plain(old_numerals.numerals(text)), text
    lower = cleaned.lower()
    if len(lower) == len(cleaned):
        for at in range(len(cleaned)):
            assert new.plain_number(cleaned, lower, at) == old_numerals.plain_number(cleaned, lower, at), (text, at)
    return fast is not None


def test_fixtures_read_as_before() -> None:
    fast = sum(_same(text) for text in _FIXTURES)
    assert fast > 20, fast


def test_generated_sentences_read_as_before() -> None:
    r, fast, named = random.Random(33), 0, 0
    for _ in range(30000):
        text = _sentence(r) if r.random() < 0.6 else _plain_sentence(r)
        if _same(text):
            fast += 1
            named += any(n.key[0] == "name" for n in new._plain_numerals(new.clean(text)) or [])
    assert fast > 4000 and named > 150, (fast, named)
