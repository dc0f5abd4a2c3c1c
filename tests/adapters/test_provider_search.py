"""Provider built-in web search (#17 acceptance 2): real recorded OpenAI Responses, Anthropic Messages and Gemini
responses map to search steps whose hits include every URL the answer cites, so nothing counts as fabricated.

The fixtures are real API recordings (pydantic-ai's VCR cassettes; see tests/fixtures/provider_search/README.md).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tracescore.adapters.provider_search import builtin_search
from tracescore.engine.pipeline import score_trace
from tracescore.engine.plan import deterministic_scorers
from tracescore.platforms.registry import get_adapter
from tracescore.trace import Trace

FIXTURES = Path(__file__).parent.parent / "fixtures" / "provider_search"

# Read by hand from each recording: the queries the model ran, how many results the response shows, the cited URLs.
EXPECTED: dict[str, dict[str, Any]] = {
    "openai_responses_web_search.json": {
        "question": "Give me the top 3 news in the world today",
        "queries": [
            "top world news September 12, 2025 Reuters",
            "Nepal protests September 12 2025 Reuters",
            "UN Security Council condemns attack in Doha September 12 2025 Reuters",
            "Israel airstrikes Yemen Sanaa September 10 2025 Reuters death toll",
            "typhoon September 12 2025",
            "Nepal protests September 12 2025 BBC",
        ],
        "hits": 3,  # OpenAI lists no per-call results: the three url_citation annotations are the results used
        "cited": 3,
    },
    "anthropic_messages_web_search.json": {
        "question": "What is the weather in San Francisco today?",
        "queries": ["San Francisco weather today"],
        "hits": 10,
        "cited": 9,
    },
    "gemini_google_search.json": {
        "question": "What is the weather in San Francisco today?",
        "queries": ["weather in San Francisco today"],
        "hits": 3,
        "cited": 6,  # groundingSupports → chunk indices
    },
}


def _recording(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text())
    return data


def _langfuse(recording: dict[str, Any]) -> Trace:
    generation = {
        "id": "gen-1",
        "traceId": "trace-1",
        "type": "GENERATION",
        "name": "model call",
        "startTime": "2025-09-16T00:00:00Z",
        "input": json.dumps(recording["request"]),
        "output": recording["response"],
    }
    return get_adapter("langfuse")({"id": "trace-1", "observations": [generation]})


def _langsmith(recording: dict[str, Any]) -> Trace:
    run = {
        "id": "00000000-0000-4000-8000-000000000001",
        "name": "model call",
        "run_type": "llm",
        "start_time": "2025-09-16T00:00:00Z",
        "inputs": recording["request"],
        "outputs": recording["response"],
    }
    return get_adapter("langsmith")({"root": run, "runs": [], "example": None, "project": None})


def test_every_recording_has_an_expectation() -> None:
    assert {p.name for p in FIXTURES.glob("*.json")} == set(EXPECTED)


@pytest.mark.parametrize("platform", [_langfuse, _langsmith], ids=["langfuse", "langsmith"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_builtin_search_maps_to_search_steps_with_the_cited_urls_seen(name: str, platform: Any) -> None:
    expect = EXPECTED[name]
    trace = platform(_recording(name))
    assert trace.question == expect["question"]
    assert trace.answer.strip()
    assert [s.query for s in trace.searches] == expect["queries"]
    assert sum(len(s.hits) for s in trace.searches) == expect["hits"]
    assert len(trace.citations or []) == expect["cited"]
    seen = {h.url for s in trace.searches for h in s.hits}
    assert {c.url for c in trace.citations or []} <= seen
    assert trace.blind_spots == []
    result = score_trace(trace, deterministic_scorers())
    assert result.scores["citation.fabricated_count"].value == 0.0


def test_before_this_change_every_cited_url_counted_as_fabricated() -> None:
    """The check can fail: the same answer with its search steps dropped has every cited URL fabricated."""
    trace = _langfuse(_recording("anthropic_messages_web_search.json"))
    blind = trace.model_copy(update={"steps": []})
    result = score_trace(blind, deterministic_scorers())
    assert result.scores["citation.fabricated_count"].value == len({c.url for c in trace.citations or []}) == 3


def _strip(value: Any, kinds: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _strip(v, kinds) for k, v in value.items() if not (k == "annotations" and "annotations" in kinds)}
    if isinstance(value, list):
        return [_strip(v, kinds) for v in value if not (isinstance(v, dict) and v.get("type") in kinds)]
    return value


@pytest.mark.parametrize(
    ("name", "remove", "reason"),
    [
        ("openai_responses_web_search.json", {"annotations"}, "results not recorded"),
        ("anthropic_messages_web_search.json", {"web_search_tool_result"}, "no result block"),
    ],
)
def test_a_search_whose_results_are_not_in_the_response_is_a_blind_spot(
    name: str, remove: set[str], reason: str
) -> None:
    recording = _recording(name)
    recording["response"] = _strip(copy.deepcopy(recording["response"]), remove)
    trace = _langfuse(recording)
    assert trace.searches  # the search is still seen ...
    assert trace.blind_spots and all(b.kind == "search" and reason in b.reason for b in trace.blind_spots)


def test_gemini_queries_without_grounding_chunks_are_a_blind_spot() -> None:
    recording = _recording("gemini_google_search.json")
    metadata = recording["response"]["candidates"][0]["groundingMetadata"]
    metadata.pop("groundingChunks")
    trace = _langfuse(recording)
    assert [b.tool for b in trace.blind_spots] == ["google_search"]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_declared_search_tool_with_only_the_answer_text_recorded_is_a_blind_spot(name: str) -> None:
    """Many instrumentations record only the final text of a model call: the search surface is then invisible."""
    recording = _recording(name)
    recording["response"] = "The answer, as text only."
    trace = _langfuse(recording)
    assert trace.searches == []
    assert len(trace.blind_spots) == 1 and "declares built-in search" in trace.blind_spots[0].reason


def test_a_response_recorded_twice_is_searched_once() -> None:
    recording = _recording("anthropic_messages_web_search.json")
    seen: set[str] = set()
    first = builtin_search(recording["response"], recording["request"], seen)
    again = builtin_search(recording["response"], recording["request"], seen)
    assert len(first.searches) == 1 and again.searches == []
