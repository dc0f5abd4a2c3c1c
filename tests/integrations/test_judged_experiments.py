"""#30 item 4 (LangSmith, Langfuse) and item 1's ``aevaluate``: judged stages inside the platforms' own runners.

With a judge (``AnthropicJudge`` of the real ``anthropic`` SDK against the loopback fake), ``Experiment(judge=…)``
gives evaluators whose judged scores equal ``tracescore score``'s with the same judge, one judge for the whole
experiment: the summary (LangSmith) or run evaluator (Langfuse) counts the cells without judging anything again, and
says once what the judge spent (``tracescore.judge.calls``, ``.input_tokens``, ``.output_tokens``, ``.cost_usd``).
``aevaluate`` (the SDK's async runner) writes the same feedback as ``evaluate``.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.langfuse import FakeLangfuse
from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_experiments import add_dataset
from tests.fakes.langsmith_runs import load_samples, run_tree
from tests.integrations.conftest import cli_lines, cookbook
from tracescore.cli.main import main
from tracescore.integrations import langfuse as lf, langsmith as ls
from tracescore.integrations.scoring import USAGE_FIELDS
from tracescore.judge.anthropic import AnthropicJudge

langsmith = pytest.importorskip("langsmith")
pytest.importorskip("langfuse")

SAMPLES = {case["id"]: case for case in load_samples(4)}
JUDGED = ("grounding.rate", "grounding.hallucination_rate", "citation.support_rate")


def _judged_lines(tmp_path: Path) -> tuple[dict[str, dict[str, Any]], int]:
    """``tracescore score --out`` of the samples with the fake judge: each line by trace id, and the judge's calls."""
    path, out = tmp_path / "traces.jsonl", tmp_path / "judged.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in SAMPLES.values()), encoding="utf-8")
    (tmp_path / "one.toml").write_text("[job]\njudge_concurrency = 1\n", encoding="utf-8")
    with FakeAnthropic() as fake:
        done = CliRunner().invoke(main, ["score", str(path), "--out", str(out), "--store", str(tmp_path / "s.db"),
                                         "--config", str(tmp_path / "one.toml"), "-q"],
                                  env={"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url})  # fmt: skip
        calls = len(fake.messages())
    assert done.exit_code == 0, done.output
    return {line["trace_id"]: line for line in map(json.loads, out.read_text(encoding="utf-8").splitlines())}, calls


def _example(trace: dict[str, Any]) -> dict[str, Any]:
    labels = {k: v for k, v in (trace.get("labels") or {}).items() if v is not None}
    return {"inputs": {"case": trace["id"], "question": trace["question"]}, "outputs": labels}


def _feedback(fake: FakeLangSmith) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """(run id -> {key: feedback}, key -> the experiment-level feedback)."""
    runs: dict[str, dict[str, Any]] = {}
    session: dict[str, dict[str, Any]] = {}
    for f in list(fake.feedback.values()):
        if f.get("run_id") is None:
            session[f["key"]] = f
        else:
            runs.setdefault(f["run_id"], {})[f["key"]] = f
    return runs, session


def _case_of(fake: FakeLangSmith) -> dict[str, str]:
    """The experiment's root runs (evaluate's ``search_agent``, aevaluate's ``AsyncTarget``; not the evaluator's own
    traced runs) by id, each with its case (evaluate nests the example's inputs under ``inputs``)."""
    return {r["id"]: r["inputs"].get("inputs", r["inputs"])["case"] for r in fake.runs
            if r["parent_run_id"] is None and r["name"] in ("search_agent", "AsyncTarget")}  # fmt: skip


def _settle(fake: FakeLangSmith, count: int, *, runs: bool = False, bound: float = 30.0) -> None:
    """Wait (at most ``bound`` s) for ``count`` experiment-level feedbacks (``runs``: run feedbacks), which the SDK
    posts from its own executor after the runner returns."""
    deadline = time.monotonic() + bound
    while sum(1 for f in list(fake.feedback.values()) if (f.get("run_id") is not None) == runs) < count:
        assert time.monotonic() < deadline, "the feedback never arrived"
        time.sleep(0.05)


@pytest.mark.filterwarnings("ignore:The following arguments are no longer used:DeprecationWarning")
def test_langsmith_evaluate_with_a_judge_scores_as_score_and_reports_the_spend_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    expected, score_calls = _judged_lines(tmp_path)
    with FakeLangSmith() as fake, FakeAnthropic() as judge_server:
        add_dataset(fake, "cases", [_example(t) for t in SAMPLES.values()])
        client = langsmith.Client(api_url=fake.url, api_key="fake-key", auto_batch_tracing=False)
        judge = AnthropicJudge(api_key="test-key", base_url=judge_server.url)
        cookbook("langsmith_evaluate").run(client, "cases", judge, max_concurrency=0)  # the README's example
        client.flush()
        _settle(fake, 5 + len(USAGE_FIELDS) + 1)
        calls = len(judge_server.messages())
        runs, session = _feedback(fake)
        case_of = _case_of(fake)
        judge.close()
    assert calls == score_calls > 0  # every trace judged once: the summary judged nothing again
    assert len(runs) == len(SAMPLES)
    for run_id, got in runs.items():
        line = expected[case_of[run_id]]
        for name in JUDGED:
            if name in line["scores"]:
                assert got[name]["score"] == pytest.approx(round(line["scores"][name], 4), abs=1e-9), name
        assert {k for k in got if k != ls.ABSENT_KEY} == set(line["scores"])
    assert session[f"{ls.USAGE_KEY}.calls"]["score"] == calls
    assert session[f"{ls.USAGE_KEY}.input_tokens"]["score"] > 0
    assert session[f"{ls.USAGE_KEY}.cost_usd"]["score"] > 0
    assert session[f"{ls.USAGE_KEY}.calls"]["comment"].startswith(f"judge {judge.model}: {calls} API calls")
    assert sum(f["score"] for k, f in session.items() if k.startswith("diagnosis:")) == len(SAMPLES)


def test_langsmith_aevaluate_writes_the_feedback_evaluate_writes(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    expected = cli_lines(tmp_path, list(SAMPLES.values()))
    agent = cookbook("langsmith_evaluate").agent

    replay = agent.__wrapped__  # the stand-in's body: its retriever and tool runs become the async root's children

    async def search_agent(inputs: dict[str, Any]) -> dict[str, Any]:
        return replay(inputs)  # type: ignore[no-any-return]

    async def experiment(client: Any) -> list[Any]:
        results = await langsmith.aevaluate(search_agent, data="cases", evaluators=ls.evaluators(), client=client,
                                            max_concurrency=2)  # fmt: skip
        return [row async for row in results]

    with FakeLangSmith() as fake:
        add_dataset(fake, "cases", [_example(t) for t in SAMPLES.values()])
        client = langsmith.Client(api_url=fake.url, api_key="fake-key", auto_batch_tracing=False)
        rows = asyncio.run(experiment(client))
        client.flush()
        # aevaluate posts the feedback from a thread pool it never joins: wait for every line's (scores + absent)
        _settle(fake, sum(len(line["scores"]) + 1 for line in expected.values()), runs=True)
        runs, _ = _feedback(fake)
        case_of = _case_of(fake)
    assert len(rows) == len(runs) == len(SAMPLES)
    for run_id, got in runs.items():
        line = expected[case_of[run_id]]
        assert {k for k in got if k != ls.ABSENT_KEY} == set(line["scores"])
        for name, value in line["scores"].items():
            said = got[name]["value"] if isinstance(value, str) else got[name]["score"]
            assert said == (value if isinstance(value, str | bool) else pytest.approx(round(value, 4), abs=1e-9))
        assert got[ls.ABSENT_KEY]["comment"].splitlines() == [f"{n}: {r}" for n, r in line["missing"].items()]


def test_langfuse_run_experiment_with_a_judge_scores_as_score_and_reports_the_spend_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, langfuse_pair: tuple[FakeLangfuse, Any]
) -> None:
    monkeypatch.chdir(tmp_path)
    expected, score_calls = _judged_lines(tmp_path)
    fake, client = langfuse_pair
    items = [{"input": {"case": c["id"], "question": c["question"]},
              "expected_output": {k: v for k, v in (c.get("labels") or {}).items() if v is not None}}
             for c in SAMPLES.values()]  # fmt: skip
    with FakeAnthropic() as judge_server:
        judge = AnthropicJudge(api_key="test-key", base_url=judge_server.url)
        result = cookbook("langfuse_experiment").experiment(client, items, judge, max_concurrency=1)  # the README's
        client.flush()
        calls = len(judge_server.messages())
        judge.close()
    assert calls == score_calls > 0
    case_of = {r.trace_id: r.item["input"]["case"] for r in result.item_results}
    scores = list(fake.scores.values())
    for s in scores:
        if s.get("traceId") and s["name"] in JUDGED:
            assert s["value"] == pytest.approx(expected[case_of[s["traceId"]]]["scores"][s["name"]]), s["name"]
    assert {s["traceId"] for s in scores if s.get("traceId") and s["name"] == "grounding.rate"} == set(case_of)
    spent = {s["name"]: s for s in scores if s.get("datasetRunId") and s["name"].startswith(lf.USAGE_KEY)}
    assert set(spent) == {f"{lf.USAGE_KEY}.{name}" for name in USAGE_FIELDS}
    assert spent[f"{lf.USAGE_KEY}.calls"]["value"] == calls and spent[f"{lf.USAGE_KEY}.calls"]["dataType"] == "NUMERIC"
    assert spent[f"{lf.USAGE_KEY}.cost_usd"]["value"] > 0


def test_an_experiments_judge_cache_lives_in_its_store(tmp_path: Path) -> None:
    """``Experiment(store=…)``: a run scored again (a second experiment over the same traces) is judged from the
    store's cache, as ``score --store`` judges it: no call, the same scores."""
    sample = load_samples(1)[0]
    runs, _ = run_tree(sample, "00000000-0000-4000-8000-000000000001")
    root = {**runs[0], "child_runs": runs[1:]}
    with FakeAnthropic() as judge_server:
        said = []
        for _ in range(2):
            judge = AnthropicJudge(api_key="test-key", base_url=judge_server.url)
            experiment = ls.Experiment(judge=judge, store=tmp_path / "cache.db")
            said.append(experiment.evaluators[0](root, None)["results"])
            total, _ = experiment.scoring.spent()
            assert total is not None
            said.append(total)
            experiment.scoring.close()
            judge.close()
        calls = len(judge_server.messages())
    first, first_spent, again, again_spent = said
    assert calls == first_spent["calls"] > 0 and again_spent["calls"] == 0 and again_spent["cache_hits"] > 0
    assert again == first and any(r["key"] == "grounding.rate" for r in first)
