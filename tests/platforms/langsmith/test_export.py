"""A LangSmith bulk export (Parquet, Hive paths) scores exactly like the same traces from JSONL, locally and on S3.

The export is generated from the cookbook's samples with the run trees the LangSmith fake serves
(``tests/fakes/exports.py``); one trace's child runs sit in a second part file, so grouping by ``trace_id`` across
files is exercised (issue #15, acceptance 1, local engine).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from tests.fakes.exports import write_langsmith_export
from tests.fakes.langsmith_runs import SAMPLES, load_samples
from tests.fakes.s3 import S3, s3  # noqa: F401 - the fixture
from tracescore.cli import main
from tracescore.errors import ConfigError
from tracescore.platforms.langsmith.export import LangSmithExport

COMPARED = ("scores", "missing", "errors", "comments", "timestamp")


def _score(tmp_path: Path, args: list[str], name: str) -> tuple[int, dict[str, dict[str, Any]], str]:
    out = tmp_path / f"{name}.jsonl"
    result = CliRunner(env={"ANTHROPIC_API_KEY": ""}).invoke(
        main, ["score", *args, "--out", str(out), "--store", str(tmp_path / f"{name}.db"), "-q"]
    )
    lines = {r["trace_id"]: r for r in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    return result.exit_code, lines, result.stderr


@pytest.mark.parametrize("where", ["folder", "s3"])
def test_a_bulk_export_scores_exactly_like_the_same_traces_from_jsonl(
    where: str, tmp_path: Path, s3: S3, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    monkeypatch.chdir(tmp_path)
    code, baseline, _ = _score(tmp_path, [str(SAMPLES)], "jsonl")
    assert code == 0
    layout = write_langsmith_export(tmp_path / "export", prefix="ls-exports")
    root = str(tmp_path / "export" / "ls-exports")
    if where == "s3":
        root = s3.upload(tmp_path / "export", "langsmith-bucket") + "/ls-exports"
    code, ours, stderr = _score(tmp_path, [root, "--source", "langsmith-export"], "export")
    assert code == 0, stderr
    mapped = {layout.sample_id(t): line for t, line in ours.items()}
    assert set(mapped) == set(baseline)
    for trace_id, line in mapped.items():
        for key in COMPARED:
            assert line.get(key) == baseline[trace_id].get(key), (trace_id, key)
        assert line["metadata"]["langsmith"]["session_id"]  # what push needs to write feedback
    assert sum(len(r["scores"]) for r in mapped.values()) == sum(len(r["scores"]) for r in baseline.values()) > 200


def test_every_trace_lies_whole_in_exactly_one_shard(tmp_path: Path) -> None:
    layout = write_langsmith_export(tmp_path / "export")
    source = LangSmithExport(str(tmp_path / "export"))
    shards = source.shards()
    assert [s.key for s in shards] == layout.files and len(shards) == 2
    seen: dict[str, list[str]] = {}
    runs: dict[str, int] = {}
    for shard in shards:
        for record in source.read(shard):
            payload: Any = record.payload
            seen.setdefault(payload["id"], []).append(shard.key)
            runs[payload["id"]] = 1 + len(payload["runs"])
    assert all(len(keys) == 1 for keys in seen.values())
    expected = {layout.platform_ids[s["id"]]: 1 + len(s["steps"]) for s in load_samples()}
    assert runs == expected  # the trace whose children lie in the other part file is whole
    assert seen[layout.platform_ids[layout.spanning or ""]] == [shards[0].key]  # the file holding its root


def test_a_trace_without_its_root_run_is_one_error_and_the_rest_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    layout = write_langsmith_export(tmp_path / "export")
    first = tmp_path / "export" / layout.files[0]
    table = pq.read_table(first)
    rows = table.to_pylist()
    lost = next(r for r in rows if r["is_root"] and r["trace_id"] != layout.platform_ids[layout.spanning or ""])
    pq.write_table(table.from_pylist([r for r in rows if r is not lost], schema=table.schema), first)
    code, lines, _ = _score(tmp_path, [str(tmp_path / "export"), "--source", "langsmith-export"], "export")
    assert code == 1
    errors = [line for line in lines.values() if line["errors"]]
    assert len(errors) == 1 and "root run is not in the export" in errors[0]["errors"][0]
    assert sum(1 for line in lines.values() if line["scores"]) == len(layout.trace_ids) - 1


def test_a_folder_that_is_not_a_bulk_export_says_what_to_give(tmp_path: Path) -> None:
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.jsonl").write_text("{}\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="holds no LangSmith bulk export"):
        LangSmithExport(str(tmp_path / "other")).shards()
    result = CliRunner().invoke(main, ["score", str(tmp_path / "other"), "--source", "langsmith-export"])
    assert result.exit_code == 2 and "session_id=" in result.output


def test_a_json_export_file_is_read_record_by_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bulk export file as a JSON array: a run that is not UTF-8 fails its trace only, a record that is no object
    is reported with its record number, and every other trace scores (exit 1)."""
    monkeypatch.chdir(tmp_path)
    layout = write_langsmith_export(tmp_path / "export")
    first = tmp_path / "export" / layout.files[0]
    rows = pq.read_table(first).to_pylist()
    spanning = layout.platform_ids[layout.spanning or ""]
    broken = next(r for r in rows if not r["is_root"] and r["trace_id"] != spanning)
    broken["name"] = "BROKEN"
    records = [{k: v.isoformat() if hasattr(v, "isoformat") else v for k, v in r.items()} for r in rows]
    text = json.dumps(records[:3] + [42] + records[3:], indent=1).encode().replace(b"BROKEN", b"\xff\xfe")
    first.unlink()
    first.with_suffix(".json").write_bytes(text)
    code, lines, stderr = _score(tmp_path, [str(tmp_path / "export"), "--source", "langsmith-export"], "export")
    assert code == 1, stderr
    errors = {trace_id: line["errors"] for trace_id, line in lines.items() if line["errors"]}
    assert set(errors) == {None, broken["trace_id"]}
    assert "record 4: not a JSON object" in errors[None][0]
    assert "not UTF-8" in errors[broken["trace_id"]][0] and "00000.json' record" in errors[broken["trace_id"]][0]
    assert sum(1 for line in lines.values() if line["scores"]) == len(layout.trace_ids) - 1
