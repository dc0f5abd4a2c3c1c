"""#31 item 2 in the renders: a line's ``trace_url`` makes its trace id an OSC 8 hyperlink in a terminal (plain text
in a pipe), a link in Markdown and HTML; a hostile URL can break neither the link nor the page."""

from __future__ import annotations

import io
import re

from rich.console import Console

from tracescore.report.render.html import render_html
from tracescore.report.render.markdown import render_markdown
from tracescore.report.render.terminal import render_report_terminal
from tracescore.report.safe import link_url
from tracescore.report.summary import build_report

URL = "https://cloud.langfuse.com/project/p1/traces/t-1"


def _lines(url: str = URL) -> list[dict]:  # type: ignore[type-arg]
    failing = {"diagnosis": "retrieval_fail/right", "answer.correct": True}
    return [
        {"trace_id": "t-1", "scores": failing, "missing": {}, "errors": [], "trace_url": url},
        {"trace_id": "t-2", "scores": failing, "missing": {}, "errors": []},  # from a file: no link
    ]


def _terminal(lines: list[dict], *, terminal: bool) -> str:  # type: ignore[type-arg]
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=terminal, width=200, markup=False, emoji=False)
    render_report_terminal(build_report(lines), console)
    return buffer.getvalue()


def test_a_terminal_gets_osc8_links_and_a_pipe_plain_ids() -> None:
    shown = _terminal(_lines(), terminal=True)
    assert "\x1b]8;id=" in shown and f";{URL}\x1b\\t-1\x1b]8;;\x1b\\" in shown
    assert shown.count("\x1b]8;") == 2 * 2  # t-1 opened and closed, in its cell and in the work queue; t-2 never
    piped = _terminal(_lines(), terminal=False)
    assert "\x1b" not in piped and "t-1" in piped and URL not in piped


def test_markdown_and_html_link_the_ids_that_have_a_url() -> None:
    report = build_report(_lines())
    markdown = render_markdown(report)
    assert markdown.count(f"[`t-1`](<{URL}>)") == 2 and "[`t-2`]" not in markdown and "`t-2`" in markdown
    html = render_html(report)
    assert f'<a href="{URL}"><code>t-1</code></a>' in html and f'<a href="{URL}">t-1</a>' in html
    assert "<code>t-2</code>" in html and 'href="' + URL + '"><code>t-2' not in html


def test_a_hostile_url_breaks_no_link_and_no_page() -> None:
    hostile = 'https://x.example/t/1"><script>alert(1)</script>) [a](b)\x1b]8;;evil\x07'
    report = build_report(_lines(hostile))
    html = render_html(report)
    assert "<script" not in html
    hrefs = re.findall(r'href="([^"]*)"', html)
    assert len(hrefs) == 2 and all(re.fullmatch(r"https://x\.example/t/1[!-~]+", h) for h in hrefs)
    assert all(not set(h) & set("<>\"'() \x1b\x07") for h in hrefs)
    markdown = render_markdown(report)
    assert "<script>" not in markdown and ")<" not in markdown and "\x1b" not in markdown
    assert "\x07" not in _terminal(_lines(hostile), terminal=True)
    for scheme in ("javascript:alert(1)", "data:text/html,x", "/relative", ""):
        assert link_url(scheme) is None
        assert "href" not in render_html(build_report(_lines(scheme))).split('<ul id="queue">')[1]
