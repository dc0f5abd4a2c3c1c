"""The answer parsed once: its sentences, their inline citations and links, and the reference list it ends with.

Shared by the citation and grounding scorers and the pipeline (memoised on the answer text).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache

# Per-trace guard: past this, only the start of the answer is parsed (``ParsedAnswer.truncated`` says so).
MAX_ANSWER_CHARS = 500_000  # answer characters parsed for sentences and citations
_MAX_SENTENCE_SEARCHES = 200  # explicit citations whose sentence is not a whole answer sentence, looked up by text

# a reference line's head ("[3]", "- [3]:"); what follows it, right-stripped, is the reference (a whole-line pattern
# with "(?P<rest>.*\S)?\s*$" made the regex engine walk the rest of the line and back off its trailing spaces)
_REF_START = re.compile(r"\s*(?:[-*]\s*)?\[(\d{1,3})\]\s*:?\s*")
# matched on the stripped line: "\s*:?\s*$" on raw text backtracks quadratically over a long run of spaces
_REF_HEADING = re.compile(r"(?:#+\s*)?\**(references|sources|citations|bibliography)\**(?:\s*:)?$", re.IGNORECASE)
_MARKER = re.compile(r"\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\](?!\()")
_MD_LINK = re.compile(r"\[([^\[\]\n]*)\]\(((?:[^\s()]|\([^\s()]*\))+)\)")
# an IPv6 host in brackets ("http://[::1]/x") is part of the URL; any other "]" ends it ("[see http://a.example]")
_BARE_URL = re.compile(
    r"(?<!\w)https?://(?:\[[0-9a-z:.%_~-]+\][^\s<>\]\"']*|[^\s<>\]\"'\[][^\s<>\]\"']*)", re.IGNORECASE
)
# "(?<=[.!?])\s+(?=[\["'(*]*[A-Z0-9])|\n+", written to start with one whitespace character so the regex engine skips
# to the next whitespace in C instead of trying both branches at every character (same matches, in the same order)
_SENTENCE_END = re.compile(r"\s(?:(?<=[.!?]\s)\s*(?=[\[\"'(*]*[A-Z0-9])|(?<=\n)\n*)")
_MARKERS_AFTER_STOP = re.compile(r"([.!?])((?:\s*\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\])+)")
_LEADING_MARKERS = re.compile(r"^(\s*\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\])+")
_URL_IN_TEXT = re.compile(r"https?://\S+", re.IGNORECASE)
_MARKER_SEP = re.compile(r"\s*[,;]\s*")
_WORD = re.compile(r"[^\W\d_]")  # a sentence must contain a letter: "1." or "[3]." is not a sentence
# "1. Item", "2) Item", "- Item", "* Item", "• Item", and ExpertQA's "1[1]. Item" (a citation glued to the number)
_LIST_MARKER = re.compile(
    r"^(?P<indent>\s*)(?:\d{1,3}(?P<cites>(?:\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\])*)[.)]|[-*+\u2022])[ \t]+(?=\S)"
)
_HEADING = re.compile(r"#{1,6}\s|(?:\*\*|__)[^*_]+(?:\*\*|__)(?:\s*:)?$|[=\-]{3,}$")  # on the stripped line
_FIRST_STOP = re.compile(r"[.!?](?=\s|$)")
# The ASCII characters a reference heading can end with ("...s", "...y", "**", ":"); IGNORECASE also lets a few
# non-ASCII letters (the long s "ſ") end one, so a non-ASCII last character is always tried.
_HEADING_LAST = "sSyY*:"


@dataclass(slots=True)
class CitedSentence:
    """One answer sentence and what it cites: inline markers (resolved or not) and direct links."""

    text: str
    markers: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)

    @property
    def cited(self) -> bool:
        return bool(self.markers or self.links)


@dataclass(slots=True)
class ParsedAnswer:
    """The answer split into sentences with their citations, and the reference list it ends with."""

    sentences: list[CitedSentence]
    references: dict[str, str]
    unresolved_markers: list[str]
    truncated: bool = False  # the answer was longer than MAX_ANSWER_CHARS; the rest was not read

    @property
    def uncited_references(self) -> list[str]:
        """Reference-list markers that no sentence cites (listed but never used)."""
        used = {m for s in self.sentences for m in s.markers}
        return [m for m in self.references if m not in used]


def _trim_url(url: str) -> str:
    """Drop sentence punctuation after a URL, and closing parentheses that it does not open (``(see https://…/a)``)."""
    while url and (url[-1] in ".,;:!?'\"" or (url[-1] == ")" and url.count("(") < url.count(")"))):
        url = url[:-1]
    return url


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences; a run of markers opening a sentence belongs to the one before it."""
    if "[" in text and _MARKERS_AFTER_STOP.search(text):  # sub() with a template costs a Python call even unmatched
        text = _MARKERS_AFTER_STOP.sub(r"\2\1", text)
    pieces = [p for p in map(str.strip, _SENTENCE_END.split(text)) if p]
    out: list[str] = []
    for piece in pieces:
        lead = _LEADING_MARKERS.match(piece) if piece[0] == "[" else None
        if lead and out:
            out[-1] = f"{out[-1]} {lead.group(0).strip()}"
            piece = piece[lead.end() :].strip()
        # a marker holds no letter, so removing the markers first changes nothing; a letter first needs no regex
        if piece and (piece[0].isalpha() or _WORD.search(piece)):
            out.append(piece)
        elif piece and out and _MARKER.search(piece):  # stray markers belong to the sentence before; "3." is dropped
            out[-1] = f"{out[-1]} {piece}"
    return out


def _strip_list_marker(line: str) -> str:
    """A list item without its marker; a citation glued to the number (``1[1]. Item.``) goes to the item's first
    sentence (``Item [1].``)."""
    found = _LIST_MARKER.match(line)
    if not found:
        return line
    item = found.group("indent") + line[found.end() :]
    cites = found.group("cites")
    if not cites:
        return item
    stop = _FIRST_STOP.search(item)
    at = stop.start() if stop else len(item.rstrip())
    return f"{item[:at]} {cites}{item[at:]}"


def _one_marker(line: str, ref: re.Match[str]) -> bool:
    """Whether ``line``, a reference line, holds exactly one inline marker (``len(_MARKER.findall(line)) == 1``).

    With a single ``[`` the only candidate is the reference's own ``[n]``, a marker unless a ``(`` follows it.
    """
    if line.count("[") != 1:
        return len(_MARKER.findall(line)) == 1
    after = ref.end(1) + 1  # the character after the reference's "]"
    return line[after : after + 1] != "("


@lru_cache(maxsize=16)
def parse_answer(answer: str) -> ParsedAnswer:
    """Split ``answer`` into cited sentences and its reference list (``[n] URL`` / ``[n]: URL`` lines).

    Memoised on the answer text, so the scorers and the pipeline parse one answer once; treat the result as read-only.
    Only the first ``MAX_ANSWER_CHARS`` characters are read (see ``ParsedAnswer.truncated``).
    """
    truncated = len(answer) > MAX_ANSWER_CHARS
    answer = answer[:MAX_ANSWER_CHARS]
    body_lines: list[str] = []
    references: dict[str, str] = {}
    in_reference_list = False
    for line in answer.splitlines():
        stripped = line.strip()
        if not stripped:
            body_lines.append(line)
            continue
        # Each line regex runs only when the line's first/last character lets it match (most lines are prose).
        first, last = stripped[0], stripped[-1]
        if (last in _HEADING_LAST or not last.isascii()) and _REF_HEADING.match(stripped):
            in_reference_list = True
            continue
        if first in "[-*" and (ref := _REF_START.match(line)):
            rest = line[ref.end() :].rstrip()  # the reference ("" when the line holds none)
            if rest and _one_marker(line, ref) and (in_reference_list or _URL_IN_TEXT.search(rest)):
                references.setdefault(ref.group(1), rest)
                continue
        if first in "#*_=-" and _HEADING.match(stripped):
            continue
        body_lines.append(_strip_list_marker(line) if first in "-*+\u2022" or first.isdecimal() else line)
    sentences: list[CitedSentence] = []
    unresolved: list[str] = []
    for text in split_sentences("\n".join(body_lines)):
        if "[" not in text and "://" not in text:  # every link and marker pattern needs one of these
            sentences.append(CitedSentence(text, [], []))
            continue
        if "](" in text:
            links = [m.group(2) for m in _MD_LINK.finditer(text)]
            without_links = _MD_LINK.sub(" ", text)
        else:
            links, without_links = [], text
        if "://" in without_links:
            links += [_trim_url(u) for u in _BARE_URL.findall(without_links)]
        groups = _MARKER.findall(without_links) if "[" in without_links else []
        if len(groups) == 1 and "," not in groups[0] and ";" not in groups[0]:
            markers = groups  # one marker: the loop below would give the same list
        else:
            markers = []
            for group in groups:
                for num in _MARKER_SEP.split(group) if "," in group or ";" in group else (group,):
                    if num not in markers:
                        markers.append(num)
        for num in markers:
            if num not in references and num not in unresolved:
                unresolved.append(num)
        sentences.append(CitedSentence(text, markers, links))
    return ParsedAnswer(sentences=sentences, references=references, unresolved_markers=unresolved, truncated=truncated)


def reference_target(ref: str) -> tuple[str, str]:
    """(kind, target) of a reference-list entry: its URL when it has one, else its text."""
    url = _URL_IN_TEXT.search(ref)
    if url:
        return "url", _trim_url(url.group(0))
    return "text", ref


class SentenceIndex:
    """Finds the answer sentence an explicit citation's ``sentence`` belongs to: a whole sentence by dict lookup,
    else the first sentence containing it, by one search of the joined answer (at most ``_MAX_SENTENCE_SEARCHES``
    such searches per trace, so 1,000s of citations stay linear)."""

    def __init__(self, sentences: list[CitedSentence]) -> None:
        self._exact: dict[str, int] = {}
        self._starts: list[int] = []
        self._ends: list[int] = []
        offset = 0
        for i, s in enumerate(sentences):
            self._exact.setdefault(s.text, i)
            self._starts.append(offset)
            self._ends.append(offset + len(s.text))
            offset += len(s.text) + 1
        self._joined = "\n".join(s.text for s in sentences)
        self._searches = 0

    def find(self, text: str | None) -> int:
        """Index of the sentence ``text`` is (or is part of), or -1."""
        if not text:
            return -1
        hit = self._exact.get(text)
        if hit is not None:
            return hit
        if self._searches >= _MAX_SENTENCE_SEARCHES:
            return -1
        self._searches += 1
        at = self._joined.find(text)
        while at >= 0:
            index = bisect_right(self._starts, at) - 1
            if at + len(text) <= self._ends[index]:
                return index
            at = self._joined.find(text, at + 1)
        return -1
