"""A Langfuse blob-storage export scores exactly like the same traces from JSONL, from a folder or a real S3 API.

The export is generated from the cookbook's samples (``tests/fakes/exports.py``): two runs whose windows overlap, a
trace whose late child lies only in the second run, and a third run without its manifest. Scored with the local
engine (``score EXPORT --source langfuse-export``), every sample gives the same result line as from
``cookbook/data/traces.jsonl`` — scores, absent scores with their reasons, comments, timestamp, judge model and
rubric — with the judge on (the fake Anthropic API) and off (issue #15, acceptance 1, local engine).
"""

from __future__ import annotations

import json
import pickle
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.exports import PROJECT, UNFINISHED, ExportLayout, write_langfuse_export
from tests.fakes.langsmith_runs import SAMPLES, load_samples
from tests.fakes.s3 import S3, s3  # noqa: F401 - the fixture
from tracescore.cli import main
from tracescore.errors import ConfigError
from tracescore.platforms.base import EVERYTHING
from tracescore.platforms.langfuse.export import LangfuseExport

COMPARED = ("scores", "missing", "errors", "comments", "timestamp")
JUDGE = ("model", "rubric_version", "agreement")  # the judge's usage (tokens, cost, cache hits) is per run


def _lines(path: Path) -> dict[str, dict[str, Any]]:
    return {r["trace_id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def _score(tmp_path: Path, name: str, args: list[str], env: dict[str, str]) -> tuple[dict[str, dict[str, Any]], str]:
    out = tmp_path / f"{name}.jsonl"
    result = CliRunner(env=env).invoke(
        main, ["score", *args, "--out", str(out), "--store", str(tmp_path / f"{name}.db"), "-q"]
    )
    assert result.exit_code == 0, result.output
    return _lines(out), result.stderr


def _same(ours: dict[str, dict[str, Any]], baseline: dict[str, dict[str, Any]], layout: ExportLayout) -> int:
    """Every sample scored exactly as from JSONL, line by line (minus source-specific fields); the number of
    scores compared."""
    mapped = {layout.sample_id(t): r for t, r in ours.items()}
    assert set(mapped) == set(baseline), set(mapped) ^ set(baseline)
    compared = 0
    for trace_id, line in mapped.items():
        for key in COMPARED:
            assert line.get(key) == baseline[trace_id].get(key), (trace_id, key)
        judge, expected = line.get("judge") or {}, baseline[trace_id].get("judge") or {}
        assert {k: judge.get(k) for k in JUDGE} == {k: expected.get(k) for k in JUDGE}, trace_id
        compared += len(line["scores"]) + len(line["missing"])
    return compared


@pytest.fixture(scope="module")
def judge() -> Any:
    with FakeAnthropic() as fake:
        yield fake


@pytest.fixture(scope="module")
def baselines(tmp_path_factory: pytest.TempPathFactory, judge: FakeAnthropic) -> dict[bool, dict[str, Any]]:
    """The samples scored from JSONL, without and with the judge."""
    tmp = tmp_path_factory.mktemp("baseline")
    out = {}
    for judged in (False, True):
        lines, _ = _score(tmp, f"jsonl-{judged}", [str(SAMPLES)], _env(judge, judged))
        out[judged] = lines
    return out


def _env(judge: FakeAnthropic, judged: bool) -> dict[str, str]:
    if judged:
        return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": judge.url}
    return {"ANTHROPIC_API_KEY": ""}


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
@pytest.mark.parametrize("where", ["folder", "s3"])
def test_an_export_scores_exactly_like_the_same_traces_from_jsonl(
    fmt: str, where: str, tmp_path: Path, s3: S3, judge: FakeAnthropic,  # noqa: F811
    baselines: dict[bool, dict[str, Any]], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    layout = write_langfuse_export(tmp_path / "export", fmt=fmt, prefix="lf-exports/")
    root = str(tmp_path / "export" / "lf-exports")
    if where == "s3":
        root = s3.upload(tmp_path / "export", "langfuse-bucket", f"{fmt}") + "/lf-exports"
    judged = fmt == "parquet"  # the judge once per format pair: the fake's verdicts are deterministic
    ours, stderr = _score(tmp_path, "export", [root, "--source", "langfuse-export"], _env(judge, judged))
    compared = _same(ours, baselines[judged], layout)
    assert compared == sum(len(r["scores"]) + len(r["missing"]) for r in baselines[judged].values()) > 400
    assert UNFINISHED not in ours
    assert f"run {layout.skipped} skipped: no manifest" in stderr
    if judged:
        assert any("grounding.rate" in line["scores"] for line in ours.values())


def test_the_legacy_mode_takes_trace_level_data_from_its_own_files(
    tmp_path: Path, baselines: dict[bool, dict[str, Any]], judge: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Legacy exports (``traces/`` + ``observations/``, gzip JSONL here): the question, answer and labels live only
    in the trace's own row, and the trace still scores exactly as from JSONL."""
    monkeypatch.chdir(tmp_path)
    layout = write_langfuse_export(tmp_path / "export", fmt="jsonl.gz", legacy=True)
    ours, stderr = _score(tmp_path, "legacy", [str(tmp_path / "export"), "--source", "langfuse-export"],
                          _env(judge, False))
    assert _same(ours, baselines[False], layout) > 400
    assert UNFINISHED not in ours and "observations/" in (layout.skipped or "") and "no manifest" in stderr


def test_a_source_sent_to_a_worker_carries_its_plan(tmp_path: Path) -> None:
    """What a distributed engine does: list the shards on the driver, pickle the source, read a shard elsewhere."""
    write_langfuse_export(tmp_path / "export", fmt="parquet")
    source = LangfuseExport(str(tmp_path / "export"))
    shards = source.shards()
    copy = pickle.loads(pickle.dumps(source))
    assert copy.plan() == source.plan() and copy.plan().owner  # the edge traces travel with the source
    for shard in shards:
        assert [r.payload for r in copy.read(shard)] == [r.payload for r in source.read(shard)]


def test_the_checks_can_fail_a_changed_trace_or_a_run_with_its_manifest_shows(
    tmp_path: Path, baselines: dict[bool, dict[str, Any]], judge: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The comparison is not vacuous: one changed answer is caught; the unfinished run, once its manifest is
    written, is read."""
    monkeypatch.chdir(tmp_path)
    samples = load_samples()
    samples[3] = {**samples[3], "answer": "I do not know."}
    layout = write_langfuse_export(tmp_path / "export", samples, fmt="jsonl")
    ours, _ = _score(tmp_path, "changed", [str(tmp_path / "export"), "--source", "langfuse-export"],
                     _env(judge, False))
    with pytest.raises(AssertionError):
        _same(ours, baselines[False], layout)
    manifests = tmp_path / "export" / PROJECT / "manifests"
    first = sorted(manifests.iterdir())[0]
    stem = Path(layout.skipped or "").name.removesuffix(".jsonl")
    (manifests / f"{stem}.json").write_text(first.read_text(encoding="utf-8").replace(
        first.stem, stem), encoding="utf-8")
    source = LangfuseExport(str(tmp_path / "export"))
    ids = {r.payload["id"] for r in source.records(EVERYTHING)}  # type: ignore[index]
    assert UNFINISHED in ids and source.stats.skipped_runs == 0


def test_every_trace_lies_whole_in_exactly_one_shard_with_stable_keys(tmp_path: Path) -> None:
    layout = write_langfuse_export(tmp_path / "export", fmt="parquet")
    source = LangfuseExport(str(tmp_path / "export"))
    shards = source.shards()
    assert [s.key for s in shards] == layout.files[:2]  # one shard per complete run, keyed by its relative path
    assert [s.key for s in LangfuseExport(str(tmp_path / "export")).shards()] == [s.key for s in shards]
    seen: dict[str, list[str]] = {}
    observations: dict[str, int] = {}
    for shard in shards:
        for record in source.read(shard):
            payload: Any = record.payload
            seen.setdefault(payload["id"], []).append(shard.key)
            observations[payload["id"]] = len(payload["observations"])
    assert all(len(keys) == 1 for keys in seen.values()), {t: k for t, k in seen.items() if len(k) > 1}
    assert sorted(seen) == sorted(layout.trace_ids)
    steps = {s["id"]: len(s["steps"]) + 1 for s in load_samples()}
    assert observations == steps  # the spanning trace is whole, the overlapping ones hold no duplicate
    assert seen[layout.spanning or ""] == [shards[0].key]  # owned by the run holding its root
    assert source.stats.duplicate_rows == layout.duplicated_rows > 0


def test_a_window_keeps_the_traces_whose_root_starts_in_it(tmp_path: Path) -> None:
    write_langfuse_export(tmp_path / "export", fmt="jsonl")
    since, until = datetime(2026, 11, 20, 10, tzinfo=UTC), datetime(2026, 11, 20, 11, tzinfo=UTC)
    ids = {r.payload["id"] for r in LangfuseExport(str(tmp_path / "export")).records(since, until)}  # type: ignore[index]
    expected = {s["id"] for s in load_samples() if since <= datetime.fromisoformat(s["timestamp"]) < until}
    assert ids == expected and 0 < len(ids) < len(load_samples())


def test_a_bad_line_or_trace_is_reported_and_the_rest_scored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    layout = write_langfuse_export(tmp_path / "export", fmt="jsonl")
    run = tmp_path / "export" / layout.files[0]
    lines = run.read_text(encoding="utf-8").splitlines()
    broken = json.loads(lines[0])
    broken["start_time"] = "not a time"  # the root of the first trace: that trace cannot be read
    run.write_text("\n".join([json.dumps(broken), "{not json", *lines[1:]]) + "\n", encoding="utf-8")
    result = CliRunner(env={"ANTHROPIC_API_KEY": ""}).invoke(
        main, ["score", str(tmp_path / "export"), "--source", "langfuse-export", "--out", "r.jsonl", "-q"]
    )
    assert result.exit_code == 1, result.output
    lines_out = _lines(tmp_path / "r.jsonl")
    assert "line 2: not JSON" in lines_out[None]["errors"][0]  # a line of no legible trace: an error of its own
    assert lines_out[broken["trace_id"]]["errors"] and "startTime" in lines_out[broken["trace_id"]]["errors"][0]
    assert sum(1 for r in lines_out.values() if not r["errors"]) == len(layout.trace_ids) - 1


def test_a_folder_that_is_not_an_export_says_what_to_give(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="holds no Langfuse export run"):
        LangfuseExport(str(tmp_path / "empty")).shards()
    result = CliRunner().invoke(main, ["score", str(tmp_path / "empty"), "--source", "langfuse-export"])
    assert result.exit_code == 2 and "observations_v2" in result.output


# --- an unreadable row or file is reported, the rest scored (exit 1) --------------------------------------------------


def _score_broken(tmp_path: Path, fmt: str, breaks: Any) -> tuple[int, list[dict[str, Any]], ExportLayout, str]:
    """Score an export whose first run file ``breaks(path)`` changed: exit code, result lines, layout, stderr."""
    layout = write_langfuse_export(tmp_path / "export", fmt=fmt)
    breaks(tmp_path / "export" / layout.files[0])
    out = tmp_path / "r.jsonl"
    result = CliRunner(env={"ANTHROPIC_API_KEY": ""}).invoke(
        main, ["score", str(tmp_path / "export"), "--source", "langfuse-export", "--out", str(out),
               "--store", str(tmp_path / "s.db")]
    )
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()] if out.exists() else []
    return result.exit_code, lines, layout, result.stderr + result.output


def _errors(lines: list[dict[str, Any]]) -> dict[str | None, list[str]]:
    return {line["trace_id"]: line["errors"] for line in lines if line["errors"]}


def _first_row(path: Path, **changes: Any) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[0] = json.dumps(json.loads(lines[0]) | changes)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_line_that_is_not_utf8_fails_its_trace_only(tmp_path: Path) -> None:
    def breaks(path: Path) -> None:
        path.write_bytes(path.read_bytes().replace(b'"name": "', b'"name": "\xff\xfe', 1))

    code, lines, layout, output = _score_broken(tmp_path, "jsonl", breaks)
    assert code == 1, output
    first = json.loads((tmp_path / "export" / layout.files[0]).read_bytes().split(b"\n")[0].decode("utf-8", "replace"))
    errors = _errors(lines)
    assert list(errors) == [first["trace_id"]] and "line 1: not UTF-8" in errors[first["trace_id"]][0]
    assert layout.files[0] in errors[first["trace_id"]][0]
    assert sum(1 for line in lines if line["scores"]) == len(layout.trace_ids) - 1


@pytest.mark.parametrize("how", ["cut", "not gzip"])
def test_a_gzip_file_that_breaks_is_reported_and_the_other_runs_scored(tmp_path: Path, how: str) -> None:
    def breaks(path: Path) -> None:
        data = path.read_bytes()
        path.write_bytes(data[: len(data) // 2] if how == "cut" else b"not gzip at all\n")

    code, lines, layout, output = _score_broken(tmp_path, "jsonl.gz", breaks)
    assert code == 1, output
    errors = [e for line in lines for e in line["errors"]]
    assert len(errors) == 1 and layout.files[0] in errors[0] and "unreadable" in errors[0]
    assert ("EOFError" if how == "cut" else "BadGzipFile") in errors[0]
    second = LangfuseExport(str(tmp_path / "export"))
    in_second = {r.payload["id"] for r in second.read(second.shards()[1])}  # type: ignore[index]
    scored = {line["trace_id"] for line in lines if line["scores"]}
    assert in_second <= scored  # the intact run is scored whole
    if how == "cut":  # the rows before the break are kept
        assert len(scored - in_second) > 0


def test_a_root_row_without_trace_id_fails_its_trace_with_file_and_line(tmp_path: Path) -> None:
    code, lines, layout, output = _score_broken(tmp_path, "jsonl", lambda path: _first_row(path, trace_id=None))
    assert code == 1, output
    errors = _errors(lines)
    first = json.loads((tmp_path / "export" / layout.files[0]).read_text(encoding="utf-8").splitlines()[0])
    trace_id = first["id"].rsplit("-o", 1)[0]  # the fake's observation ids: {trace}-oNN; the children name it
    assert list(errors) == [trace_id]
    assert f"{layout.files[0]}' line 1: observation '{first['id']}' has no trace_id" in errors[trace_id][0]
    assert sum(1 for line in lines if line["scores"]) == len(layout.trace_ids) - 1


def test_a_cut_last_line_is_reported_once_on_its_trace(tmp_path: Path) -> None:
    cut: list[dict[str, Any]] = []

    def breaks(path: Path) -> None:
        text = path.read_text(encoding="utf-8").rstrip("\n")
        cut.append(json.loads(text.splitlines()[-1]))
        path.write_text(text[:-40], encoding="utf-8")  # the trace id stays legible

    code, lines, layout, output = _score_broken(tmp_path, "jsonl", breaks)
    assert code == 1, output
    number = len((tmp_path / "export" / layout.files[0]).read_text(encoding="utf-8").splitlines())
    errors = _errors(lines)
    assert list(errors) == [cut[0]["trace_id"]] and f"line {number}: not JSON" in errors[cut[0]["trace_id"]][0]
    assert output.count(f"line {number}: not JSON") == 1  # listed once, not once per pass over the file
    assert sum(1 for line in lines if line["scores"]) == len(layout.trace_ids) - 1
