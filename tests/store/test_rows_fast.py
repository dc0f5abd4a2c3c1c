"""The store's per-trace columns written the fast way equal the plain way on many varied inputs: the citation rows
(``citation_rows``, written row by row) and the not-computed reasons (``not_computed``, each reason classified once)."""

from __future__ import annotations

import json
import random
import string

from tracescore.reasons import NOT_COMPUTED, REASONS, absence_kind
from tracescore.result import CitationRow, TraceResult
from tracescore.scores import Score
from tracescore.store import current_view
from tracescore.store.citations_view import citation_rows
from tracescore.store.current_view import not_computed

_ALPHABET = string.printable + 'é\u00a0中\U0001f600"\\\x00\x1f\x7f\u2028'


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(_ALPHABET) for _ in range(rng.randint(0, 30)))


def _plain_rows(rows: list[CitationRow]) -> str | None:
    if not rows:
        return None
    return json.dumps(
        [[c.sentence_index, c.marker, c.target, c.kind, c.normalized, int(c.fetched), int(c.seen)] for c in rows],
        default=str, separators=(",", ":"), allow_nan=False,
    )  # fmt: skip


def test_citation_rows_equal_the_json_module_on_varied_rows() -> None:
    rng = random.Random(7)
    odd: list[object] = [True, 2.5, None, 7, ("a",)]  # fields of another type than declared: the slow way, same text
    for _ in range(3000):
        rows = []
        for _ in range(rng.randint(0, 5)):
            fields: list[object] = [rng.randint(0, 40), rng.choice([None, _text(rng)]), _text(rng),
                                    rng.choice(["url", "doc_id", "text"]), _text(rng),
                                    rng.random() < 0.5, rng.random() < 0.5]  # fmt: skip
            if rng.random() < 0.05:
                fields[rng.choice([0, 1, 2, 3, 4])] = rng.choice(odd)
            rows.append(CitationRow(*fields))  # type: ignore[arg-type]
        assert citation_rows(rows) == _plain_rows(rows)


def _plain_not_computed(result: TraceResult) -> str | None:
    kept = [s.reason or "not computed" for s in result.scores.values()
            if s.value is None and absence_kind(s.reason) == NOT_COMPUTED]  # fmt: skip
    return json.dumps(list(dict.fromkeys(kept)), ensure_ascii=False, separators=(",", ":")) if kept else None


def test_not_computed_equals_a_plain_classification_of_every_reason() -> None:
    rng = random.Random(3)
    fixed = [r.text for r in REASONS if "{" not in r.text] + [None, "", "a reason nobody declared"]
    templated = [r for r in REASONS if "{" in r.text]
    current_view._REMEMBERED = 50  # the caches start over many times in this test  # type: ignore[attr-defined]
    try:
        for i in range(4000):
            scores = {}
            for n in range(rng.randint(0, 12)):
                if rng.random() < 0.2:
                    scores[f"s{n}"] = Score(f"s{n}", 1.0)
                    continue
                if rng.random() < 0.3:
                    reason: str | None = rng.choice(templated).text.replace("{", "<").replace("}", f"{i}>")
                else:
                    reason = rng.choice(fixed)
                scores[f"s{n}"] = Score(f"s{n}", None, reason)
            result = TraceResult(trace_id=f"t{i}", scores=scores)
            assert not_computed(result) == _plain_not_computed(result)
    finally:
        current_view._REMEMBERED = 4096  # type: ignore[attr-defined]
