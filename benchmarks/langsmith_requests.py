"""Requests per scored trace against the LangSmith API (issue #5, acceptance 3), beside a naive loop.

Both paths use the real ``langsmith`` SDK over HTTP against the loopback fake (``tests/fakes/langsmith.py``), seeded
with the cookbook's sample traces stored as LangSmith run trees, and score with the same deterministic scorers.

- tracescore: ``LangSmithSource`` (root runs in pages of 100 with only the needed fields, one children query per
  trace, reference examples per page) → adapter → scorers → ``LangSmithSink`` (existing feedback listed once per 100
  traces; create the missing, patch the changed, skip the unchanged; each key's feedback config listed once per run
  and created once, from the catalog);
- naive: ``list_runs(project_name=…)`` with every field, ``read_run(load_child_runs=True)`` and ``read_example`` per
  trace, then ``create_feedback`` per score with a fresh id and the categorical config sent along each time.

Each path is run twice over the same window (a scheduled job's overlap, or a backfill re-run). Prints requests per
scored trace per run, requests by route, feedback stored and duplicated, and the ratio naive / tracescore.

    python benchmarks/langsmith_requests.py            # 38 sample traces × 5 = 190 traces
    python benchmarks/langsmith_requests.py --copies 2 # quicker
    python benchmarks/langsmith_requests.py --backend smithdb_only  # tracescore on SmithDB (v2 reads)
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
import warnings
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.langsmith import FakeLangSmith  # noqa: E402
from tests.fakes.langsmith_runs import load_samples, seed  # noqa: E402
from tracescore.engine.pipeline import RunCounts, score_records, score_trace  # noqa: E402
from tracescore.engine.plan import deterministic_scorers  # noqa: E402
from tracescore.platforms.langsmith.adapter import trace_from_langsmith  # noqa: E402
from tracescore.platforms.langsmith.sink import LangSmithSink, _score_value, categorical_config, feedback_comment  # noqa: E402
from tracescore.platforms.langsmith.source import LangSmithSource, make_client  # noqa: E402
from tracescore.platforms.registry import get_adapter  # noqa: E402
from tracescore.sinks.records import records_from_result as records_of  # noqa: E402

START = datetime(2026, 11, 1, tzinfo=UTC)
END = datetime(2026, 12, 1, tzinfo=UTC)
PROJECT = "search-agent"


def _route(path: str) -> str:
    parts = path.strip("/").split("/")
    return "/" + parts[0] + ("/{id}" if len(parts) > 1 and parts[0] in ("runs", "feedback", "examples", "sessions")
                             and parts[1] != "query" else ("/" + parts[1] if len(parts) > 1 else ""))


def tracescore_run(server: FakeLangSmith) -> int:
    """Score the window and write back the tracescore way; returns the number of traces scored."""
    client = make_client(api_key="bench", endpoint=server.url)
    source = LangSmithSource(client, project=PROJECT)
    counts = RunCounts()
    with LangSmithSink(client) as sink:
        scorers = deterministic_scorers()
        for result in score_records(source.records(START, END), get_adapter("langsmith"), scorers, counts):
            sink.write(result)
    return counts.scored


def naive_run(server: FakeLangSmith) -> int:
    """The loop people write first: everything per trace, every field, fresh feedback ids."""
    client = make_client(api_key="bench", endpoint=server.url)
    scorers = deterministic_scorers()
    scored = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for root in client.list_runs(project_name=PROJECT, is_root=True, start_time=START,
                                     filter=f'lt(start_time, "{END.isoformat()}")'):
            full = client.read_run(root.id, load_child_runs=True)
            children = []
            stack = list(full.child_runs or [])
            while stack:
                run = stack.pop()
                children.append(run.model_dump(mode="json", exclude={"child_runs", "attachments"}))
                stack.extend(run.child_runs or [])
            example = None
            if full.reference_example_id:
                ex = client.read_example(full.reference_example_id)
                example = {"id": str(ex.id), "outputs": ex.outputs}
            bundle = {"root": full.model_dump(mode="json", exclude={"child_runs", "attachments"}), "runs": children,
                      "example": example}
            result = score_trace(trace_from_langsmith(bundle), scorers)
            for record in records_of(result)[0]:
                score, value = _score_value(record)
                config = categorical_config(record.name)
                if config is not None:
                    client.create_feedback_config(record.name, feedback_config=config)  # type: ignore[arg-type]
                client.create_feedback(full.id, record.name, score=score, value=value,
                                       comment=feedback_comment(record), feedback_id=uuid.uuid4(),
                                       session_id=full.session_id)
            scored += 1
    return scored


def measure(name: str, run, copies: int, backend: str = "clickhouse_only") -> dict[str, object]:  # type: ignore[no-untyped-def]
    with FakeLangSmith() as server:
        server.backend = backend
        seed(server, load_samples(), copies=copies)
        out: dict[str, object] = {"name": name}
        for attempt in ("first", "rerun"):
            server.requests.clear()
            t0 = time.perf_counter()
            scored = run(server)
            out[f"{attempt}_seconds"] = time.perf_counter() - t0
            out[f"{attempt}_requests"] = len(server.requests)
            out[f"{attempt}_per_trace"] = len(server.requests) / max(scored, 1)
            out[f"{attempt}_routes"] = Counter(f"{r.method} {_route(r.path)}" for r in server.requests)
            out["scored"] = scored
        out["feedback_stored"] = len(server.feedback)
        out["duplicated_pairs"] = len(server.duplicates())
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=5, help="copies of the 38 sample traces (default 5)")
    parser.add_argument("--backend", default="clickhouse_only", choices=("clickhouse_only", "dual", "smithdb_only"),
                        help="the fake's query backend for tracescore (the naive loop needs v1: clickhouse_only)")
    args = parser.parse_args()
    ours = measure("tracescore", tracescore_run, args.copies, args.backend)
    naive = measure("naive loop", naive_run, args.copies)
    print(f"{ours['scored']} traces scored per run, tracescore on {args.backend}; requests per scored trace"
          " (loopback fake, real SDK)\n")
    print(f"{'path':<12} {'1st run':>9} {'re-run':>9} {'feedback':>9} {'duplicated':>11} {'1st s':>7} {'re-run s':>9}")
    for row in (naive, ours):
        print(f"{row['name']:<12} {row['first_per_trace']:>9.2f} {row['rerun_per_trace']:>9.2f} "
              f"{row['feedback_stored']:>9} {row['duplicated_pairs']:>11} {row['first_seconds']:>7.2f} "
              f"{row['rerun_seconds']:>9.2f}")
    print(f"\nnaive / tracescore requests: first run {naive['first_per_trace'] / ours['first_per_trace']:.2f}×, "
          f"re-run {naive['rerun_per_trace'] / ours['rerun_per_trace']:.1f}×")
    for row in (naive, ours):
        for attempt in ("first", "rerun"):
            routes = ", ".join(f"{k} {v}" for k, v in sorted(row[f"{attempt}_routes"].items()))  # type: ignore[attr-defined]
            print(f"  {row['name']} {attempt}: {routes}")


if __name__ == "__main__":
    main()
