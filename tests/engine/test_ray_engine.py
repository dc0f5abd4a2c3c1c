"""``--engine ray`` on a local Ray cluster (started once for the module, 2 CPUs) against the fake Anthropic API.

Same traces, same scores as the local engine from JSONL; a run killed mid-way resumes with no shard scored twice and
no answered judge request paid for again; the one cluster-wide limiter holds the judge API's rate across workers.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import REPO, SAMPLES
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.azure_openai import FakeAzureOpenAI
from tests.fakes.base import Request, Response
from tests.fakes.exports import UNFINISHED, write_langfuse_export, write_langsmith_export
from tests.fakes.openai_chat import FakeOpenAI
from tracescore.adapters import trace_from_json
from tracescore.cli import main
from tracescore.engine.distributed import JudgeSpec, RaySettings, score_shards
from tracescore.engine.recipe import ScorerPlan
from tracescore.judge.providers import ProviderSettings
from tracescore.scorers.grounding import grounding_call
from tracescore.sinks.parquet import read_parquet_results
from tracescore.sources.folder import FolderSource

pytestmark = pytest.mark.ray
ray = pytest.importorskip("ray")

MODEL = "claude-sonnet-4-6"
LAYOUT = {"day=01/a.jsonl": 7, "day=01/b.jsonl": 6, "day=02/a.jsonl": 6, "day=02/b.jsonl": 7, "day=03/a.jsonl": 6,
          "day=03/b.jsonl": 6}  # 38 sample traces in 6 shards


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        ray.shutdown()


class Judge(FakeAnthropic):
    """The fake Anthropic API, also recording when each request arrived and which ones it answered; ``hold``
    stops answering (the requests wait until ``release``); ``too_many`` counts requests past ``limit`` in the
    second before them; the ``reject``-th request gets a 429 with retry-after 1 s."""

    def __init__(self, limit: int | None = None, reject: int | None = None, latency: float = 0.0) -> None:
        super().__init__(latency)
        self.limit, self.reject = limit, reject
        self.arrivals: list[float] = []
        self.answered: list[str] = []
        self.too_many = 0
        self.rejected_at: float | None = None
        self.hold, self.release = threading.Event(), threading.Event()
        self._guard = threading.Lock()

    def handle(self, request: Request) -> Response:
        now = time.monotonic()
        with self._guard:
            self.arrivals.append(now)
            n = len(self.arrivals)
            over = self.limit is not None and sum(1 for t in self.arrivals if now - t < 1.0) > self.limit
        if self.hold.is_set():
            self.release.wait(30)
            return Response(503, {"type": "error", "error": {"type": "api_error", "message": "held"}})
        if over:
            with self._guard:
                self.too_many += 1  # counted, not refused: a refusal's retry would change what is measured
        if n == self.reject:
            with self._guard:
                self.rejected_at = now
            body = {"type": "error", "error": {"type": "rate_limit_error", "message": "rate limited"}}
            return Response(429, body, {"retry-after": "1"})
        response = super().handle(request)
        with self._guard:
            self.answered.append(content(request))
        return response


def content(request: Request) -> str:
    """A judge request's identity: its body (model, rubric, prefix, content, schema) as sent."""
    return request.body.decode()


def samples() -> list[str]:
    """The sample traces, each question marked with its trace id, so every judge request names its trace."""
    out = []
    for line in SAMPLES.read_text().splitlines():
        if line.strip():
            trace = json.loads(line)
            trace["question"] = f"{trace['question']} (case {trace['id']})"
            out.append(json.dumps(trace))
    return out


def trace_of(body: str) -> str:
    """The trace a judge request belongs to (every rubric's request carries the question)."""
    found = re.search(r"\(case (tr-\d+)\)", body)
    assert found, body[:200]
    return found.group(1)


def shard_folder(root: Path) -> dict[str, str]:
    """The samples split into the shards of ``LAYOUT``; returns trace id → shard key."""
    lines, where, start = samples(), {}, 0
    for key, count in LAYOUT.items():
        path = root / key
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines[start:start + count]) + "\n")
        where |= {json.loads(line)["id"]: key for line in lines[start:start + count]}
        start += count
    assert start == len(lines)
    return where


def settled(results: Path) -> dict[str, int]:
    """The result files once no new one has appeared for a second (a killed driver's tasks may finish the shard
    they were writing before the cluster stops them; such a file is whole, and counts as done)."""
    seen: dict[str, int] = {}
    while True:
        now = {p.name: p.stat().st_mtime_ns for p in results.glob("*.parquet")}
        if now == seen:
            return now
        seen = now
        time.sleep(1.0)


def env(judge: FakeAnthropic) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": judge.url}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """The local engine's results for the samples from one JSONL file, by trace id (judge included); under
    ``"requests"`` the judge requests it made."""
    tmp = tmp_path_factory.mktemp("reference")
    (tmp / "traces.jsonl").write_text("\n".join(samples()) + "\n")
    with Judge() as judge:
        result = CliRunner().invoke(main, ["score", str(tmp / "traces.jsonl"), "--store", str(tmp / "t.db"),
                                           "--out", str(tmp / "ref.jsonl"), "-q"], env=env(judge))
        requests = [content(r) for r in judge.messages()]
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in (tmp / "ref.jsonl").read_text().splitlines()]
    assert sum(1 for line in lines if "grounding.rate" in line["scores"]) > 20  # the judge ran
    return {line["trace_id"]: line for line in lines} | {"requests": requests}


def by_trace(results: Path) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for line in read_parquet_results(str(results)):
        out.setdefault(line["trace_id"], []).append(line)
    return out


def test_ray_scores_every_trace_exactly_like_the_local_engine_from_jsonl(
    cluster: str, reference: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    shard_folder(tmp_path / "traces")
    with Judge() as judge:
        result = CliRunner().invoke(main, ["score", str(tmp_path / "traces"), "--engine", "ray", "--out",
                                           str(tmp_path / "out"), "--store", str(tmp_path / "t.db")], env=env(judge))
    assert result.exit_code == 0, result.output
    assert "6 shard(s): 6 scored now (38 traces), 0 done before, 0 failed" in result.output
    files = sorted(p.name for p in (tmp_path / "out" / "results").iterdir())
    assert len(files) == 6 and all(name.startswith("day=0") and name.endswith(".parquet") for name in files)
    got = by_trace(tmp_path / "out" / "results")
    assert got.keys() == reference.keys() - {"requests"}
    for trace_id, lines in got.items():
        assert len(lines) == 1
        assert lines[0]["scores"] == reference[trace_id]["scores"], trace_id
        assert lines[0]["missing"] == reference[trace_id]["missing"], trace_id
        assert lines[0]["errors"] == reference[trace_id]["errors"], trace_id
    # the report reads the Parquet folder like a results file
    report = CliRunner().invoke(main, ["report", str(tmp_path / "out" / "results")])
    assert report.exit_code == 0, report.output
    assert "38 traces scored" in report.output


@pytest.mark.parametrize("provider", ["openai", "azure-openai"])
def test_ray_judges_through_any_registered_provider_with_the_local_engines_scores(
    cluster: str, reference: dict[str, dict[str, Any]], tmp_path: Path, provider: str
) -> None:
    """#47 item 7: the workers build their judge through the registry from the driver's [judge] settings and the
    provider's own environment variables (the key travels in the JudgeSpec, never printed); the fakes answer the
    Anthropic fake's verdicts, so every trace's scores equal the local engine's on Anthropic."""
    shard_folder(tmp_path / "traces")
    config = tmp_path / "tracescore.toml"
    fake: FakeOpenAI = FakeOpenAI(key="sk-ray") if provider == "openai" else FakeAzureOpenAI(key="az-ray")
    with fake:
        if provider == "openai":
            config.write_text('[judge]\nprovider = "openai"\nmodel = "gpt-5.4"\n')
            judge_env = {"OPENAI_API_KEY": "sk-ray", "OPENAI_BASE_URL": f"{fake.url}/v1"}
        else:
            config.write_text(f'[judge]\nprovider = "azure-openai"\nendpoint = "{fake.url}"\n'
                              'deployment = "judge-gpt"\n')
            judge_env = {"AZURE_OPENAI_API_KEY": "az-ray"}
        result = CliRunner().invoke(main, ["score", str(tmp_path / "traces"), "--engine", "ray", "--config",
                                           str(config), "--out", str(tmp_path / "out"), "--store",
                                           str(tmp_path / "t.db")], env={"ANTHROPIC_API_KEY": ""} | judge_env)
        sent = fake.completions()
    assert result.exit_code == 0, result.output
    assert sent and "sk-ray" not in result.output and "az-ray" not in result.output
    got = by_trace(tmp_path / "out" / "results")
    assert got.keys() == reference.keys() - {"requests"}
    for trace_id, lines in got.items():
        assert (lines[0]["scores"], lines[0]["missing"]) == (reference[trace_id]["scores"],
                                                             reference[trace_id]["missing"]), trace_id


def test_a_langfuse_and_a_langsmith_export_score_on_ray_exactly_like_the_samples_from_jsonl(
    cluster: str, tmp_path: Path
) -> None:
    """Issue #15, acceptance 1 on Ray: each export's shards run with its platform's adapter; every sample's line
    equals the local engine's from ``cookbook/data/traces.jsonl``, score for score (no judge)."""
    env = {"ANTHROPIC_API_KEY": ""}
    base = CliRunner().invoke(main, ["score", str(SAMPLES), "--out", str(tmp_path / "jsonl.jsonl"), "--store",
                                     str(tmp_path / "t.db"), "-q"], env=env)
    assert base.exit_code == 0, base.output
    baseline = {r["trace_id"]: r for r in map(json.loads, (tmp_path / "jsonl.jsonl").read_text().splitlines())}
    expected = sum(len(r["scores"]) + len(r["missing"]) for r in baseline.values())
    for kind, write in (("langfuse-export", write_langfuse_export), ("langsmith-export", write_langsmith_export)):
        layout = write(tmp_path / kind)
        out = tmp_path / f"{kind}-out"
        result = CliRunner().invoke(main, ["score", str(tmp_path / kind), "--source", kind, "--engine", "ray",
                                           "--out", str(out), "--store", str(tmp_path / "t.db")], env=env)
        assert result.exit_code == 0, result.output
        assert "2 shard(s): 2 scored now (38 traces), 0 done before, 0 failed" in result.output, result.output
        got = {layout.sample_id(t): lines for t, lines in by_trace(out / "results").items()}
        assert UNFINISHED not in got and got.keys() == baseline.keys(), kind
        compared = 0
        for trace_id, lines in got.items():
            assert len(lines) == 1, (kind, trace_id)
            for key in ("scores", "missing", "errors", "comments", "timestamp"):
                assert lines[0].get(key) == baseline[trace_id].get(key), (kind, trace_id, key)
            compared += len(lines[0]["scores"]) + len(lines[0]["missing"])
        assert compared == expected > 400, kind


def test_a_bad_line_is_reported_with_its_shard_and_line_and_the_rest_is_scored(cluster: str, tmp_path: Path) -> None:
    shard_folder(tmp_path / "traces")
    with (tmp_path / "traces" / "day=02" / "b.jsonl").open("a") as fh:
        fh.write('{"id": "broken", "question": 3}\n')
    run = score_shards(FolderSource(tmp_path / "traces"), trace_from_json, tmp_path / "out", ScorerPlan(), None,
                       RaySettings(workers=2))
    counts = run.counts()
    assert (counts.seen, counts.scored, counts.failed) == (39, 38, 1)
    assert counts.failures[0].startswith("day=02/b.jsonl: line 8:")
    broken = by_trace(run.results)["broken"][0]
    assert broken["errors"] and not broken["scores"]


def test_a_killed_run_resumes_without_scoring_a_shard_twice_or_repeating_an_answered_judge_call(
    cluster: str, reference: dict[str, dict[str, Any]], tmp_path: Path
) -> None:
    shard_of = shard_folder(tmp_path / "traces")
    out = tmp_path / "out"
    results = out / "results"
    command = [sys.executable, "-c", "from tracescore.cli import main; main()", "score", str(tmp_path / "traces"),
               "--engine", "ray", "--out", str(out), "--store", str(tmp_path / "t.db"), "--judge-rps", "6", "-q"]
    with Judge(latency=0.02) as first:
        child_env = os.environ | env(first) | {"RAY_ADDRESS": cluster, "PYTHONPATH": str(REPO / "src")}
        child = subprocess.Popen(command, env=child_env, start_new_session=True, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
        deadline = time.monotonic() + 90
        while len(list(results.glob("*.parquet")) if results.is_dir() else []) < 2:
            assert child.poll() is None, child.stderr.read() if child.stderr else ""
            assert time.monotonic() < deadline, "the run wrote no 2 shard files in 90 s"
            time.sleep(0.02)
        first.hold.set()  # from now on nothing more is answered; what was answered reaches the cache file
        time.sleep(0.5)
        os.killpg(child.pid, signal.SIGKILL)
        child.wait()
        if child.stderr is not None:
            child.stderr.close()
        done = settled(results)
        answered = list(first.answered)
        first.release.set()
    assert 2 <= len(done) < len(LAYOUT)
    assert answered and len(set(answered)) == len(answered)

    with Judge() as second:
        spec = JudgeSpec(ProviderSettings(), MODEL, MODEL, env(second), in_flight=4)
        run = score_shards(FolderSource(tmp_path / "traces"), trace_from_json, out, ScorerPlan(), spec,
                           RaySettings(workers=2))
        resent = [content(r) for r in second.messages()]

    # no shard twice: the shards done before are skipped and their files untouched; the others scored now
    assert run.done_before == len(done) and len(run.scored) == len(LAYOUT) - len(done) and not run.failed
    assert all(results.joinpath(name).stat().st_mtime_ns == mtime for name, mtime in done.items())
    # every score once, exactly as the local engine scores the same traces from JSONL
    got = by_trace(results)
    assert got.keys() == reference.keys() - {"requests"}
    for trace_id, lines in got.items():
        assert len(lines) == 1, trace_id
        assert (lines[0]["scores"], lines[0]["missing"]) == (
            reference[trace_id]["scores"], reference[trace_id]["missing"]), trace_id
    # judge requests on the re-run: only traces of shards not done, and none the killed run had answered
    done_shards = {shard_of[line[0]["trace_id"]] for name in done for line in [list(
        read_parquet_results(str(results / name)))]}
    assert resent and {shard_of[trace_of(c)] for c in resent}.isdisjoint(done_shards)
    assert not set(resent) & set(answered)
    assert len(resent) == len(set(resent))
    # and between them the two runs asked exactly what one clean run of the local engine asks
    assert set(resent) | set(answered) == set(reference["requests"])
    assert run.judge["cache_loaded"] == len(answered)


def rate_run(tmp_path: Path, per_second: float | None, reject: int | None) -> tuple[Any, Judge, dict[int, int]]:
    """4 shards x 15 traces (~2 distinct judge requests each: grounding, surface), 2 shard workers and 2 judge
    workers with 8 calls in flight each: ~3 s at 40 requests/s."""
    lines = samples()
    judged = [json.loads(line) for line in lines if not isinstance(grounding_call(trace_from_json(line)), str)]
    folder = tmp_path / "traces"
    folder.mkdir()
    for shard in range(4):
        with (folder / f"part-{shard}.jsonl").open("w") as fh:
            for n in range(15):
                trace = dict(judged[n % len(judged)])
                trace["id"] = f"t-{shard}-{n}"
                trace["question"] = f"{trace['question']} (case {shard}-{n})"
                labels = trace.get("labels") or {}
                trace["labels"] = {k: v for k, v in labels.items() if k != "gold_answer"}  # grounding only
                fh.write(json.dumps(trace) + "\n")
    with Judge(limit=40, reject=reject) as judge:
        run = score_shards(FolderSource(folder), trace_from_json, tmp_path / "out", ScorerPlan(),
                           JudgeSpec(ProviderSettings(), MODEL, MODEL, env(judge), in_flight=8),
                           RaySettings(workers=2, judge_workers=2, requests_per_second=per_second))
    arrivals = sorted(judge.arrivals)
    per_second_seen: dict[int, int] = {}
    for t in arrivals:
        per_second_seen[int(t - arrivals[0])] = per_second_seen.get(int(t - arrivals[0]), 0) + 1
    return run, judge, per_second_seen


def test_one_limiter_holds_the_judge_rate_for_two_workers_with_eight_calls_in_flight_each(
    cluster: str, tmp_path: Path
) -> None:
    run, judge, per_second = rate_run(tmp_path, 40, reject=20)  # the 20th request gets a 429, retry-after 1 s
    calls = run.judge["calls"]
    assert run.counts().scored == 60 and calls >= 100
    # no second over the 40/s limit by more than 10 %: the limiter spaces grants; arrivals at the server add the
    # loopback's jitter on a loaded 2-core machine (unlimited, the same workers send well over 42 in a second)
    assert max(per_second.values()) <= 44, per_second
    # the 429 paused every worker: after it, nothing new arrived until its Retry-After had passed. Unpaused, the
    # 0.85 s after it would hold ~34 arrivals at 40/s; a request granted before the pause and still in transit on a
    # loaded machine may land late, so up to 3 such stragglers are allowed
    arrivals = sorted(judge.arrivals)
    assert judge.rejected_at is not None and run.limiter["pauses"] >= 1
    late = [t - judge.rejected_at for t in arrivals if judge.rejected_at + 0.1 < t < judge.rejected_at + 0.95]
    assert len(late) <= 3, late
    assert len(arrivals) == calls + 1  # every request once, and the one rejected attempt retried once


def test_without_a_limit_the_same_workers_exceed_the_rate(cluster: str, tmp_path: Path) -> None:
    run, judge, per_second = rate_run(tmp_path, None, reject=None)
    assert run.judge["calls"] >= 100
    assert max(per_second.values()) > 42 and judge.too_many > 0  # what the limiter prevents
