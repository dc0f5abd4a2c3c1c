"""Field helpers: maybe-JSON decoding, path lookup, hit and text extraction on the common shapes."""

from __future__ import annotations

import json

from tracescore.adapters.fields import (
    MISSING,
    extract_labels,
    get_path,
    parse_maybe_json,
    split_path,
    unflatten_indexed,
)
from tracescore.adapters.hits import extract_hits
from tracescore.adapters.mapping import MappingConfig
from tracescore.adapters.text import extract_text, last_user_message

HITS = MappingConfig().hits_paths
TEXT = MappingConfig().text_paths


def test_parse_maybe_json_object_string_and_double_encoded() -> None:
    obj = {"query": "return window"}
    assert parse_maybe_json(obj) is obj
    assert parse_maybe_json(json.dumps(obj)) == obj
    assert parse_maybe_json(json.dumps(json.dumps(obj))) == obj
    assert parse_maybe_json("{not json") == "{not json"
    assert parse_maybe_json("plain text") == "plain text"
    assert parse_maybe_json(b"[1, 2]") == [1, 2]


def test_split_and_get_path() -> None:
    assert split_path("a.b[0].c") == ["a", "b", 0, "c"]
    assert split_path("messages.-1.content") == ["messages", -1, "content"]
    data = {"a": json.dumps({"b": [{"c": 1}, {"c": 2}]}), "messages": [{"content": "x"}, {"content": "y"}]}
    assert get_path(data, "a.b.1.c") == 2
    assert get_path(data, "a.b[0].c") == 1
    assert get_path(data, "messages.-1.content") == "y"
    assert get_path(data, "a.z") is MISSING
    assert get_path(data, "a.b.9", default=None) is None


def test_get_path_matches_flat_dotted_keys() -> None:
    attrs = {"retrieval.documents.0.document.id": "doc-1", "input.value": '{"q": "x"}'}
    assert get_path(attrs, "retrieval.documents.0.document.id") == "doc-1"
    assert get_path(attrs, "input.value.q") == "x"


def test_unflatten_indexed() -> None:
    attrs = {
        "retrieval.documents.1.document.id": "b",
        "retrieval.documents.0.document.id": "a",
        "retrieval.documents.0.document.score": 0.9,
        "other": 1,
    }
    assert unflatten_indexed(attrs, "retrieval.documents") == [
        {"document": {"id": "a", "score": 0.9}},
        {"document": {"id": "b"}},
    ]


def test_hits_from_langchain_documents() -> None:
    out = {
        "documents": [
            {
                "page_content": "30 days",
                "metadata": {"source": "https://x.com/returns", "title": "Returns"},
                "type": "Document",
            },
            {"page_content": "shipping", "metadata": {"doc_id": "ship-v2"}, "type": "Document"},
        ]
    }
    hits = extract_hits(out, HITS)
    assert hits is not None
    assert [(h.rank, h.url, h.doc_id, h.title, h.snippet) for h in hits] == [
        (1, "https://x.com/returns", None, "Returns", "30 days"),
        (2, None, "ship-v2", None, "shipping"),
    ]


def test_hits_from_openinference_flat_and_nested() -> None:
    flat = {
        "retrieval.documents.0.document.id": "a",
        "retrieval.documents.0.document.content": "alpha",
        "retrieval.documents.1.document.id": "b",
    }
    assert [(h.rank, h.doc_id, h.snippet) for h in extract_hits(flat, HITS) or []] == [
        (1, "a", "alpha"),
        (2, "b", None),
    ]
    nested = {
        "retrieval": {
            "documents": [{"document": {"id": "c", "content": "gamma", "metadata": {"url": "https://c.org"}}}]
        }
    }
    hits = extract_hits(nested, HITS)
    assert hits is not None and hits[0].doc_id == "c" and hits[0].url == "https://c.org"


def test_hits_from_plain_lists_output_key_and_explicit_rank() -> None:
    plain = json.dumps(
        [{"url": "https://a.org", "title": "A", "snippet": "sa"}, {"link": "https://b.org", "position": 7}]
    )
    assert [(h.rank, h.url) for h in extract_hits(plain, HITS) or []] == [(1, "https://a.org"), (7, "https://b.org")]
    langsmith_style = {"output": [{"url": "https://c.org"}]}
    assert [h.url for h in extract_hits(langsmith_style, HITS) or []] == ["https://c.org"]
    assert extract_hits("no results", HITS) is None
    assert extract_hits({"answer": 42}, HITS) is None


def test_hit_list_positions_survive_unrecognised_items() -> None:
    hits = extract_hits([{"url": "https://a.org"}, {"weird": 1}, {"url": "https://c.org"}], HITS)
    assert [(h.rank, h.url) for h in hits or []] == [(1, "https://a.org"), (3, "https://c.org")]


def test_extract_text_and_last_user_message() -> None:
    assert extract_text("page body", TEXT) == "page body"
    assert extract_text(json.dumps({"url": "u", "content": "the page"}), TEXT) == "the page"
    assert extract_text({"nothing": 1}, TEXT) is None
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    assert last_user_message(messages) == "hi"


def test_extract_labels_nested_top_level_and_bad_values() -> None:
    assert extract_labels({"labels": {"required_doc_ids": ["a"]}}, ["labels"]).required_doc_ids == ["a"]
    top = extract_labels(json.dumps({"gold_answer": "30 days", "expect_refusal": "nope"}), ["labels"])
    assert top.gold_answer == "30 days" and top.expect_refusal is None
    assert extract_labels(None, ["labels"]).model_dump(exclude_none=True) == {}


def test_mapping_config_matching() -> None:
    m = MappingConfig()
    assert m.is_search("web_search", "TOOL")
    assert m.is_search("anything", "RETRIEVER")
    assert not m.is_search("duckduckgo_search", "SPAN")  # only tool calls are matched by name
    assert not m.is_search("get_weather", "TOOL")
    assert m.is_fetch("fetch_url", "TOOL") and not m.is_fetch("fetch_url", "GENERATION")
    custom = MappingConfig(search_tools=["kb_lookup"])
    assert custom.is_search("KB_Lookup", "TOOL") and not custom.is_search("web_search", "TOOL")


def test_search_globs_do_not_match_research_and_match_real_tool_names() -> None:
    from tracescore.adapters.mapping import MappingConfig

    config = MappingConfig()
    for name in (
        "duckduckgo_search",
        "Web-Search",
        "tool.search.wikipedia",
        "TavilySearchResults",
        "web_search",
        "search_web",
        "DuckDuckGoSearch",
        "websearch",
        "retrieve_docs",
        "VectorStoreRetriever",
    ):
        assert config.is_search(name, "TOOL"), name
    for name in ("research", "deep_research", "researcher_agent", "get_weather", "ResearchTool"):
        assert not config.is_search(name, "TOOL"), name


def test_python_repr_inputs_and_agno_messages_are_read() -> None:
    from tracescore.adapters.fields import parse_maybe_json
    from tracescore.adapters.text import last_user_message

    assert parse_maybe_json("{'query': 'example'}") == {"query": "example"}
    assert parse_maybe_json("{'query': not python}") == "{'query': not python}"
    messages = ["role='system' content='Be brief.' name=None", "role='user' content='What\\'s new?' name=None"]
    assert last_user_message({"messages": messages}) == "What's new?"


def test_tool_messages_are_unwrapped_and_carry_tool_semantics() -> None:
    from tracescore.adapters.hits import tool_output, tool_semantics

    message = {"content": [{"url": "https://a.example"}], "type": "tool", "tool_call_id": "call_1", "name": "s"}
    assert tool_output(message) == [{"url": "https://a.example"}]
    assert tool_semantics({}, message) == ("tool", "s")
    assert tool_semantics({"openinference.span.kind": "AGENT", "tool.name": "Wikipedia"}) == (None, None)
    assert tool_semantics({"openinference.span.kind": "RETRIEVER"}) == ("search", None)
    assert tool_semantics({"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "w"}) == ("tool", "w")
    assert tool_semantics({}, {"text": "plain output"}) == (None, None)


def test_flat_openinference_documents_below_nested_metadata_and_page_content() -> None:
    from tracescore.adapters.hits import extract_hits

    metadata = {
        "attributes": {
            "retrieval.documents.0.document.content": "first",
            "retrieval.documents.0.document.id": "d1",
            "retrieval.documents.0.document.score": 0.9,
            "retrieval.documents.1.document.id": "d2",
        }
    }
    hits = extract_hits({"resourceAttributes": {}, "otel": metadata}, ["retrieval.documents"])
    assert hits is not None
    assert [(h.rank, h.doc_id, h.snippet, h.score) for h in hits] == [(1, "d1", "first", 0.9), (2, "d2", None, None)]
    js = extract_hits([{"pageContent": "LangChain JS text", "metadata": {"source": "https://js.example"}}], [])
    assert js is not None and js[0].snippet == "LangChain JS text" and js[0].url == "https://js.example"
