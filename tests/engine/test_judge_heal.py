"""The scheduled job heals what the judge could not do (#43, item 7): a trace whose judge failed during ``run`` (an
outage: the Anthropic fake answering 529/500) stays due; each later ``run`` judges it again, up to ``[job]
judge_retries`` runs, then names it once as given up (the run summary, ``run --check-gaps``). Counted at the fakes:
judge requests at the Anthropic fake, score writes at the Langfuse fake (the real SDKs over loopback HTTP)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from click.testing import CliRunner

from tests.engine import test_daily_budget
from tests.engine.test_daily_budget import _asked, _day_traces, _run
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.base import Fault
from tests.fakes.langfuse import FakeLangfuse
from tests.test_both_platforms import _langfuse_trace
from tracescore import catalog
from tracescore.cli import main
from tracescore.config import load_config
from tracescore.engine.gaps import check_gaps
from tracescore.engine.runner import backfill_job
from tracescore.engine.setup import build_setup
from tracescore.scorers.diagnosis import DIAGNOSIS
from tracescore.sections import JobSettings
from tracescore.store.db import Store
from tracescore.store.state import to_text

DAY = datetime(2026, 11, 2, tzinfo=UTC)
JUDGED = {e.name for e in catalog.entries() if e.judged}
SENT_WHEN_JUDGED = JUDGED | {DIAGNOSIS}  # the diagnosis cell reads grounding.rate
platform = test_daily_budget.platform  # the Langfuse and Anthropic fakes, their addresses and keys in the environment


def _outage(judge: FakeAnthropic, n: int = 2000) -> None:
    """The judge down: every request answered 529 or 500 (retry-after 0, so the judge's retries do not wait)."""
    faults = [
        Fault.http(
            529,
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            **{"retry-after": "0"},
        ),
        Fault.http(
            500,
            {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
            **{"retry-after": "0"},
        ),
    ]
    judge.faults.add("/v1/messages", *(faults * (n // 2)))


def _config(tmp_path: Path, retries: int | None) -> Path:
    path = tmp_path / "tracescore.toml"
    line = f"judge_retries = {retries}\n" if retries is not None else ""
    path.write_text(
        f'[source]\nkind = "langfuse"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\nlookback = "15m"\nsettle = "1m"\n'
        f"judge_concurrency = 1\nwrite_batch = 8\nbackfill_chunks = 1\n{line}",
        encoding="utf-8",
    )
    return path


def _failed(db: Path, run_id: str) -> set[str]:
    """The traces of a run whose judged scores are absent for a judge error."""
    with Store(db) as store:
        return {
            r["trace_id"]
            for r in store.results(run_id)
            if any(n in JUDGED and why == "judge_error" for n, why in r["missing"].items())
        }


def test_a_judge_outage_during_run_is_healed_by_the_next_runs_writing_only_what_changed(
    platform: tuple[FakeLangfuse, FakeAnthropic], tmp_path: Path
) -> None:
    langfuse, judge = platform
    traces = _day_traces(DAY, 6)  # 00:00 .. 04:00, one every 48 minutes
    for sample in traces:
        langfuse.add_trace(*_langfuse_trace(sample))
    question = {s["question"]: s["id"] for s in traces}
    old = {s["id"] for s in traces[:3]}
    config, db = _config(tmp_path, 2), tmp_path / "ts.db"

    # the three older traces were scored and judged before, by a backfill with another judge model whose verdicts
    # differ (no claim supported): its judged scores are on the platform, its replies in the cache under that model
    text = config.read_text()
    config.write_text(text + '\n[scoring]\njudge_model = "claude-haiku-4-5"\n')
    judge.tamper = lambda out, _: {"claims": [dict(c, evidence=[]) for c in out["claims"]]} if "claims" in out else out
    setup = build_setup(load_config(config))
    try:
        backfill_job(setup, start=DAY, stop=DAY + timedelta(hours=2))
    finally:
        setup.close()
    config.write_text(text)
    judge.tamper = None
    earlier = {k: dict(s) for k, s in langfuse.scores.items() if s["name"] in JUDGED}
    assert {s["traceId"] for s in earlier.values()} == old

    # run 1, the judge down: every judged trace stays due; the platform's earlier judged scores stay as they were
    _outage(judge)
    first = _run(config, DAY + timedelta(hours=5), since=DAY)
    due = _failed(db, first.run_id)
    assert first.summary["scored"] == 6 and old < due
    assert first.summary["judge_retry"] == {"due": len(due), "retried": 0, "healed": 0, "given_up": []}
    assert {k: langfuse.scores[k] for k in earlier} == earlier and not langfuse.requests_to(
        "/api/public/scores/", "DELETE"
    )

    # run 2, still down: the due traces (older than this run's window) are judged again, and fail again
    asked, writes = len(judge.messages()), len(langfuse.score_writes)
    second = _run(config, DAY + timedelta(hours=5, minutes=15))
    oldest = min(datetime.fromisoformat(s["timestamp"]) for s in traces if s["id"] in due)
    assert second.summary["window"][0] == to_text(oldest)  # the window reaches back to the oldest due trace
    assert len(judge.messages()) > asked  # the judge was asked again
    assert second.summary["scored"] == len(due) and _failed(db, second.run_id) == due
    assert second.summary["judge_retry"] == {"due": len(due), "retried": len(due), "healed": 0, "given_up": []}
    assert len(langfuse.score_writes) == writes  # nothing changed: nothing written again
    assert {k: langfuse.scores[k] for k in earlier} == earlier

    # run 3, the judge back: the due traces are judged, their judged scores written once (the older ones' differ
    # from the backfill's); nothing that did not change is written again
    judge.faults.clear()
    asked, writes = len(judge.messages()), len(langfuse.score_writes)
    before = {(s["traceId"], s["name"]): s["value"] for s in langfuse.scores.values()}
    third = _run(config, DAY + timedelta(hours=5, minutes=30))
    assert third.summary["judge_retry"] == {"due": 0, "retried": len(due), "healed": len(due), "given_up": []}
    assert {question[q] for q in _asked(judge, asked)} == due
    new = langfuse.score_writes[writes:]
    assert {w["name"] for w in new} <= SENT_WHEN_JUDGED and {w["name"] for w in new} & JUDGED
    assert len(new) == len({w["id"] for w in new})  # each written once
    assert all(before.get((w["traceId"], w["name"])) != w["value"] for w in new)  # each one changed (or was not there)
    after = {(s["traceId"], s["name"]): s["value"] for s in langfuse.scores.values()}
    assert {k for k, v in after.items() if before.get(k) != v} == {(w["traceId"], w["name"]) for w in new}
    assert {w["traceId"] for w in new} >= due - old  # the new traces' judged scores, never on the platform before
    assert {w["traceId"] for w in new} & old  # an older trace whose healed verdict differs from the backfill's
    assert {s["traceId"] for s in langfuse.scores.values() if s["name"] == "grounding.rate"} >= due

    # run 4: nothing due, nothing asked, nothing written
    asked, writes = len(judge.messages()), len(langfuse.score_writes)
    fourth = _run(config, DAY + timedelta(hours=5, minutes=45))
    assert len(judge.messages()) == asked and len(langfuse.score_writes) == writes
    assert fourth.summary["judge_retry"] == {"due": 0, "retried": 0, "healed": 0, "given_up": []}


def test_a_trace_the_judge_never_answers_is_given_up_after_judge_retries_runs_and_named_once(
    platform: tuple[FakeLangfuse, FakeAnthropic], tmp_path: Path
) -> None:
    langfuse, judge = platform
    traces = _day_traces(DAY, 3)
    for sample in traces:
        langfuse.add_trace(*_langfuse_trace(sample))
    config, db = _config(tmp_path, None), tmp_path / "ts.db"  # the default: 3
    assert JobSettings().judge_retries == 3
    _outage(judge, 10_000)

    runs = [_run(config, DAY + timedelta(hours=3), since=DAY)]
    due = _failed(db, runs[0].run_id)
    assert due
    for n in range(1, 5):
        asked = len(judge.messages())
        runs.append(_run(config, DAY + timedelta(hours=3, minutes=15 * n)))
        if n <= 3:  # three retries, each asking the judge again
            assert len(judge.messages()) > asked and runs[-1].summary["scored"] == len(due)
        else:  # given up: not asked again
            assert len(judge.messages()) == asked and runs[-1].summary["scored"] == 0
    given = [r.summary["judge_retry"]["given_up"] for r in runs]
    assert given == [[], [], [], sorted(due), []]  # named once, by the run that gave up
    assert runs[3].summary["judge_retry"]["due"] == 0 and runs[3].summary["judge_retry"]["retried"] == len(due)

    # --check-gaps names them (the API and the command line)
    setup = build_setup(load_config(config))
    try:
        report = check_gaps(setup)
    finally:
        setup.close()
    assert sorted(t for t, _, _ in report.given_up) == sorted(due) and not report.gaps
    assert {n for _, _, n in report.given_up} == {3}  # tried three times after the first
    result = CliRunner().invoke(main, ["run", "--config", str(config), "--check-gaps"])
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert sorted(x["given_up"] for x in lines if "given_up" in x and isinstance(x["given_up"], str)) == sorted(due)
    assert lines[-1]["given_up"] == len(due) and result.exit_code != 0
    assert f"{len(due)} traces given up" in result.stderr

    # a backfill with the judge back judges them: --check-gaps names them no more
    judge.faults.clear()
    setup = build_setup(load_config(config))
    try:
        backfill_job(setup, start=DAY, stop=DAY + timedelta(hours=3))
        assert not check_gaps(setup).given_up
    finally:
        setup.close()
