"""#44 acceptance 3: the one-pass check (every number of the evidence read once into an index, each claim a look-up,
the notes from the same index) gives what a slow, plain reference gives on 5,000 generated traces: the reference
reads every number of every part for each claim, finds the closest by looking at every stated value and the derived
note by trying every pair."""

from __future__ import annotations

import random
import re
from decimal import Decimal

import pytest

from tracescore.scorers.number_reader import Number, clean, read
from tracescore.scorers.numbers import (
    GROUNDING_NUMBERS_CHECKED,
    GROUNDING_UNSUPPORTED_NUMBERS,
    claims,
    evidence_parts,
    numbers_scorer,
)
from tracescore.trace import Trace


def _shown(v: object) -> str:
    return f"{v.normalize():f}" if isinstance(v, Decimal) else str(v)


def _reference(trace: Trace) -> dict[str, tuple[float, str | None]] | None:
    parts = evidence_parts(trace)
    stated = claims(trace) if trace.answer else []
    if not parts or not stated:
        return None
    # every number of every part in order, with its part cleaned (the reader gives evidence text in lower case; the
    # note shows it as the part writes it)
    every: list[tuple[Number, str, str]] = [(n, where, clean(text)) for text, where in parts for n in read(text)]
    values = [n.key for n, _, _ in every if not isinstance(n.key, tuple)]

    def written(n: Number, where: str, text: str) -> str:
        at = text.lower().find(n.text)
        return f'closest: "{" ".join(text[at:at + len(n.text)].split())}" ({where})'

    def name_place(name: str, same: bool) -> tuple[str, str] | None:
        letters = re.match(r"[a-z]+", name).group()  # type: ignore[union-attr]
        number = re.escape(name[len(letters):]) if same else r"[0-9]+(?:\.[0-9]+)?[a-z]*"
        for text, where in parts:
            for m in re.finditer(rf"(?<![a-z0-9]){letters}[\s-]?{number}(?![a-z0-9])", text.lower()):
                if same or "".join(m.group().split()).replace("-", "") != name:
                    return text[m.start():m.end()], where
        return None

    def is_stated(key: object) -> bool:
        if isinstance(key, tuple) and key[0] == "name":
            return name_place(str(key[1]), True) is not None
        return any(n.key == key for n, _, _ in every)

    def derived(x: int | Decimal) -> str | None:
        pool = sorted({v for v in values if v > 1})[:300]  # type: ignore[operator]
        for a in pool:
            for b in pool:
                if b == x - a and b <= a:  # type: ignore[operator]
                    return f"{_shown(a)} + {_shown(b)}"
            for b in pool:
                if b == a - x:  # type: ignore[operator]
                    return f"{_shown(a)} - {_shown(b)}"
        if 0 < x <= 100:
            exponent = Decimal(x).as_tuple().exponent
            places = Decimal(1).scaleb(exponent if isinstance(exponent, int) else 0)
            for b in pool:
                for a in pool:
                    if a < b and (Decimal(a) / Decimal(b) * 100).quantize(places) == x:  # type: ignore[operator]
                        return f"{_shown(a)} / {_shown(b)}"
        return None

    def closest(claim: Number) -> str | None:
        key = claim.key
        if claim.value is not None:
            x = claim.value
            near = [(abs(Decimal(n.key) - Decimal(x)), i) for i, (n, _, _) in enumerate(every)  # type: ignore[arg-type]
                    if not isinstance(n.key, tuple) and x != 0 and Decimal("0.5") <= Decimal(n.key) / Decimal(x) <= 2]
            if not near:
                return None
            return written(*every[min(near)[1]])
        if isinstance(key, tuple) and key[0] in ("d", "ym"):
            for n, where, text in every:
                if isinstance(n.key, tuple) and n.key[:2] == key[:2]:
                    return written(n, where, text)
            return None
        if isinstance(key, tuple) and key[0] == "name":
            place = name_place(str(key[1]), False)
            return None if place is None else f'closest: "{place[0]}" ({place[1]})'
        return None

    missing = [c for c in stated if not is_stated(c.key)]
    notes = []
    for claim in missing[:20]:
        year = claim.text.isdigit() and len(claim.text) == 4 and 1000 <= int(claim.text) <= 2100
        derivable = claim.value is not None and not year and claim.value != 0 and any(c.isdigit() for c in claim.text)
        note = derived(claim.value) if derivable else None  # type: ignore[arg-type]
        near = None if note else closest(claim)
        notes.append(f'"{claim.text}" not in any evidence'
                     + (f"; may be derived from {note}" if note else f"; {near}" if near else ""))
    if len(missing) > 20:
        notes.append(f"(+{len(missing) - 20} more)")
    return {GROUNDING_UNSUPPORTED_NUMBERS: (float(len(missing)), "; ".join(notes) or None),
            GROUNDING_NUMBERS_CHECKED: (float(len(stated)), ", ".join(f'"{c.text}"' for c in stated))}


_WORDS = ("the a of in on at by May March Dec June report GPT COVID Windows F claim within about million thousand bn"
          " percent % per cent $ USD first two twenty five ninth rose to from and was were ; , . - – ( ) [1] [2, 3]"
          " https://x.example/2024/a www.y.org/7 \n 1. 2) Result Jan ſ ı question rewrite section").split(" ")


def _number(r: random.Random) -> str:
    k = r.random()
    forms = [
        lambda: str(r.choice([0, 1, 2, 3, 5, 7, 10, 12, 19, 20, 30, 40, 41, 100, 120, 1200, 1998, 2019, 2024])),
        lambda: f"{r.randint(0, 99)}.{r.randint(0, 99)}",
        lambda: f"{r.randint(1, 999)},{r.randint(0, 999):03d}",
        lambda: f"{r.randint(1990, 2030)}-{r.randint(1, 13):02d}-{r.randint(1, 32):02d}",
        lambda: f"{r.randint(2000, 2030)}.{r.randint(1, 13):02d}.{r.randint(1, 31):02d}",
        lambda: f"{r.randint(1, 32):02d}.{r.randint(1, 12):02d}.{r.randint(2000, 2030)}",
        lambda: f"{r.choice(['May', 'March', 'Dec', 'february'])} {r.randint(1, 32)}{r.choice(['', ',', 'th,'])}"
                f" {r.randint(2000, 2030)}",
        lambda: f"{r.randint(1, 31)}{r.choice(['', 'st', 'th'])} {r.choice(['May', 'March', 'june'])}"
                f"{r.choice(['', ' 2019', ', 2020'])}",
        lambda: f"{r.randint(1990, 2030)}{r.choice(['-', '–', ' – '])}{r.randint(0, 99):02d}",
        lambda: f"{r.choice(['GPT', 'COVID', 'F', 'Windows', 'Question'])}{r.choice(['-', ' ', ''])}{r.randint(0, 20)}",
        lambda: f"{r.choice(['Spain', 'staged', 'item'])}{r.randint(1980, 2020)}",
        lambda: f"{r.randint(1, 99)}{r.choice(['%', ' percent', ' million', ' bn', 'rd', ''])}",
        lambda: f"question {r.randint(1, 400)} rewrite {r.randint(1, 9)}",
    ]
    return forms[min(int(k * len(forms)), len(forms) - 1)]()


def _text(r: random.Random, n: int) -> str:
    return " ".join(_number(r) if r.random() < 0.35 else r.choice(_WORDS) for _ in range(n))


def _trace(r: random.Random, i: int) -> Trace:
    steps: list[dict[str, object]] = [
        {"kind": "search", "query": "q",
         "hits": [{"url": f"https://h{j}.example/{r.randint(0, 99)}", "title": _text(r, 3),
                   "snippet": _text(r, r.randint(0, 25))} for j in range(r.randint(0, 4))]}
        for _ in range(r.randint(0, 2))]  # fmt: skip
    steps += [{"kind": "fetch", "url": "https://p.example", "text": _text(r, r.randint(0, 120)),
               "status": r.choice([200, 200, 200, 404])} for _ in range(r.randint(0, 2))]  # fmt: skip
    answer = ". ".join(_text(r, r.randint(2, 10)) for _ in range(r.randint(1, 4))) + "."
    return Trace.model_validate({"id": f"t{i}", "question": _text(r, r.randint(0, 4)), "answer": answer,
                                 "steps": steps})  # fmt: skip


@pytest.mark.slow
def test_the_one_pass_check_equals_the_plain_reference_on_5000_traces() -> None:
    r, scorer = random.Random(44), numbers_scorer()
    compared = flagged = derived = closest = 0
    for i in range(5000):
        trace = _trace(r, i)
        got = {s.name: (s.value, s.comment) for s in scorer(trace) if s.present}
        want = _reference(trace)
        if want is None:
            assert not got, trace.id
            continue
        assert got == want, trace.id
        compared += 1
        flagged += want[GROUNDING_UNSUPPORTED_NUMBERS][0] > 0
        derived += "derived" in str(want[GROUNDING_UNSUPPORTED_NUMBERS][1])
        closest += "closest" in str(want[GROUNDING_UNSUPPORTED_NUMBERS][1])
    assert compared > 3000 and flagged > 1500 and derived > 300 and closest > 500, (compared, flagged, derived, closest)
