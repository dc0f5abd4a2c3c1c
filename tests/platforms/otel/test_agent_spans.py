"""#50 items 2-5 on small inputs: result lists as other search tools print them, tools named by ``tool.name``,
page tools that find nothing, span files of a shape the reader does not know, and ``inspect`` on them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracescore.adapters.browser import markdown_hits, read_page
from tracescore.adapters.mapping import MappingConfig
from tracescore.cli import main
from tracescore.platforms.otel.adapter import trace_from_spans
from tracescore.platforms.otel.spans import group_spans, read_spans
from tracescore.trace import FetchStep, Trace

# smolagents' GoogleSearchTool output (default_tools.py): numbered from 0, under "## Search Results"
GOOGLE_TOOL = """## Search Results
0. [Kestrel Bridge - Wikipedia](https://en.example.org/wiki/Kestrel_Bridge)
Date published: 2021-03-03
Source: Wikipedia
The Kestrel Bridge is a steel arch bridge.

1. [Bridges [of] the Wend](https://wend.example/bridges)
A list of the valley's bridges,
with their years."""


def test_a_plain_markdown_result_list_is_ranked_hits_by_place() -> None:
    hits = markdown_hits(GOOGLE_TOOL)
    assert hits is not None
    assert [(h.rank, h.url, h.title) for h in hits] == [
        (1, "https://en.example.org/wiki/Kestrel_Bridge", "Kestrel Bridge - Wikipedia"),
        (2, "https://wend.example/bridges", "Bridges [of] the Wend"),
    ]
    assert hits[0].metadata == {"date": "2021-03-03", "source": "Wikipedia"}
    assert hits[1].snippet == "A list of the valley's bridges, with their years."


def test_text_without_a_result_list_is_not_read_and_no_results_is_zero_hits() -> None:
    assert markdown_hits("The bridge is closed this weekend; see https://wend.example for detours.") is None
    assert markdown_hits("No results found for 'kestrel'. Try with a more general query.") == []


def test_a_browser_page_header_is_not_page_text() -> None:
    page = read_page("Web archive for url https://a.example, snapshot taken at date 20200101:\n"
                     "Address: https://web.archive.example/2020/https://a.example\nTitle: A\n"
                     "Viewport position: Showing page 2 of 3.\n=======================\nthe viewport text")  # fmt: skip
    assert page is not None
    assert (page.address, page.page, page.pages, page.text) == (
        "https://web.archive.example/2020/https://a.example", 2, 3, "the viewport text")
    assert read_page("Address: nowhere, no rule below") is None


def _span(sid: str, name: str, attributes: dict[str, Any], parent: str | None = "a") -> dict[str, Any]:
    return {"trace_id": "t1", "span_id": sid, "parent_id": parent, "name": name, "start_time": int(sid[1:] or 0),
            "attributes": attributes}  # fmt: skip


def _trace(spans: list[dict[str, Any]], mapping: MappingConfig | None = None) -> Trace:
    return trace_from_spans(next(group_spans(read_spans(spans))).payload, mapping)


def _tool(sid: str, span_name: str, tool: str, kwargs: dict[str, Any], output: str) -> dict[str, Any]:
    inputs = json.dumps({"args": [], "sanitize_inputs_outputs": True, "kwargs": kwargs})
    return _span(sid, span_name, {"openinference.span.kind": "TOOL", "tool.name": tool, "input.value": inputs,
                                  "output.value": output})  # fmt: skip


def _page(address: str, page: int, text: str) -> str:
    return f"Address: {address}\nViewport position: Showing page {page} of 3.\n=======================\n{text}"


AGENT = _span("a", "CodeAgent.run", {"openinference.span.kind": "AGENT", "input.value": json.dumps({"task": "Q?"}),
                                     "output.value": "A."}, parent=None)  # fmt: skip


def test_a_tool_is_classified_by_tool_name_not_by_its_span_name() -> None:
    """smolagents names the span after the class (``ArchiveSearchTool``): ``tool.name`` decides, and
    ``find_archived_url`` is a fetch by default; a ``[mapping]`` that names it a search is obeyed."""
    archive = "https://web.archive.example/2020/https://a.example"
    output = f"Web archive for url https://a.example, snapshot taken at date 20200101:\n{_page(archive, 1, 'old')}"
    spans = [AGENT, _tool("s1", "ArchiveSearchTool", "find_archived_url", {"url": "https://a.example"}, output)]
    trace = _trace(spans)
    assert [(s.kind, s.tool) for s in trace.steps] == [("fetch", "find_archived_url")]
    assert isinstance(trace.steps[0], FetchStep) and (trace.steps[0].url, trace.steps[0].text) == (archive, "old")
    as_search = _trace(spans, MappingConfig(search_tools=["find_archived_url"]))
    assert [s.kind for s in as_search.steps] == ["search"]


def test_page_tools_extend_the_open_page_and_a_failed_find_shows_nothing() -> None:
    url = "https://a.example/long"
    spans = [
        AGENT,
        _tool("s1", "VisitTool", "visit_page", {"url": url}, _page(url, 1, "one")),
        _tool("s2", "PageDownTool", "page_down", {}, _page(url, 2, "two")),
        _tool("s3", "FinderTool", "find_on_page_ctrl_f", {"search_string": "x"},
              _page(url, 2, "The search string 'x' was not found on this page.")),
        _tool("s4", "PageUpTool", "page_up", {}, _page(url, 1, "one")),  # read already: not again
        _tool("s5", "FindNextTool", "find_next", {}, _page(url, 3, "three")),
        _tool("s6", "PageDownTool", "page_down", {}, _page("https://never.example", 2, "elsewhere")),
    ]
    trace = _trace(spans)
    assert [(s.kind, s.tool) for s in trace.steps] == [("fetch", "visit_page")]
    assert isinstance(trace.steps[0], FetchStep) and trace.steps[0].text == "one\ntwo\nthree"
    assert (trace.question, trace.answer) == ("Q?", "A.")


# -- item 5: a span file of a shape the reader does not know ------------------------------------------------------

NESTED = [{"trace_id": "t1", "span_id": "s1", "name": "agent", "span_attributes": {"input.value": "Q?"},
           "child_spans": [{"trace_id": "t1", "span_id": "s2", "name": "web_search",
                            "span_attributes": {"tool.name": "web_search"}}]}]  # fmt: skip


@pytest.mark.parametrize("document", [NESTED, {"spans": NESTED}])
def test_nested_child_spans_are_an_input_error_naming_what_was_expected(tmp_path: Path, document: Any) -> None:
    path = tmp_path / "vendor.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    got = CliRunner().invoke(main, ["score", str(path), "--source", "otel", "--no-judge", "--out",
                                    str(tmp_path / "r.jsonl"), "--store", str(tmp_path / "s.db")])  # fmt: skip
    assert got.exit_code == 2, got.output
    assert "its records have no 'attributes'" in got.output and "nested 'child_spans' are not read" in got.output
    assert "expected OTLP JSON ('resourceSpans[].scopeSpans[].spans[]') or a JSON list of flat spans" in got.output
    assert not (tmp_path / "r.jsonl").exists()  # no empty trace scored


def test_a_file_that_is_no_span_file_at_all_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"traces": []}), encoding="utf-8")
    got = CliRunner().invoke(main, ["score", str(path), "--source", "otel", "--no-judge", "--out",
                                    str(tmp_path / "r.jsonl"), "--store", str(tmp_path / "s.db")])  # fmt: skip
    assert got.exit_code == 2 and "not a span file: expected OTLP JSON" in got.output


@pytest.mark.parametrize("document", [NESTED, {"trace_id": "t1", "spans": NESTED[0]["child_spans"]}])
def test_inspect_on_an_unknown_shape_names_it_without_a_traceback(tmp_path: Path, document: Any) -> None:
    path = tmp_path / "vendor.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    got = CliRunner().invoke(main, ["inspect", str(path), "--source", "otel"])
    assert got.exit_code == 1, got.output
    assert "could not map this record: not a span file: its records have no 'attributes'" in got.output
    assert "Traceback" not in got.output and got.exception is None or isinstance(got.exception, SystemExit)


def test_inspect_reads_the_tracescore_toml_of_the_working_directory(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    spans = [AGENT, _tool("s1", "Lookup", "kb_lookup", {"query": "kestrel"}, '[{"url": "https://kb.example/1"}]')]
    (tmp_path / "spans.json").write_text(json.dumps(spans), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    before = CliRunner().invoke(main, ["inspect", "spans.json", "--source", "otel"])
    assert before.exit_code == 0 and "searches: 0" in before.output
    (tmp_path / "tracescore.toml").write_text('[mapping]\nsearch_tools = ["kb_lookup"]\n', encoding="utf-8")
    after = CliRunner().invoke(main, ["inspect", "spans.json", "--source", "otel"])
    assert after.exit_code == 0, after.output
    assert "searches: 1" in after.output and "kb_lookup 'kestrel': 1 hits https://kb.example/1" in after.output
