"""A search or fetch the adapter saw but could not read (``Trace.blind_spots``) makes the citation score that rests on
it absent with the reason, never a number built on a blind spot (#17 item 1); coverage is unaffected."""

from __future__ import annotations

import json
from pathlib import Path

from tracescore.adapters.jsonl import trace_from_json
from tracescore.engine.pipeline import score_records
from tracescore.engine.plan import deterministic_scorers
from tracescore.scorers.citations import CITATION_COVERAGE, CITATION_FABRICATED_COUNT, CITATION_UNFETCHED_RATE
from tracescore.sources.jsonl import read_jsonl

_ANSWER = "Returns take 30 days [1]. Refunds go to the card [2].\n\n[1] https://a.example/returns\n[2] https://b.example/x"


def _line(trace_id: str, blind_spots: list[dict[str, str]]) -> dict[str, object]:
    return {
        "id": trace_id,
        "question": "How long do returns take?",
        "steps": [
            {"kind": "search", "tool": "web_search", "query": "returns", "hits": [{"url": "https://a.example/returns"}]},
            {"kind": "fetch", "url": "https://a.example/returns", "text": "Returns take 30 days.", "status": 200},
        ],
        "answer": _ANSWER,
        "blind_spots": blind_spots,
    }


def _results(tmp_path: Path, lines: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    results = score_records(read_jsonl(path), trace_from_json, deterministic_scorers())
    return {r.trace_id or "": r.to_json() for r in results}


def test_an_unreadable_search_makes_fabricated_absent_with_tool_and_reason(tmp_path: Path) -> None:
    spot = {"kind": "search", "tool": "duckduckgo_search", "reason": "output is not JSON (truncated at 4096 bytes)"}
    got = _results(tmp_path, [_line("clear", []), _line("blind", [spot])])
    clear, blind = got["clear"], got["blind"]
    # the same trace without the blind spot: b.example was never seen, so it counts as fabricated
    assert clear["scores"][CITATION_FABRICATED_COUNT] == 1.0  # type: ignore[index]
    assert CITATION_FABRICATED_COUNT not in blind["scores"]  # type: ignore[operator]
    reason = blind["missing"][CITATION_FABRICATED_COUNT]  # type: ignore[index]
    assert "duckduckgo_search" in reason and "output is not JSON" in reason
    # coverage and unfetched rest on no unreadable fetch: unaffected
    for name in (CITATION_COVERAGE, CITATION_UNFETCHED_RATE):
        assert blind["scores"][name] == clear["scores"][name]  # type: ignore[index]


def test_an_unreadable_fetch_makes_unfetched_absent_with_tool_and_reason(tmp_path: Path) -> None:
    spot = {"kind": "fetch", "tool": "read_page", "reason": "tool raised TimeoutError, no output"}
    got = _results(tmp_path, [_line("clear", []), _line("blind", [spot])])
    clear, blind = got["clear"], got["blind"]
    assert clear["scores"][CITATION_UNFETCHED_RATE] == 0.5  # type: ignore[index]
    assert CITATION_UNFETCHED_RATE not in blind["scores"]  # type: ignore[operator]
    reason = blind["missing"][CITATION_UNFETCHED_RATE]  # type: ignore[index]
    assert "read_page" in reason and "TimeoutError" in reason
    assert blind["scores"][CITATION_FABRICATED_COUNT] == 1.0  # type: ignore[index]
    assert blind["scores"][CITATION_COVERAGE] == clear["scores"][CITATION_COVERAGE] == 1.0  # type: ignore[index]


def test_a_trace_whose_only_search_is_unreadable(tmp_path: Path) -> None:
    line = _line("only", [{"kind": "search", "tool": "tavily", "reason": "results field missing"}])
    line["steps"] = []
    got = _results(tmp_path, [line])["only"]
    assert CITATION_FABRICATED_COUNT in got["missing"]  # type: ignore[operator]
    assert "tavily" in got["missing"][CITATION_FABRICATED_COUNT]  # type: ignore[index]
