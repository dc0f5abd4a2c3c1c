"""Citations stage: which answer sentences cite what, and did the agent ever see or read what it cited?

Parses inline ``[n]`` markers with a reference list (``[n] URL``, ``[n]: URL``), markdown links and bare URLs,
pairs each answer sentence with its citations, and scores ``citation.coverage``, ``citation.unfetched_rate`` and
``citation.fabricated_count``. The per-citation rows go to the local store.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from tracescore.scores import Score, absent, score
from tracescore.trace import Trace
from tracescore.urls import is_url, normalize_url

__all__ = [
    "SCORER_VERSION",
    "CitationRow",
    "CitedSentence",
    "ParsedAnswer",
    "citation_rows",
    "citation_scorer",
    "parse_answer",
    "split_sentences",
]

SCORER_VERSION = "citations-1"

_REF_LINE = re.compile(r"^\s*(?:[-*]\s*)?\[(\d{1,3})\]\s*:?\s*(?P<rest>.*\S)?\s*$")
_REF_HEADING = re.compile(r"^\s*(?:#+\s*)?\**(references|sources|citations|bibliography)\**\s*:?\s*$", re.IGNORECASE)
_MARKER = re.compile(r"\[(\d{1,3}(?:\s*[,;]\s*\d{1,3})*)\](?!\()")
_MD_LINK = re.compile(r"\[([^\]\n]*)\]\(((?:[^\s()]|\([^\s()]*\))+)\)")
_BARE_URL = re.compile(r"(?<!\w)https?://[^\s<>\]\"']+", re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\[\"'(*]*[A-Z0-9])|\n+")
_MARKERS_AFTER_STOP = re.compile(r"([.!?])((?:\s*\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\])+)")
_LEADING_MARKERS = re.compile(r"^(\s*\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\])+")
_URL_IN_TEXT = re.compile(r"https?://\S+", re.IGNORECASE)
_FAILED_STATUS = re.compile(r"^(4|5)\d\d$|error|fail|timeout", re.IGNORECASE)


@dataclass
class CitedSentence:
    """One answer sentence and what it cites: inline markers (resolved or not) and direct links."""

    text: str
    markers: list[str] = field(default_factory=list)
    links: list[str] = field(default_factory=list)

    @property
    def cited(self) -> bool:
        return bool(self.markers or self.links)


@dataclass
class ParsedAnswer:
    """The answer split into sentences with their citations, and the reference list it ends with."""

    sentences: list[CitedSentence]
    references: dict[str, str]
    unresolved_markers: list[str]

    @property
    def uncited_references(self) -> list[str]:
        """Reference-list markers that no sentence cites (listed but never used)."""
        used = {m for s in self.sentences for m in s.markers}
        return [m for m in self.references if m not in used]


@dataclass(frozen=True)
class CitationRow:
    """One cited source of one sentence, as stored per trace in the local store."""

    sentence_index: int
    marker: str | None
    target: str
    kind: str  # "url" | "doc_id" | "text"
    normalized: str
    fetched: bool
    seen: bool

    @property
    def fabricated(self) -> bool:
        return self.kind != "text" and not self.seen


def _trim_url(url: str) -> str:
    """Drop sentence punctuation after a URL, and closing parentheses that it does not open (``(see https://…/a)``)."""
    while url and (url[-1] in ".,;:!?'\"" or (url[-1] == ")" and url.count("(") < url.count(")"))):
        url = url[:-1]
    return url


def split_sentences(text: str) -> list[str]:
    """Split prose into sentences; a run of markers opening a sentence belongs to the one before it."""
    text = _MARKERS_AFTER_STOP.sub(r"\2\1", text)
    pieces = [p.strip() for p in _SENTENCE_END.split(text) if p and p.strip()]
    out: list[str] = []
    for piece in pieces:
        lead = _LEADING_MARKERS.match(piece)
        if lead and out:
            out[-1] = f"{out[-1]} {lead.group(0).strip()}"
            piece = piece[lead.end() :].strip()
        if piece and re.search(r"\w", _MARKER.sub("", piece)):
            out.append(piece)
        elif piece and out:
            out[-1] = f"{out[-1]} {piece}"
    return out


def parse_answer(answer: str) -> ParsedAnswer:
    """Split ``answer`` into cited sentences and its reference list (``[n] URL`` / ``[n]: URL`` lines)."""
    body_lines: list[str] = []
    references: dict[str, str] = {}
    in_reference_list = False
    for line in answer.splitlines():
        if _REF_HEADING.match(line):
            in_reference_list = True
            continue
        ref = _REF_LINE.match(line)
        rest = (ref.group("rest") or "") if ref else ""
        if ref and rest and len(_MARKER.findall(line)) == 1 and (in_reference_list or _URL_IN_TEXT.search(rest)):
            references.setdefault(ref.group(1), rest.strip())
            continue
        body_lines.append(line)
    sentences: list[CitedSentence] = []
    unresolved: list[str] = []
    for text in split_sentences("\n".join(body_lines)):
        links = [m.group(2) for m in _MD_LINK.finditer(text)]
        without_links = _MD_LINK.sub(" ", text)
        links += [_trim_url(u) for u in _BARE_URL.findall(without_links)]
        markers: list[str] = []
        for group in _MARKER.findall(without_links):
            for num in re.split(r"\s*[,;]\s*", group):
                if num not in markers:
                    markers.append(num)
        for num in markers:
            if num not in references and num not in unresolved:
                unresolved.append(num)
        sentences.append(CitedSentence(text=text, markers=markers, links=links))
    return ParsedAnswer(sentences=sentences, references=references, unresolved_markers=unresolved)


def _reference_target(ref: str) -> tuple[str, str]:
    """(kind, target) of a reference-list entry: its URL when it has one, else its text."""
    url = _URL_IN_TEXT.search(ref)
    if url:
        return "url", _trim_url(url.group(0))
    return "text", ref


def _seen_and_fetched(trace: Trace) -> tuple[set[str], set[str]]:
    seen: set[str] = set()
    fetched: set[str] = set()
    for search in trace.searches:
        for hit in search.hits:
            seen |= {normalize_url(hit.url)} if hit.url else set()
            seen |= {hit.doc_id} if hit.doc_id else set()
    for fetch in trace.fetches:
        keys = {normalize_url(fetch.url)} if fetch.url else set()
        keys |= {fetch.doc_id} if fetch.doc_id else set()
        seen |= keys
        failed = fetch.status is not None and bool(_FAILED_STATUS.search(str(fetch.status)))
        if not failed:
            fetched |= keys
    return seen, fetched


def citation_rows(trace: Trace, parsed: ParsedAnswer | None = None) -> list[CitationRow]:
    """Every cited source of every sentence (plus the trace's explicit citations), checked against the steps."""
    parsed = parsed or parse_answer(trace.answer)
    seen, fetched = _seen_and_fetched(trace)
    rows: list[CitationRow] = []

    def add(index: int, marker: str | None, kind: str, target: str) -> None:
        norm = normalize_url(target) if kind == "url" else target.strip()
        rows.append(CitationRow(index, marker, target, kind, norm, norm in fetched, norm in seen))

    for index, sentence in enumerate(parsed.sentences):
        for marker in sentence.markers:
            if marker in parsed.references:
                add(index, marker, *_reference_target(parsed.references[marker]))
        for link in sentence.links:
            add(index, None, "url" if is_url(link) else "text", link)
    for citation in trace.citations or []:
        target = citation.url or citation.doc_id
        if not target:
            continue
        kind = "url" if citation.url and is_url(citation.url) else ("doc_id" if citation.doc_id else "text")
        index = next(
            (i for i, s in enumerate(parsed.sentences) if citation.sentence and citation.sentence in s.text), -1
        )
        add(index, citation.marker, kind, target)
    return rows


def citation_scorer() -> Callable[[Trace], list[Score]]:
    """Scorer factory for ``citation.coverage``, ``citation.unfetched_rate`` and ``citation.fabricated_count``."""

    def score_citations(trace: Trace) -> list[Score]:
        names = ("citation.coverage", "citation.unfetched_rate", "citation.fabricated_count")
        if not trace.answer.strip():
            return [absent(n, "empty answer") for n in names]
        parsed = parse_answer(trace.answer)
        rows = citation_rows(trace, parsed)
        if not parsed.sentences:
            return [absent(n, "answer has no sentences") for n in names]
        cited_idx = {r.sentence_index for r in rows} | {i for i, s in enumerate(parsed.sentences) if s.markers}
        cited = sum(1 for i in range(len(parsed.sentences)) if i in cited_idx)
        uncited = [s.text for i, s in enumerate(parsed.sentences) if i not in cited_idx]
        out = [
            score(
                "citation.coverage",
                cited / len(parsed.sentences),
                comment=_first("uncited sentences", uncited) if uncited else None,
                sentences=len(parsed.sentences),
                cited=cited,
                unresolved_markers=parsed.unresolved_markers,
            )
        ]
        sources = {r.normalized: r for r in rows if r.kind != "text"}
        if not sources:
            out.append(absent("citation.unfetched_rate", "answer cites no URL or doc id"))
        else:
            unfetched = sorted(k for k, r in sources.items() if not any(x.fetched for x in rows if x.normalized == k))
            out.append(
                score(
                    "citation.unfetched_rate",
                    len(unfetched) / len(sources),
                    comment=_first("cited but never fetched", unfetched) if unfetched else None,
                    cited=len(sources),
                    unfetched=unfetched,
                )
            )
        fabricated = sorted(k for k, r in sources.items() if r.fabricated)
        out.append(
            score(
                "citation.fabricated_count",
                float(len(fabricated)),
                comment=_first("cited but never seen in any search result or fetch", fabricated)
                if fabricated
                else None,
                fabricated=fabricated,
            )
        )
        return out

    return score_citations


def _first(label: str, items: list[str], limit: int = 5) -> str:
    shown = "; ".join(items[:limit])
    more = f" (+{len(items) - limit} more)" if len(items) > limit else ""
    return f"{label}: {shown}{more}"
