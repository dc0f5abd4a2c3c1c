"""Every platform scores a trace exactly as JSONL does: failed tool calls, tool messages and tool names.

One agent behaviour throughout: a search returns hits A and B, the agent fetches A (the outcome varies), and the answer
cites [1] A and [2] B. Each case is recorded the way Langfuse (observations), LangSmith (runs) and OpenInference
(spans) record it, adapted, scored with the deterministic scorers, and compared score by score (value and reason)
with the canonical JSONL trace of the same behaviour.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tracescore.adapters.jsonl import trace_from_json
from tracescore.adapters.mapping import MappingConfig
from tracescore.engine.pipeline import score_trace
from tracescore.engine.plan import deterministic_scorers
from tracescore.platforms.langfuse.adapter import trace_from_observations
from tracescore.platforms.langsmith.adapter import trace_from_langsmith
from tracescore.platforms.otel.adapter import trace_from_spans
from tracescore.platforms.otel.spans import group_spans, read_spans
from tracescore.trace import FetchStep, Trace

Q = "What is the capital of Australia?"
A, B = "https://a.example.org/canberra", "https://b.example.org/au"
HITS = [
    {"url": A, "title": "Canberra", "snippet": "Canberra is the capital"},
    {"url": B, "title": "Australia", "snippet": "Australia facts"},
]
ANSWER = f"The capital of Australia is Canberra [1]. It was chosen in 1908 [2].\n\n[1] {A}\n[2] {B}"
LABELS = {"required_doc_ids": [A], "expected_answer_contains": ["Canberra"]}
PAGE = "Canberra is the capital city of Australia. " * 5
FETCH_ERROR = f"Error: HTTPError('404 Client Error: Not Found for url: {A}')"


def _tool_message(name: str, content: Any, status: str = "success", call: str = "call_1") -> dict[str, Any]:
    """A LangChain ``ToolMessage`` as LangGraph's tool node returns it (langfuse_traces/langgraph-2025-08-22.json)."""
    return {
        "content": content,
        "additional_kwargs": {},
        "response_metadata": {},
        "type": "tool",
        "name": name,
        "id": None,
        "tool_call_id": call,
        "artifact": None,
        "status": status,
    }


def _serialised_tool_message(name: str, content: Any, status: str) -> dict[str, Any]:
    """The same message as LangChain's ``dumpd`` writes it (the OpenInference LangChain instrumentor's output)."""
    kwargs = {"content": content, "type": "tool", "name": name, "tool_call_id": "call_2", "status": status}
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"], "kwargs": kwargs}


def _canonical(
    *,
    search_tool: str = "web_search",
    fetch_tool: str = "fetch_url",
    hits: list[dict[str, Any]] | None = None,
    fetch_status: str | None = None,
    fetch_text: str = PAGE,
) -> Trace:
    steps = [
        {"kind": "search", "tool": search_tool, "query": Q, "hits": HITS if hits is None else hits},
        {"kind": "fetch", "tool": fetch_tool, "url": A, "text": fetch_text, "status": fetch_status},
    ]
    line = {"schema_version": "1", "id": "t1", "question": Q, "steps": steps, "answer": ANSWER, "labels": LABELS}
    return trace_from_json(json.dumps(line))


def _langfuse(search: tuple[str, Any], fetch: tuple[str, Any], tool_type: str = "TOOL") -> Trace:
    """LangChain CallbackHandler observations: the graph's root span and one observation per tool call."""
    (search_name, search_output), (fetch_name, fetch_output) = search, fetch
    root = {"id": "o1", "traceId": "t1", "type": "SPAN", "name": "LangGraph", "startTime": "2025-08-22T10:00:00Z"}
    root |= {"input": {"messages": [{"type": "human", "content": Q}]}, "output": ANSWER, "metadata": {"labels": LABELS}}
    tool = {"traceId": "t1", "type": tool_type, "parentObservationId": "o1", "level": "DEFAULT"}
    rows = [
        root,
        tool | {"id": "o2", "name": search_name, "startTime": "2025-08-22T10:00:01Z", "input": {"query": Q}}
        | {"output": search_output},
        tool | {"id": "o3", "name": fetch_name, "startTime": "2025-08-22T10:00:02Z", "input": {"url": A}}
        | {"output": fetch_output},
    ]
    return trace_from_observations({"id": "t1", "observations": rows})


def _langsmith(search: tuple[str, Any], fetch: tuple[str, Any]) -> Trace:
    """LangChain tracer runs: a tool run's outputs are ``{"output": <what the tool returned>}``, status success."""
    (search_name, search_output), (fetch_name, fetch_output) = search, fetch
    root = {"id": "r1", "trace_id": "r1", "name": "LangGraph", "run_type": "chain", "dotted_order": "1"}
    root |= {"start_time": "2025-08-22T10:00:00Z", "inputs": {"question": Q}, "outputs": {"output": ANSWER}}
    root |= {"extra": {"metadata": {"labels": LABELS}}, "status": "success"}
    tool = {"trace_id": "r1", "parent_run_id": "r1", "run_type": "tool", "status": "success", "error": None}
    runs = [
        tool | {"id": "r2", "name": search_name, "dotted_order": "1.2", "start_time": "2025-08-22T10:00:01Z"}
        | {"inputs": {"input": Q}, "outputs": {"output": search_output}},
        tool | {"id": "r3", "name": fetch_name, "dotted_order": "1.3", "start_time": "2025-08-22T10:00:02Z"}
        | {"inputs": {"input": json.dumps({"url": A}), "url": A}, "outputs": {"output": fetch_output}},
    ]
    return trace_from_langsmith({"root": root, "runs": runs, "example": None})


def _otel(search: tuple[str, Any], fetch: tuple[str, Any]) -> Trace:
    """OpenInference spans (flat, as Phoenix exports them): an AGENT root and one TOOL span per tool call."""
    (search_name, search_output), (fetch_name, fetch_output) = search, fetch

    def tool(span_id: str, name: str, start: int, inputs: Any, output: Any) -> dict[str, Any]:
        value = output if isinstance(output, str) else json.dumps(output)
        attributes = {"openinference.span.kind": "TOOL", "tool.name": name, "input.value": json.dumps(inputs)}
        attributes["output.value"] = value
        return {"trace_id": "t1", "span_id": span_id, "parent_id": "s1", "name": name, "start_time": start} | {
            "attributes": attributes
        }

    root_attributes = {"openinference.span.kind": "AGENT", "input.value": Q, "output.value": ANSWER}
    root_attributes["metadata"] = json.dumps({"labels": LABELS})
    spans = [
        {"trace_id": "t1", "span_id": "s1", "name": "LangGraph", "start_time": 1, "attributes": root_attributes},
        tool("s2", search_name, 2, {"query": Q}, search_output),
        tool("s3", fetch_name, 3, {"url": A}, fetch_output),
    ]
    record = next(group_spans(read_spans(spans)))
    return trace_from_spans(record.payload)


Platform = Callable[[tuple[str, Any], tuple[str, Any]], Trace]
PLATFORMS: dict[str, Platform] = {"langfuse": _langfuse, "langsmith": _langsmith, "otel": _otel}


def _scores(trace: Trace) -> dict[str, tuple[Any, str | None]]:
    return {name: (s.value, s.reason) for name, s in score_trace(trace, deterministic_scorers()).scores.items()}


def _assert_same_scores(native: Trace, canonical: Trace) -> None:
    assert _scores(native) == _scores(canonical)


# 1. A LangChain tool with handle_tool_error=True returns ToolMessage(status="error"); its run is not marked failed.


@pytest.mark.parametrize("platform", ["langfuse", "langsmith"])
def test_a_tool_message_with_status_error_is_a_failed_fetch(platform: str) -> None:
    search = ("web_search", _tool_message("web_search", HITS))
    fetch = ("fetch_url", _tool_message("fetch_url", FETCH_ERROR, status="error", call="call_2"))
    native = PLATFORMS[platform](search, fetch)
    fetched = native.steps[-1]
    assert isinstance(fetched, FetchStep) and fetched.url == A and fetched.status == "error"
    _assert_same_scores(native, _canonical(fetch_status="error", fetch_text=FETCH_ERROR))


def test_a_tool_message_with_status_error_is_a_failed_fetch_on_langfuse_spans() -> None:
    """The real LangGraph shape: a SPAN (not a TOOL observation) whose output is the tool message."""
    search = ("Web-Search", _tool_message("Web-Search", HITS))
    fetch = ("fetch_url", _tool_message("fetch_url", FETCH_ERROR, status="error", call="call_2"))
    native = _langfuse(search, fetch, tool_type="SPAN")
    assert [s.kind for s in native.steps] == ["search", "fetch"]
    _assert_same_scores(native, _canonical(search_tool="Web-Search", fetch_status="error", fetch_text=FETCH_ERROR))


@pytest.mark.parametrize("platform", ["langfuse", "langsmith"])
def test_a_search_tool_message_with_status_error_is_a_failed_search_not_a_blind_spot(platform: str) -> None:
    search = ("web_search", _tool_message("web_search", "Error: TimeoutError('search backend')", status="error"))
    native = PLATFORMS[platform](search, ("fetch_url", PAGE))
    assert native.blind_spots == [] and native.searches[0].hits == []
    _assert_same_scores(native, _canonical(hits=[]))


@pytest.mark.parametrize("platform", ["langfuse", "langsmith"])
def test_hits_in_a_search_tool_message_with_status_error_are_not_read(platform: str) -> None:
    search = ("web_search", _tool_message("web_search", json.dumps(HITS), status="error"))
    native = PLATFORMS[platform](search, ("fetch_url", PAGE))
    assert native.searches[0].hits == []
    _assert_same_scores(native, _canonical(hits=[]))


def test_tool_result_unwraps_a_tool_message_and_keeps_its_error() -> None:
    from tracescore.adapters.hits import tool_result

    assert tool_result(_tool_message("fetch_url", PAGE)) == (PAGE, None)
    output, error = tool_result({"output": _tool_message("fetch_url", FETCH_ERROR, status="error")})
    assert output == FETCH_ERROR and error is not None and "404 Client Error" in error
    output, error = tool_result(json.dumps({"output": _serialised_tool_message("f", "Error: boom", "error")}))
    assert output == "Error: boom" and error is not None and "boom" in error
    assert tool_result({"content": "x", "status": "error"}) == ({"content": "x", "status": "error"}, None)


# 3. A fetch tool output with a non-empty `error` field (no status) is a failed fetch on every platform.


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_a_fetch_output_with_an_error_field_is_a_failed_fetch(platform: str) -> None:
    failed = {"url": A, "error": "HTTPError: 404 Client Error: Not Found", "content": ""}
    native = PLATFORMS[platform](("web_search", {"results": HITS}), ("fetch_url", failed))
    fetched = native.steps[-1]
    assert isinstance(fetched, FetchStep) and fetched.status == "error"
    _assert_same_scores(native, _canonical(fetch_status="error", fetch_text=""))
    for empty in (None, "", {}):  # an empty error field is no failure
        read = PLATFORMS[platform](("web_search", {"results": HITS}), ("fetch_url", failed | {"error": empty}))
        assert read.steps[-1].status is None  # type: ignore[union-attr]


# 4. The default tool names cover widely used LangChain, smolagents and Firecrawl tools.

SEARCH_NAMES = ["google_serper", "duckduckgo_results_json", "wikipedia", "arxiv"]
FETCH_NAMES = ["requests_get", "visit_webpage", "navigate_browser", "firecrawl_scrape"]


@pytest.mark.parametrize("name", SEARCH_NAMES)
def test_common_search_tool_names_are_searches(name: str) -> None:
    assert MappingConfig().kind_of(name, "TOOL") == "search"
    native = _langfuse((name, json.dumps(HITS)), ("fetch_url", PAGE))
    _assert_same_scores(native, _canonical(search_tool=name))


@pytest.mark.parametrize("name", FETCH_NAMES)
def test_common_fetch_tool_names_are_fetches(name: str) -> None:
    assert MappingConfig().kind_of(name, "tool") == "fetch"
    native = _langsmith(("tavily_search_results_json", HITS), (name, PAGE))
    _assert_same_scores(native, _canonical(search_tool="tavily_search_results_json", fetch_tool=name))


def test_a_wikipedia_search_with_free_text_output_is_a_blind_spot() -> None:
    """LangChain's WikipediaQueryRun returns "Page: …\\nSummary: …" text: no hits to read, so a blind spot."""
    text = "Page: Canberra\nSummary: Canberra is the capital city of Australia."
    native = _langfuse(("wikipedia", text), ("fetch_url", PAGE))
    assert [b.tool for b in native.blind_spots] == ["wikipedia"]
    scores = _scores(native)
    assert scores["citation.fabricated_count"][0] is None and "wikipedia" in str(scores["citation.fabricated_count"][1])


# 5. OpenInference spans carry LangChain tool messages in output.value: unwrapped as Langfuse and LangSmith do.


def test_otel_search_output_that_is_a_tool_message_gives_its_hits() -> None:
    native = _otel(("web_search", _tool_message("web_search", json.dumps(HITS))), ("fetch_url", PAGE))
    assert native.blind_spots == [] and len(native.searches[0].hits) == 2
    _assert_same_scores(native, _canonical())


def test_otel_tool_messages_in_the_serialised_form_give_hits_and_a_failed_fetch() -> None:
    search = ("web_search", {"output": _serialised_tool_message("web_search", json.dumps(HITS), "success")})
    fetch = ("fetch_url", {"output": _serialised_tool_message("fetch_url", FETCH_ERROR, "error")})
    native = _otel(search, fetch)
    _assert_same_scores(native, _canonical(fetch_status="error", fetch_text=FETCH_ERROR))


# 6. Anthropic's server tool web_fetch (server_tool_use "web_fetch" + web_fetch_tool_result) is a fetch step.


def _anthropic_message(fetch_result: dict[str, Any]) -> dict[str, Any]:
    """A Messages API response that ran the server tools web_search and web_fetch (anthropic SDK beta types)."""
    results = [{"type": "web_search_result", "url": h["url"], "title": h["title"]} for h in HITS]
    content = [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": Q}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": results},
        {"type": "server_tool_use", "id": "srvtoolu_2", "name": "web_fetch", "input": {"url": A}},
        {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_2", "content": fetch_result},
        {"type": "text", "text": ANSWER},
    ]
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": content}


_FETCHED = {
    "type": "web_fetch_result",
    "url": A,
    "retrieved_at": "2025-09-10T10:00:00Z",
    "content": {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": PAGE}, "title": "C"},
}
_FETCH_FAILED = {"type": "web_fetch_tool_result_error", "error_code": "url_not_accessible"}


@pytest.mark.parametrize(("result", "status"), [(_FETCHED, None), (_FETCH_FAILED, "error")])
def test_anthropic_web_fetch_is_a_fetch_step(result: dict[str, Any], status: str | None) -> None:
    request = {
        "messages": [{"role": "user", "content": Q}],
        "tools": [
            {"type": "web_search_20250305", "name": "web_search"},
            {"type": "web_fetch_20250910", "name": "web_fetch"},
        ],
    }
    root = {"id": "o1", "traceId": "t1", "type": "SPAN", "name": "agent", "startTime": "2025-09-10T10:00:00Z"}
    root |= {"input": Q, "output": ANSWER, "metadata": {"labels": LABELS}}
    generation = {"id": "o2", "traceId": "t1", "type": "GENERATION", "name": "anthropic.messages.create"}
    generation |= {"parentObservationId": "o1", "startTime": "2025-09-10T10:00:01Z", "input": request}
    generation |= {"output": _anthropic_message(result)}
    native = trace_from_observations({"id": "t1", "observations": [root, generation]})
    fetched = [s for s in native.steps if isinstance(s, FetchStep)]
    assert [(f.tool, f.url, f.status) for f in fetched] == [("web_fetch", A, status)]
    text = PAGE if status is None else ""
    canonical = _canonical(fetch_tool="web_fetch", fetch_status=status, fetch_text=text)
    _assert_same_scores(native, canonical)


# 7. LangChain's create_retriever_tool (LangGraph agentic RAG): the tool call's output is the documents' text joined
#    into one string; the retriever call nested in it holds the Documents. One search step, its hits the documents.

DOCS = [
    {"page_content": h["snippet"], "metadata": {"source": h["url"], "title": h["title"]}, "type": "Document"}
    for h in HITS
]
JOINED = "\n\n".join(d["page_content"] for d in DOCS)
RETRIEVER_TOOL = "retrieve_blog_posts"


def _retriever_tool_langsmith(tool_output: Any, documents: Any) -> Trace:
    """The tool run (outputs {"output": joined text}) and its child retriever run (outputs {"documents": [...]})."""
    root = {"id": "r1", "trace_id": "r1", "name": "LangGraph", "run_type": "chain", "dotted_order": "1"}
    root |= {"start_time": "2025-08-22T10:00:00Z", "inputs": {"question": Q}, "outputs": {"output": ANSWER}}
    root |= {"extra": {"metadata": {"labels": LABELS}}}
    run = {"trace_id": "r1", "status": "success", "error": None}
    runs = [
        run | {"id": "r2", "parent_run_id": "r1", "name": RETRIEVER_TOOL, "run_type": "tool", "dotted_order": "1.2"}
        | {"start_time": "2025-08-22T10:00:01Z", "inputs": {"input": Q}, "outputs": {"output": tool_output}},
        run | {"id": "r3", "parent_run_id": "r2", "name": "VectorStoreRetriever", "run_type": "retriever"}
        | {"dotted_order": "1.2.3", "start_time": "2025-08-22T10:00:01.5Z", "inputs": {"query": Q}}
        | {"outputs": {"documents": documents}},
        run | {"id": "r4", "parent_run_id": "r1", "name": "fetch_url", "run_type": "tool", "dotted_order": "1.4"}
        | {"start_time": "2025-08-22T10:00:02Z", "inputs": {"url": A}, "outputs": {"output": PAGE}},
    ]
    return trace_from_langsmith({"root": root, "runs": runs, "example": None})


def _retriever_tool_langfuse(tool_output: Any, documents: Any) -> Trace:
    """LangChain CallbackHandler: a TOOL observation with a RETRIEVER observation below it."""
    root = {"id": "o1", "traceId": "t1", "type": "SPAN", "name": "LangGraph", "startTime": "2025-08-22T10:00:00Z"}
    root |= {"input": {"question": Q}, "output": ANSWER, "metadata": {"labels": LABELS}}
    row = {"traceId": "t1", "level": "DEFAULT"}
    rows = [
        root,
        row | {"id": "o2", "type": "TOOL", "name": RETRIEVER_TOOL, "parentObservationId": "o1", "input": Q}
        | {"startTime": "2025-08-22T10:00:01Z", "output": tool_output},
        row | {"id": "o3", "type": "RETRIEVER", "name": "VectorStoreRetriever", "parentObservationId": "o2"}
        | {"startTime": "2025-08-22T10:00:01.5Z", "input": Q, "output": documents},
        row | {"id": "o4", "type": "TOOL", "name": "fetch_url", "parentObservationId": "o1", "input": {"url": A}}
        | {"startTime": "2025-08-22T10:00:02Z", "output": PAGE},
    ]
    return trace_from_observations({"id": "t1", "observations": rows})


def _retriever_tool_otel(tool_output: Any, documents: Any) -> Trace:
    """OpenInference LangChain instrumentor: a TOOL span with a RETRIEVER span (retrieval.documents.N.*) below it."""
    retriever: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": Q}
    for i, doc in enumerate(documents or []):
        retriever[f"retrieval.documents.{i}.document.content"] = doc["page_content"]
        retriever[f"retrieval.documents.{i}.document.metadata"] = json.dumps(doc["metadata"])
    root = {"openinference.span.kind": "CHAIN", "input.value": Q, "output.value": ANSWER}
    root["metadata"] = json.dumps({"labels": LABELS})
    tool = {"openinference.span.kind": "TOOL", "tool.name": RETRIEVER_TOOL, "input.value": Q}
    tool["output.value"] = tool_output
    fetch = {"openinference.span.kind": "TOOL", "tool.name": "fetch_url", "input.value": json.dumps({"url": A})}
    fetch["output.value"] = PAGE
    span = {"trace_id": "t1"}
    spans = [
        span | {"span_id": "s1", "name": "LangGraph", "start_time": 1, "attributes": root},
        span | {"span_id": "s2", "parent_id": "s1", "name": RETRIEVER_TOOL, "start_time": 2, "attributes": tool},
        span | {"span_id": "s3", "parent_id": "s2", "name": "VectorStoreRetriever", "start_time": 3}
        | {"attributes": retriever},
        span | {"span_id": "s4", "parent_id": "s1", "name": "fetch_url", "start_time": 4, "attributes": fetch},
    ]
    return trace_from_spans(next(group_spans(read_spans(spans))).payload)


RETRIEVER_TOOLS: dict[str, Callable[[Any, Any], Trace]] = {
    "langfuse": _retriever_tool_langfuse,
    "langsmith": _retriever_tool_langsmith,
    "otel": _retriever_tool_otel,
}


@pytest.mark.parametrize("platform", sorted(RETRIEVER_TOOLS))
def test_a_retriever_tool_is_one_search_with_the_documents_of_its_retriever(platform: str) -> None:
    native = RETRIEVER_TOOLS[platform](JOINED, DOCS)
    assert native.blind_spots == []
    assert [(s.kind, s.tool) for s in native.steps] == [("search", RETRIEVER_TOOL), ("fetch", "fetch_url")]
    assert [h.url for h in native.searches[0].hits] == [A, B]
    _assert_same_scores(native, _canonical(search_tool=RETRIEVER_TOOL))


@pytest.mark.parametrize("platform", sorted(RETRIEVER_TOOLS))
def test_a_retriever_tool_whose_retriever_recorded_nothing_is_one_blind_spot(platform: str) -> None:
    native = RETRIEVER_TOOLS[platform](JOINED, None)
    assert [(s.kind, s.tool) for s in native.steps] == [("search", RETRIEVER_TOOL), ("fetch", "fetch_url")]
    assert [b.tool for b in native.blind_spots] == [RETRIEVER_TOOL]
    assert _scores(native)["citation.fabricated_count"][0] is None


@pytest.mark.parametrize("platform", sorted(RETRIEVER_TOOLS))
def test_a_search_tool_with_readable_hits_is_not_counted_again_through_its_retriever(platform: str) -> None:
    native = RETRIEVER_TOOLS[platform](json.dumps(HITS), DOCS)
    assert [s.kind for s in native.steps] == ["search", "fetch"] and native.blind_spots == []
    _assert_same_scores(native, _canonical(search_tool=RETRIEVER_TOOL))


def test_a_retriever_tool_shows_no_blind_spot_in_inspect() -> None:
    from tracescore.adapters.notes import collect_notes

    with collect_notes() as notes:
        _retriever_tool_langfuse(JOINED, DOCS)
    assert not [n for n in notes if n.decision == "blind spot"]
    assert any("nested in it ('VectorStoreRetriever')" in n.reason for n in notes)


def test_nested_calls_are_planned_once_and_a_parent_cycle_ends() -> None:
    from tracescore.adapters.nesting import plan_steps

    plan = plan_steps([("a", None, None), ("b", "a", "search"), ("c", "b", "search"), ("d", "c", "search")])
    assert plan.inside == {"c", "d"} and plan.nested == {"b": ["c"]}
    cycle = plan_steps([("x", "y", "search"), ("y", "x", "search")])
    assert cycle.inside == {"x", "y"}


# 8. Search outputs that are not "0 hits": a list of items that identify nothing is unread (a blind spot), and an
#    output with a non-empty `error` field is a failed search (its results not read), as a ToolMessage error is.


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_a_search_list_of_plain_text_is_a_blind_spot_not_zero_hits(platform: str) -> None:
    texts = [f"Canberra is the capital. See {A}", "Australia facts"]
    native = PLATFORMS[platform](("web_search", {"results": texts}), ("fetch_url", PAGE))
    assert native.searches[0].hits == [] and [b.tool for b in native.blind_spots] == ["web_search"]
    assert "identify nothing" in native.blind_spots[0].reason
    fabricated = _scores(native)["citation.fabricated_count"]
    assert fabricated[0] is None and "web_search" in str(fabricated[1])


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_a_search_list_of_empty_items_is_zero_hits(platform: str) -> None:
    native = PLATFORMS[platform](("web_search", {"results": [None, "", {}]}), ("fetch_url", PAGE))
    assert native.blind_spots == [] and native.searches[0].hits == []
    _assert_same_scores(native, _canonical(hits=[]))


@pytest.mark.parametrize("output", [{"error": "rate limited", "results": []}, {"error": "rate limited"}])
@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_a_search_output_with_an_error_field_is_a_failed_search(platform: str, output: dict[str, Any]) -> None:
    from tracescore.adapters.notes import collect_notes

    with collect_notes() as notes:
        native = PLATFORMS[platform](("web_search", output), ("fetch_url", PAGE))
    assert native.blind_spots == [] and native.searches[0].hits == []
    assert any(n.decision == "search" and "failed: rate limited" in n.reason for n in notes)
    _assert_same_scores(native, _canonical(hits=[]))


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_results_beside_an_error_field_are_read(platform: str) -> None:
    """A partial failure: the results beside the error were shown to the agent; not reading them would count every
    URL cited from them as fabricated."""
    native = PLATFORMS[platform](("web_search", {"error": {"code": 429}, "results": HITS}), ("fetch_url", PAGE))
    assert len(native.searches[0].hits) == 2
    _assert_same_scores(native, _canonical())
    for empty in (None, "", False):  # an empty error field is no failure
        read = PLATFORMS[platform](("web_search", {"error": empty, "results": HITS}), ("fetch_url", PAGE))
        assert len(read.searches[0].hits) == 2
