"""The Langfuse calibration queue end to end (#12 acceptance 1): the real ``langfuse`` SDK over loopback against the
fake. Set up twice (nothing duplicated), sample 60 of 200 scored traces into the queue (no item re-queued), reviewers
answer through the fake, pull twice (no duplicates, only humans), measure, and the next written judged score carries
the agreement.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from tests.calibrate.helpers import MODEL, RUBRIC, scored_store
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.base import Fault
from tests.fakes.judge import QueueJudge
from tests.fakes.langfuse import PUBLIC_KEY, SECRET_KEY, FakeLangfuse, env_for
from tests.fakes.langfuse_data import make_trace
from tests.fakes.langfuse_queues import annotate, state
from tests.scorers.test_grounding import _judgement, _trace
from tracescore.calibrate.agreement import VERDICTS
from tracescore.calibrate.carry import grounding_agreement
from tracescore.calibrate.labels import VERDICT_LABEL, add_labels, measure_and_record, stored_labels
from tracescore.calibrate.queued import pending, queued_traces
from tracescore.calibrate.required import LABEL
from tracescore.calibrate.sampling import candidates, queued_ids, record_sample, sample
from tracescore.cli import main
from tracescore.engine.pipeline import score_trace
from tracescore.engine.plan import deterministic_scorers
from tracescore.platforms.langfuse.client import LangfuseCredentials, make_client
from tracescore.platforms.langfuse.queue import LangfuseLabelQueue
from tracescore.platforms.langfuse.sink import LangfuseScoreSink
from tracescore.scorers.grounding import grounding_scorer
from tracescore.store.db import Store

NOW = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)
RECALL = "retrieval.recall_at_5"


@pytest.fixture
def server() -> Iterator[FakeLangfuse]:
    with FakeLangfuse() as fake:
        for t in range(200):
            tid = f"trace-{t:03d}"
            fake.add_trace(
                {"id": tid, "name": "agent"}, [{"id": f"obs-{t}", "type": "SPAN", "startTime": "2026-11-30T10:00:00Z"}]
            )
        yield fake


@pytest.fixture
def client(server: FakeLangfuse) -> Iterator[Any]:
    with make_client(LangfuseCredentials(PUBLIC_KEY, SECRET_KEY, server.url), timeout=5) as api:
        yield api


def _queue(client: Any, store: Store) -> LangfuseLabelQueue:
    return LangfuseLabelQueue(client, store, backoff=0.0, sleep=lambda s: None)


def _sample_and_push(store: Store, run_id: str, queue: LangfuseLabelQueue, seed: int) -> int:
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


def _judge_value(store: Store, item_id: str) -> str:
    import json

    row = store.query("SELECT judge FROM calibration_items WHERE item_id = ?", (item_id,))[0][0]
    return str(json.loads(row)["values"][VERDICT_LABEL])


def test_setup_twice_creates_nothing_twice(server: FakeLangfuse, client: Any, tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    first = _queue(client, store).setup()
    second = _queue(client, store).setup()  # a new process: found on the platform, not created again
    assert first == second
    assert len(server.score_configs) == 5 and len(state(server).queues) == 1
    assert sorted(first.configs) == sorted(c["name"] for c in server.score_configs)
    verdict = next(c for c in server.score_configs if c["name"] == VERDICT_LABEL)
    assert [c["label"] for c in verdict["categories"]] == list(VERDICTS)
    kinds = {c["name"]: c["dataType"] for c in server.score_configs}
    assert kinds["grounding.grounded"] == "BOOLEAN" and kinds["retrieval.required_doc_ids"] == "TEXT"
    assert state(server).queues[0]["scoreConfigIds"] == list(first.configs.values())


def test_queue_loop_sample_review_pull_measure_carry(server: FakeLangfuse, client: Any, tmp_path: Path) -> None:
    store, run_id = scored_store(tmp_path / "s.db", traces=200)
    queue = _queue(client, store)
    assert _sample_and_push(store, run_id, queue, seed=7) == 60
    items = state(server).items
    assert len(items) == 60 and len({i["objectId"] for i in items}) == 60
    # blind: the comment shows claim, document and quote, never a verdict; nothing is prefilled
    comments = state(server).comments
    assert len(comments) == 60 and all("**Claim:**" in c["content"] for c in comments)
    assert not any(v in c["content"].lower() for c in comments for v in ("unsupported", "contradicted"))
    assert not [s for s in server.scores.values() if s.get("source") == "ANNOTATION"]
    # pushing again, or sampling again, never re-queues an item or a trace
    assert queue.push(pending(store, queue.key)) == 0
    assert _sample_and_push(store, run_id, _queue(client, store), seed=7) == 60
    assert len(state(server).items) == 120 and len({i["objectId"] for i in state(server).items}) == 120

    # reviewers answer in the queue: 85% agree with the judge; a second reviewer on ten items
    rng = random.Random(5)
    by_trace = {trace: item for item, trace in store.query("SELECT item_id, trace_id FROM calibration_items")}
    first_sixty = [i["objectId"] for i in items[:60]]
    for n, trace in enumerate(first_sixty):
        judged = _judge_value(store, by_trace[trace])
        value = judged if rng.random() < 0.85 else rng.choice([v for v in VERDICTS if v != judged])
        annotate(server, trace, VERDICT_LABEL, value, when=NOW + timedelta(minutes=n))
        annotate(server, trace, "grounding.grounded", value == "supported", when=NOW + timedelta(minutes=n))
        if n < 10:
            annotate(server, trace, VERDICT_LABEL, value, author="user-reviewer-2", when=NOW + timedelta(hours=1))
    # an ANNOTATION score this package wrote (our metadata), and one with no human author: neither counts
    annotate(server, first_sixty[0], VERDICT_LABEL, "contradicted", metadata={"scorer_version": "grounding-1"})
    annotate(server, first_sixty[1], VERDICT_LABEL, "contradicted", author=None)

    server.faults.add("/api/public/v3/scores", Fault.rate_limited(retry_after=0))
    pulled = queue.pull()
    assert len(pulled) == 60 + 60 + 10
    assert {lab.author for lab in pulled} == {"user-reviewer-1", "user-reviewer-2"}
    assert add_labels(store, pulled, now=NOW) == 130
    assert add_labels(store, _queue(client, store).pull(), now=NOW) == 0  # a re-pull adds nothing
    assert len(stored_labels(store)) == 130

    cal = measure_and_record(store, judge_model=MODEL, rubric_version=RUBRIC, label=VERDICT_LABEL, now=NOW)
    assert cal.n == 60 and cal.kappa is not None and cal.kappa > 0.5
    assert cal.detail["human_human"]["n"] == 10

    # the next run's written judged scores carry it, in the Langfuse score metadata
    agreement = grounding_agreement(store, MODEL)
    judge = QueueJudge(model=MODEL).enqueue(_judgement())
    trace = _trace().model_copy(update={"timestamp": NOW})
    result = score_trace(trace, [*deterministic_scorers(), grounding_scorer(judge=judge, agreement=agreement)])
    sink = LangfuseScoreSink(client, sleep=lambda s: None)
    sink.write(result)
    sink.close()
    written = [s for s in server.scores.values() if s["name"] == "grounding.rate" and s.get("source") != "ANNOTATION"]
    assert written and written[0]["metadata"]["agreement"]["calibration_id"] == cal.calibration_id
    assert written[0]["metadata"]["agreement"]["n"] == 60


def test_an_annotation_score_this_package_wrote_is_not_human(server: FakeLangfuse, client: Any, tmp_path: Path) -> None:
    store, run_id = scored_store(tmp_path / "s.db", traces=30)
    queue = _queue(client, store)
    _sample_and_push(store, run_id, queue, seed=1)
    trace = state(server).items[0]["objectId"]
    annotate(server, trace, VERDICT_LABEL, "supported", metadata={"scorer_version": "grounding-1"})
    annotate(server, trace, VERDICT_LABEL, "supported", author=None)
    annotate(server, "trace-not-queued", VERDICT_LABEL, "supported")
    assert queue.pull() == []  # must fail if ours, author-less or unqueued scores were counted
    annotate(server, trace, VERDICT_LABEL, "partial")
    assert [(lab.value, lab.source) for lab in queue.pull()] == [("partial", "langfuse")]


def test_a_lost_answer_never_becomes_a_second_queue_item(server: FakeLangfuse, client: Any, tmp_path: Path) -> None:
    store, run_id = scored_store(tmp_path / "s.db", traces=30)
    queue = _queue(client, store)
    ref = queue.setup()
    # the server stores the item / comment, then the answer is cut short: the retry must find it, not POST again
    server.faults.add(f"/api/public/annotation-queues/{ref.queue_id}/items", Fault.truncated(), Fault.http(503))
    server.faults.add("/api/public/comments", Fault.truncated())
    assert _sample_and_push(store, run_id, queue, seed=2) == 30  # one claim of each of the 30 traces
    objects = [i["objectId"] for i in state(server).items]
    assert len(objects) == len(set(objects)) == 30
    marks = [c["content"].split("item ")[1].split("*")[0] for c in state(server).comments]
    assert len(marks) == len(set(marks)) == 30
    assert server.faults.pending() == 0


def test_a_human_entered_required_doc_id_makes_recall_present_on_the_next_run(
    server: FakeLangfuse, tmp_path: Path
) -> None:
    """#12 acceptance 4 on Langfuse: score a window, queue it, a reviewer enters the required ids in the queue,
    ``calibrate pull``, and the next ``score --source langfuse`` of that trace has recall@5 (the other has none)."""
    start = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    for i in (1, 2):  # no labels in the trace: recall@5 cannot be computed
        server.add_trace(*make_trace(i, start + timedelta(minutes=i), labels=False))
    db, window = str(tmp_path / "ts.db"), ["--from", "2026-11-20T00:00:00Z", "--to", "2026-11-21T00:00:00Z"]
    with FakeAnthropic() as judge:
        env = env_for(server) | {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": judge.url}

        def cli(*args: str) -> Result:
            result = CliRunner(env=env).invoke(main, list(args))
            assert result.exit_code == 0, result.output
            return result

        def scored(out: str) -> dict[str, dict[str, Any]]:
            cli("score", "--source", "langfuse", *window, "--store", db, "--out", str(tmp_path / out), "-q")
            return {r["trace_id"]: r for r in map(json.loads, (tmp_path / out).read_text().splitlines())}

        before = scored("1.jsonl")
        assert set(before) == {"tr-00001", "tr-00002"}
        assert all(RECALL not in r["scores"] for r in before.values())
        assert "no required_doc_ids label" in json.dumps(before["tr-00001"]["missing"])

        cli("calibrate", "sample", "--to", "langfuse", "--n", "10", "--store", db)
        assert {i["objectId"] for i in state(server).items} == {"tr-00001", "tr-00002"}
        # the reviewer types a retrieved id, a retrieved URL (as written, not normalised) and one never retrieved
        annotate(server, "tr-00001", LABEL, "policy-returns-v4, HTTPS://News.Example.org/x/ policy-never")
        pulled = cli("calibrate", "pull", "--from", "langfuse", "--store", db).output
        assert "pulled 1 label(s) on 1 item(s) from langfuse: 1 new" in pulled

        after = scored("2.jsonl")
    assert after["tr-00001"]["scores"][RECALL] == 2 / 3  # 2 of the 3 required ids came back in a search
    assert after["tr-00001"]["metadata"]["label_sources"]["required_doc_ids"]["never_retrieved"] == ["policy-never"]
    assert RECALL not in after["tr-00002"]["scores"]  # no label entered for it
    written = {(s["traceId"], s["name"]): s["value"] for s in server.scores.values() if s.get("source") != "ANNOTATION"}
    assert written[("tr-00001", RECALL)] == 2 / 3 and ("tr-00002", RECALL) not in written
