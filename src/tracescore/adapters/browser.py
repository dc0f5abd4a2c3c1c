"""Text-browser tool output: the pages a text browser prints, and the Markdown result lists search tools print.

smolagents' Open Deep Research tools (after Microsoft AutoGen's ``SimpleTextBrowser``) print every page as a header,
a line of ``=``, then the current viewport::

    Address: google: kestrel bridge            <- or the page's URL
    Title: kestrel bridge - Search
    Viewport position: Showing page 1 of 1.
    =======================
    A Google search for 'kestrel bridge' found 3 results:

    ## Web Results
    1. [The Kestrel Bridge](https://example.org/kestrel)
    Date published: Mar 3, 2021
    Source: Wend Gazette
    The Kestrel Bridge opened to traffic in 1931.

``read_page`` splits such a page into its address, viewport number and text; ``markdown_hits`` reads the numbered
(or bulleted) ``[title](url)`` entries of a result list, with the lines under each: ``Date published:``, ``Source:``
and the snippet. smolagents' own ``GoogleSearchTool`` prints the same list (numbered from 0) under
``## Search Results``. Nothing here does I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tracescore.adapters.notes import note
from tracescore.trace import FetchStep, Hit, SearchStep

_RULE = re.compile(r"^={5,}[ \t]*$", re.MULTILINE)
_ADDRESS = re.compile(r"^Address:[ \t]*(\S.*?)[ \t]*$", re.MULTILINE)
_TITLE = re.compile(r"^Title:[ \t]*(.*?)[ \t]*$", re.MULTILINE)
_VIEWPORT = re.compile(r"^Viewport position: Showing page (\d+) of (\d+)\.?[ \t]*$", re.MULTILINE)
# one result: "1. [title](url)" or "- [title](url)" at the start of a line (the title may hold brackets)
_ENTRY = re.compile(r"^(?:\d+\.|[-*])[ \t]+\[(?P<title>.*)\]\((?P<url>[a-z][a-z0-9+.-]*://[^\s)]+)\)[ \t]*$",
                    re.MULTILINE | re.IGNORECASE)  # fmt: skip
_NO_RESULTS = re.compile(r"^No results found for ", re.MULTILINE)
_NOT_FOUND = re.compile(r"^The search string .* was not found on this page\.$", re.DOTALL)
_SEARCH_ADDRESS = "google:"


@dataclass(frozen=True)
class BrowserPage:
    """One page as a text browser printed it: where it is, which viewport of how many, and the viewport's text."""

    address: str
    title: str | None
    page: int | None  # 1-based viewport number
    pages: int | None
    text: str

    @property
    def is_search(self) -> bool:
        """A search results page (the browser's address ``google: <query>``), not a web page."""
        return self.address.lower().startswith(_SEARCH_ADDRESS)


def read_page(output: str) -> BrowserPage | None:
    """The page a text-browser tool printed (a header with ``Address:``, a line of ``=``, the viewport), else None.

    The viewport is everything after the first line of ``=`` that follows the address, as the agent was shown it;
    text before the header (``find_archived_url`` says which snapshot it opened) is not part of it."""
    address = _ADDRESS.search(output)
    if address is None:
        return None
    rule = _RULE.search(output, address.end())
    if rule is None:
        return None
    header = output[address.start() : rule.start()]
    text = output[rule.end() + 1 :] if output[rule.end() : rule.end() + 1] == "\n" else output[rule.end() :]
    viewport = _VIEWPORT.search(header)
    title = _TITLE.search(header)
    return BrowserPage(
        address=address.group(1),
        title=title.group(1) if title else None,
        page=int(viewport.group(1)) if viewport else None,
        pages=int(viewport.group(2)) if viewport else None,
        text=text,
    )


def not_found(page: BrowserPage) -> bool:
    """Whether a find-on-page said the string is not there: its viewport text was not shown."""
    return bool(_NOT_FOUND.match(page.text.strip()))


def markdown_hits(text: str) -> list[Hit] | None:
    """The ranked hits of a Markdown result list (a text-browser search page's viewport, or a search tool's plain
    output): each ``N. [title](url)`` entry a hit ranked by its place in the list, its ``Date published:`` and
    ``Source:`` lines in the hit's metadata (``date``, ``source``), the other lines under it its snippet. ``[]``
    for a "No results found for …" page; None when the text holds no such list (nothing to read)."""
    entries = list(_ENTRY.finditer(text))
    if not entries:
        return [] if _NO_RESULTS.search(text) else None
    hits: list[Hit] = []
    for rank, entry in enumerate(entries, start=1):
        end = entries[rank].start() if rank < len(entries) else len(text)
        metadata: dict[str, str] = {}
        snippet: list[str] = []
        for line in text[entry.end() : end].splitlines():
            line = line.strip()
            if line.startswith("Date published:"):
                metadata["date"] = line.removeprefix("Date published:").strip()
            elif line.startswith("Source:"):
                metadata["source"] = line.removeprefix("Source:").strip()
            elif line and not line.startswith("You previously visited this page"):
                snippet.append(line)
        hits.append(
            Hit(rank=rank, url=entry.group("url"), title=entry.group("title").strip() or None,
                snippet=" ".join(snippet) or None, metadata=metadata)
        )  # fmt: skip
    return hits


class PageReading:
    """The pages a trace's fetches opened, read further by page tools (``[mapping] page_tools``): each fetch step's
    viewports in reading order, each once. ``opened`` records a fetch step as it is made; ``more`` adds a page
    tool's viewport to the last fetch of the address it shows; ``extend`` gives those steps their whole text."""

    def __init__(self) -> None:
        self._read: dict[int, tuple[set[int | None], list[str]]] = {}

    def opened(self, index: int, step: FetchStep, output: Any) -> None:
        """Fetch step ``index`` (``steps[index]``), made from a tool's ``output``."""
        page = read_page(output) if isinstance(output, str) else None
        self._read[index] = ({page.page if page else None}, [step.text])

    def more(self, label: str, name: str, output: Any, steps: Sequence[SearchStep | FetchStep]) -> None:
        """Page tool ``name``'s ``output`` (None for a call that failed) read as more of the page it shows."""
        page = read_page(output) if isinstance(output, str) else None
        if page is None:
            note(label, "skipped", f"page tool {name!r}, but its output is no text-browser page (Address: …)")
            return
        if not_found(page):
            note(label, "page", f"{name!r} found nothing on {page.address}: no text shown")
            return
        index = next((i for i, s in reversed(list(enumerate(steps)))
                      if isinstance(s, FetchStep) and s.url == page.address), None)  # fmt: skip
        if index is None or index not in self._read:
            note(label, "skipped", f"page tool {name!r} shows {page.address}, which no fetch opened")
            return
        viewports, texts = self._read[index]
        if page.page is not None and page.page in viewports:
            note(label, "page", f"{name!r}: viewport {page.page} of {page.address} already read")
            return
        viewports.add(page.page)
        texts.append(page.text)
        note(label, "page", f"{name!r}: viewport {page.page} of {page.pages}, {len(page.text)} characters more of "
                            f"{page.address}")  # fmt: skip

    def extend(self, steps: list[SearchStep | FetchStep]) -> None:
        """Each fetch step read further: its text the viewports read, joined by a newline."""
        for index, (_, texts) in self._read.items():
            if len(texts) > 1:
                steps[index] = steps[index].model_copy(update={"text": "\n".join(texts)})
