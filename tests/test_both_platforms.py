"""The same traces recorded in Langfuse and in LangSmith get the same score set (names, values) in both platforms.

Each cookbook sample is stored twice — as Langfuse observations and as LangSmith runs — in the two loopback fakes;
``tracescore score --source langfuse`` and ``--source langsmith`` then write back, through the real SDKs. Per sample,
the Langfuse scores and the LangSmith feedback must carry the same names with the same values, so a team can switch
platforms without renaming a dashboard (issue #5, acceptance 4).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import load_samples, seed
from tracescore.cli import main

WINDOW = ["--from", "2026-11-01T00:00:00Z", "--to", "2026-12-01T00:00:00Z"]


def _langfuse_trace(sample: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One canonical sample as a Langfuse export: an AGENT root, RETRIEVER searches, ``fetch_url`` TOOL fetches."""
    tid, start = sample["id"], datetime.fromisoformat(sample["timestamp"])

    def at(ms: int) -> str:
        return (start + timedelta(milliseconds=ms)).isoformat().replace("+00:00", "Z")

    def obs(n: int, kind: str, name: str, parent: str | None, **io: Any) -> dict[str, Any]:
        return {"id": f"{tid}-o{n:02d}", "traceId": tid, "type": kind, "name": name, "parentObservationId": parent,
                "startTime": at(n * 10), "endTime": at(n * 10 + 5), "level": "DEFAULT", "metadata": {}, **io}

    root = f"{tid}-o00"
    labels = {k: v for k, v in sample["labels"].items() if v is not None}
    # the answer as a plain string output (an ``@observe`` function returning text); NB: the Langfuse adapter reads
    # an empty answer under {"answer": ""} as the JSON text of the whole output (reported on issue #4)
    observations = [obs(0, "AGENT", "agent", None, input={"question": sample["question"]},
                        output=sample["answer"], metadata={"labels": labels})]
    for n, step in enumerate(sample["steps"], start=1):
        if step["kind"] == "search":
            docs = [{"page_content": h.get("snippet") or "", "type": "Document",
                     "metadata": {"doc_id": h.get("doc_id"), "source": h.get("url"), "title": h.get("title")}}
                    for h in step["hits"]]
            observations.append(obs(n, "RETRIEVER", "retriever", root, input={"query": step["query"]},
                                    output={"documents": docs}))
        else:
            observations.append(obs(n, "TOOL", "fetch_url", root, input={"url": step.get("url"),
                                                                           "doc_id": step.get("doc_id")},
                                    output={"text": step.get("text") or "", "status": step.get("status")}))
    trace = {"id": tid, "name": "search-agent", "timestamp": at(0), "environment": "production", "tags": [],
             "input": None, "output": None, "metadata": {}}
    return trace, observations


@pytest.fixture
def samples() -> list[dict[str, Any]]:
    return load_samples()


def test_the_same_score_set_lands_in_both_platforms(samples: list[dict[str, Any]], tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no stray tracescore.toml
    with FakeLangfuse() as langfuse, FakeLangSmith() as langsmith:
        for sample in samples:
            langfuse.add_trace(*_langfuse_trace(sample))
        seed(langsmith, samples)
        lf = CliRunner().invoke(main, ["score", "--source", "langfuse", *WINDOW, "--store", "lf.db", "-q"],
                                env=env_for(langfuse))
        ls = CliRunner().invoke(main, ["score", "--source", "langsmith", "--project", "search-agent", *WINDOW,
                                       "--store", "ls.db", "-q"],
                                env={"LANGSMITH_API_KEY": "k", "LANGSMITH_ENDPOINT": langsmith.url})
        assert lf.exit_code == 0, lf.output
        assert ls.exit_code == 0, ls.output

        in_langfuse: dict[str, dict[str, Any]] = {}
        for s in langfuse.scores.values():
            in_langfuse.setdefault(s["traceId"], {})[s["name"]] = s["value"]
        source_trace = {r["id"]: r["extra"]["metadata"]["source_trace"] for r in langsmith.runs
                        if r["parent_run_id"] is None}
        in_langsmith: dict[str, dict[str, Any]] = {}
        for f in langsmith.feedback.values():
            value = f["value"] if f.get("value") is not None else f["score"]
            in_langsmith.setdefault(source_trace[f["run_id"]], {})[f["key"]] = value

    assert set(in_langfuse) == set(in_langsmith) == {s["id"] for s in samples}
    for trace_id, scores in in_langfuse.items():
        assert set(scores) == set(in_langsmith[trace_id]), trace_id
        for name, value in scores.items():
            other = in_langsmith[trace_id][name]
            if isinstance(value, str):
                assert other == value, (trace_id, name)
            else:
                assert other == pytest.approx(round(float(value), 4), abs=1e-9), (trace_id, name)
    names = {n for scores in in_langfuse.values() for n in scores}
    assert {"retrieval.recall_at_5", "citation.coverage", "answer.correct", "diagnosis"} <= names
