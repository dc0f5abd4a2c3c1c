"""``tracescore push``: write the scores of result files back to a platform (``--to``), as a step of its own.

Scoring an export (``score s3://… --source <platform>-export --out …``, or the Ray engine's per-shard files) writes
nothing to the platform; ``push`` does, later and resumably. RESULTS are result files (JSONL, also gzip, or Parquet
with the result-line columns) or folders/prefixes of them, local or ``s3://``. Each result line becomes a
``TraceResult`` again and goes through the platform's own batch sink, so the score ids are the sinks' deterministic
ids (``sinks.records.score_id``; the sink's written-score ledger in the store too) and a repeated push upserts
instead of duplicating. Every request passes one rate
limiter. A file whose scores were all delivered is marked in the store (scope ``push:<platform key>``, key = uri, size
and modification time), so a re-run skips it; a file cut short by a failure is pushed again whole (same ids).

Exit codes: 0 all pushed; 1 done, but scores were refused (the platform said no to them, e.g. runs that do not
exist: a re-run cannot change that) or lines were not results, each kind of refusal counted on one line with its
first traces; 2 bad options or config; 4 stopped because scores stayed undelivered after the retries (a re-run
finishes: the ids are deterministic).
"""

from __future__ import annotations

import json
import signal
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import click

from tracescore.catalog import entry
from tracescore.cli.exits import EXIT_INPUT, end, rate_option
from tracescore.cli.paths import claim, reads, writes
from tracescore.config import load_config
from tracescore.engine.interrupt import listening, received
from tracescore.engine.setup import build_platform
from tracescore.errors import ConfigError, Interrupted, SinkError, TracescoreError
from tracescore.limits import RateLimiter
from tracescore.platforms import registry
from tracescore.platforms.base import Parts
from tracescore.result import TraceResult
from tracescore.scores import Score
from tracescore.sinks.records import Rejection, WriteReport, rejection_lines
from tracescore.sources.exports import ExportFile, ExportRoot, need_pyarrow
from tracescore.store import Store
from tracescore.store.state import JobState

RESULT_SUFFIXES = (".jsonl", ".jsonl.gz", ".parquet")
PUSHED = "pushed"
_JSON_COLUMNS = ("scores", "missing", "comments", "metadata", "judge", "errors")


def _family(version: str) -> str:
    return version.rsplit("-", 1)[0]


def _score_metadata(name: str, judge: dict[str, Any]) -> dict[str, Any]:
    """What a judged score carried that its id depends on: the rubric version and agreement (when the line's judge
    object names one of this score's rubric family) and the judge model."""
    known = entry(name)
    if known is None or not known.judged or not judge:
        return {}
    meta: dict[str, Any] = {}
    rubric = judge.get("rubric_version")
    ours = isinstance(rubric, str) and _family(rubric) == _family(known.version)
    if ours:
        meta["rubric_version"] = rubric
    if judge.get("model"):
        meta["judge_model"] = judge["model"]
    if ours and judge.get("agreement") is not None:  # measured for that rubric's scores only
        meta["agreement"] = judge["agreement"]
    return meta


def result_from_line(line: dict[str, Any]) -> TraceResult:
    """A result line (``TraceResult.to_json()``) as a ``TraceResult`` whose present scores give the same score
    records as the original, its absent ones and errors the same removals; ValueError says why a line is not one."""
    line = {k: json.loads(v) if k in _JSON_COLUMNS and isinstance(v, str) else v for k, v in line.items()}
    scores, comments = line.get("scores"), line.get("comments") or {}
    if not isinstance(scores, dict) or not isinstance(comments, dict):
        raise ValueError("not a result line (no scores object)")
    stamp = line.get("timestamp")
    moment = datetime.fromisoformat(str(stamp).replace("Z", "+00:00")) if stamp else None
    if moment is not None and moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    metadata = line.get("metadata") if isinstance(line.get("metadata"), dict) else {}
    judge = line.get("judge") if isinstance(line.get("judge"), dict) else {}
    session = line.get("session_id")
    result = TraceResult(
        trace_id=line.get("trace_id"), timestamp=moment, metadata=dict(metadata or {}),
        session_id=session if isinstance(session, str) else None,
    )
    for name, value in scores.items():
        if value is None:
            continue
        if not isinstance(value, bool | int | float | str):
            raise ValueError(f"score {name!r} has a {type(value).__name__} value")
        result.scores[name] = Score(
            name=name,
            value=float(value) if isinstance(value, int) and not isinstance(value, bool) else value,
            comment=comments.get(name),
            metadata=_score_metadata(name, judge or {}),
        )
    missing, errors = line.get("missing"), line.get("errors")
    for name, reason in (missing if isinstance(missing, dict) else {}).items():  # absent, and why: the mirror's rule
        result.scores.setdefault(name, Score(name=name, reason=None if reason is None else str(reason)))
    result.errors = [str(e) for e in errors] if isinstance(errors, list) else []
    return result


@dataclass
class _Pushed:
    """What a push did: files pushed/skipped, traces and scores sent, what the sink reported, bad lines."""

    files: int = 0
    skipped: int = 0
    traces: int = 0
    write: WriteReport = field(default_factory=WriteReport)
    bad: list[str] = field(default_factory=list)
    stopped: str | None = None
    interrupted: str | None = None  # the signal that stopped it

    def add(self, report: WriteReport) -> None:
        self.write.accepted += report.accepted
        self.write.rejected += report.rejected
        self.write.retried += report.retried
        self.write.requests += report.requests
        self.write.removed += report.removed
        self.write.kept_stale += report.kept_stale
        self.write.batches += 1


def _files(spec: str) -> Iterator[tuple[ExportRoot, ExportFile]]:
    root = ExportRoot(spec)
    found = [f for f in root.files() if f.rel.endswith(RESULT_SUFFIXES)]
    if not found:
        raise ConfigError(f"no result file at {spec!r}: give result files (.jsonl, .jsonl.gz, .parquet) or a folder")
    parquet = next((f.uri for f in found if f.rel.endswith(".parquet")), None)
    if parquet is not None:  # before anything is pushed
        need_pyarrow(f"pushing the Parquet results {parquet!r}")
    for f in found:
        yield root, f


def _results(root: ExportRoot, f: ExportFile, pushed: _Pushed) -> Iterator[TraceResult]:
    """The results of one file with present scores; a line that is not a result is reported with its number."""
    for n, line in root.numbered(f.uri):
        try:
            result = result_from_line(line)
        except (ValueError, TypeError) as exc:
            pushed.bad.append(f"{f.uri}: line {n}: {exc}")
            continue
        if result.values:
            yield result
    pushed.bad += root.notes
    root.notes.clear()


def _push_file(parts: Parts, root: ExportRoot, f: ExportFile, batch: int, pushed: _Pushed) -> None:
    """Every result of one file through the sink, ``batch`` traces per write; SinkError when scores stay
    undelivered after the retries; ``Interrupted`` after the write in progress once SIGINT/SIGTERM came."""
    assert parts.sink is not None
    pending: list[TraceResult] = []
    for result in _results(root, f, pushed):
        pending.append(result)
        if len(pending) >= batch:
            pushed.traces += len(pending)
            pushed.add(parts.sink.write(pending))
            pending = []
            if (signum := received()) is not None:
                raise Interrupted(signum)
    if pending:
        pushed.traces += len(pending)
        pushed.add(parts.sink.write(pending))


@click.command()
@click.argument("results", nargs=-1, required=True, type=reads())
@click.option(
    "--to", "target", type=click.Choice(registry.push_targets()), required=True, help="The platform to write scores to."
)
@click.option(
    "--store",
    "store_path",
    default=None,
    type=writes(dir_okay=False),
    help="Local store keeping which files were pushed. [default: [job] store, tracescore.db]",
)
@rate_option(
    "--requests-per-minute",
    help="The platform's request rate, one limiter for every request. [default: [job] requests_per_minute]",
)
@click.option(
    "--batch",
    type=click.IntRange(1, 1000),
    default=None,
    help="Traces per write to the platform. [default: [job] write_batch]",
)
@click.option("--config", "config_path", type=reads(dir_okay=False), help="tracescore.toml ([job] and the "
              "platform section apply).")
def push(
    results: tuple[str, ...],
    target: str,
    store_path: str | None,
    requests_per_minute: float | None,
    batch: int | None,
    config_path: str | None,
) -> None:
    """Write the scores of RESULTS (result files or folders of them, local or s3://) back to the platform --to.

    JSONL results (also .jsonl.gz) need nothing more; Parquet results and s3:// need pyarrow (pip install
    'tracescore[export]'). Resumable: files already pushed are skipped (markers in the store); scores carry the
    sinks' deterministic ids, so pushing the same results again creates nothing new.
    """
    config = load_config(config_path)
    job = config.section("job")
    if store_path is None:  # the store of the config: never one of the result files either
        claim(click.get_current_context(), "[job] store", job.store, written=True)
    limiter = RateLimiter(requests_per_minute or job.requests_per_minute)
    pushed = _Pushed()
    with ExitStack() as resources:
        files = [item for spec in results for item in _files(spec)]
        parts = build_platform(config, limiter, resources, kind=target, path=None, write_back=True, push=True)
        store = Store(store_path or job.store)
        resources.callback(store.close)
        state, scope = JobState(store), f"push:{parts.key}"
        run_id = store.start_run("push", source=f"{target}: " + " ".join(results))
        if parts.sink is not None:
            parts.sink.attach(store, run_id)  # as in score/run: the written-score ledger, removals of superseded
        try:
            with listening(threading.Event()):  # SIGINT/SIGTERM: stop after the write in progress
                _push_files(parts, files, state, scope, run_id, batch or job.write_batch, pushed)
        except Interrupted as exc:
            pushed.interrupted = signal.Signals(exc.signum).name
            _record(store, run_id, pushed, limiter)
            raise Interrupted(
                exc.signum,
                f"interrupted after {pushed.traces} traces ({pushed.write.accepted} scores written);"
                " re-run to finish: nothing is duplicated",
            ) from None
        _record(store, run_id, pushed, limiter)
    _finish(pushed, target, limiter)


def _record(store: Store, run_id: str, pushed: _Pushed, limiter: RateLimiter) -> None:
    """The push's summary and status in the store's run."""
    summary = {"files": pushed.files, "skipped": pushed.skipped, "traces": pushed.traces, "requests": limiter.count,
               "write": pushed.write.as_dict(), "bad_lines": pushed.bad}
    if pushed.interrupted:
        summary["signal"] = pushed.interrupted
    status = "interrupted" if pushed.interrupted else "failed" if pushed.stopped else "done"
    store.finish_run(run_id, summary, status=status)


def _push_files(
    parts: Parts,
    files: list[tuple[ExportRoot, ExportFile]],
    state: JobState,
    scope: str,
    run_id: str,
    batch: int,
    pushed: _Pushed,
) -> None:
    """Each file not pushed before, whole, then marked pushed; the first failure stops the push (``stopped``)."""
    for root, f in files:
        if (signum := received()) is not None:
            raise Interrupted(signum)
        key = f"{f.uri}|{f.size}|{f.mtime_ns}"
        if state.marked(scope, key) == PUSHED:
            pushed.skipped += 1
            continue
        try:
            _push_file(parts, root, f, batch, pushed)
        except SinkError as exc:
            pushed.stopped = f"{f.uri}: {exc}"
            return
        except TracescoreError as exc:
            pushed.stopped = str(exc)
            return
        state.mark(scope, [(key, None, PUSHED)], run_id)
        state.store.commit()
        pushed.files += 1


def _finish(pushed: _Pushed, target: str, limiter: RateLimiter) -> None:
    """One summary line, the bad lines and rejections on stderr, then the exit code."""
    w = pushed.write
    click.echo(
        f"pushed {w.accepted} scores of {pushed.traces} traces from {pushed.files} file(s) to {target}"
        f" ({pushed.skipped} already pushed, skipped; {limiter.count} requests, {w.retried} retried)"
    )
    for problem in pushed.bad:
        click.echo(f"skipped: {problem}", err=True)
    refused: list[Rejection] = [r for r in w.rejected if not r.retryable]
    for line in rejection_lines(refused):
        click.echo(line, err=True)
    if pushed.stopped is not None:
        raise TracescoreError(f"stopped: {pushed.stopped}; re-run the same push to finish (ids are deterministic)")
    if refused or pushed.bad:
        end(EXIT_INPUT)

