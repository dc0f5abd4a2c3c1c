"""The #14 fast paths give exactly what the code before them gave: each old implementation is kept here as the
reference and compared with the new one on generated inputs (and on every code point where a shortcut swaps a regex
class for a ``str`` predicate)."""

from __future__ import annotations

import random
import re

from tracescore.scorers import answer, retrieval, sentences
from tracescore.scorers.sentences import (
    _BARE_URL,
    _HEADING,
    _HEADING_LAST,
    _LEADING_MARKERS,
    _MARKER,
    _MARKER_SEP,
    _MARKERS_AFTER_STOP,
    _MD_LINK,
    _REF_HEADING,
    _SENTENCE_END,
    _URL_IN_TEXT,
    _WORD,
    CitedSentence,
    ParsedAnswer,
    _strip_list_marker,
    _trim_url,
)
from tracescore.trace import Hit

# how parse_answer read a reference line before its head-only pattern (sentences._REF_START): the old way, kept here
REF_LINE = re.compile(r"^\s*(?:[-*]\s*)?\[(\d{1,3})\]\s*:?\s*(?P<rest>.*\S)?\s*$")

_ALL = "".join(map(chr, range(0x110000)))


def _old_split_sentences(text: str) -> list[str]:
    """``split_sentences`` as it was before #14's last pass (a regex for the letter test of every piece)."""
    if "[" in text and _MARKERS_AFTER_STOP.search(text):
        text = _MARKERS_AFTER_STOP.sub(r"\2\1", text)
    pieces = [p.strip() for p in _SENTENCE_END.split(text) if p and p.strip()]
    out: list[str] = []
    for piece in pieces:
        lead = _LEADING_MARKERS.match(piece) if piece[0] == "[" else None
        if lead and out:
            out[-1] = f"{out[-1]} {lead.group(0).strip()}"
            piece = piece[lead.end() :].strip()
        if piece and _WORD.search(piece):
            out.append(piece)
        elif piece and out and _MARKER.search(piece):
            out[-1] = f"{out[-1]} {piece}"
    return out


def _old_parse_answer(answer_text: str) -> ParsedAnswer:
    """``parse_answer`` as it was before #14's last pass (every reference line's markers counted by ``findall``)."""
    truncated = len(answer_text) > sentences.MAX_ANSWER_CHARS
    answer_text = answer_text[: sentences.MAX_ANSWER_CHARS]
    body_lines: list[str] = []
    references: dict[str, str] = {}
    in_reference_list = False
    for line in answer_text.splitlines():
        stripped = line.strip()
        if not stripped:
            body_lines.append(line)
            continue
        first, last = stripped[0], stripped[-1]
        if (last in _HEADING_LAST or not last.isascii()) and _REF_HEADING.match(stripped):
            in_reference_list = True
            continue
        ref = REF_LINE.match(line) if first in "[-*" else None
        rest = (ref.group("rest") or "") if ref else ""
        if ref and rest and len(_MARKER.findall(line)) == 1 and (in_reference_list or _URL_IN_TEXT.search(rest)):
            references.setdefault(ref.group(1), rest.strip())
            continue
        if first in "#*_=-" and _HEADING.match(stripped):
            continue
        body_lines.append(_strip_list_marker(line) if first in "-*+\u2022" or first.isdecimal() else line)
    parsed: list[CitedSentence] = []
    unresolved: list[str] = []
    for text in _old_split_sentences("\n".join(body_lines)):
        if "[" not in text and "://" not in text:
            parsed.append(CitedSentence(text, [], []))
            continue
        if "](" in text:
            links = [m.group(2) for m in _MD_LINK.finditer(text)]
            without_links = _MD_LINK.sub(" ", text)
        else:
            links, without_links = [], text
        if "://" in without_links:
            links += [_trim_url(u) for u in _BARE_URL.findall(without_links)]
        markers: list[str] = []
        for group in _MARKER.findall(without_links) if "[" in without_links else ():
            for num in _MARKER_SEP.split(group) if "," in group or ";" in group else (group,):
                if num not in markers:
                    markers.append(num)
        for num in markers:
            if num not in references and num not in unresolved:
                unresolved.append(num)
        parsed.append(CitedSentence(text, markers, links))
    return ParsedAnswer(parsed, references, unresolved, truncated)


def _old_squad_tokens(text: str) -> list[str]:
    """``_squad_tokens`` as it was before #14's last pass (articles always dropped by the regex)."""
    text = text.lower()
    text = (
        text.encode().translate(None, answer._PUNCT_BYTES).decode()
        if text.isascii()
        else text.translate(answer._DROP_PUNCT)
    )
    return answer._ARTICLES.sub(" ", text).split()


_ATOMS = [
    "A", "b", "Word", "the", "an", "a", " ", "  ", "\n", "\n\n", "\r\n", "\t", "\u00a0", "\u2028", "\x1c", "\x01", ".",
    "!", "?", ",", ";", ":", "[", "]", "(", ")", "[1]", "[2, 3]", "[4;5]", "[12](", "[1234]", "[1]:", "- ", "* ",
    "1. ", "2) ", "3[1]. ", "\u2022 ", "# ", "**", "__", "---", "Sources", "References:", "SOURCE\u017f", '"', "'", "9",
    "0", "\u0663", "\u00e9", "e\u0301", "_", "https://a.example/x", "http://B.example/y?utm_source=1", "(https://c.example/(z))",
    "[t](https://d.example/p)", "\u00b2", "\u2167", "\uff21",
]  # fmt: skip


def _texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(_ATOMS) for _ in range(rng.randint(0, 40))) for _ in range(count)]


def test_parse_answer_is_the_old_parse_on_generated_answers() -> None:
    texts = _texts(30_000, 11)
    for text in texts:
        assert sentences.parse_answer.__wrapped__(text) == _old_parse_answer(text), text  # type: ignore[attr-defined]


def test_split_sentences_is_the_old_split_on_generated_texts() -> None:
    for text in _texts(20_000, 12):
        assert sentences.split_sentences(text) == _old_split_sentences(text), text


def test_a_reference_line_with_one_bracket_counts_its_markers_as_findall_does() -> None:
    for text in _texts(20_000, 13):
        line = "[7]" + text.replace("\n", " ")
        ref = sentences._REF_START.match(line)
        if ref:
            assert sentences._one_marker(line, ref) == (len(_MARKER.findall(line)) == 1), line
    ref = sentences._REF_START.match("[1](https://x.example)")
    assert ref and not sentences._one_marker("[1](https://x.example)", ref)  # a link, not a marker: not a reference


def test_a_letter_first_is_a_word_as_the_regex_says() -> None:
    assert all(_WORD.match(c) for c in _ALL if c.isalpha())


def test_squad_tokens_are_the_old_tokens_on_generated_texts() -> None:
    for text in _texts(30_000, 14):
        assert answer._squad_tokens(text) == _old_squad_tokens(text), text
    assert answer._squad_tokens("The cat ate an apple, a pear") == ["cat", "ate", "apple", "pear"]


def test_isalnum_is_the_regex_word_class_except_the_underscore() -> None:
    """The token shortcut for articles rests on this: ``\\w`` is ``str.isalnum`` plus ``_``, which was dropped."""
    word = set(re.findall(r"\w", _ALL))
    assert word == {c for c in _ALL if c.isalnum()} | {"_"}


def _old_matches(hits: list[Hit], wanted: set[str], urls: bool) -> list[tuple[int, str]]:
    """The hit matching of ``retrieval._find`` before #14's last pass: one Python loop over every hit."""
    matches: list[tuple[int, str]] = []
    for i, hit in enumerate(hits):
        doc_id = hit.doc_id
        if doc_id:
            if (key := doc_id.strip()) in wanted:
                matches.append((i, key))
            if not urls:
                continue
        url = hit.url
        if url and (key := retrieval._key(url)) in wanted:
            matches.append((i, key))
    return matches


def test_hit_matching_finds_what_the_old_loop_found() -> None:
    rng = random.Random(15)
    ids = [None, "", "d1", " d1 ", "d2", "d3", "d4", "d5", "d6", "d7", "https://a.example/x"]
    urls = [None, "", "https://a.example/x", "https://A.example/x/", "https://b.example/y"]
    for _ in range(20_000):
        hits = [Hit(doc_id=rng.choice(ids), url=rng.choice(urls)) for _ in range(rng.randint(0, 12))]
        wanted = set(rng.sample(["d1", "d2", "d3", "d4", "d5", "d6", "d7", "https://a.example/x"], rng.randint(1, 8)))
        for by_url in (False, True):
            got = retrieval._matches(hits, wanted, by_url)
            assert sorted(got) == sorted(_old_matches(hits, wanted, by_url)), (hits, wanted, by_url)
