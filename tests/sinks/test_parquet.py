"""Parquet results: the result lines read back exactly as written, one file per shard, atomically; ``report`` and
``gate`` read a file or a folder, local or ``s3://`` (moto's server on loopback, the real pyarrow S3 client)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.conftest import SAMPLES
from tracescore.cli import main
from tracescore.errors import InputError, MissingInputError, NoResultsError
from tracescore.report.runs import results_from
from tracescore.sinks.parquet import is_parquet_spec, read_parquet_results, shard_file, write_results

pytest.importorskip("pyarrow")


@pytest.fixture(scope="module")
def lines(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """The samples' result lines from the local engine (no judge), plus an unreadable line's error result."""
    tmp = tmp_path_factory.mktemp("lines")
    traces = tmp / "traces.jsonl"
    traces.write_text(SAMPLES.read_text() + '{"id": "broken", "question": 3}\n')
    result = CliRunner().invoke(main, ["score", str(traces), "--no-judge", "-q", "--store", str(tmp / "t.db"),
                                       "--out", str(tmp / "r.jsonl")])
    assert result.exit_code == 1  # the broken line
    return [json.loads(line) for line in (tmp / "r.jsonl").read_text().splitlines()]


def test_result_lines_read_back_exactly_as_written(lines: list[dict[str, Any]], tmp_path: Path) -> None:
    lines = lines + [lines[0] | {"notes": ["a note"], "comments": {"answer.correct": "why"}, "metadata": {"x": 1.5},
                                 "judge": {"calls": 1}, "new_key": {"kept": True}}]
    assert write_results(str(tmp_path / "a.parquet"), lines) == len(lines)
    assert list(read_parquet_results(str(tmp_path / "a.parquet"))) == lines
    assert any(line["errors"] and not line["scores"] for line in lines)  # the error line too


def test_a_file_is_written_whole_or_not_at_all(lines: list[dict[str, Any]], tmp_path: Path) -> None:
    def failing() -> Iterator[dict[str, Any]]:
        yield from lines[:3]
        raise RuntimeError("the shard task died")

    with pytest.raises(RuntimeError):
        write_results(str(tmp_path / "r" / "s.parquet"), failing())
    assert not (tmp_path / "r" / "s.parquet").exists()  # only a hidden temp file, which readers skip
    write_results(str(tmp_path / "r" / "t.parquet"), lines[:2])
    assert [line["trace_id"] for line in read_parquet_results(str(tmp_path / "r"))] == [
        line["trace_id"] for line in lines[:2]]


def test_shard_file_names_are_stable_readable_and_distinct() -> None:
    a, b = shard_file("day=01/part-1.jsonl"), shard_file("day=01_part-1.jsonl")
    assert a == shard_file("day=01/part-1.jsonl") and a != b
    assert a.startswith("day=01_part-1.jsonl-") and a.endswith(".parquet")
    assert len(shard_file("x/" * 200)) < 120


def test_a_folder_reads_every_file_in_key_order_and_names_a_bad_one(lines: list[dict[str, Any]],
                                                                     tmp_path: Path) -> None:
    write_results(str(tmp_path / "b.parquet"), lines[5:])
    write_results(str(tmp_path / "a.parquet"), lines[:5])
    (tmp_path / "c.parquet").write_bytes(b"not parquet at all")
    got = list(read_parquet_results(str(tmp_path)))
    assert got[:-1] == lines
    assert got[-1]["trace_id"] is None and "c.parquet: not a readable Parquet results file" in got[-1]["errors"][0]


def test_specs_that_are_not_parquet_results_fail_with_the_reason(tmp_path: Path) -> None:
    assert is_parquet_spec(str(tmp_path)) and is_parquet_spec("s3://b/scores/") and is_parquet_spec("r.parquet")
    assert not is_parquet_spec("r.jsonl") and not is_parquet_spec("-")
    with pytest.raises(InputError, match="holds no .parquet result file"):
        list(read_parquet_results(str(tmp_path)))
    with pytest.raises(MissingInputError, match="no results at"):
        list(read_parquet_results(str(tmp_path / "missing.parquet")))
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"x": [1]}), tmp_path / "other.parquet")
    label, results = results_from(str(tmp_path), tmp_path / "t.db")
    with pytest.raises(NoResultsError, match="holds no scored trace"):
        list(results)


def test_report_and_gate_read_a_parquet_folder(lines: list[dict[str, Any]], tmp_path: Path) -> None:
    write_results(str(tmp_path / "scores" / "a.parquet"), lines[:20])
    write_results(str(tmp_path / "scores" / "b.parquet"), lines[20:])
    report = CliRunner().invoke(main, ["report", str(tmp_path / "scores")])
    assert report.exit_code == 0, report.output
    assert "38 traces scored, 1 unreadable" in report.output
    clean = [line for line in lines if line["scores"].get("citation.fabricated_count") == 0 and not line["errors"]]
    write_results(str(tmp_path / "clean" / "a.parquet"), clean)
    passing = CliRunner().invoke(main, ["gate", str(tmp_path / "clean"), "--allow-unread"])
    assert passing.exit_code == 0, passing.output
    strict = CliRunner().invoke(main, ["gate", str(tmp_path / "scores"), "--allow-unread"])
    assert strict.exit_code == 1, strict.output  # two samples cite a fabricated URL: the gate fails on Parquet too
    assert "no fabricated citation" in strict.output and "tr-0010" in strict.output


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A real S3 API on loopback (moto's server); the bucket ``scores-bucket``; pyarrow reads AWS_ENDPOINT_URL."""
    moto_server = pytest.importorskip("moto.server")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    for name, value in {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test",
                        "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": f"http://{host}:{port}"}.items():
        monkeypatch.setenv(name, value)
    import boto3

    boto3.client("s3").create_bucket(Bucket="scores-bucket")
    try:
        yield "s3://scores-bucket"
    finally:
        server.stop()


def test_results_on_s3_are_written_and_reported_from_there(lines: list[dict[str, Any]], s3: str) -> None:
    assert os.environ["AWS_ENDPOINT_URL"].startswith("http://127.0.0.1")
    write_results(f"{s3}/run-1/results/a.parquet", lines[:10])
    write_results(f"{s3}/run-1/results/b.parquet", lines[10:])
    assert list(read_parquet_results(f"{s3}/run-1/results/")) == lines
    report = CliRunner().invoke(main, ["report", f"{s3}/run-1/results/"])
    assert report.exit_code == 0, report.output
    assert "38 traces scored" in report.output
    missing = CliRunner().invoke(main, ["report", f"{s3}/run-2/"])
    assert missing.exit_code != 0 and "no results at" in missing.output
