"""#50: smolagents' Open Deep Research agent, run for real (``odr_runs``), scored from the OTLP JSON it exported.

Every expectation is what the run's script did, read from the tools' own text browser and the script (never from the
spans): the question the manager was given, the answer its ``final_answer`` gave, the queries, the hits the loopback
SerpAPI served, the pages visited and the viewports shown. The same spans are then put in the shapes Langfuse (its
OTel ingestion: observations with ``metadata.attributes``) and Phoenix (flat spans with ``context``) hand out, and
must score the same, score by score.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.platforms.otel.odr_runs import GOLD, Did, run_all
from tracescore.cli import main
from tracescore.engine.pipeline import score_trace
from tracescore.engine.plan import deterministic_scorers
from tracescore.platforms.langfuse.adapter import trace_from_observations
from tracescore.platforms.otel.adapter import trace_from_spans
from tracescore.platforms.otel.spans import any_value, group_spans, read_spans
from tracescore.scorers.answer import ANSWER_EXACT_MATCH
from tracescore.scorers.retrieval import RETRIEVAL_RETRIEVED_ANY
from tracescore.scorers.trajectory import FETCH_CALLS, FETCH_CHARS, SEARCH_CALLS
from tracescore.trace import Trace

pytestmark = pytest.mark.slow  # runs four agents (about 7 s)


@pytest.fixture(scope="module")
def odr(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], list[Did]]:
    document, did = run_all()
    path = tmp_path_factory.mktemp("odr") / "spans.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path, document, did


def _traces(document: Any) -> dict[str, Trace]:
    return {t.id: t for t in (trace_from_spans(r.payload) for r in group_spans(read_spans(document)))}


def _results(path: Path, tmp: Path) -> dict[str, dict[str, Any]]:
    out = tmp / "results.jsonl"
    got = CliRunner().invoke(main, ["score", str(path), "--source", "otel", "--no-judge", "--out", str(out),
                                    "--store", str(tmp / "s.db")])  # fmt: skip
    assert got.exit_code == 0, got.output
    return {r["trace_id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}


def test_each_run_scores_as_its_script_did(odr: tuple[Path, dict[str, Any], list[Did]], tmp_path: Path) -> None:
    path, document, did = odr
    traces, results = _traces(document), _results(path, tmp_path)
    assert sorted(traces) == sorted(d.trace_id for d in did) == sorted(results)
    for run in did:
        trace, scores = traces[run.trace_id], results[run.trace_id]["scores"]
        missing = results[run.trace_id]["missing"]
        assert (trace.question, trace.answer) == (run.question, run.answer), run.name
        assert [s.query for s in trace.searches] == run.queries, run.name
        readable = [s for s in trace.searches if s.hits]
        assert [[h.url for h in s.hits] for s in readable] == run.hits, run.name
        assert {f.url: f.text for f in trace.fetches} == run.pages, run.name
        assert scores[ANSWER_EXACT_MATCH] is (run.answer == GOLD), run.name
        if run.queries or run.pages:
            assert scores[SEARCH_CALLS] == len(run.queries), run.name  # a blind search once, not twice
            assert scores[FETCH_CALLS] == len(run.pages), run.name  # paging and find-on-page are no fetches
        if run.pages:
            assert scores[FETCH_CHARS] == sum(len(text) for text in run.pages.values()), run.name
        if run.hits:
            assert scores[RETRIEVAL_RETRIEVED_ANY] is True, run.name
    blind = next(d for d in did if d.name == "blind search")
    spots = traces[blind.trace_id].blind_spots
    assert [(b.kind, b.tool) for b in spots] == [("search", "news_search")]
    assert "news_search" in results[blind.trace_id]["missing"][RETRIEVAL_RETRIEVED_ANY]  # unread, not "empty"
    silent = next(d for d in did if d.name == "answer without searching")
    assert results[silent.trace_id]["missing"][SEARCH_CALLS] == "no search or fetch step in trace"
    assert missing  # every run leaves the judged scores absent (--no-judge), named


def test_the_search_page_hits_carry_title_snippet_and_date(odr: tuple[Path, dict[str, Any], list[Did]]) -> None:
    _, document, did = odr
    run = did[0]
    hits = _traces(document)[run.trace_id].searches[0].hits
    assert [h.rank for h in hits] == [1, 2, 3]
    assert (hits[0].title, hits[0].snippet) == (
        "The Kestrel Bridge", "The Kestrel Bridge over the river Wend opened to traffic in 1931.")
    assert hits[0].metadata == {"date": "Mar 3, 2021", "source": "Wend Gazette"}
    assert hits[1].metadata == {}
    assert hits[1].snippet == "The river Wend was crossed by ferries until the bridge was built."


def test_the_manager_answer_is_not_the_search_agents_report(odr: tuple[Path, dict[str, Any], list[Did]]) -> None:
    """The search_agent's own final_answer (its report to the manager) is inside the trace, earlier: not the answer;
    the planning prompt and facts survey of the first LLM span are not question or answer."""
    _, document, did = odr
    trace = _traces(document)[did[0].trace_id]
    assert trace.answer == GOLD and "Facts survey" not in trace.answer and "Below I will" not in trace.question


# -- acceptance 2: the same spans as Langfuse and Phoenix hand them out ------------------------------------------------


def _iso(nanos: str) -> str:
    return datetime.fromtimestamp(int(nanos) / 1e9, tz=UTC).isoformat().replace("+00:00", "Z")


def _flat_spans(document: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """``(span, its attributes decoded, its resource attributes)`` of every span of an OTLP JSON document."""
    found = []
    for resource in document["resourceSpans"]:
        resource_attributes = {a["key"]: any_value(a["value"]) for a in resource["resource"].get("attributes", [])}
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                attributes = {a["key"]: any_value(a["value"]) for a in span.get("attributes", [])}
                found.append((span, attributes, resource_attributes))
    return found


def _phoenix(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Phoenix's span export: flat spans, ids under ``context``, ISO times, ``span_kind``, ``status_code``."""
    codes = {0: "UNSET", 1: "OK", 2: "ERROR"}
    return [
        {"name": span["name"], "context": {"trace_id": span["traceId"], "span_id": span["spanId"]},
         "parent_id": span.get("parentSpanId"), "span_kind": attributes.get("openinference.span.kind", "UNKNOWN"),
         "start_time": _iso(span["startTimeUnixNano"]), "end_time": _iso(span["endTimeUnixNano"]),
         "status_code": codes[int((span.get("status") or {}).get("code", 0))], "status_message": "",
         "attributes": attributes, "events": []}
        for span, attributes, _ in _flat_spans(document)
    ]  # fmt: skip


# Langfuse's OTel ingestion: openinference.span.kind → observation type (its ObservationTypeMapper); else SPAN
_LANGFUSE_TYPES = {"CHAIN": "CHAIN", "RETRIEVER": "RETRIEVER", "LLM": "GENERATION", "EMBEDDING": "EMBEDDING",
                   "AGENT": "AGENT", "TOOL": "TOOL", "GUARDRAIL": "GUARDRAIL", "EVALUATOR": "EVALUATOR"}


def _langfuse(document: dict[str, Any], *, typed: bool) -> list[dict[str, Any]]:
    """One Langfuse trace export per trace (``{"trace", "observations"}``) as its OTel ingestion stores the spans:
    input/output from ``input.value``/``output.value``, the span attributes under ``metadata.attributes``. ``typed``:
    the observation types of Langfuse since its agent types (AGENT, TOOL, CHAIN); else every span a SPAN and model
    calls GENERATION, as older exports (``shared/data/langfuse_traces/agno-2025-06-11.json``) hold them."""
    traces: dict[str, list[dict[str, Any]]] = {}
    for span, attributes, resource in _flat_spans(document):
        kind = str(attributes.get("openinference.span.kind", ""))
        kind_type = _LANGFUSE_TYPES.get(kind, "SPAN") if typed else ("GENERATION" if kind == "LLM" else "SPAN")
        error = int((span.get("status") or {}).get("code", 0)) == 2
        traces.setdefault(span["traceId"], []).append({
            "id": span["spanId"], "traceId": span["traceId"], "type": kind_type, "name": span["name"],
            "parentObservationId": span.get("parentSpanId"), "startTime": _iso(span["startTimeUnixNano"]),
            "endTime": _iso(span["endTimeUnixNano"]), "input": attributes.get("input.value"),
            "output": attributes.get("output.value"), "level": "ERROR" if error else "DEFAULT",
            "metadata": {"attributes": attributes, "resourceAttributes": resource, "scope": {"name": "otel"}},
        })  # fmt: skip
    exports = []
    for trace_id, rows in traces.items():
        root = next(r for r in rows if not r["parentObservationId"])
        trace = {"id": trace_id, "name": root["name"], "timestamp": root["startTime"], "input": root["input"],
                 "output": root["output"], "metadata": {}}  # fmt: skip
        exports.append({"trace": trace, "observations": rows})
    return exports


def _scores(trace: Trace) -> dict[str, tuple[Any, str | None]]:
    return {name: (s.value, s.reason) for name, s in score_trace(trace, deterministic_scorers()).scores.items()}


@pytest.mark.parametrize("shape", ["phoenix", "langfuse", "langfuse (SPAN types)"])
def test_the_same_runs_score_the_same_in_the_langfuse_and_phoenix_shapes(
    odr: tuple[Path, dict[str, Any], list[Did]], shape: str
) -> None:
    _, document, did = odr
    otel = _traces(document)
    if shape == "phoenix":
        native = _traces(_phoenix(document))
    else:
        exports = _langfuse(document, typed=shape == "langfuse")
        native = {t.id: t for t in map(trace_from_observations, exports)}
    assert sorted(native) == sorted(otel)
    for run in did:
        theirs, ours = native[run.trace_id], otel[run.trace_id]
        assert (theirs.question, theirs.answer, theirs.labels) == (ours.question, ours.answer, ours.labels), run.name
        assert [s.model_dump(exclude={"fetched_at"}) for s in theirs.steps] == [
            s.model_dump(exclude={"fetched_at"}) for s in ours.steps], run.name
        assert _scores(theirs) == _scores(ours), run.name
