"""The LangSmith calibration queue end to end (#12 acceptance 1): the real ``langsmith`` SDK (the v1 ``Client`` and
the generated ``Langsmith`` client's non-deprecated queue-items API) over loopback against the fake. Set up twice,
queue 60 of 200 scored traces (never re-queued), reviewers answer, pull twice, measure, carry.
"""

from __future__ import annotations

import json
import random
import uuid
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.calibrate.helpers import MODEL, RUBRIC, scored_store
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.base import Fault
from tests.fakes.judge import QueueJudge
from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_queues import review, state
from tests.fakes.langsmith_runs import load_samples, seed
from tests.scorers.test_grounding import _judgement, _trace
from tracescore.calibrate.agreement import VERDICTS
from tracescore.calibrate.carry import grounding_agreement
from tracescore.calibrate.labels import VERDICT_LABEL, add_labels, measure_and_record
from tracescore.calibrate.queued import pending, queued_traces
from tracescore.calibrate.required import LABEL
from tracescore.calibrate.sampling import candidates, queued_ids, record_sample, sample
from tracescore.cli import main
from tracescore.engine.pipeline import score_trace
from tracescore.engine.plan import deterministic_scorers
from tracescore.platforms.langsmith.queue import REVIEW_KEY, LangSmithLabelQueue
from tracescore.platforms.langsmith.sink import LangSmithSink
from tracescore.platforms.langsmith.source import make_client
from tracescore.scorers.grounding import grounding_scorer
from tracescore.store.db import Store

NOW = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)
PROJECT = "search-agent"
RECALL = "retrieval.recall_at_5"


def _run_id(t: int) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"run-{t}"))


@pytest.fixture
def server() -> Iterator[FakeLangSmith]:
    with FakeLangSmith() as fake:
        project = fake.add_project(PROJECT)
        fake.add_runs(
            [
                {
                    "id": _run_id(t),
                    "trace_id": _run_id(t),
                    "session_id": project,
                    "parent_run_id": None,
                    "start_time": "2026-11-30T10:00:00+00:00",
                    "name": "agent",
                    "run_type": "chain",
                }
                for t in range(200)
            ]
        )
        yield fake


@pytest.fixture
def client(server: FakeLangSmith) -> Any:
    return make_client(api_key="lsv2_pt_test", endpoint=server.url, timeout_ms=5000, backoff=0.01)


def _queue(client: Any, store: Store) -> LangSmithLabelQueue:
    return LangSmithLabelQueue(client, store, project=PROJECT)


def _sample_and_push(store: Store, run_id: str, queue: LangSmithLabelQueue, seed: int) -> int:
    drawn = sample(
        candidates(store, run_id),
        n=60,
        seed=seed,
        per_trace=True,
        exclude=queued_ids(store),
        exclude_traces=queued_traces(store, queue.key),
    )
    record_sample(store, drawn, now=NOW, queue=queue.key)
    return queue.push(pending(store, queue.key))


def test_setup_twice_creates_nothing_twice(server: FakeLangSmith, client: Any, tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    first = _queue(client, store).setup()
    second = _queue(client, store).setup()
    assert first.queue_id == second.queue_id
    assert len(state(server).queues) == 1 and len(server.feedback_configs) == 5
    queue = next(iter(state(server).queues.values()))
    assert [r["feedback_key"] for r in queue["rubric_items"]] == list(first.configs)
    verdict = server.feedback_configs[VERDICT_LABEL]["feedback_config"]
    assert [c["label"] for c in verdict["categories"]] == list(VERDICTS)
    assert server.feedback_configs["retrieval.required_doc_ids"]["feedback_config"] == {"type": "freeform"}


def test_queue_loop_sample_review_pull_measure_carry(server: FakeLangSmith, client: Any, tmp_path: Path) -> None:
    store, run_id = scored_store(tmp_path / "s.db", traces=200, trace_id=_run_id)
    queue = _queue(client, store)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # the deprecated queue methods are not used
        assert _sample_and_push(store, run_id, queue, seed=7) == 60
    items = state(server).items
    assert len(items) == 60 and len({i["run_id"] for i in items}) == 60
    assert server.requests_to("/annotation-queues/", "POST") == []  # not the deprecated /runs route
    notes = [f for f in server.feedback.values() if f["key"] == REVIEW_KEY]
    assert len(notes) == 60 and all("**Claim:**" in f["comment"] and f.get("score") is None for f in notes)
    assert not [f for f in server.feedback.values() if f["key"] == VERDICT_LABEL]  # nothing prefilled
    assert queue.push(pending(store, queue.key)) == 0
    assert _sample_and_push(store, run_id, _queue(client, store), seed=7) == 60
    assert len({i["run_id"] for i in state(server).items}) == len(state(server).items) == 120

    rng = random.Random(5)
    by_run = {trace: item for item, trace in store.query("SELECT item_id, trace_id FROM calibration_items")}
    first_sixty = [i["run_id"] for i in items[:60]]
    for n, run in enumerate(first_sixty):
        judge = json.loads(store.query("SELECT judge FROM calibration_items WHERE item_id = ?", (by_run[run],))[0][0])[
            "values"
        ][VERDICT_LABEL]
        value = judge if rng.random() < 0.85 else rng.choice([v for v in VERDICTS if v != judge])
        review(server, run, VERDICT_LABEL, value=value)
        review(server, run, "grounding.grounded", score=1.0 if value == "supported" else 0.0)
        if n < 10:
            review(server, run, VERDICT_LABEL, value=value, user="reviewer-2")
    # feedback this package (or any script) wrote, even on a rubric key, is not a human label
    review(server, first_sixty[0], VERDICT_LABEL, value="contradicted", source_type="api", user=None)
    review(server, first_sixty[1], VERDICT_LABEL, value="contradicted", source_type="model", user="judge")
    review(server, first_sixty[2], VERDICT_LABEL, value="contradicted", user="x", extra={"scorer_version": "1"})

    pulled = queue.pull()
    assert len(pulled) == 130 and {lab.author for lab in pulled} == {"reviewer-1", "reviewer-2"}
    assert add_labels(store, pulled, now=NOW) == 130
    assert add_labels(store, _queue(client, store).pull(), now=NOW) == 0

    cal = measure_and_record(store, judge_model=MODEL, rubric_version=RUBRIC, label=VERDICT_LABEL, now=NOW)
    assert cal.n == 60 and cal.kappa is not None and cal.kappa > 0.5

    judge = QueueJudge(model=MODEL).enqueue(_judgement())
    trace = _trace().model_copy(update={"trace_id": _run_id(0), "timestamp": NOW})
    result = score_trace(
        trace, [*deterministic_scorers(), grounding_scorer(judge=judge, agreement=grounding_agreement(store, MODEL))]
    )
    result.metadata["langsmith"] = {"run_id": _run_id(0), "session_id": next(iter(server.projects))}
    with LangSmithSink(client) as sink:
        sink.write(result)
    written = [f for f in server.feedback.values() if f["key"] == "grounding.rate"]
    assert written and written[0]["feedback_source"]["metadata"]["agreement"]["calibration_id"] == cal.calibration_id


def test_feedback_this_package_wrote_is_not_human(server: FakeLangSmith, client: Any, tmp_path: Path) -> None:
    store, run_id = scored_store(tmp_path / "s.db", traces=30, trace_id=_run_id)
    queue = _queue(client, store)
    _sample_and_push(store, run_id, queue, seed=1)
    run = state(server).items[0]["run_id"]
    review(server, run, VERDICT_LABEL, value="supported", source_type="api", user=None)
    review(server, run, VERDICT_LABEL, value="supported", user="someone", extra={"tool": "tracescore"})
    review(server, _run_id(150), VERDICT_LABEL, value="supported")  # a human label on a run never queued
    assert queue.pull() == []  # must fail if api/model/our feedback were counted
    review(server, run, VERDICT_LABEL, value="partial")
    assert [(lab.value, lab.source) for lab in queue.pull()] == [("partial", "langsmith")]


def test_a_lost_answer_never_becomes_a_second_queue_item(server: FakeLangSmith, client: Any, tmp_path: Path) -> None:
    store, run_id = scored_store(tmp_path / "s.db", traces=30, trace_id=_run_id)
    queue = _queue(client, store)
    ref = queue.setup()
    # stored, then the answer cut short; then a 503: the retry must find the stored item, not POST another
    server.faults.add(f"/api/v1/platform/annotation-queues/{ref.queue_id}/items", Fault.truncated(), Fault.http(503))
    assert _sample_and_push(store, run_id, queue, seed=2) == 30
    runs = [i["run_id"] for i in state(server).items]
    assert len(runs) == len(set(runs)) == 30
    assert server.faults.pending() == 0


def test_a_human_entered_required_doc_id_makes_recall_present_on_the_next_run(
    server: FakeLangSmith, tmp_path: Path
) -> None:
    """#12 acceptance 4 on LangSmith: score a project window, queue it, a reviewer enters the required ids as
    feedback, ``calibrate pull``, and the next ``score --source langsmith`` of that run has recall@5 (not the other)."""
    traces = [{k: v for k, v in t.items() if k != "labels"} for t in load_samples(2)]  # recall@5 not computable
    seed(server, traces, project="support-agent")
    root = {r["extra"]["metadata"]["source_trace"]: r["id"] for r in server.runs if r.get("parent_run_id") is None
            and r.get("extra", {}).get("metadata", {}).get("source_trace")}
    labelled, other = root["tr-0000"], root["tr-0001"]
    db, project = str(tmp_path / "ts.db"), ["--project", "support-agent"]
    window = ["--from", "2026-11-20T00:00:00Z", "--to", "2026-11-21T00:00:00Z"]
    with FakeAnthropic() as judge:
        env = {"LANGSMITH_API_KEY": "lsv2_pt_test", "LANGSMITH_ENDPOINT": server.url, "ANTHROPIC_API_KEY": "k",
               "ANTHROPIC_BASE_URL": judge.url}

        def cli(*args: str) -> Result:
            result = CliRunner(env=env).invoke(main, list(args))
            assert result.exit_code == 0, result.output
            return result

        def scored(out: str) -> dict[str, dict[str, Any]]:
            cli("score", "--source", "langsmith", *project, *window, "--store", db, "--out", str(tmp_path / out), "-q")
            return {r["trace_id"]: r for r in map(json.loads, (tmp_path / out).read_text().splitlines())}

        before = scored("1.jsonl")
        assert set(before) == {labelled, other}
        assert all(RECALL not in r["scores"] for r in before.values())
        assert "no required_doc_ids label" in json.dumps(before[labelled]["missing"])

        cli("calibrate", "sample", "--to", "langsmith", *project, "--n", "10", "--store", db)
        assert {i["run_id"] for i in state(server).items} == {labelled, other}
        # the reviewer types a retrieved id, a retrieved URL (as written, not normalised) and one never retrieved
        review(server, labelled, LABEL, value="policy-returns-v4 HTTPS://Blog.Acme-Shop.com/2022/05/holiday-returns/,"
               " policy-never")
        pulled = cli("calibrate", "pull", "--from", "langsmith", *project, "--store", db).output
        assert "pulled 1 label(s) on 1 item(s) from langsmith: 1 new" in pulled

        after = scored("2.jsonl")
    assert after[labelled]["scores"][RECALL] == 2 / 3  # ranks 1 and 2 of the search; policy-never never came back
    assert after[labelled]["metadata"]["label_sources"]["required_doc_ids"]["never_retrieved"] == ["policy-never"]
    assert RECALL not in after[other]["scores"]  # no label entered for it
    written = {(f["run_id"], f["key"]): f.get("score") for f in server.feedback.values()}
    assert written[(labelled, RECALL)] == round(2 / 3, 4) and (other, RECALL) not in written
