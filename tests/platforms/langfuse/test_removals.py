"""After a scoring change Langfuse shows the current scores only (#16): the real CLI and ``langfuse`` SDK over
loopback HTTP to the fake. A backfill with new scorer versions overwrites in place (one id per trace and name), a
score that became absent is removed with its reason in the store, scores of older releases (versioned ids) are
removed once, and scores we did not write (a human annotation, another evaluator) are never touched."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langfuse_data import make_trace
from tests.sinks.releases import OLD_NAMES, before_rename, bumped
from tracescore import catalog, config, registry
from tracescore.cli import main
from tracescore.engine.pipeline import score_trace
from tracescore.engine.setup import build_setup
from tracescore.platforms.langfuse.sink import score_body
from tracescore.sinks.records import records_from_result
from tracescore.store.db import Store
from tracescore.store.written import WrittenScores

START = datetime(2026, 11, 1, tzinfo=UTC)
STOP = START + timedelta(hours=1)
N = 12
VANISH = range(4)  # these traces lose their labels between the two scorings
OTHERS = ("human-annotation-1", "other-evaluator-1", "human-annotation-2")


def _config(tmp_path: Path, extra: str = "") -> Path:
    path = tmp_path / "tracescore.toml"
    path.write_text(
        f'[source]\nkind = "langfuse"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\nbackfill_chunks = 3\n'
        f"write_batch = 5\n{extra}"
    )
    return path


def _load(fake: FakeLangfuse, index: int, *, labels: bool = True) -> None:
    fake.observations = [o for o in fake.observations if o["traceId"] != f"tr-{index:05d}"]
    trace, observations = make_trace(index, START + timedelta(minutes=index), size=6, labels=labels)
    fake.add_trace(trace, observations)


def _seed_others(fake: FakeLangfuse) -> dict[str, dict[str, Any]]:
    """Scores we did not write, on traces whose own scores change (same names as ours)."""
    stamp = START.isoformat().replace("+00:00", "Z")
    base = {"dataType": "NUMERIC", "timestamp": stamp}
    fake.add_score(base | {"id": OTHERS[0], "traceId": "tr-00000", "name": "answer.correct", "value": 1,
                           "dataType": "BOOLEAN", "source": "ANNOTATION", "queueId": "q-1"})
    fake.add_score(base | {"id": OTHERS[1], "traceId": "tr-00001", "name": "retrieval.recall_at_5", "value": 0.1})
    fake.add_score(base | {"id": OTHERS[2], "traceId": "tr-00007", "name": "citation.coverage", "value": 0.2,
                           "source": "ANNOTATION"})
    return _others(fake)


def _others(fake: FakeLangfuse) -> dict[str, dict[str, Any]]:
    return {s["id"]: s for s in fake.scores.values() if s["id"] in OTHERS}


def _ours(fake: FakeLangfuse) -> list[dict[str, Any]]:
    return [s for s in fake.scores.values() if s["id"] not in OTHERS]


def _backfill(config_path: Path) -> dict[str, Any]:
    args = ["backfill", "--config", str(config_path), "--from", START.isoformat(), "--to", STOP.isoformat(), "-q"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.output.splitlines()[-1])  # type: ignore[no-any-return]


def _expected(config_path: Path) -> set[tuple[str, str]]:
    """(trace, name) of every score the current setup produces, scored independently of the job."""
    setup = build_setup(config.load_config(config_path))
    try:
        pairs: set[tuple[str, str]] = set()
        for record in setup.source.records(START, STOP):
            records, _ = records_from_result(score_trace(setup.adapter(record.payload), setup.scorers))
            pairs |= {(r.trace_id, r.name) for r in records}
        return pairs
    finally:
        setup.close()


def _release(monkeypatch: pytest.MonkeyPatch, release: str) -> None:
    monkeypatch.setattr(registry, "_LOADED", bumped(release))


def test_a_version_changing_backfill_leaves_one_current_score_per_trace_and_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLangfuse() as fake:
        for key, value in env_for(fake).items():
            monkeypatch.setenv(key, value)
        for i in range(N):
            _load(fake, i)
        others = _seed_others(fake)
        config_path = _config(tmp_path)

        first = _backfill(config_path)
        pairs_a = Counter((s["traceId"], s["name"]) for s in _ours(fake))
        assert set(pairs_a.values()) == {1} and len(pairs_a) >= N * 5
        assert {s["metadata"]["scorer_version"] for s in _ours(fake)} <= {e.version for e in catalog.entries()}
        assert first["scores_removed"] == 0

        for i in VANISH:
            _load(fake, i, labels=False)  # e.g. the labels were removed: recall, rank, correctness become absent
        _release(monkeypatch, "2")  # a release that changed every deterministic scorer
        second = _backfill(config_path)
        assert second["backfill_id"] != first["backfill_id"] and second["scored"] == N

        pairs_b = Counter((s["traceId"], s["name"]) for s in _ours(fake))
        assert set(pairs_b.values()) == {1}  # never two
        assert set(pairs_b) == _expected(config_path)  # never a missing or a stale one
        assert {s["metadata"]["scorer_version"] for s in _ours(fake)} <= {e.version for e in catalog.entries()}  # new
        vanished = set(pairs_a) - set(pairs_b)
        assert vanished and {t for t, _ in vanished} == {f"tr-{i:05d}" for i in VANISH}
        assert second["scores_removed"] == len(vanished) == len(fake.requests_to("/api/public/scores/", "DELETE"))
        assert _others(fake) == others  # the human annotation and the other evaluator's scores: untouched

        with Store(tmp_path / "ts.db") as store:
            history = WrittenScores(store, "langfuse").history("tr-00000")
        versions = {(e["name"], e["version"]) for e in history if e["event"] == "written"}
        assert ("citation.coverage", "citations-1") in versions and ("citation.coverage", "citations-2") in versions
        removed = {e["name"]: e["reason"] for e in history if e["event"] == "removed"}
        assert set(removed) == {n for t, n in vanished if t == "tr-00000"}
        assert all(r.startswith("absent: ") and "label" in r for r in removed.values())

        third = _backfill(config_path)  # the same setup again: resumed, nothing to write or remove
        assert third["scores_removed"] == 0 and Counter((s["traceId"], s["name"]) for s in _ours(fake)) == pairs_b


def test_scores_of_an_older_release_under_versioned_ids_are_removed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeLangfuse() as fake:
        for key, value in env_for(fake).items():
            monkeypatch.setenv(key, value)
        for i in range(N):
            _load(fake, i)
        others = _seed_others(fake)
        config_path = _config(tmp_path)
        # what an older release did: versioned ids on the platform, the scored results in its store
        setup = build_setup(config.load_config(config_path))
        with Store(tmp_path / "ts.db") as store:
            run_id = store.start_run("backfill", source=f"langfuse:{fake.url}")
            written = 0
            for record in setup.source.records(START, STOP):
                result = score_trace(setup.adapter(record.payload), setup.scorers)
                store.add_result(run_id, result)
                for r in records_from_result(result, versioned_ids=True)[0]:
                    fake.add_score(score_body(r))
                    written += 1
            store.finish_run(run_id, {"scores_written": written})
            store.query("UPDATE migrations SET applied_at = ? WHERE name = '0007_written_scores'",
                        (datetime.now(UTC).isoformat(),))  # the upgrade came after that run
        setup.close()
        old_ids = {s["id"] for s in _ours(fake)}

        dry = CliRunner().invoke(main, ["backfill", "--config", str(config_path), "--from", START.isoformat(),
                                        "--to", STOP.isoformat(), "--dry-run"])
        assert dry.exit_code == 0, dry.output
        preview = json.loads(next(line for line in dry.output.splitlines() if line.startswith("{")))["removals"]
        assert preview["ours"] == preview["superseded"] == written and "would be removed" in dry.output
        assert not [r for r in fake.requests if r.path.startswith("/api/public/scores")]  # the dry run sent nothing

        summary = _backfill(_config(tmp_path, "\n[scorers.retrieval]\nk = 5\n"))  # another fingerprint: a new backfill
        pairs = Counter((s["traceId"], s["name"]) for s in _ours(fake))
        assert set(pairs.values()) == {1} and set(pairs) == _expected(config_path)
        assert not old_ids & {s["id"] for s in _ours(fake)}
        assert summary["scores_removed"] == len(old_ids) == written
        assert _others(fake) == others

        deletes = len(fake.requests_to("/api/public/scores/", "DELETE"))
        _backfill(_config(tmp_path, "\n[scorers.retrieval]\nk = 5\n[scorers.answer]\nfinal_answer_prefix = 'FINAL:'\n"))
        assert len(fake.requests_to("/api/public/scores/", "DELETE")) == deletes  # removed once, never again


def test_the_trajectory_scores_under_their_old_names_are_removed_once_by_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#43 item 5: a release before the rename wrote ``search.calls``…; the next backfill (the versions moved on: a
    new one) writes ``trajectory.search_calls``… and removes each old-named score of ours once its trace's new score
    is accepted (or its score is absent now for a reason that applies); a re-run removes nothing."""
    with FakeLangfuse() as fake:
        for key, value in env_for(fake).items():
            monkeypatch.setenv(key, value)
        for i in range(N):
            _load(fake, i)
        others = _seed_others(fake)
        stamp = START.isoformat().replace("+00:00", "Z")  # a score of another evaluator under an old name: not ours
        fake.add_score({"id": "other-evaluator-calls", "traceId": "tr-00002", "name": "search.calls", "value": 9,
                        "dataType": "NUMERIC", "timestamp": stamp})  # fmt: skip
        config_path = _config(tmp_path)
        with monkeypatch.context() as before:
            before_rename(before)
            _backfill(config_path)
        old = [s for s in _ours(fake) if s["name"] in OLD_NAMES and s["id"] != "other-evaluator-calls"]
        assert {s["name"] for s in old} == set(OLD_NAMES) and len(old) >= N * 4
        deletes = len(fake.requests_to("/api/public/scores/", "DELETE"))

        summary = _backfill(config_path)
        ours = [s for s in _ours(fake) if s["id"] != "other-evaluator-calls"]
        assert not {s["name"] for s in ours} & set(OLD_NAMES)  # every old name of ours gone
        assert set(OLD_NAMES.values()) <= {s["name"] for s in ours}
        pairs = Counter((s["traceId"], s["name"]) for s in ours)
        assert set(pairs.values()) == {1} and set(pairs) == _expected(config_path)
        assert summary["scores_removed"] == len(old)
        assert len(fake.requests_to("/api/public/scores/", "DELETE")) - deletes == len(old)
        theirs = [s for s in fake.scores.values() if s["id"] == "other-evaluator-calls"]
        assert _others(fake) == others and [s["value"] for s in theirs] == [9]  # not ours: kept
        with Store(tmp_path / "ts.db") as store:
            history = WrittenScores(store, "langfuse").history("tr-00005")
        reasons = {e["name"]: e["reason"] for e in history if e["event"] == "removed"}
        assert reasons["search.calls"].startswith("superseded by trajectory.search_calls version ")

        deletes = len(fake.requests_to("/api/public/scores/", "DELETE"))
        again = _backfill(_config(tmp_path, "\n[scorers.retrieval]\nk = 5\n"))  # another fingerprint: every trace again
        assert again["scores_removed"] == 0
        assert len(fake.requests_to("/api/public/scores/", "DELETE")) == deletes  # removed once, never again


def test_keep_versions_writes_versioned_names_side_by_side(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLangfuse() as fake:
        for key, value in env_for(fake).items():
            monkeypatch.setenv(key, value)
        for i in range(3):
            _load(fake, i)
        config_path = _config(tmp_path, "\n[sinks]\nkeep_versions = true\n")
        _backfill(config_path)
        _release(monkeypatch, "2")
        summary = _backfill(config_path)
        names = Counter(s["name"] for s in fake.scores.values() if s["traceId"] == "tr-00001")
        assert names["citation.coverage@citations-1"] == names["citation.coverage@citations-2"] == 1
        assert set(names.values()) == {1} and summary["scores_removed"] == 0
        categorical = [s for s in fake.scores.values() if s["name"].startswith("diagnosis@")]
        assert categorical and all(s.get("configId") for s in categorical)  # its score config, under its name


def test_a_failing_removal_stops_the_run_and_the_next_run_removes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.fakes.base import Fault

    with FakeLangfuse() as fake:
        for key, value in env_for(fake).items():
            monkeypatch.setenv(key, value)
        for i in range(N):
            _load(fake, i)
        config_path = _config(tmp_path, "\n[langfuse]\nbackoff = 0.01\nmax_attempts = 3\n")
        _backfill(config_path)
        before = {(s["traceId"], s["name"]) for s in _ours(fake)}
        _load(fake, 0, labels=False)
        _release(monkeypatch, "2")
        fake.faults.add("/api/public/scores/", Fault.http(503), *[Fault.http(500)] * 3)  # one retried, then down
        args = ["backfill", "--config", str(config_path), "--from", START.isoformat(), "--to", STOP.isoformat(), "-q"]
        stopped = CliRunner().invoke(main, args)
        assert stopped.exit_code == 4, stopped.output
        assert "did not remove 1 of our superseded or vanished scores" in stopped.output
        left = {(s["traceId"], s["name"]) for s in _ours(fake)} - _expected(config_path)
        assert len(left) == 1  # the one whose removal failed is still there (not marked done: retried next run)

        summary = _backfill(config_path)  # resumes: the trace is scored again and its removal retried
        pairs = Counter((s["traceId"], s["name"]) for s in _ours(fake))
        assert set(pairs.values()) == {1} and set(pairs) == _expected(config_path) and set(pairs) < before
        assert summary["scores_removed"] == 1 and fake.faults.pending() == 0


def test_a_partly_refused_batch_that_names_no_score_removes_nothing_it_would_supersede(tmp_path: Path) -> None:
    from tracescore.platforms.langfuse.client import LangfuseCredentials, make_client
    from tracescore.platforms.langfuse.settings import LangfuseSettings
    from tracescore.platforms.langfuse.sink import LangfuseScoreSink
    from tracescore.result import TraceResult
    from tracescore.scores import score
    from tracescore.sinks.records import versioned_score_id
    from tracescore.store.written import Written

    with FakeLangfuse() as fake, Store(tmp_path / "s.db") as store:
        old = Written(versioned_score_id("t-1", "citation.coverage", "citations-0"), "t-1", "citation.coverage",
                      "citation.coverage", "citations-0")
        WrittenScores(store, "langfuse").wrote([old], "r0")
        fake.add_score({"id": old.score_id, "traceId": "t-1", "name": old.name, "value": 0.1,
                        "timestamp": START.isoformat()})
        result = TraceResult(trace_id="t-1", timestamp=START)
        result.scores["citation.coverage"] = score("citation.coverage", 0.9)
        result.scores["answer.correct"] = score("answer.correct", True)
        first = TraceResult(trace_id="t-0", timestamp=START)  # the batch's first trace: its scores all go through
        first.scores["answer.correct"] = score("answer.correct", True)
        fake.anonymous_errors = True
        fake.reject_score = lambda item: "quota" if item["traceId"] == "t-1" and item["name"] == old.name else None
        with make_client(LangfuseCredentials.from_env(env_for(fake)), timeout=5) as client:
            sink = LangfuseScoreSink(client, LangfuseSettings(), sleep=lambda s: None)
            sink.attach(store, "r1")
            sink.write(first)
            sink.write(result)
            report = sink.close()
        assert report.rejected and report.removed == 0
        assert fake.scores_of("t-1") and any(s["id"] == old.score_id for s in fake.scores_of("t-1"))  # no hole
        fake.anonymous_errors, fake.reject_score = False, (lambda item: None)
        with make_client(LangfuseCredentials.from_env(env_for(fake)), timeout=5) as client:
            sink = LangfuseScoreSink(client, LangfuseSettings(), sleep=lambda s: None)
            sink.attach(store, "r2")
            sink.write(result)
            assert sink.close().removed == 1
        assert {s["name"]: s["value"] for s in fake.scores_of("t-1")} == {"citation.coverage": 0.9, "answer.correct": 1}


def _marked(db: Path) -> int:
    """Traces marked done by any run, read without writing (the job may hold the write lock)."""
    import sqlite3

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return int(con.execute("SELECT count(*) FROM scored_traces").fetchone()[0])
    finally:
        con.close()


@pytest.mark.slow
def test_sigkilled_version_changing_backfill_ends_with_exactly_the_current_scores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGKILL x10 at random points (seeded) of the backfill that changes every version and drops some scores."""
    import os
    import random
    import signal
    import subprocess
    import sys
    import time

    rng = random.Random(16)
    n = 300
    with FakeLangfuse() as fake:
        for key, value in env_for(fake).items():
            monkeypatch.setenv(key, value)
        for i in range(n):
            trace, observations = make_trace(i, START + timedelta(seconds=11 * i), size=6)
            fake.add_trace(trace, observations)
        others = _seed_others(fake)
        config_path = _config(tmp_path).with_name("tracescore.toml")
        config_path.write_text(config_path.read_text().replace("backfill_chunks = 3", "backfill_chunks = 20")
                               .replace("write_batch = 5", "write_batch = 10"))
        _backfill(config_path)  # version A, run to the end
        before = Counter((s["traceId"], s["name"]) for s in _ours(fake))
        assert set(before.values()) == {1}

        for i in range(0, n, 7):  # every 7th trace loses its labels: some of its scores become absent
            fake.observations = [o for o in fake.observations if o["traceId"] != f"tr-{i:05d}"]
            trace, observations = make_trace(i, START + timedelta(seconds=11 * i), size=6, labels=False)
            fake.add_trace(trace, observations)
        repo = Path(__file__).resolve().parents[3]
        env = dict(os.environ) | env_for(fake) | {"TRACESCORE_TEST_RELEASE": "2"}
        env["PYTHONPATH"] = os.pathsep.join([str(repo), env.get("PYTHONPATH", "")])
        args = [sys.executable, "-m", "tests.sinks.releases", "backfill", "--config", str(config_path),
                "--from", START.isoformat(), "--to", STOP.isoformat(), "-q"]
        targets = sorted(rng.sample(range(n + 5, 2 * n - 20), 10))
        progress = []
        for target in targets:
            proc = subprocess.Popen(
                args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            deadline = time.monotonic() + 120
            while _marked(tmp_path / "ts.db") < target and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.005)
            time.sleep(rng.uniform(0.0, 0.05))
            proc.send_signal(signal.SIGKILL)
            _, err = proc.communicate(timeout=60)
            assert proc.returncode == -signal.SIGKILL, f"the backfill ended before it was killed: {err[-500:]}"
            progress.append(_marked(tmp_path / "ts.db") - n)
        assert progress == sorted(progress) and progress[-1] < n and len(set(progress)) > 5
        print(f"traces of the backfill done at each kill: {progress}")

        final = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
        assert final.returncode == 0, final.stderr
        pairs = Counter((s["traceId"], s["name"]) for s in _ours(fake))
        assert set(pairs.values()) == {1}  # no duplicates
        _release(monkeypatch, "2")
        assert set(pairs) == _expected(config_path)  # none missing, none stale
        assert set(pairs) < set(before)  # some did vanish
        assert {s["metadata"]["scorer_version"] for s in _ours(fake)} <= {e.version for e in catalog.entries()}  # new
        assert _others(fake) == others
