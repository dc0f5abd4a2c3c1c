"""Trace ids, group names and reasons are user data: no value can crash a report, drive the terminal, inject markup or
HTML, break a Markdown table or make the JUnit file invalid XML (each case here did one of these before)."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.report.test_gate import SAMPLES
from tracescore.cli import main
from tracescore.report.safe import md_code, md_text, visible

HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "[/p]",
    "[link=https://evil.example]click[/link]",
    "x`<script>alert(1)</script>",
    "a\rb | c",
    "esc\x1b[31mRED\x1b[0m",
    "\x1b]0;pwned\x07",
    "nul\x00bell\x07",
    "rtl\u202eevil",
    "line\u2028break",
    ":thumbs_up:",
    "]]>&amp;",
]


def _lines() -> list[dict[str, Any]]:
    out = []
    for i, text in enumerate(HOSTILE):
        out.append({
            "trace_id": f"id-{i}-{text}",
            "scores": {"retrieval.recall_at_5": 0.0, "answer.correct": i % 2 == 0, "citation.fabricated_count": 1.0,
                       "citation.unfetched_rate": 0.0, "diagnosis": "retrieval_fail/wrong"},
            "missing": {"answer.token_f1": f"reason {text}"},
            "errors": [],
            "metadata": {"provider": text, "case_id": f"case-{i}-{text}"},
        })  # fmt: skip
    return out


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in _lines()))
    return path


_RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f\u202e\u2028]")
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


def _outside_code(markdown: str) -> str:
    """The Markdown with its code spans removed (their content is shown literally, never read as HTML)."""
    return _CODE_SPAN.sub("", markdown)


def test_the_terminal_report_shows_every_value_and_sends_no_control_character(tmp_path: Path) -> None:
    path = _write(tmp_path)
    for extra in ([], ["--group-by", "metadata.provider"]):
        result = CliRunner().invoke(main, ["report", str(path), *extra], catch_exceptions=False)
        assert result.exit_code == 0, result.output
        assert not _RAW.search(result.output.replace("\n", "").replace("\r", "")), repr(result.output[:400])
        assert "\r" not in result.output
        assert "[/p]" in result.output and "\\x1b[31mRED" in result.output and "rtl\\u202eevil" in result.output


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += [name for name, _ in attrs]


def test_markdown_html_and_json_reports_carry_no_injected_markup(tmp_path: Path) -> None:
    path = _write(tmp_path)
    md, page = tmp_path / "r.md", tmp_path / "r.html"
    for fmt, out in (("markdown", md), ("html", page)):
        result = CliRunner().invoke(main, ["report", str(path), "--group-by", "metadata.provider", "--format", fmt,
                                           "--out", str(out)])  # fmt: skip
        assert result.exit_code == 0, result.output
    text = md.read_text()
    assert "\r" not in text and "\x1b" not in text
    assert "<img" not in _outside_code(text) and "<script" not in _outside_code(text)
    tables = re.findall(r"(?:^\|.*\n)+", text, re.M)
    assert len(tables) >= 3
    for table in tables:  # every row of a table keeps the header's column count
        widths = {len(re.findall(r"(?<!\\)\|", row)) for row in table.splitlines()}
        assert len(widths) == 1, table
    assert "``x`<script>alert(1)</script>`` " not in text  # the backtick cannot close the span
    assert md_code("x`<script>") == "``x`<script>``"
    parser = _Tags()
    parser.feed(page.read_text())
    assert "img" not in parser.tags and "script" not in parser.tags and "onerror" not in parser.attrs
    as_json = CliRunner().invoke(main, ["report", str(path), "--format", "json"])
    assert as_json.exit_code == 0 and json.loads(as_json.output)


def test_the_gate_junit_file_is_valid_xml_and_its_markdown_escapes_the_cases(tmp_path: Path) -> None:
    path = _write(tmp_path)
    junit, md = tmp_path / "gate.xml", tmp_path / "gate.md"
    result = CliRunner().invoke(main, ["gate", str(path), "--junit", str(junit), "--markdown", str(md)])
    assert result.exit_code == 1, result.output  # fabricated URLs: the rule fails and lists every case
    root = ET.parse(junit).getroot()
    failures = " ".join(f.text or "" for f in root.iter("failure"))
    assert "esc\\x1b[31mRED" in failures and "nul\\x00bell\\x07" in failures
    text = md.read_text()
    assert "<img" not in _outside_code(text) and "\x1b" not in text and "\x00" not in text


def test_a_store_path_with_brackets_does_not_crash_score(tmp_path: Path) -> None:
    folder = tmp_path / "runs[/x]"
    folder.mkdir(parents=True)
    result = CliRunner().invoke(main, ["score", str(SAMPLES), "--store", str(folder / "s.db"), "--no-judge"])
    assert result.exit_code == 0, result.output
    assert "stored in" in result.output and "runs[/x]/s.db" in result.output


def test_the_escapes_themselves() -> None:
    assert visible("a\x1bb\u202ec\n") == "a\\x1bb\\u202ec\\n" and visible("plain é ✓") == "plain é ✓"
    assert md_text("<b>|&") == "&lt;b&gt;\\|&amp;"
    assert md_code("``a``") == "``` ``a`` ```" and md_code("plain") == "`plain`"
