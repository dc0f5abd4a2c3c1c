"""Citation parsing and the citation scores: unit cases and every ExpertQA record, checked against a separate count."""

from __future__ import annotations

import gc
import json
import re
import weakref
from pathlib import Path

import pytest

from tracescore.scorers.citations import citation_rows, citation_scorer, parse_answer, split_sentences
from tracescore.trace import FetchStep, Hit, SearchStep, Trace, fetch_failed
from tracescore.urls import normalize_url


def _scores(trace: Trace) -> dict[str, object]:
    return {s.name: (s.value if s.present else ("absent", s.reason)) for s in citation_scorer()(trace)}


def test_reference_list_forms_and_unresolved_marker() -> None:
    parsed = parse_answer(
        "Returns take 30 days [1]. Refunds go to the card.[2] Shipping is free [3].\n\n"
        "Sources:\n[1] https://a.example/returns\n[2]: https://a.example/refunds\n[4] Smith, J. (2020). A book."
    )
    assert [s.markers for s in parsed.sentences] == [["1"], ["2"], ["3"]]
    assert parsed.references == {
        "1": "https://a.example/returns",
        "2": "https://a.example/refunds",
        "4": "Smith, J. (2020). A book.",
    }
    assert parsed.unresolved_markers == ["3"]
    assert parsed.uncited_references == ["4"]


def test_markdown_links_and_bare_urls() -> None:
    parsed = parse_answer("K2 is tall ([wiki](https://en.wikipedia.org/wiki/K2)). See https://x.example/a, too.")
    assert parsed.sentences[0].links == ["https://en.wikipedia.org/wiki/K2"]
    assert parsed.sentences[1].links == ["https://x.example/a"]
    parens = parse_answer("A440 ([w](https://en.wikipedia.org/wiki/A440_(pitch))). B (https://x.example/B_(c)).")
    assert [s.links for s in parens.sentences] == [
        ["https://en.wikipedia.org/wiki/A440_(pitch)"],
        ["https://x.example/B_(c)"],
    ]


def test_grouped_markers() -> None:
    parsed = parse_answer("Both agree [1, 2][3].\n[1] https://a.example\n[2] https://b.example\n[3] https://c.example")
    assert parsed.sentences[0].markers == ["1", "2", "3"]


def test_split_sentences_keeps_trailing_markers_with_their_sentence() -> None:
    assert split_sentences("One. [1] Two [2]. Three.") == ["One [1].", "Two [2].", "Three."]


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("HTTPS://Example.COM/Path/", "https://example.com/Path"),
        ("https://example.com/a?utm_source=x&id=3&gclid=9#frag", "https://example.com/a?id=3"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("https://example.com/a?b=2&a=1", "https://example.com/a?a=1&b=2"),
    ],
)
def test_url_normalisation(a: str, b: str) -> None:
    assert normalize_url(a) == normalize_url(b)


@pytest.mark.parametrize(
    "url", ["http://[::1]/x", "http://[::ffff:1.2.3.4]:8080/a", "http://[fe80::1%25eth0]/", "https://[2001:DB8::1]/p"]
)
def test_a_bare_url_with_an_ipv6_host_is_cited_whole_and_matches_its_search_and_fetch(url: str) -> None:
    """The bare-URL pattern stopped at the host's "]": the URL was cited cut ("http://[::1") and counted fabricated."""
    parsed = parse_answer(f"The page is at {url} for now.")
    assert parsed.sentences[0].links == [url]
    trace = Trace(
        id="t",
        answer=f"The page is at {url} for now.",
        steps=[SearchStep(hits=[Hit(url=url)]), FetchStep(url=url, text="page", status=200)],
    )
    got = _scores(trace)
    assert got["citation.fabricated_count"] == 0.0 and got["citation.unfetched_rate"] == 0.0
    assert normalize_url(url).startswith(url.split("://")[0] + "://[")  # the brackets kept
    # a "]" that closes a bracket around a URL still ends it
    assert parse_answer("See [https://a.example/x] too.").sentences[0].links == ["https://a.example/x"]


def test_paths_keep_their_case() -> None:
    assert normalize_url("https://example.com/Wiki/K2") != normalize_url("https://example.com/wiki/k2")


def _trace(answer: str, hits: list[str], fetched: list[tuple[str, int]]) -> Trace:
    return Trace(
        id="t",
        answer=answer,
        steps=[
            SearchStep(hits=[Hit(url=u) for u in hits]),
            *[FetchStep(url=u, text="page", status=st) for u, st in fetched],
        ],
    )


def test_scores_unfetched_fabricated_coverage() -> None:
    answer = (
        "A [1]. B [2]. C has no citation. D [3].\n\n[1] https://a.example/x?utm_source=s\n"
        "[2] https://b.example/y\n[3] https://invented.example/z"
    )
    got = _scores(_trace(answer, ["https://a.example/x", "https://b.example/y"], [("https://A.example/x/", 200)]))
    assert got["citation.coverage"] == pytest.approx(3 / 4)
    assert got["citation.unfetched_rate"] == pytest.approx(2 / 3)
    assert got["citation.fabricated_count"] == 1.0


def test_failed_fetch_counts_as_unfetched() -> None:
    answer = "A [1].\n[1] https://a.example/x"
    got = _scores(_trace(answer, ["https://a.example/x"], [("https://a.example/x", 404)]))
    assert got["citation.unfetched_rate"] == 1.0
    assert got["citation.fabricated_count"] == 0.0


def test_empty_and_uncited_answers_are_not_zeroed() -> None:
    assert _scores(_trace("", [], []))["citation.coverage"] == ("absent", "empty answer")
    got = _scores(_trace("No citations at all.", [], []))
    assert got["citation.coverage"] == 0.0  # computed: one sentence, none cited
    assert got["citation.unfetched_rate"] == ("absent", "answer cites no URL or doc id")


def test_non_url_citations_and_unicode_do_not_crash() -> None:
    answer = "Ünïcödé claim — with emoji 🏔️ [1]. Another [2] [x] [](). \n[1] Personal communication, 2021\n[2] ftp:/bad"
    got = _scores(_trace(answer + "\n" + "x" * 200_000, [], []))
    assert got["citation.fabricated_count"] == 0.0


# --- ExpertQA: every record, cited-but-unread and listed-but-never-cited against an independent count -----------

_MARK = re.compile(r"\[(\d+)\]")


def _expertqa_traces(path: Path) -> list[tuple[Trace, set[str], set[str]]]:
    """(trace, expected cited-but-unread URLs, expected listed-but-never-cited markers) per answer."""
    out = []
    for n, line in enumerate(path.read_text().splitlines()):
        record = json.loads(line)
        for system, ans in record["answers"].items():
            refs: dict[str, str] = {}
            for entry in ans.get("attribution") or []:
                m = re.match(r"\[(\d+)\]\s*(\S+)", entry)
                if m:
                    refs.setdefault(m.group(1), m.group(2))
            read: dict[str, str] = {}
            for claim in ans.get("claims") or []:
                for ev in claim.get("evidence") or []:
                    m = re.match(r"\[(\d+)\]\s*(\S+)\s*\n\n(.+)", ev, re.DOTALL)
                    if m and m.group(3).strip():
                        read[m.group(2)] = m.group(3)
            body = ans["answer_string"]
            cited = set(_MARK.findall(body))
            simple = {u.lower().rstrip("/") for u in read}
            unread = {refs[c].lower().rstrip("/") for c in cited if c in refs} - simple
            never_cited = set(refs) - cited
            answer = body + "\n\nReferences:\n" + "\n".join(f"[{k}] {u}" for k, u in refs.items())
            steps = [
                SearchStep(hits=[Hit(url=u) for u in refs.values()]),
                *[FetchStep(url=u, text=t) for u, t in read.items()],
            ]
            out.append(
                (
                    Trace(id=f"{n}-{system}", question=record["question"], answer=answer, steps=steps),
                    unread,
                    never_cited,
                )
            )
    return out


def test_expertqa_every_record(shared_data: Path) -> None:
    cases = _expertqa_traces(shared_data / "expertqa" / "rand_val.jsonl")
    assert len(cases) > 200
    total_unread = total_uncited = 0
    for trace, unread, never_cited in cases:
        scores = {s.name: s for s in citation_scorer()(trace)}
        unfetched = scores["citation.unfetched_rate"]
        got_unread = {u.lower().rstrip("/") for u in unfetched.metadata.get("unfetched", [])}
        assert got_unread == {normalize_url(u).lower() for u in unread}, trace.id
        assert set(parse_answer(trace.answer).uncited_references) == never_cited, trace.id
        assert scores["citation.fabricated_count"].value == 0.0, trace.id  # every reference was a search hit
        total_unread += len(unread)
        total_uncited += len(never_cited)
    # the data set has both failure kinds (bing_chat/gpt4 evidence is URL-only; rr_* list references never cited)
    assert total_unread > 50 and total_uncited > 50


# --- numbered lists, headings: a sentence must contain a word (#10.3) -------------------------------------------------


def test_numbered_list_items_are_not_split_into_a_marker_sentence() -> None:
    parsed = parse_answer("Steps:\n\n1. Open the valve [1].\n2) Close it again.\n- Wait [2].\n\n[1] https://a.example\n")
    assert [s.text for s in parsed.sentences] == ["Steps:", "Open the valve [1].", "Close it again.", "Wait [2]."]
    glued = parse_answer("Intro sentence here.\n\n1[1]. Quadrature Encoder: the main input [2]. Signal stage.")
    assert [(s.text, s.markers) for s in glued.sentences] == [
        ("Intro sentence here.", []),
        ("Quadrature Encoder: the main input [2] [1].", ["2", "1"]),
        ("Signal stage.", []),
    ]


def test_headings_and_word_less_fragments_are_not_sentences() -> None:
    parsed = parse_answer("## Summary\n**Key points**\nPrices rose in 2020 [1].\n---\n3.\n[4].\n")
    assert [(s.text, s.markers) for s in parsed.sentences] == [("Prices rose in 2020 [1]. [4]", ["1", "4"])]
    got = _scores(_trace("# Title\n1. Only cited item [1].\n[1] https://a.example/x", ["https://a.example/x"], []))
    assert got["citation.coverage"] == 1.0


_ITEM = re.compile(r"^\s*(?:\d+(?:\[\d+\])*[.)]|[-*\u2022])\s+")
_CITE = re.compile(r"\[\d+(?:,\s*\d+)*\]")
_SPLIT = re.compile(r"(?<=[.!?])((?:\s*\[\d+(?:,\s*\d+)*\])*)\s+(?=[\[\"'(*]*[A-Z0-9])")


def _independent_count(body: str) -> tuple[int, int, int]:
    """(sentences, cited sentences, list items) of an ExpertQA answer, counted line by line without our splitter:
    empty lines and headings dropped, a list marker (with any citation glued to it) cut off the item, then each line
    split at a stop (and the citations right after it) followed by a capital or digit; a piece without a letter is
    not a sentence."""
    sentences = cited = items = 0
    for line in body.split("\n"):
        if not line.strip() or line.strip().startswith("#"):
            continue
        item = _ITEM.match(line)
        glued = ""
        if item:
            items += 1
            glued = "".join(_CITE.findall(item.group(0)))
            line = line[item.end() :]
        parts = _SPLIT.split(line)
        for i, (text, trail) in enumerate(zip(parts[0::2], [*parts[1::2], ""], strict=True)):
            if not re.search(r"[A-Za-z]", _CITE.sub("", text)):
                continue
            sentences += 1
            cited += bool(_CITE.search(text) or trail or (i == 0 and glued))
    return sentences, cited, items


def test_expertqa_coverage_against_an_independent_count(shared_data: Path) -> None:
    path = shared_data / "expertqa" / "rand_val.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    bodies = [a["answer_string"] for record in records for a in record["answers"].values()]
    cases = _expertqa_traces(path)
    assert len(cases) == len(bodies) > 200
    mismatched, answers_with_items, items = [], 0, 0
    for (trace, _, _), body in zip(cases, bodies, strict=True):
        sentences, cited, listed = _independent_count(body)
        answers_with_items += bool(listed)
        items += listed
        coverage = next(s for s in citation_scorer()(trace) if s.name == "citation.coverage")
        assert coverage.present, trace.id
        assert all(re.search(r"[A-Za-z]", s.text) for s in parse_answer(trace.answer).sentences), trace.id
        if (coverage.metadata["sentences"], coverage.metadata["cited"]) != (sentences, cited):
            mismatched.append((trace.id, coverage.metadata["sentences"], coverage.metadata["cited"], sentences, cited))
        assert coverage.value == pytest.approx(cited / sentences), trace.id
    assert mismatched == []
    assert answers_with_items >= 23 and items >= 94  # the numbered answers of the issue are in the data set


# --- the per-trace index of hits and fetches (#14): lazy, but the same answers as normalising every hit ------------


def test_a_hit_is_seen_whether_listed_canonical_or_not_and_a_doc_id_counts_too() -> None:
    refs = "Sources:\n[1] https://a.example/x\n[2] https://b.example/y\n[3] doc-7\n[4] https://z.example/"
    answer = "A [1]. B [2]. C [3]. D [4].\n" + refs
    trace = Trace(
        id="t",
        answer=answer,
        steps=[SearchStep(hits=[Hit(url="https://a.example/x"), Hit(url="HTTPS://B.example/y/?utm_source=s")]),
               SearchStep(hits=[Hit(doc_id="doc-7", url="")])],
    )  # fmt: skip
    rows = {r.marker: r for r in citation_rows(trace)}
    assert [rows[m].seen for m in "1234"] == [True, True, True, False]  # [3]: a text reference naming a hit's doc id
    assert _scores(trace)["citation.fabricated_count"] == 1.0  # only z.example was never seen


def test_fetch_status_failure_is_the_documented_rule_for_every_int_and_its_text() -> None:
    """README: a status outside 100–399 (4xx, 5xx, 0 or below: no response), false, or error/fail/timeout text."""
    for code in range(-1000, 10_000):
        failed = code < 100 or code >= 400
        assert fetch_failed(code) is failed and fetch_failed(str(code)) is failed, code
        assert fetch_failed(f" {code} ") is failed, code
    for text, failed in [("Timeout", True), ("read error", True), ("FAILED", True), ("ok", False), ("", False),
                         ("HTTP 404", False), ("success", False)]:  # fmt: skip
        assert fetch_failed(text) is failed, text
    assert fetch_failed(None) is False and fetch_failed(True) is False and fetch_failed(False) is True


def test_a_fetch_with_status_0_is_not_a_read_page() -> None:
    """A browser's fetch reports a network error as status 0: the page was never read (it counted as read)."""
    got = _scores(_trace("A [1].\n[1] https://a.example/x", ["https://a.example/x"], [("https://a.example/x", 0)]))
    assert got["citation.unfetched_rate"] == 1.0


def test_the_rows_come_back_with_the_scores_and_nothing_keeps_the_trace_alive() -> None:
    trace = _trace("A [1].\n[1] https://a.example/x", ["https://a.example/x"], [])
    scored = citation_scorer()(trace)
    assert list(scored.citations) == citation_rows(trace) and [r.target for r in scored.citations] == [
        "https://a.example/x"
    ]
    gone = weakref.ref(trace)
    del trace
    gc.collect()
    assert gone() is None  # no memo holds a scored trace (its pages and hits)
