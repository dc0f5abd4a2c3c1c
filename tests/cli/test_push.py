"""``tracescore push``: result files written back with the sinks' ids, resumable per file, at one rate limit.

Results come from scoring the generated exports (``tests/fakes/exports.py``); the platforms are the loopback fakes
reached by the real SDKs. Issue #15: item 3 and the push half of acceptance 3.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.base import Request, Response
from tests.fakes.exports import PROJECT_NAME, write_langfuse_export, write_langsmith_export
from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import load_samples, seed
from tests.fakes.s3 import S3, s3  # noqa: F401 - the fixture
from tracescore.cli import main
from tracescore.cli.push import result_from_line
from tracescore.platforms.langfuse.export import LangfuseExport
from tracescore.sinks.records import records_from_result

WINDOW = ["--from", "2026-11-01T00:00:00Z", "--to", "2026-12-01T00:00:00Z"]


def _run(args: list[str], env: dict[str, str]) -> Any:
    return CliRunner(env=env).invoke(main, args)


@pytest.fixture(scope="module")
def judge() -> Any:
    with FakeAnthropic() as fake:
        yield fake


@pytest.fixture(scope="module")
def langfuse_results(tmp_path_factory: pytest.TempPathFactory, judge: FakeAnthropic) -> Path:
    """The Langfuse export of the samples, scored with the judge (no write-back: that is push's job)."""
    tmp = tmp_path_factory.mktemp("lf")
    write_langfuse_export(tmp / "export", fmt="parquet")
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": judge.url}
    out = tmp / "results" / "part-0.jsonl"
    out.parent.mkdir()
    result = _run(["score", str(tmp / "export"), "--source", "langfuse-export", "--out", str(out),
                   "--store", str(tmp / "s.db"), "-q"], env)
    assert result.exit_code == 0, result.output
    return out


def _seed_langfuse(server: FakeLangfuse, export: Path) -> None:
    """The same traces in the fake Langfuse's API, as the export's rows read back (one trace per API trace)."""
    for record in LangfuseExport(str(export)).records(datetime_min()):
        payload: Any = record.payload
        rows = payload["observations"]
        root = next(r for r in rows if not r.get("parentObservationId"))
        trace = {"id": payload["id"], "name": root.get("traceName"), "environment": root.get("environment"),
                 "tags": [], "timestamp": root["startTime"]}
        server.add_trace(trace, [{k: v for k, v in r.items() if k not in ("traceName", "tags")} for r in rows])


def datetime_min() -> Any:
    from tracescore.platforms.base import EVERYTHING

    return EVERYTHING


def test_push_writes_the_ids_the_sink_writes_and_a_repeat_creates_nothing(
    langfuse_results: Path, judge: FakeAnthropic, tmp_path: Path, s3: S3, monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:
    monkeypatch.chdir(tmp_path)
    judged = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": judge.url}
    with FakeLangfuse() as direct, FakeLangfuse() as pushed:
        _seed_langfuse(direct, langfuse_results.parents[1] / "export")
        scored = _run(["score", "--source", "langfuse", *WINDOW, "--store", "direct.db", "-q"],
                      env_for(direct) | judged)
        assert scored.exit_code == 0, scored.output
        first = _run(["push", str(langfuse_results), "--to", "langfuse", "--store", "push.db"], env_for(pushed))
        assert first.exit_code == 0, first.output
        # the same score ids, names, values and upsert dates as the sink writing while scoring from the API
        assert {k: (s["value"], s["dataType"]) for k, s in pushed.scores.items()} == {
            k: (s["value"], s["dataType"]) for k, s in direct.scores.items()}
        assert any(name.startswith("grounding.") for _, name, _ in pushed.scores)
        stored, writes = len(pushed.scores), len(pushed.score_writes)
        assert f"pushed {stored} scores of 38 traces from 1 file(s)" in first.output

        again = _run(["push", str(langfuse_results), "--to", "langfuse", "--store", "push.db"], env_for(pushed))
        assert again.exit_code == 0 and "1 already pushed, skipped; 0 requests" in again.output
        assert len(pushed.score_writes) == writes  # the marker: nothing sent

        remote = s3.upload(langfuse_results.parent, "results-bucket", "run-1")
        fresh = _run(["push", remote, "--to", "langfuse", "--store", "fresh.db"], env_for(pushed))
        assert fresh.exit_code == 0, fresh.output
        assert len(pushed.score_writes) == 2 * writes  # everything sent again, from s3:// ...
        assert len(pushed.scores) == stored  # ... and nothing new: the same ids upserted
        assert set(pushed.score_counts().values()) == {2}


def test_push_resumes_after_a_failure_with_only_the_files_not_done(
    langfuse_results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    lines = langfuse_results.read_text(encoding="utf-8").splitlines()
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "a.jsonl").write_text("\n".join(lines[:20]) + "\n", encoding="utf-8")
    (folder / "b.jsonl").write_text("\n".join(lines[20:]) + "\n", encoding="utf-8")
    later = {json.loads(line)["trace_id"] for line in lines[20:]}
    config = tmp_path / "tracescore.toml"
    config.write_text("[langfuse]\nmax_attempts = 2\nbackoff = 0\n", encoding="utf-8")

    class Flaky(FakeLangfuse):
        down = True

        def handle(self, request: Request) -> Response:
            body = request.json() if request.path == "/api/public/scores" else None
            if self.down and isinstance(body, list) and any(s.get("traceId") in later for s in body):
                return Response(503, {"message": "unavailable"})
            return super().handle(request)

    with Flaky() as server:
        args = ["push", str(folder), "--to", "langfuse", "--store", "push.db", "--config", str(config)]
        failed = _run(args, env_for(server))
        assert failed.exit_code == 4 and "b.jsonl" in failed.stderr and "re-run the same push" in failed.stderr
        assert {s["traceId"] for s in server.scores.values()} == {json.loads(x)["trace_id"] for x in lines[:20]}
        server.down = False
        before = len(server.requests_to("/api/public/scores", "POST"))
        resumed = _run(args, env_for(server))
        assert resumed.exit_code == 0, resumed.output
        assert "1 already pushed, skipped" in resumed.output
        sent = [s["traceId"] for r in server.requests_to("/api/public/scores", "POST")[before:] for s in r.json()]
        assert set(sent) == later  # only the file not done
        assert {s["traceId"] for s in server.scores.values()} == {json.loads(x)["trace_id"] for x in lines}


class RateLimitedLangfuse(FakeLangfuse):
    """A fake Langfuse with a rate limit: more than ``limit`` requests in one clock second get 429 Retry-After;
    ``per_second`` counts every request that arrived, by second."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit
        self.per_second: Counter[int] = Counter()
        self.limited = 0
        self._count = threading.Lock()

    def handle(self, request: Request) -> Response:
        with self._count:
            second = math.floor(time.monotonic())
            self.per_second[second] += 1
            over = self.per_second[second] > self.limit
            self.limited += over
        if over:
            return Response(429, {"message": "rate limited"}, {"Retry-After": "1"})
        return super().handle(request)


def _copies(results: Path, out: Path, copies: int) -> int:
    """``copies`` renamed copies of every result line (distinct trace ids); returns the number of lines."""
    lines = [json.loads(x) for x in results.read_text(encoding="utf-8").splitlines()]
    rows = [dict(r, trace_id=f"{r['trace_id']}-c{c}") for c in range(copies) for r in lines]
    out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return len(rows)


def test_push_at_the_platform_rate_limit_never_exceeds_it(
    langfuse_results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    traces = _copies(langfuse_results, tmp_path / "many.jsonl", 3)
    with RateLimitedLangfuse(limit=40) as server:
        result = _run(["push", str(tmp_path / "many.jsonl"), "--to", "langfuse", "--batch", "1",
                       "--requests-per-minute", "2400", "--store", "push.db"], env_for(server))
        assert result.exit_code == 0, result.output
        busiest = max(server.per_second.values())
        print(f"push at 40 req/s: {sum(server.per_second.values())} requests, busiest second {busiest}")
        assert sum(server.per_second.values()) > traces  # one write per trace, plus the score config
        assert busiest <= 40 * 1.05 and server.limited == 0


def test_the_rate_check_can_fail_a_push_without_the_limit_overruns_the_platform(
    langfuse_results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with RateLimitedLangfuse(limit=10) as server:
        result = _run(["push", str(langfuse_results), "--to", "langfuse", "--batch", "1", "--store", "push.db"],
                      env_for(server))
        assert result.exit_code == 0, result.output  # the 429s were retried (Retry-After)...
        assert max(server.per_second.values()) > 10 * 1.05 and server.limited > 0  # ... but the limit was overrun


def test_push_to_langsmith_writes_the_feedback_ids_the_sink_writes_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    layout = write_langsmith_export(tmp_path / "export")
    out = tmp_path / "results.jsonl"
    scored = _run(["score", str(tmp_path / "export"), "--source", "langsmith-export", "--out", str(out), "-q"],
                  {"ANTHROPIC_API_KEY": ""})
    assert scored.exit_code == 0, scored.output
    present = sum(len(json.loads(x)["scores"]) for x in out.read_text(encoding="utf-8").splitlines())
    with FakeLangSmith() as direct, FakeLangSmith() as server:
        for fake in (direct, server):
            seed(fake, load_samples(), project=PROJECT_NAME)
        written = _run(["score", "--source", "langsmith", "--project", PROJECT_NAME, *WINDOW, "--store", "d.db",
                        "-q"], {"LANGSMITH_API_KEY": "k", "LANGSMITH_ENDPOINT": direct.url, "ANTHROPIC_API_KEY": ""})
        assert written.exit_code == 0, written.output
        env = {"LANGSMITH_API_KEY": "k", "LANGSMITH_ENDPOINT": server.url}
        first = _run(["push", str(out), "--to", "langsmith", "--store", "a.db"], env)
        assert first.exit_code == 0, first.output
        assert len(server.feedback) == present
        assert {f["run_id"] for f in server.feedback.values()} == set(layout.platform_ids.values())
        assert {i: (f["key"], f["score"], f.get("value")) for i, f in server.feedback.items()} == {
            i: (f["key"], f["score"], f.get("value")) for i, f in direct.feedback.items()}
        creates = server.feedback_creates
        again = _run(["push", str(out), "--to", "langsmith", "--store", "b.db"], env)  # no marker: all re-sent
        assert again.exit_code == 0, again.output
        assert len(server.feedback) == present and not server.duplicates()
        assert server.feedback_creates == creates  # nothing new created: the unchanged feedback is skipped


def test_a_line_that_is_not_a_result_is_reported_and_the_rest_pushed(
    langfuse_results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    lines = langfuse_results.read_text(encoding="utf-8").splitlines()
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], "{broken", json.dumps({"trace_id": "x", "scores": [1]}), *lines[1:]]) + "\n",
                   encoding="utf-8")
    with FakeLangfuse() as server:
        result = _run(["push", str(bad), "--to", "langfuse", "--store", "push.db"], env_for(server))
        assert result.exit_code == 1
        assert "line 2 skipped: not JSON" in result.stderr and "line 3: not a result line" in result.stderr
        assert len({s["traceId"] for s in server.scores.values()}) == len(lines)


def test_a_result_line_gives_back_the_records_of_its_result(langfuse_results: Path) -> None:
    """The records push sends are those the sinks derive from the original result: the same ids, and the judged
    scores' rubric version (LangSmith's feedback id and ``keep_versions`` names depend on it)."""
    line = next(json.loads(x) for x in langfuse_results.read_text(encoding="utf-8").splitlines()
                if "grounding.rate" in json.loads(x)["scores"])
    records, refused = records_from_result(result_from_line(line))
    assert not refused and {r.name for r in records} == set(line["scores"])
    grounding = next(r for r in records if r.name == "grounding.rate")
    assert grounding.metadata["rubric_version"] == line["judge"]["rubric_version"]
    changed = dict(line, judge=dict(line["judge"], rubric_version="grounding-99"))
    other = next(r for r in records_from_result(result_from_line(changed))[0] if r.name == "grounding.rate")
    assert other.version == "grounding-99" and grounding.version == line["judge"]["rubric_version"]
    assert other.id == grounding.id  # one score per trace and name: a new rubric overwrites (#16)


def test_a_pushed_line_whose_judge_failed_removes_no_earlier_judged_score(
    langfuse_results: Path, tmp_path: Path
) -> None:
    """A results file re-scored while the judge was down (judged scores under ``missing``: ``judge_error``) pushed
    after the judged one: the earlier judged scores stay on the platform, counted kept_stale (#27)."""
    from tracescore import catalog

    judged = {e.name for e in catalog.entries() if e.judged}
    failed = tmp_path / "failed" / "part-0.jsonl"
    failed.parent.mkdir()
    with langfuse_results.open() as src, failed.open("w") as out:
        for text in src:
            line = json.loads(text)
            down = {name: "judge_error" for name in line["scores"] if name in judged}
            line["scores"] = {n: v for n, v in line["scores"].items() if n not in down}
            out.write(json.dumps(line | {"missing": line.get("missing", {}) | down}) + "\n")
    with FakeLangfuse() as pushed:
        first = _run(["push", str(langfuse_results), "--to", "langfuse", "--store", str(tmp_path / "p.db")],
                     env_for(pushed))
        assert first.exit_code == 0, first.output
        before = {k for k, s in pushed.scores.items() if s["name"] in judged}
        assert before
        second = _run(["push", str(failed), "--to", "langfuse", "--store", str(tmp_path / "p.db")], env_for(pushed))
        assert second.exit_code == 0, second.output
        assert not pushed.requests_to("/api/public/scores/", "DELETE")
        assert before <= set(pushed.scores)
    from tracescore.store.db import Store

    with Store(tmp_path / "p.db") as store:
        summary = store.runs()[-1]["summary"]
    assert summary["write"]["kept_stale"] == len(before) and summary["write"]["removed"] == 0
