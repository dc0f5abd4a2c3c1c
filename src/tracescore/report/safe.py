"""Text from traces made safe to show. Trace ids, group names, reasons and messages are user data: each control,
line-separator and bidi-override character is spelled out (``\\x1b``, ``\\u202e``), then the text is escaped for
where it goes, so no value can drive the terminal, inject rich markup or HTML into a PR comment, break a table row,
or make a JUnit file invalid XML (which fails the CI job that reads it)."""

from __future__ import annotations

import re
from html import escape
from typing import Any
from urllib.parse import quote

from rich.console import Console
from rich.text import Text

PIPED_WIDTH = 100  # the fixed layout of tables written to a pipe or a file (a terminal gets its own width)

# C0 and C1 controls (tab and newline too: every place these go is one line), DEL, the bidi marks, embeddings,
# overrides and isolates, line and paragraph separators, BOM, the XML non-characters and lone surrogates
_UNSAFE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff\ufffe\uffff\ud800-\udfff]"
)
_MD = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "|": "\\|"})
_TICKS = re.compile("`+")
_URL_SAFE = "/:?#[]@!$&*+,;=%-._~"  # RFC 3986 reserved and unreserved characters, minus ' ( ) that end a link


def visible(text: str) -> str:
    """``text`` with every unsafe character spelled as its Python escape; other text unchanged."""
    return _UNSAFE.sub(_spell, text) if _UNSAFE.search(text) else text


def _spell(match: re.Match[str]) -> str:
    return match.group().encode("unicode_escape").decode("ascii")


def md_text(text: str) -> str:
    """Plain Markdown text (a table cell, a sentence): visible, HTML characters as entities, ``|`` escaped."""
    return visible(text).translate(_MD)


def md_code(text: str) -> str:
    """A Markdown code span holding ``text`` literally: fenced by more backticks than any run inside it (a backtick in
    an id used to end the span and let the rest through as HTML)."""
    text = visible(text)
    fence = "`" * (max((len(run) for run in _TICKS.findall(text)), default=0) + 1)
    pad = " " if text[:1] == "`" or text[-1:] == "`" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def term(text: str, style: str = "") -> Text:
    """A rich ``Text`` of ``text`` (never parsed as markup: ``[/p]`` in a group name crashed the report), visible."""
    return Text(visible(text), style=style)


def console(**options: Any) -> Console:
    """A rich ``Console`` that reads no markup and no ``:emoji:`` codes in what it prints: a path or an id holding
    ``[/x]`` crashed ``score`` and ``report`` (rich's MarkupError); styles go in ``Text`` objects instead."""
    return Console(markup=False, emoji=False, **options)


def fitted_console(**options: Any) -> Console:
    """A ``console`` that fits what it writes to: a terminal's own width (tables wrap, a value is never cropped), or,
    piped or to a file, the fixed ``PIPED_WIDTH`` layout (rich's guess of 80 columns, or a width forced to 120 and
    then cut, read worse)."""
    probe = console(**options)
    return probe if probe.is_terminal else console(width=PIPED_WIDTH, **options)


def link_url(url: object) -> str | None:
    """``url`` fit for an ``href`` or a Markdown link: an http(s) URL with every other character percent-encoded (a
    space, quote, bracket or control can end neither the link nor the attribute); None for anything else
    (``javascript:``, a relative path, not text)."""
    if not isinstance(url, str) or not url.lower().startswith(("https://", "http://")):
        return None
    return quote(url, safe=_URL_SAFE)


def html_link(html: str, url: str | None = None) -> str:
    """``html`` (already escaped) as a link to ``url`` when it has one, else unchanged."""
    href = link_url(url)
    return f'<a href="{escape(href)}">{html}</a>' if href else html


def md_link(text: str, url: str | None = None) -> str:
    """``text`` as a Markdown code span, a link to ``url`` when it has one."""
    href = link_url(url)
    return f"[{md_code(text)}](<{href}>)" if href else md_code(text)
