"""Requests per scored trace against Langfuse (reads + writes): tracescore vs the naive cookbook loop.

Both run in this process against the fake Langfuse on loopback, through the real ``langfuse`` SDK, on the same
window (default 1,000 traces of 12 observations, ~10 scores each):

- naive: one paged list call for the traces (root observations at the default page size), one observations read
  per trace, one score write per score — the shape of the usual cookbook code;
- tracescore: the ``langfuse`` platform (source + batch sink, as ``score --source langfuse``) — one paged scan
  scores batched under the 1 MiB body limit.

Run: ``PYTHONPATH=. python benchmarks/langfuse_requests.py [--traces 1000] [--observations 12]``.

``--removals``: what keeping the platform on the latest scoring costs (#16). The job (``backfill``, write_batch 50)
scores the window with scorer versions A, then backfills it with versions B; counted in the second backfill: score
write batches (``POST /api/public/scores``) and removals (``DELETE /api/public/scores/{id}``; Langfuse has no batch
delete), for a plain version change, for one where a tenth of the traces lost their labels (their label scores
vanish), and for the first run after upgrading from a release that wrote versioned ids.
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import ExitStack
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.langfuse import FakeLangfuse, env_for  # noqa: E402
from tests.fakes.langfuse_data import make_trace  # noqa: E402
from tracescore.config import Config  # noqa: E402
from tracescore.engine.pipeline import score_records, score_trace  # noqa: E402
from tracescore.engine.plan import deterministic_scorers  # noqa: E402
from tracescore.engine.setup import build_platform  # noqa: E402
from tracescore.limits import RateLimiter  # noqa: E402
from tracescore.platforms.langfuse.adapter import trace_from_observations  # noqa: E402
from tracescore.platforms.langfuse.client import LangfuseCredentials, make_client  # noqa: E402
from tracescore.platforms.langfuse.source import LangfuseWindow  # noqa: E402
from tracescore.sinks.records import records_from_result  # noqa: E402

T0 = datetime(2026, 11, 20, 0, 0, tzinfo=UTC)
HOBBY_LIMIT_PER_MINUTE = 30


def _fake(traces: int, observations: int) -> FakeLangfuse:
    fake = FakeLangfuse()
    for i in range(traces):
        fake.add_trace(*make_trace(i, T0 + timedelta(seconds=30 * i), size=observations))
    return fake.start()  # type: ignore[return-value]


def run_tracescore(fake: FakeLangfuse, window: LangfuseWindow) -> tuple[int, int]:
    """Traces scored and scores written by tracescore."""
    import os
    from contextlib import ExitStack

    os.environ.update({k: v for k, v in env_for(fake).items() if v is not None})
    traces = accepted = 0
    with ExitStack() as resources:
        parts = build_platform(Config({}), RateLimiter(None), resources, kind="langfuse")
        assert parts.sink is not None
        batch = []
        scorers = deterministic_scorers()
        for result in score_records(parts.source.records(window.start, window.end), parts.adapter, scorers):
            traces += 1
            batch.append(result)
            if len(batch) == 50:
                report = parts.sink.write(batch)
                assert not report.rejected, report
                accepted += report.accepted
                batch = []
        if batch:
            report = parts.sink.write(batch)
            accepted += report.accepted
    return traces, accepted


def run_naive(fake: FakeLangfuse, window: LangfuseWindow) -> tuple[int, int]:
    """The cookbook loop: list traces, read each trace, write each score on its own."""
    from langfuse.api import CreateScoreRequest

    scorers = deterministic_scorers()
    traces = written = 0
    with make_client(LangfuseCredentials.from_env(env_for(fake)), timeout=30) as client:
        roots, cursor = [], None
        while True:  # the one list call (paged at the default page size)
            page = client.observations.get_many(
                is_root_observation=True, from_start_time=window.start, to_start_time=window.end, cursor=cursor
            )
            roots += [o.trace_id for o in page.data]
            cursor = page.meta.cursor
            if not cursor:
                break
        for trace_id in roots:  # one read per trace
            rows = client.observations.get_many(trace_id=trace_id, fields="core,basic,io,metadata", limit=1000).data
            trace = trace_from_observations({"id": trace_id, "observations": [r.dict(by_alias=True) for r in rows]})
            records, _ = records_from_result(score_trace(trace, scorers))
            traces += 1
            for record in records:  # one write per score
                client.scores.create(
                    request=[
                        CreateScoreRequest(
                            id=record.id,
                            trace_id=record.trace_id,
                            name=record.name,
                            value=record.value,
                            data_type=record.data_type,
                            timestamp=record.timestamp,
                            comment=record.comment,
                        )
                    ]
                )
                written += 1
    return traces, written


def _backfill(config: Path) -> dict[str, object]:
    import json

    from click.testing import CliRunner

    from tracescore.cli import main as cli

    args = ["backfill", "--config", str(config), "--from", T0.isoformat(), "--to", (T0 + timedelta(days=2)).isoformat()]
    result = CliRunner().invoke(cli, [*args, "-q"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output.splitlines()[-1])  # type: ignore[no-any-return]


def run_removals(traces: int, observations: int, scenario: str) -> tuple[int, int, int, int]:
    """(write batches, DELETE requests, scores removed, scores written) of the version-changing backfill."""
    import os
    import tempfile

    from tests.sinks.releases import bumped
    from tracescore import registry
    from tracescore.platforms.langfuse.sink import score_body
    from tracescore.store.db import Store

    original = registry._LOADED
    fake = _fake(traces, observations)
    os.environ.update(env_for(fake))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tracescore.toml"
        path.write_text(f'[source]\nkind = "langfuse"\n\n[job]\nstore = "{Path(tmp) / "ts.db"}"\n')
        try:
            if scenario == "upgrade":  # an older release scored the window: versioned ids, its results in the store
                window = LangfuseWindow(start=T0, end=T0 + timedelta(days=2))
                with ExitStack() as resources, Store(Path(tmp) / "ts.db") as store:
                    parts = build_platform(Config({}), RateLimiter(None), resources, kind="langfuse", write_back=False)
                    run_id = store.start_run("backfill", source=f"langfuse:{fake.url}")
                    written = 0
                    for result in score_records(parts.source.records(window.start, window.end), parts.adapter,
                                                deterministic_scorers()):
                        store.add_result(run_id, result)
                        for record in records_from_result(result, versioned_ids=True)[0]:
                            fake.add_score(score_body(record))
                            written += 1
                    store.finish_run(run_id, {"scores_written": written})
                    store.query("UPDATE migrations SET applied_at = ? WHERE name = '0007_written_scores'",
                                (datetime.now(UTC).isoformat(),))
            else:
                _backfill(path)
            if scenario == "vanish":
                for i in range(0, traces, 10):
                    tid = f"tr-{i:05d}"
                    fake.observations = [o for o in fake.observations if o["traceId"] != tid]
                    fake.add_trace(*make_trace(i, T0 + timedelta(seconds=30 * i), size=observations, labels=False))
            registry._LOADED = bumped("2")
            before = len(fake.requests)
            summary = _backfill(path)
            second = fake.requests[before:]
        finally:
            registry._LOADED = original
            fake.stop()
    posts = sum(1 for r in second if r.method == "POST" and r.path == "/api/public/scores")
    deletes = sum(1 for r in second if r.method == "DELETE")
    return posts, deletes, int(summary["scores_removed"]), int(summary["scores_written"])  # type: ignore[call-overload]


def removals_main(traces: int, observations: int) -> None:
    print(f"{traces} traces x {observations} observations; the job with write_batch = 50; second backfill counted")
    print(f"{'':44} {'write batches':>13} {'DELETEs':>8} {'removed':>8} {'written':>8} {'DELETEs/batch':>14}")
    for label, scenario in (
        ("version change A -> B", "version"),
        ("version change, 10% of traces lose labels", "vanish"),
        ("first run after upgrading (versioned ids)", "upgrade"),
    ):
        posts, deletes, removed, written = run_removals(traces, observations, scenario)
        print(f"{label:44} {posts:13d} {deletes:8d} {removed:8d} {written:8d} {deletes / max(posts, 1):14.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=1000)
    parser.add_argument("--observations", type=int, default=12)
    parser.add_argument("--removals", action="store_true", help="measure the removals of a version-changing backfill")
    args = parser.parse_args()
    if args.removals:
        removals_main(args.traces, args.observations)
        return
    window = LangfuseWindow(start=T0, end=T0 + timedelta(days=2))
    rows = []
    for name, runner in (("naive loop", run_naive), ("tracescore", run_tracescore)):
        fake = _fake(args.traces, args.observations)
        try:
            began = time.perf_counter()
            traces, scores = runner(fake, window)
            seconds = time.perf_counter() - began
            requests = len(fake.requests)
            reads = len([r for r in fake.requests if r.method == "GET"])
        finally:
            fake.stop()
        rows.append((name, traces, scores, requests, reads, requests - reads, seconds))
    print(
        f"{args.traces} traces x {args.observations} observations; Langfuse Hobby limit "
        f"{HOBBY_LIMIT_PER_MINUTE} requests/minute"
    )
    print(
        f"{'':12} {'traces':>7} {'scores':>7} {'requests':>9} {'reads':>6} {'writes':>7} {'req/trace':>10} "
        f"{'traces/min @Hobby':>18} {'seconds':>8}"
    )
    for name, traces, scores, requests, reads, writes, seconds in rows:
        per_trace = requests / max(traces, 1)
        print(
            f"{name:12} {traces:7d} {scores:7d} {requests:9d} {reads:6d} {writes:7d} {per_trace:10.4f} "
            f"{HOBBY_LIMIT_PER_MINUTE / per_trace:18.1f} {seconds:8.2f}"
        )
    naive, ours = rows[0][3] / max(rows[0][1], 1), rows[1][3] / max(rows[1][1], 1)
    print(f"ratio naive/tracescore requests per trace: {naive / ours:.0f}x (target: tracescore <= 0.05 per trace)")


if __name__ == "__main__":
    main()
