"""The mapping report (#17 item 3): what an adapter found and skipped, as data and as text."""

from __future__ import annotations

import json

from tests.conftest import SHARED_DATA
from tracescore.adapters.mapping import MappingConfig
from tracescore.platforms.inspect import inspect_record, render_report
from tracescore.platforms.langfuse.adapter import langfuse_adapter

LANGFUSE = SHARED_DATA / "langfuse_traces"


def test_report_of_a_search_agent_shows_the_search_and_its_hits() -> None:
    report = inspect_record(json.loads((LANGFUSE / "agno-2025-06-11.json").read_text()), "langfuse")
    assert report.question == "What is currently trending on Twitter?"
    assert report.searches == [
        {
            "tool": "duckduckgo_search",
            "query": "currently trending on Twitter",
            "hits": 5,
            "urls": [
                "https://twitter.com/explore/tabs/trending/",
                "https://trends24.in/united-states/",
                "https://getdaytrends.com/top/tweeted/day/",
            ],
        }
    ]
    assert report.skipped == [] and report.hints == []
    text = render_report(report)
    assert "duckduckgo_search 'currently trending on Twitter': 5 hits" in text


def test_report_names_the_skipped_tool_calls_and_how_to_map_them() -> None:
    data = json.loads((LANGFUSE / "openai-agents-2025-09-30.json").read_text())
    report = inspect_record(data, "langfuse")
    assert report.searches == []
    assert [n.record.split(" (")[0] for n in report.skipped] == ["TOOL 'get_weather'"]
    assert any("search_tools" in h for h in report.hints)
    text = render_report(report)
    assert "skipped:" in text and "get_weather" in text
    # following the hint maps the tool: the report then shows it as a search (its output is text: a blind spot)
    remapped = inspect_record(data, langfuse_adapter(MappingConfig(search_tools=["get_weather"])))
    assert [s["tool"] for s in remapped.searches] == ["get_weather"]
    assert [b.tool for b in remapped.blind_spots] == ["get_weather"]
    assert "blind spot (search)" in render_report(remapped)


def test_report_of_a_record_that_cannot_be_mapped_says_why() -> None:
    report = inspect_record({"not": "a trace"}, "langfuse")
    assert report.error is not None and "observations" in report.error
    assert render_report(report).startswith("could not map this record:")
