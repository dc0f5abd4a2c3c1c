"""#30 item 3: ``tracescore.check`` takes a ``Trace``, a trace-format dict, a LangSmith record or run tree (the real
SDK's ``RunTree``), or a Langfuse record, each read by the adapter ``tracescore score`` reads it with."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.fakes.langfuse_data import make_trace
from tests.fakes.langsmith_runs import load_samples, run_tree
from tracescore.config import Config
from tracescore.integrations.session import CheckSession, merge_parts, part_path
from tracescore.trace import Trace

LIMITS = {"minimum": {"retrieval.recall_at_5": 1.0, "answer.correct": True}, "maximum": None}


def _session() -> CheckSession:
    return CheckSession(Config({}), store=None, max_cost=None, part=None)


def _check(session: CheckSession, trace: object) -> tuple[dict[str, object], str | None]:
    found = session.check(trace, judge=None, absent="fail", order=(0, 0), **LIMITS)  # type: ignore[arg-type]
    assert found.result.scores, found.result.errors
    return found.result.values, found.failure("fail")


def test_a_trace_its_dict_and_its_langsmith_record_check_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    session = _session()
    sample = load_samples(1)[0]
    runs, _ = run_tree(sample, "00000000-0000-4000-8000-000000000001")
    record = {"root": runs[0], "runs": runs[1:], "example": None, "project": None}
    as_dict = _check(session, sample)
    assert as_dict[1] is None and as_dict[0]["retrieval.recall_at_5"] == 1.0
    assert _check(session, Trace.model_validate(sample)) == as_dict
    assert _check(session, record) == as_dict
    assert session.checked == 3


def test_a_run_tree_of_the_real_langsmith_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    run_trees = pytest.importorskip("langsmith.run_trees")
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
    sample = load_samples(1)[0]
    labels = {k: v for k, v in sample["labels"].items() if v is not None}
    root = run_trees.RunTree(name="search_agent", run_type="chain", inputs={"question": sample["question"]},
                             extra={"metadata": {"labels": labels}})  # fmt: skip
    for step in sample["steps"]:
        if step["kind"] == "search":
            child = root.create_child(name="retrieve_docs", run_type="retriever", inputs={"query": step["query"]})
            child.end(outputs={"output": [{k: h.get(k) for k in ("doc_id", "url", "title", "snippet")}
                                          for h in step["hits"]]})  # fmt: skip
        else:
            child = root.create_child(name="fetch_url", run_type="tool", inputs={"url": step["url"]})
            child.end(outputs={"text": step.get("text") or "", "status": step.get("status")})
    root.end(outputs={"output": sample["answer"]})
    session = _session()
    assert _check(session, root) == _check(session, sample)


def test_a_langfuse_record_is_read_by_the_langfuse_adapter(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    session = _session()
    start = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    right = make_trace(1, start, right=True)[1]
    wrong = make_trace(3, start, right=False)[1]
    values, failure = _check(session, {"id": "tr-00001", "observations": right})
    assert failure is None and values["retrieval.recall_at_5"] == 1.0 and values["answer.correct"] is True
    values, failure = _check(session, {"id": "tr-00003", "observations": wrong})
    assert failure == ("trace tr-00003: 1 stage(s) broken\n"
                       "  answer: answer.correct = false (needs ≥ 1): missing from the answer: 30 days")
    assert values["retrieval.recall_at_5"] == 1.0


def test_the_result_lines_go_to_the_part_file_in_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    out = tmp_path / "results.jsonl"
    samples = load_samples(3)
    for worker, order in (("gw1", [(2, 1)]), ("gw0", [(0, 1), (1, 1)])):
        session = CheckSession(Config({}), store=None, max_cost=None, part=part_path(out, "tok", worker))
        for n, m in order:
            session.check(samples[n], minimum={"retrieval.retrieved_any": True}, maximum=None, judge=None,
                          absent="fail", order=(n, m))  # fmt: skip
    (out.with_name("results.jsonl.other.gw0.part")).write_text("[0, 1, \"another session's\"]\n")
    written, lines = merge_parts(out, "tok", partial=False)
    assert (written, lines) == (out, 3)
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [(r["trace_id"], r["line"]) for r in rows] == [(s["id"], n) for n, s in enumerate(samples, start=1)]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.jsonl", "results.jsonl.other.gw0.part"]
    out.write_text("earlier\n")
    session = CheckSession(Config({}), store=None, max_cost=None, part=part_path(out, "tok2", "main"))
    session.check(samples[0], minimum={"retrieval.retrieved_any": True}, maximum=None, judge=None, absent="fail",
                  order=(0, 1))  # fmt: skip
    assert merge_parts(out, "tok2", partial=True) == (tmp_path / "results.jsonl.partial", 1)
    assert out.read_text() == "earlier\n"  # an interrupted session leaves the earlier file as it was
