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
from dataclasses import dataclass

from tracescore.trace import Hit

__all__ = ["BrowserPage", "markdown_hits", "not_found", "read_page"]

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
