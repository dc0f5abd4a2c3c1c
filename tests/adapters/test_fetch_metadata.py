"""A fetch tool's own metadata reaches the trace on every platform (#43 item 3): the fields a fetch tool returns beside
the page text (Firecrawl's ``metadata``, Jina's ``publishedTime``, Exa's ``publishedDate``, Tavily's
``published_date``, an HTTP client's ``headers``) are kept as ``FetchStep.metadata`` by the Langfuse, LangSmith and
OTel adapters, as a JSONL fetch step keeps its ``metadata``, so the platform trace gets the ``citation.stale_rate``
(and every other deterministic score) of the same trace read from JSONL.

One agent behaviour (tests/adapters/test_platform_parity.py): a search returns A and B, the agent fetches A with the
tool below, the answer cites [1] A and [2] B. A's only date is the tool's, 2023-01-10: stale on 2025-08-22.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.adapters.test_platform_parity import ANSWER, HITS, LABELS, PAGE, A, Q, _langfuse, _langsmith, _scores
from tracescore.adapters.jsonl import trace_from_json
from tracescore.platforms.otel.adapter import trace_from_spans
from tracescore.platforms.otel.spans import group_spans, read_spans
from tracescore.scorers.stale import CITATION_STALE_RATE
from tracescore.trace import FetchStep, Trace

DATE = "2023-01-10T08:00:00Z"
HTTP_DATE = "Tue, 10 Jan 2023 08:00:00 GMT"
START = 1_755_856_800_000_000_000  # 2025-08-22T10:00:00Z in ns, the Langfuse and LangSmith traces' start

# (what the fetch tool returned, the metadata a JSONL fetch step of the same call would carry)
TOOLS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "firecrawl": ({"markdown": PAGE, "metadata": {"title": "Canberra", "sourceURL": A, "statusCode": 200,
                                                  "publishedTime": DATE}},
                  {"title": "Canberra", "sourceURL": A, "statusCode": 200, "publishedTime": DATE}),
    "jina": ({"title": "Canberra", "url": A, "content": PAGE, "publishedTime": DATE},
             {"title": "Canberra", "url": A, "publishedTime": DATE}),
    "exa": ({"url": A, "title": "Canberra", "publishedDate": DATE, "text": PAGE},
            {"url": A, "title": "Canberra", "publishedDate": DATE}),
    "tavily": ({"url": A, "raw_content": PAGE, "published_date": DATE}, {"url": A, "published_date": DATE}),
    "http": ({"url": A, "status_code": 200, "headers": {"last-modified": HTTP_DATE, "Date": "Fri, 22 Aug 2025"},
              "text": PAGE}, {"headers": {"Last-Modified": HTTP_DATE}}),
}  # fmt: skip


def _otel(fetch_output: Any) -> Trace:
    """OpenInference spans (flat, as Phoenix exports them), started when the other platforms' traces start."""

    def tool(span_id: str, name: str, offset: int, inputs: Any, output: Any) -> dict[str, Any]:
        attributes = {"openinference.span.kind": "TOOL", "tool.name": name, "input.value": json.dumps(inputs),
                      "output.value": json.dumps(output)}  # fmt: skip
        return {"trace_id": "t1", "span_id": span_id, "parent_id": "s1", "name": name, "start_time": START + offset,
                "attributes": attributes}  # fmt: skip

    root = {"openinference.span.kind": "AGENT", "input.value": Q, "output.value": ANSWER,
            "metadata": json.dumps({"labels": LABELS})}  # fmt: skip
    spans = [{"trace_id": "t1", "span_id": "s1", "name": "agent", "start_time": START, "attributes": root},
             tool("s2", "web_search", 1_000_000_000, {"query": Q}, {"results": HITS}),
             tool("s3", "fetch_url", 2_000_000_000, {"url": A}, fetch_output)]  # fmt: skip
    return trace_from_spans(next(group_spans(read_spans(spans))).payload)


def _jsonl(metadata: dict[str, Any], timestamp: str) -> Trace:
    steps = [{"kind": "search", "tool": "web_search", "query": Q, "hits": HITS},
             {"kind": "fetch", "tool": "fetch_url", "url": A, "text": PAGE, "metadata": metadata}]  # fmt: skip
    line = {"id": "t1", "timestamp": timestamp, "question": Q, "steps": steps, "answer": ANSWER, "labels": LABELS}
    return trace_from_json(json.dumps(line))


PLATFORMS = {
    "langfuse": lambda output: _langfuse(("web_search", {"results": HITS}), ("fetch_url", output)),
    "langsmith": lambda output: _langsmith(("web_search", {"results": HITS}), ("fetch_url", output)),
    "otel": _otel,
}


@pytest.mark.parametrize("tool", sorted(TOOLS))
@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_a_fetch_tools_metadata_gives_the_stale_rate_of_the_jsonl_trace(platform: str, tool: str) -> None:
    output, metadata = TOOLS[tool]
    native = PLATFORMS[platform](output)
    assert native.timestamp is not None and native.timestamp.isoformat() == "2025-08-22T10:00:00+00:00"
    fetched = native.steps[-1]
    assert isinstance(fetched, FetchStep) and fetched.text == PAGE
    assert PAGE not in json.dumps(fetched.metadata)  # the text is the step's text, not kept twice
    canonical = _jsonl(metadata, native.timestamp.isoformat())
    got, want = _scores(native), _scores(canonical)
    assert want[CITATION_STALE_RATE] == (1.0, None)  # A dated 2023-01-10 by its tool alone: stale
    assert got == want


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_a_plain_text_fetch_output_has_no_metadata(platform: str) -> None:
    native = PLATFORMS[platform](PAGE)
    assert native.steps[-1].metadata == {}  # type: ignore[union-attr]
    assert _scores(native)[CITATION_STALE_RATE][0] is None  # no date anywhere: absent, as from JSONL
