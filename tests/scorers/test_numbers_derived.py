"""The numbers scorer's fast derived and closest notes (#33's speed-up) give exactly what they gave before: the scorer
as it was is kept in ``old_numbers.py`` and compared, score for score, on every fixture trace, the benchmark's traces
and generated ones (small and huge values, decimals, commas, scale and number words, ranges, dates, names,
characters whose case or digits a lookup must not miss);
and each fast path is checked against the slow way on its own — the candidates (runs of the bytes) against a regex
over the text, ``Evidence.states_value`` and the int pool's look (``states_whole``) against ``Evidence.states``, the
question's look against reading it."""

from __future__ import annotations

import json
import random
from decimal import Decimal
from typing import Any

from tests.scorers import old_numbers
from tests.scorers.test_numbers_lazy import _trace as _lazy_trace
from tests.scorers.test_signals_same import _fixture_traces
from tracescore.adapters.jsonl import trace_from_json
from tracescore.scorers.evidence_numbers import Evidence
from tracescore.scorers.evidence_values import _MIXED
from tracescore.scorers.numbers import _may_ask, _Stated, numbers_scorer
from tracescore.scorers.numerals import numerals
from tracescore.trace import Trace

_NEW, _OLD = numbers_scorer(), old_numbers.numbers_scorer()

_WORDS = ("days", "the", "of", "in", "about", "rose", "to", "from", "was", "and", "million", "thousand", "bn", "mn",
          "billion", "trillion", "percent", "%", "per cent", "$", "USD", "one", "two", "three", "five", "ten",
          "twelve", "fifteen", "Fifteenth", "seventeen", "twenty", "twentieth", "first", "ninth", "teens", "canteen",
          "May", "March", "Dec", "GPT", "COVID", "F", "Windows", "Result", "claim", ".", ",", ";", "-", "–", " - ",
          "(", ")", "[1]", "https://x.example/2024/15", "www.y.org/7", "\n", "1.", "2)", "ſ", "ı", "٣", "é")


def _number(r: random.Random) -> str:
    k = r.random()
    if k < 0.4:
        return str(r.randint(0, 40))
    if k < 0.5:
        return str(r.choice([50, 60, 75, 90, 100, 120, 150, 200, 250, 1000, 1200, 1998, 2019, 2024, 10**27 - 1,
                             10**27, 10**28 + 3, 12345678901234567890123456789]))
    if k < 0.65:
        return f"{r.randint(0, 99)}.{r.choice(['5', '25', '0', '50', '05', '333'])}"
    if k < 0.75:
        return f"{r.randint(1, 99)},{r.randint(0, 999):03d}" + r.choice(["", ".5", ",000"])
    if k < 0.82:
        return f"{r.randint(1990, 2030)}{r.choice(['-', '–', ' - '])}{r.randint(0, 99):02d}"
    if k < 0.88:
        return r.choice(["0.000015", "0.5", "1.5", "2.0", "12.50", ".5", "5.", "1..2", "3,,4", "1.2.3"])
    return f"{r.randint(1, 31)}{r.choice(['', 'st', 'th'])} {r.choice(['May', 'March'])} {r.randint(1990, 2030)}"


def _text(r: random.Random, n: int, odd: bool) -> str:
    words = _WORDS if odd else _WORDS[:-4]
    return " ".join(_number(r) if r.random() < 0.35 else r.choice(words) for _ in range(n))


def _derive_trace(r: random.Random, i: int) -> Trace:
    """Evidence of many small values (so that sums, differences and shares of two of them are often claimed)."""
    odd = r.random() < 0.15
    hits = [{"url": f"https://h{j}.example/", "title": _text(r, 2, odd), "snippet": _text(r, r.randint(0, 20), odd)}
            for j in range(r.randint(0, 6))]  # fmt: skip
    steps: list[dict[str, Any]] = [{"kind": "search", "query": "q", "hits": hits}]
    steps += [{"kind": "fetch", "url": "https://p.example", "text": _text(r, r.randint(0, 200), odd), "status": 200}
              for _ in range(r.randint(0, 2))]  # fmt: skip
    claims = [str(r.choice([r.randint(2, 80), r.randint(2, 80) + r.randint(2, 80), r.randint(1, 99)]))
              for _ in range(r.randint(1, 5))]  # fmt: skip
    claims += [f"{r.randint(1, 99)}%", f"{r.randint(1, 99)}.{r.randint(0, 9)}%", _number(r)][: r.randint(0, 3)]
    answer = ". ".join(f"It was {c} {_text(r, r.randint(0, 3), odd)}" for c in claims) + "."
    question = r.choice(["", "How long?", "What happened in 2019?", "Give two reasons", "ſome ı", _text(r, 3, odd)])
    return Trace.model_validate({"id": f"d{i}", "question": question, "answer": answer, "steps": steps})


def _same(trace: Any) -> int:
    got, want = list(_NEW(trace)), list(_OLD(trace))
    assert got == want, trace.id
    return sum(1 for s in got if s.comment and ("derived" in s.comment or "closest" in s.comment))


def _check_paths(trace: Any) -> None:
    """Each fast path against the slow way on this trace's evidence."""
    evidence, slow, fresh = Evidence(trace), Evidence(trace), Evidence(trace)
    got, want = evidence.candidates(), old_numbers._candidates(slow)
    assert got == want, trace.id  # the same values, in order (a representative may differ: "1.50" and "1.5")
    whole = evidence.whole_values
    assert whole is None or (got is not None and whole == got and all(isinstance(v, int) for v in whole)), trace.id
    values = {v for v in got or ()} | {Decimal(v) for v in (0, 1, 2, 7, 15, 20, 30, 45, 90, 1999, 2020, 10**6)}
    values |= {n.value for n in numerals(trace.answer) if n.value is not None}
    for v in sorted(values)[:30]:
        want_v = slow.states(("n", v))
        assert evidence.states_value(v) == want_v, (trace.id, v)  # the joined runs known (``candidates``)
        assert fresh.states_value(v) == want_v, (trace.id, v)  # not yet
    assert _may_ask(trace.question) or not numerals(trace.question), trace.id
    _check_whole(trace)


def _check_whole(trace: Any) -> None:
    """The int pool's look (``_states_whole``, ``have_int``) against ``Evidence.states``, on each whole candidate."""
    evidence, slow = Evidence(trace), Evidence(trace)
    stated = _Stated(evidence)
    if stated.ints is None:
        return
    for n in stated.ints[:60]:
        want = slow.states(("n", Decimal(n)))
        assert evidence.states_whole(n) == want, (trace.id, n)
        assert stated.have_int(n) == want == stated.have(Decimal(n)), (trace.id, n)
    assert not stated.have_int(max(stated.ints, default=1) + 1), trace.id


def test_every_fixture_trace_scores_as_before() -> None:
    traces = _fixture_traces()
    assert len(traces) > 250
    for trace in traces:
        _same(trace)
        if trace.answer:
            _check_paths(trace)


def test_the_benchmark_traces_score_as_before() -> None:
    from benchmarks.throughput import make_light_trace, make_trace

    rng = random.Random(1)
    for make, n in ((make_light_trace, 60), (make_trace, 6)):
        for i in range(n):
            trace = trace_from_json(json.dumps(make(i, rng)))
            _same(trace)
            _check_paths(trace)


def test_generated_traces_score_as_before() -> None:
    r, noted = random.Random(33), 0
    for i in range(600):
        trace = _derive_trace(r, i) if i % 3 else _lazy_trace(r, i)
        noted += _same(trace)
        _check_paths(trace)
    assert noted > 250, noted  # the comparison saw derived and closest notes


def test_a_question_looked_at_as_stating_no_number_states_none() -> None:
    r, looked = random.Random(3), 0
    alphabet = "0123456789 .,-?ſıİKk٣" + "".join(_WORDS[:60]) + "ONETWOTHREEFIVETEN"
    for i in range(20000):
        question = _text(r, r.randint(0, 6), i % 4 == 0) if i % 2 else "".join(r.choices(alphabet, k=r.randint(0, 30)))
        if not _may_ask(question):
            looked += 1
            assert not numerals(question), question
    assert looked > 3000, looked


def test_the_int_pool_derives_as_before() -> None:
    """The derived note in ints (``_pair_whole``, ``have_int``) against the frozen scorer on light-like traces: a few
    whole values stated (some only as words, or as ordinals, some with a scale word about), the claim a sum or
    difference of two of them."""
    r, derived = random.Random(34), 0
    words = ("fifteen", "fifteenth", "twenty", "twentieth", "ten", "often", "one", "first", "nine", "ninth",
             "eighteen", "canteen", "million", "thousand", "Result", "days", "the", "of", "-")
    for i in range(3000):
        values = [r.randint(1, 90) for _ in range(r.randint(1, 12))]
        pieces = [r.choice(words) if r.random() < 0.3 else f"{r.choice(words)} {v} days." for v in values]
        hits = [{"url": f"https://h{j}.example/", "title": f"Result {j}",
                 "snippet": " ".join(r.sample(pieces, len(pieces)))} for j in range(1, r.randint(1, 11))]
        steps: list[dict[str, Any]] = [{"kind": "search", "query": "q", "hits": hits}]
        if r.random() < 0.7:
            steps.append({"kind": "fetch", "url": "https://p.example", "text": " ".join(pieces), "status": 200})
        a, b = r.choice(values), r.choice(values + list(range(1, 21)))
        claim = r.choice([a + b, abs(a - b), r.randint(2, 60), 30])
        answer = f"Returns are accepted within {claim} days [1]. Refunds take {r.randint(2, 9)} business days [2]."
        trace = Trace.model_validate({"id": f"w{i}", "question": "How long?", "answer": answer, "steps": steps})
        derived += _same(trace)
        if i % 10 == 0:
            _check_whole(trace)
    assert derived > 1500, derived


def test_the_candidates_read_at_once_are_the_regex_ones() -> None:
    """Runs all digits or all "." and "," (``_MIXED`` finds none: the digits read at once) and runs mixing them, with
    ranges and scale words about: the candidates against the regex over the text (``old_numbers._candidates``)."""
    r, plain = random.Random(35), 0
    bits = ("days", "the", "Result", ".", ",", "...", " .5", "-", "–", "million", "2018", "2018-19", "2019 – 2020", "0",
            "007", "10", "1,5", "3.25", "1,234.5", "12", "99", "1999")
    for i in range(5000):
        mixed = i % 3 == 0
        pieces = [r.choice(bits if mixed else bits[:12]) if r.random() < 0.5 else str(r.randint(0, 120))
                  for _ in range(r.randint(0, 30))]  # fmt: skip
        text = " ".join(pieces) + r.choice(["", ".", " days."])
        hits = [{"url": "https://h.example/", "title": f"Result {i % 11}", "snippet": text}]
        trace = Trace.model_validate({"id": f"c{i}", "question": "q", "answer": "It was 30.",
                                      "steps": [{"kind": "search", "query": "q", "hits": hits}]})
        evidence, slow = Evidence(trace), Evidence(trace)
        got = evidence.candidates()
        assert got == old_numbers._candidates(slow), text
        plain += evidence._runs is not None and _MIXED.search(evidence._runs.encode()) is None
        assert evidence.whole_values is None or evidence.whole_values == got, text
    assert 1000 < plain < 4500, plain  # both ways


def test_plain_digits_passed_over_where_a_digit_follows_are_told_as_before() -> None:
    """Values whose digits begin many others' ("7": "78", "7,5", "7.5") and end a text or a part: ``states_value``
    (plain places looked at only where no digit follows) against ``Evidence.states``."""
    r, told = random.Random(36), 0
    for i in range(1500):
        forms = ["7", "78", "70", "7.5", "7,5", "17", "77", "707", "7", "8"]
        text = " ".join(r.choice(["days", "of", "Result", "from"]) + " " + r.choice(forms)
                        + r.choice(["", ".", " days", ",", ")", "%"]) for _ in range(r.randint(1, 14)))
        hits = [{"url": "https://h.example/", "title": r.choice(["Result 7", "Result 78", "x"]), "snippet": text}]
        trace = Trace.model_validate({"id": f"p{i}", "question": "q", "answer": "It was 7.",
                                      "steps": [{"kind": "search", "query": "q", "hits": hits}]})
        evidence, slow = Evidence(trace), Evidence(trace)
        for v in (7, 8, 17, 70, 77, 78):
            want = slow.states(("n", Decimal(v)))
            assert evidence.states_value(Decimal(v)) == want, (text, v)
            told += want
        _check_whole(trace)
    assert told > 3000, told
