"""#33's speed pass over the citation scorer and the answer parse gives exactly what the code before it gave: the old
code is kept here as the reference and compared with the new one on every fixture answer and trace (the cookbook's,
ExpertQA's) and on generated answers and traces (reference lines with odd spacing, grouped markers, links, explicit
citations, hits and fetches that do or do not match)."""

from __future__ import annotations

import dataclasses
import json
import pickle
import random
from pathlib import Path

from tests.scorers.test_fast_paths import REF_LINE as _REF_LINE
from tracescore.result import CitationRow
from tracescore.scorers import citations, cited, sentences
from tracescore.scorers.sentences import (
    _MARKER,
    _MARKER_SEP,
    _URL_IN_TEXT,
    parse_answer,
    reference_target,
)
from tracescore.trace import Citation, FetchStep, Hit, SearchStep, Trace
from tracescore.urls import is_url, normalize_url

_REPO = Path(__file__).resolve().parents[2]


def _old_reference(line: str, in_reference_list: bool) -> tuple[str, str] | None:
    """A reference line's (marker, rest) as ``parse_answer`` read it before: the whole-line ``_REF_LINE``."""
    ref = _REF_LINE.match(line)
    rest = ref.group("rest") if ref else None
    if ref and rest and sentences._one_marker(line, ref) and (in_reference_list or _URL_IN_TEXT.search(rest)):
        return ref.group(1), rest.strip()
    return None


def _old_markers(text: str) -> list[str]:
    """A sentence's markers as ``parse_answer`` collected them before (no one-marker shortcut)."""
    markers: list[str] = []
    for group in _MARKER.findall(text) if "[" in text else ():
        for num in _MARKER_SEP.split(group) if "," in group or ";" in group else (group,):
            if num not in markers:
                markers.append(num)
    return markers


_ATOMS = [
    "A", "b", "Word", " ", "  ", "\t", "\n", "\n\n", "\r\n", "\u00a0", "\u2028", "\x0b", ".", "!", "?", ",", ";", ":",
    "[", "]", "(", ")", "[1]", "[2, 3]", "[4;5]", "[2,2]", "[1][1]", "[12](", "[1234]", "[1]:", " : ", "- ", "* ",
    "1. ", "2) ", "3[1]. ", "# ", "**", "Sources", "References:\n", "\u017f", "9", "\u00e9",
    "https://a.example/x", "http://B.example/y/?utm_source=1", "(https://c.example/(z))", "[t](https://d.example/p)",
    "\n[1] https://a.example/x", "\n[2]: https://b.example/y  ", "\n- [3]  :  Smith, J. A book.\t", "\n[4]\t \u00a0",
    "\n* [5] x [6] https://e.example", "\n[7](https://f.example)",
]  # fmt: skip


def _texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_ATOMS) for _ in range(rng.randint(0, 40))) for _ in range(count)]


def _fixture_traces(shared_data: Path) -> list[Trace]:
    paths = [
        _REPO / "cookbook" / "data" / "traces.jsonl",
        *(_REPO / "cookbook" / "pytest_suite" / "runs").glob("*.jsonl"),
    ]
    traces = [Trace.model_validate_json(line) for p in paths for line in p.read_text().splitlines() if line.strip()]
    for line in (shared_data / "expertqa" / "rand_val.jsonl").read_text().splitlines():
        for n, ans in enumerate(json.loads(line)["answers"].values()):
            refs = [e.split(maxsplit=1)[-1] for e in ans.get("attribution") or [] if e.strip()]
            answer = ans["answer_string"] + "\n\nReferences:\n" + "\n".join(ans.get("attribution") or [])
            steps = [SearchStep(hits=[Hit(url=u) for u in refs[::2]]), *[FetchStep(url=u) for u in refs[1::3]]]
            traces.append(Trace(id=str(n), answer=answer, steps=steps))
    return traces


def test_reference_lines_read_as_the_whole_line_regex_read_them() -> None:
    rng = random.Random(21)
    for text in _texts(20_000, 22):
        line = rng.choice(["", " ", "- ", "* ", "-", "\t* "]) + rng.choice(["[1]", "[23]", "[1234]", "[x]"]) + text
        line = line.splitlines()[0] if line.splitlines() else line
        for listed in (False, True):
            parsed = parse_answer.__wrapped__(("Sources:\n" if listed else "") + line)  # type: ignore[attr-defined]
            old = _old_reference(line, listed)
            assert parsed.references == (dict([old]) if old else {}), line


def test_parse_answer_is_the_old_parse_on_fixtures_and_generated_answers(shared_data: Path) -> None:
    answers = [t.answer for t in _fixture_traces(shared_data)] + _texts(30_000, 23)
    for answer in answers:
        parsed = parse_answer.__wrapped__(answer)  # type: ignore[attr-defined]
        refs: dict[str, str] = {}
        listed = False
        for line in answer[: sentences.MAX_ANSWER_CHARS].splitlines():
            stripped = line.strip()
            if stripped and sentences._REF_HEADING.match(stripped):
                listed = True
            elif stripped and stripped[0] in "[-*" and (old := _old_reference(line, listed)):
                refs.setdefault(*old)
        assert parsed.references == refs, answer
        for s in parsed.sentences:
            without_links = sentences._MD_LINK.sub(" ", s.text) if "](" in s.text else s.text
            assert s.markers == _old_markers(without_links), s.text


def _old_rows(trace: Trace) -> list[CitationRow]:
    """``citation_rows`` as it was before: each citation checked by (kind, target), every row a ``CitationRow(...)``."""
    parsed = parse_answer(trace.answer)
    surface = citations._Surface(trace)
    rows: list[CitationRow] = []

    def check(kind: str, target: str) -> tuple[str, bool, bool]:
        norm = normalize_url(target) if kind == "url" else target.strip()
        return norm, norm in surface.fetched, surface.seen(norm)

    for index, sentence in enumerate(parsed.sentences):
        for marker in sentence.markers:
            if marker in parsed.references:
                kind, target = reference_target(parsed.references[marker])
                rows.append(CitationRow(index, marker, target, kind, *check(kind, target)))
        for link in sentence.links:
            kind = "url" if is_url(link) else "text"
            rows.append(CitationRow(index, None, link, kind, *check(kind, link)))
    index_of = sentences.SentenceIndex(parsed.sentences)
    for c in (trace.citations or [])[: citations.MAX_CITATIONS]:
        target = c.url or c.doc_id
        if target:
            kind = "url" if c.url and is_url(c.url) else ("doc_id" if c.doc_id else "text")
            rows.append(CitationRow(index_of.find(c.sentence), c.marker, target, kind, *check(kind, target)))
    return rows


def _old_cited_keys(trace: Trace) -> list[str]:
    keys = dict.fromkeys(r.normalized for r in _old_rows(trace) if r.kind != "text")
    return list(keys)


def _generated_traces(count: int, seed: int) -> list[Trace]:
    rng = random.Random(seed)
    urls = ["https://a.example/x", "https://A.example/x/", "http://B.example/y/?utm_source=1", "https://e.example"]
    ids = [None, "", "d1", " d1 ", "https://a.example/x"]
    out = []
    for i, answer in enumerate(_texts(count, seed)):
        hits = [Hit(url=rng.choice(urls + [None]), doc_id=rng.choice(ids)) for _ in range(rng.randint(0, 4))]
        fetches = [
            FetchStep(url=rng.choice(urls), status=rng.choice([200, 404, None])) for _ in range(rng.randint(0, 2))
        ]
        cites = [
            Citation(
                url=rng.choice(urls + ["not a url", None]), doc_id=rng.choice(ids), sentence=rng.choice(["", "A", "b."])
            )
            for _ in range(rng.randint(0, 2))
        ] or None
        out.append(Trace(id=str(i), answer=answer, steps=[SearchStep(hits=hits), *fetches], citations=cites))
    return out


def test_citation_rows_and_cited_keys_are_the_old_ones(shared_data: Path) -> None:
    for trace in _fixture_traces(shared_data) + _generated_traces(5_000, 24):
        rows = citations.citation_rows(trace)
        assert rows == _old_rows(trace), trace
        assert [dataclasses.astuple(r) for r in rows] == [dataclasses.astuple(r) for r in _old_rows(trace)]
        assert citations.citation_rows(trace, parse_answer(trace.answer)) == rows  # the grounding scorer's path
        assert cited.cited_keys(trace) == _old_cited_keys(trace), trace


def test_a_row_built_fast_is_the_dataclass_row() -> None:
    got = ("https://a.example/x", True, False)
    fast = citations._row(3, "1", "https://A.example/x/", "url", got)
    slow = CitationRow(3, "1", "https://A.example/x/", "url", *got)
    assert fast == slow and repr(fast) == repr(slow) and vars(fast) == vars(slow)
    assert list(vars(fast)) == [f.name for f in dataclasses.fields(CitationRow)]  # same order: encodings alike
    assert dataclasses.asdict(fast) == dataclasses.asdict(slow) and pickle.loads(pickle.dumps(fast)) == slow
    assert fast.fabricated == slow.fabricated and hash(fast) == hash(slow)
