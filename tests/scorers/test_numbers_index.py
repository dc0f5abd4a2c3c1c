"""The evidence index's shortcuts (``scorers/evidence_anchors.py``, ``Evidence._index`` and its lookups) must give
what the slow ways give: parts cleaned together as each cleaned alone, part starts as found by searching for the
separator, name heads as the pattern's ``finditer`` finds them, a name's places as its fused pattern finds them, a
value known from plain digits as ``first`` knows it, and every lookup as reading every part whole (``where``) — on
fixtures, on random texts built from the characters each shortcut turns on, and on thousands of evidence texts."""

from __future__ import annotations

import random
from decimal import Decimal

from tracescore.scorers import evidence_anchors as anchors
from tracescore.scorers.evidence_numbers import Evidence
from tracescore.scorers.numerals import PART_SEP, Key, clean
from tracescore.trace import Trace

_BITS = ("claim", "Claim", "c", "cl", "la", "im", "m", "laim", "gpt", "GPT", "covid", "a", "aa", "0", "1", "5", "19",
         "4o", "2.5", ".", ",", " ", "  ", "-", "\n", "\t", "\x00", PART_SEP, "/", "www.", "[1]", "[", "](x)", "]",
         "1.", "2)", " 3.", "\n4) ", "million", "bn", "mn", "thousand", "days", "in", "of", "May", "claim 0",
         "claim-0", "claim0", "claim 59", "claim\n1", "claim\t1", "Claim 1", "gpt-4o", "GPT4o", "covid 19", "aa5",
         "aa-5", "claim 2.5", "claim1x", "xclaim1")


def _bits(r: random.Random, n: int) -> str:
    return "".join(r.choice(_BITS) for _ in range(n))


def _old_starts(pieces: list[str], text: str) -> list[int]:
    """Where each part starts, as the index first found it: by the separator whenever the text held "\\x00"."""
    starts: list[int] = []
    at = 0 if "\x00" in text else -1
    while at >= 0:
        starts.append(at)
        at = text.find(PART_SEP, at)
        at = at + len(PART_SEP) if at >= 0 else -1
    if not starts:
        at = 0
        for piece in pieces[:-1]:
            starts.append(at)
            at += len(piece) + len(PART_SEP)
        starts.append(at)
    return starts


def test_parts_cleaned_together_are_each_cleaned_alone_and_start_where_the_separator_says() -> None:
    r = random.Random(5)
    fast = 0
    for _ in range(4000):
        parts = [_bits(r, r.randint(0, 8)) for _ in range(r.randint(1, 5))]
        if r.random() < 0.5:  # most parts of a trace need no cleaning
            parts = [p.replace("/", " ").replace("[", " ").replace("www.", "w") for p in parts]
        pieces, text = anchors.cleaned(parts)
        assert pieces == [clean(p) for p in parts] and text == PART_SEP.join(pieces), parts
        fast += pieces is parts
        assert anchors.part_starts(pieces, text) == _old_starts(pieces, text), parts
    assert fast > 300, fast


_HEAD_BITS = ("c", "l", "a", "i", "m", "cl", "cla", "clai", "claim", "laim", "aim", "im", "ca", "aa", "cc", "0", "1",
              "59", "2.5", "3.", ".", "-", " ", "  ", "\n", "\t", "\x1c", "x")


def _old_heads(lower: str, letters: str) -> list[int]:
    return [m.start() for m in anchors.name_heads(letters).finditer(lower)]


def _heads(lower: str, letters: str) -> list[int]:
    led = [m.start() for m in anchors.led_pattern(letters).finditer(lower)]
    return anchors.heads_at(lower, letters, led)


def _planted(r: random.Random, letters: str) -> str:
    """A writing of a name with these letters (some of them, a hyphen or space or not, digits, the rest), or
    nearly one."""
    j = r.randint(0, len(letters))
    digits = r.choice(["0", "1", "59", "2.5", "3.", "007", "1.2.3"])
    sep = r.choice(["", "", "-", " ", "\n", "\x1c", "--"])
    return letters[:j] + sep + digits + letters[j:r.randint(j, len(letters))]


def test_name_heads_are_where_the_pattern_finds_them() -> None:
    """Texts of the few characters a name head turns on (its letters, digits, a dot, hyphens, spaces) and of
    writings of names with those letters, whole or cut."""
    r = random.Random(3)
    found = 0
    for _ in range(20000):
        letters = r.choice(["claim", "ca", "cc", "aa", "c", "cl", "lai"])
        chunks = _HEAD_BITS + (("é",) if r.random() < 0.1 else ())  # é: the pattern finds them
        lower = "".join(_planted(r, letters) if r.random() < 0.4 else r.choice(chunks)
                        for _ in range(r.randint(0, 12)))  # fmt: skip
        assert _heads(lower, letters) == _old_heads(lower, letters), (lower, letters)
        found += len(_old_heads(lower, letters)) > 1
    assert found > 5000, found


def test_name_heads_on_fixtures() -> None:
    lower = "claim 59 c1laim cl-2aim cla3.5im clai 7m claim\n8 c1.laim cc12c3c claim claim-x 12claim9 claim10.5"
    for letters in ("claim", "c", "cc", "clai", "laim"):
        assert _heads(lower, letters) == _old_heads(lower, letters), letters
    assert _heads(lower, "claim") == [0, 9, 16, 24, 33, 41, 81, 88]  # not "c1.laim", "cc12c3c", "claim-x"
    r = random.Random(8)
    for _ in range(3000):
        lower = _bits(r, r.randint(0, 30)).lower()
        for letters in ("claim", "gpt", "aa", "covid"):
            assert _heads(lower, letters) == _old_heads(lower, letters), (lower, letters)


def _old_find_places(lower: str, forms: tuple[str, ...]) -> list[int] | None:
    """A name's places as the fused pattern found them over the whole text (``_find_places`` before)."""
    fused = anchors.fused(forms)
    assert fused is not None
    found: set[int] = set()
    for m in fused.finditer(lower):
        at, after = m.start(), m.end(1)
        if not ((at > 0 and (lower[at - 1].isalnum() or lower[at - 1] == "_"))
                or (after < len(lower) and (lower[after].isalnum() or lower[after] == "_"))):  # fmt: skip
            found.add(at)
            if len(found) > 64:
                return None
    return sorted(found)


def _evidence(texts: list[str]) -> Evidence:
    hits = [{"url": "https://h.example/", "title": t, "snippet": ""} for t in texts[:-1]]
    steps = [{"kind": "search", "query": "q", "hits": hits},
             {"kind": "fetch", "url": "https://p.example", "text": texts[-1], "status": 200}]  # fmt: skip
    return Evidence(Trace.model_validate({"id": "t", "answer": "x", "steps": steps}))


def test_a_names_places_are_those_its_fused_pattern_finds() -> None:
    r = random.Random(13)
    compared = 0
    for _ in range(1500):
        evidence = _evidence([_bits(r, r.randint(1, 25)) for _ in range(r.randint(1, 4))])
        lower = evidence._index()
        if not lower:
            continue
        for name in ("claim0", "claim1", "claim59", "gpt4o", "covid19", "aa5", "claim2.5"):
            forms = tuple(anchors.name_forms(name, evidence._ws))
            if anchors.fused(forms) is None:
                continue
            assert anchors.led_split(forms) is not None
            want = _old_find_places(lower, forms)
            assert evidence._find_places(lower, [(f, "word") for f in forms]) == want, (lower, name)
            compared += want is not None and bool(want)
    assert compared > 300, compared


def _where_first_like(evidence: Evidence, letters: str, key: Key) -> tuple[str, str] | None:
    where = evidence.where
    k = next((k for k in where if k[0] == "name" and k != key
              and "".join(c for c in str(k[1]) if c.isalpha()) == letters), None)  # fmt: skip
    return None if k is None else where[k]


def test_lookups_answer_as_reading_every_part_whole() -> None:
    """``states`` (a value known from plain digits, or ``first``), ``stated`` and ``first_like`` of names against
    ``where``, on evidence texts like a search agent's (words, numbers, names with numbers, "claim" everywhere)."""
    words = ("claim", "Claim", "days", "within", "the", "of", "refund", "policy", "Result", "million", "2.5", "bn",
             "in", "May", "GPT-4o", "GPT4", "COVID-19", "Claim 59", "claim-3", "c1laim", "Windows 10", "0", "10",
             "20", "30", "100", "1,200", "007", "12.5", "2019", "2018–19", "$5", "5%", "first", "two", "\n", "1.",
             "https://x.example/3", "[2]", "ſ")  # fmt: skip
    r = random.Random(21)
    looked = known = 0
    for _ in range(2500):
        texts = [" ".join(r.choice(words) for _ in range(r.randint(1, 40))) for _ in range(r.randint(1, 5))]
        fast, slow = _evidence(texts), _evidence(texts)
        slow.where  # noqa: B018 - every part read whole: the lookups answer from it
        keys: list[Key] = [("n", Decimal(v)) for v in ("0", "10", "20", "30", "100", "1200", "7", "12.5", "2019", "5")]
        keys += [("name", n) for n in ("claim0", "claim3", "claim59", "gpt4o", "gpt4", "covid19", "windows10")]
        for key in keys:
            looked += 1
            assert fast.states(key) == slow.states(key), (texts, key)
            known += slow.states(key)
            assert fast.stated(key) == slow.stated(key), (texts, key)
            if key[0] == "name":
                letters = "".join(c for c in str(key[1]) if c.isalpha())
                assert fast.first_like("name", letters, key) == _where_first_like(slow, letters, key), (texts, key)
    assert looked > 30000 and known > 10000, (looked, known)


def test_name_heads_up_to_a_place_are_the_heads_up_to_it() -> None:
    """``heads_at`` with ``stop`` (reading only as far as a match starting by it reaches back from) against every
    head found over the whole text, on the head texts and with long runs of digits and dots across the stop."""
    r = random.Random(31)
    for _ in range(20000):
        letters = r.choice(["claim", "ca", "cc", "aa", "c", "cl", "lai"])
        chunks = _HEAD_BITS + ("1234567", "0.0.0", "12.345", "9" * 30)
        lower = "".join(_planted(r, letters) if r.random() < 0.4 else r.choice(chunks)
                        for _ in range(r.randint(0, 14)))  # fmt: skip
        led = [m.start() for m in anchors.led_pattern(letters).finditer(lower)]
        whole = _old_heads(lower, letters)
        for stop in {r.randint(0, len(lower) + 1), *led[:3], *whole[:3]}:
            assert anchors.heads_at(lower, letters, led, stop) == [at for at in whole if at <= stop], (lower, stop)


def test_closest_names_answer_as_reading_every_part_whole() -> None:
    """``first_like`` of names (found up to the first place reading a like name) against ``where``: keys looked up
    in any order, names like each other or not, and evidence with more than 64 places a name can start (read whole
    when every place is looked for)."""
    words = ("claim", "Claim 59", "claim-3", "claim 3", "c1laim", "cl-2aim", "claim0", "Claim 1", "claim 1.5",
             "claim\n2", "claim 7 days", "7 claim", "x", "days", "the", "12claim9", "claims 4", "claim 10.5",
             "GPT-4o", "gpt 4", "gpt4o", "https://x.example/claim5", "[3]", "0", "59")  # fmt: skip
    names = ("claim0", "claim1", "claim3", "claim59", "claim2", "claim1.5", "gpt4o", "gpt4", "claim7")
    r = random.Random(41)
    found = many = 0
    for _ in range(3000):
        size = r.choice([3, 10, 40, 40, 150, 400])
        texts = [" ".join(r.choice(words) for _ in range(r.randint(1, size))) for _ in range(r.randint(1, 5))]
        texts[-1] += " ſ" if r.random() < 0.05 else ""  # not narrowed: every part read whole
        fast, slow = _evidence(texts), _evidence(texts)
        slow.where  # noqa: B018 - every part read whole: the lookups answer from it
        many += sum(" ".join(texts).lower().count(w) for w in ("claim", "c1", "cl-")) > 64
        for name in r.sample(names, r.randint(1, len(names))):
            key: Key = ("name", name)
            letters = "".join(c for c in name if c.isalpha())
            if r.random() < 0.3:
                assert fast.states(key) == slow.states(key), (texts, key)
            want = _where_first_like(slow, letters, key)
            assert fast.first_like("name", letters, key) == want, (texts, key)
            found += want is not None
    assert found > 8000 and many > 300, (found, many)
