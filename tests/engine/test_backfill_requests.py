"""A backfill's requests follow the data (pages read, batches written), not its slices (issue #29, item 9).

The 38 sample traces of ``cookbook/data/traces.jsonl`` (all on 2026-11-20) are stored in the fake Langfuse and the
fake LangSmith (each query backend); a one-day ``tracescore backfill`` (48 slices, the default) runs through the
real SDKs over loopback, and every request is counted at the fake. Measured before the change: Langfuse 99 requests
(48 observation listings, 48 experiment-item listings, a score-config read and create, one score batch); LangSmith
384 on clickhouse_only and dual, 385 on smithdb_only (86 run queries: 48 root listings, one children query per
trace). After: Langfuse 5; LangSmith 337 on each backend (39 run queries: one root listing, 38 children queries; the
rest are the 284 feedback writes, one per score, and the feedback configs).
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.base import Request, Response
from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langfuse_data import make_trace
from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import load_samples, seed
from tests.fakes.langsmith_v2 import BACKENDS
from tests.test_both_platforms import _langfuse_trace
from tracescore.cli import main
from tracescore.config import load_config
from tracescore.engine.runner import backfill_job
from tracescore.engine.setup import build_setup
from tracescore.store.db import Store
from tracescore.store.state import JobState

DAY = ["--from", "2026-11-20T00:00:00Z", "--to", "2026-11-21T00:00:00Z", "-q"]


def _config(tmp_path: Path, source: str, job: str = "") -> str:
    path = tmp_path / "tracescore.toml"
    path.write_text(f'[job]\nstore = "{tmp_path / "ts.db"}"\n{job}\n[source]\n{source}\n')  # backfill_chunks: 48
    return str(path)


def _summary(output: str) -> dict[str, Any]:
    summary: dict[str, Any] = json.loads(output.splitlines()[-1])
    return summary


def _langfuse(fake: FakeLangfuse) -> set[str]:
    samples = load_samples()
    for sample in samples:
        fake.add_trace(*_langfuse_trace(sample))
    return {s["id"] for s in samples}


def test_a_one_day_langfuse_backfill_of_38_traces_takes_at_most_6_requests(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The job's own backfill, its writes flushed by batch size only (by default also every second: a slow machine
    sends the 38 traces' scores in more batches, see the next test)."""
    with FakeLangfuse() as fake:
        ids = _langfuse(fake)
        for key, value in env_for(fake).items():
            monkeypatch.setenv(key, value)
        setup = build_setup(load_config(Path(_config(tmp_path, 'kind = "langfuse"'))))
        setup.limits = replace(setup.limits, write_interval=3600.0)
        try:
            day = datetime(2026, 11, 20, tzinfo=UTC)
            outcome = backfill_job(setup, start=day, stop=day + timedelta(days=1))
        finally:
            setup.close()
        assert outcome.summary["scored"] == 38 and outcome.summary["windows_done"] == 48
        assert outcome.backfill is not None and outcome.backfill.status == "done"
        assert {s["traceId"] for s in fake.scores.values()} == ids
        # the score configs, one per name written, are created once per project (the first run there): apart
        created = fake.requests_to("/api/public/score-configs", "POST")
        assert len(created) == len({s["name"] for s in fake.scores.values()})
        assert len(fake.requests) - len(created) <= 6, [f"{r.method} {r.path}" for r in fake.requests]
        assert outcome.summary["requests"] == len(fake.requests)


def test_a_langfuse_backfill_sends_a_request_per_page_and_per_write_batch_not_per_slice(tmp_path: Path) -> None:
    with FakeLangfuse() as fake:
        ids = _langfuse(fake)
        result = CliRunner().invoke(main, ["backfill", "--config", _config(tmp_path, 'kind = "langfuse"'), *DAY],
                                    env=env_for(fake))
        assert result.exit_code == 0, result.output
        summary = _summary(result.output)
        assert summary["scored"] == 38 and summary["windows_done"] == 48
        assert {s["traceId"] for s in fake.scores.values()} == ids
        pages = fake.requests_to("/api/public/v2/observations")
        labels = fake.requests_to("/api/public/experiment-items")
        batches = fake.requests_to("/api/public/scores", "POST")
        assert len(pages) == len(labels) == 1  # one page of observations holds the day, one of experiment items
        # + the score configs, listed once and each name's created once (the first run in the project), + the
        # project id for trace links, read once (#31)
        assert len(fake.requests_to("/api/public/projects")) == 1
        assert len(fake.requests_to("/api/public/score-configs", "GET")) == 1
        created = fake.requests_to("/api/public/score-configs", "POST")
        assert len(created) == len({s["name"] for s in fake.scores.values()})
        assert len(fake.requests) == len(pages) + len(labels) + len(batches) + 2 + len(created)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_one_day_langsmith_backfill_lists_the_roots_once_not_once_per_slice(tmp_path: Path, backend: str) -> None:
    samples = load_samples()
    with FakeLangSmith() as fake:
        fake.backend = backend
        seed(fake, samples)
        config = _config(tmp_path, 'kind = "langsmith"\nproject = "search-agent"')
        result = CliRunner().invoke(main, ["backfill", "--config", config, *DAY],
                                    env={"LANGSMITH_API_KEY": "k", "LANGSMITH_ENDPOINT": fake.url})
        assert result.exit_code == 0, result.output
        summary = _summary(result.output)
        assert summary["scored"] == 38 and summary["windows_done"] == 48
        queries = [r.json() for r in fake.requests if r.path in ("/runs/query", "/api/v2/runs/query")]
        roots = [q for q in queries if q.get("is_root") is True]
        assert len(roots) == 1  # 38 roots: one page, whatever the number of slices
        assert len(queries) - len(roots) == 38  # the children: one query per trace (no multi-trace query exists)
        writes = [r for r in fake.requests if r.method == "POST" and r.path in ("/feedback", "/feedback-configs")]
        feedback = [r for r in writes if r.path == "/feedback"]
        assert len(feedback) == len(fake.feedback) > 200  # one request per score: LangSmith has no batch create
        # the rest: /info, the project, the root page, 38 children queries, the feedback and config listings
        assert len(fake.requests) - len(writes) <= 44, [f"{r.method} {r.path}" for r in fake.requests]


class _FailingLangfuse(FakeLangfuse):
    """Accepts the first ``healthy`` score batches, then answers every score write with a 503 until ``healthy``
    is raised."""

    def __init__(self, healthy: int) -> None:
        super().__init__()
        self.healthy = healthy

    def handle(self, request: Request) -> Response:
        if request.path == "/api/public/scores" and request.method == "POST":
            if len(self.requests_to("/api/public/scores", "POST")) > self.healthy:
                return Response(503, {"message": "unavailable"})
        return super().handle(request)


def test_slices_cut_from_one_listing_are_checkpointed_only_once_written_and_resume_below_the_checkpoint(
    tmp_path: Path,
) -> None:
    """200 traces over a day, read 50 observations a page; the platform stops taking scores after 6 batches of
    10 traces. The checkpoint covers only slices whose every trace is on the platform; the resumed backfill reads
    only below it and sends no score twice."""
    start = datetime(2026, 11, 1, tzinfo=UTC)
    stop = start + timedelta(days=1)
    with _FailingLangfuse(healthy=6) as fake:
        rooted: dict[str, datetime] = {}
        for i in range(200):
            trace, observations = make_trace(i, start + timedelta(seconds=431 * i), size=4)
            fake.add_trace(trace, observations)
            rooted[str(trace["id"])] = start + timedelta(seconds=431 * i)
        settings = 'kind = "langfuse"\n\n[langfuse]\npage_size = 50\nmax_attempts = 1'
        config = _config(tmp_path, settings, "write_batch = 10")
        args = ["backfill", "--config", config, "--from", start.isoformat(), "--to", stop.isoformat(), "-q"]
        runner = CliRunner()
        failed = runner.invoke(main, args, env=env_for(fake))
        assert failed.exit_code != 0, failed.output
        with Store(tmp_path / "ts.db") as store:
            (job,) = [JobState(store).backfill(str(r[0])) for r in store.query("SELECT id FROM backfills")]
        assert job is not None and job.done_from is not None and start < job.done_from < stop, job
        on_platform = {s["traceId"] for s in fake.scores.values()}
        rooted_above = {trace_id for trace_id, at in rooted.items() if at >= job.done_from}
        assert rooted_above and rooted_above <= on_platform  # every slice claimed done is written

        fake.healthy = 10**6
        listed = len(fake.requests_to("/api/public/v2/observations"))
        resumed = runner.invoke(main, args, env=env_for(fake))
        assert resumed.exit_code == 0, resumed.output
        first = fake.requests_to("/api/public/v2/observations")[listed]
        overhang = timedelta(minutes=10)  # [langfuse] trace_overhang: rows are read that far past the window
        assert datetime.fromisoformat(first.query["toStartTime"][0].replace("Z", "+00:00")) <= job.done_from + overhang
        assert {s["traceId"] for s in fake.scores.values()} == set(rooted)
        assert max(fake.score_counts().values()) == 1  # nothing sent twice
        summary = _summary(resumed.output)
        assert summary["status"] == "done" and summary["seen"] <= 200 - len(rooted_above)  # nothing done read again
