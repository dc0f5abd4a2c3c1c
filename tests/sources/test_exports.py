"""``sources.exports``: the window of an export source is half-open on the root's start time; a file's unreadable
rows and breaks are reported with file and line, and the rest of the file is read."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tracescore.errors import AdapterError, SourceError
from tracescore.sources.export_rows import Unreadable, with_unread
from tracescore.sources.exports import ExportRoot, in_window

SINCE = datetime(2026, 11, 20, tzinfo=UTC)
UNTIL = datetime(2026, 11, 21, tzinfo=UTC)


def test_half_open_window() -> None:
    assert in_window("2026-11-20T00:00:00Z", SINCE, UNTIL)
    assert in_window("2026-11-20T23:59:59.999+00:00", SINCE, UNTIL)
    assert not in_window("2026-11-21T00:00:00Z", SINCE, UNTIL)  # until is excluded
    assert not in_window("2026-11-19T23:59:59Z", SINCE, UNTIL)
    assert in_window("2030-01-01T00:00:00Z", SINCE, None)  # no until: everything from since


def test_naive_times_are_utc_and_offsets_count() -> None:
    assert in_window("2026-11-20T00:30:00", SINCE, UNTIL)
    assert not in_window("2026-11-20T00:30:00+01:00", SINCE, UNTIL)  # 23:30 UTC the day before


def test_missing_or_unreadable_start_is_kept_for_the_adapter_to_report() -> None:
    assert in_window(None, SINCE, UNTIL)
    assert in_window("", SINCE, UNTIL)
    assert in_window("last tuesday", SINCE, UNTIL)


# --- unreadable rows and files ----------------------------------------------------------------------------------------

ROWS = [{"id": f"o{n}", "trace_id": f"t{n // 2}", "name": f"step {n}"} for n in range(6)]


def _jsonl(rows: list[dict[str, object]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def _read(path: Path) -> tuple[list[tuple[int, dict[str, object]]], list[Unreadable]]:
    bad: list[Unreadable] = []
    rows = list(ExportRoot(str(path.parent)).numbered(str(path), bad=bad))
    return rows, bad


def test_a_line_that_is_not_utf8_is_that_lines_problem_and_the_file_is_read_on(tmp_path: Path) -> None:
    data = _jsonl(ROWS).replace(b"step 2", b"step \xff\xfe2")
    (tmp_path / "a.jsonl").write_bytes(data)
    rows, bad = _read(tmp_path / "a.jsonl")
    assert [n for n, _ in rows] == [1, 2, 4, 5, 6]
    assert [(p.line, p.trace_id) for p in bad] == [(3, "t1")] and "not UTF-8" in bad[0].reason
    assert str(bad[0]).endswith("a.jsonl' line 3: " + bad[0].reason)


def test_a_cut_line_names_its_trace_when_legible(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_bytes(_jsonl(ROWS)[:-12])  # the last line loses its end
    rows, bad = _read(tmp_path / "a.jsonl")
    assert len(rows) == 5 and [(p.line, p.trace_id) for p in bad] == [(6, "t2")] and "not JSON" in bad[0].reason


def test_a_gzip_stream_that_breaks_keeps_the_rows_before_the_break(tmp_path: Path) -> None:
    rows_in = [dict(r, pad="x" * 4000 + str(n)) for n, r in enumerate(ROWS * 40)]  # ~1 MB, incompressible enough
    packed = gzip.compress(_jsonl(rows_in), compresslevel=1)
    (tmp_path / "a.jsonl.gz").write_bytes(packed[: len(packed) // 2])
    rows, bad = _read(tmp_path / "a.jsonl.gz")
    assert 0 < len(rows) < len(rows_in) and [n for n, _ in rows] == list(range(1, len(rows) + 1))
    assert len(bad) == 1 and bad[0].line is None and bad[0].after == len(rows) and "EOFError" in bad[0].reason
    assert f"unreadable after line {len(rows)}" in str(bad[0])


def test_a_file_that_is_not_gzip_is_one_problem_not_an_exception(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl.gz").write_bytes(b"not gzip at all\n")
    rows, bad = _read(tmp_path / "a.jsonl.gz")
    assert rows == [] and len(bad) == 1 and bad[0].line is None and "BadGzipFile" in bad[0].reason


def test_a_json_document_is_read_record_by_record(tmp_path: Path) -> None:
    text = json.dumps([ROWS[0], 42, ROWS[1], ROWS[2]], indent=2).encode().replace(b"step 1", b"step \xff1")
    (tmp_path / "a.json").write_bytes(text)
    rows, bad = _read(tmp_path / "a.json")
    assert [(n, r["id"]) for n, r in rows] == [(1, "o0"), (4, "o2")]
    assert [(p.line, p.trace_id) for p in bad] == [(2, None), (3, "t0")]
    assert "not a JSON object" in bad[0].reason and "not UTF-8" in bad[1].reason and "record 3" in str(bad[1])


def test_a_json_record_that_is_not_json_ends_the_file_there_and_keeps_the_records_before(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text(json.dumps(ROWS[:2])[:-1] + ', {"id": "o9", "trace_id": "t9", oops}]')
    rows, bad = _read(tmp_path / "a.json")
    assert [r["id"] for _, r in rows] == ["o0", "o1"]
    assert len(bad) == 1 and bad[0].line is None and bad[0].after == 2 and bad[0].trace_id == "t9"


def test_a_csv_row_that_is_not_utf8_is_reported_and_the_others_read(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_bytes(b"id,trace_id,name\no0,t0,a\no1,t0,b\xff\no2,t1,c\n")
    rows, bad = _read(tmp_path / "a.csv")
    assert [(n, r["id"]) for n, r in rows] == [(2, "o0"), (4, "o2")]
    assert [(p.line, p.trace_id) for p in bad] == [(3, "t0")]


def test_without_a_list_a_bad_line_is_a_note_and_a_broken_file_an_error(tmp_path: Path) -> None:
    """What ``tracescore push`` relies on: it lists the notes and stops on a file it cannot read."""
    (tmp_path / "a.jsonl").write_bytes(_jsonl(ROWS).replace(b"step 2", b"step \xff2"))
    root = ExportRoot(str(tmp_path))
    assert len(list(root.rows(str(tmp_path / "a.jsonl")))) == 5
    assert len(root.notes) == 1 and root.notes[0].startswith(f"{tmp_path / 'a.jsonl'}: line 3 skipped: not UTF-8")
    (tmp_path / "b.jsonl.gz").write_bytes(b"not gzip")
    with pytest.raises(SourceError, match="BadGzipFile"):
        list(root.rows(str(tmp_path / "b.jsonl.gz")))


def test_a_payload_carrying_an_error_is_that_records_error() -> None:
    with pytest.raises(AdapterError, match="line 3: not JSON"):
        with_unread({"id": "t1", "error": "line 3: not JSON"}, adapter=lambda payload: payload)
    assert with_unread({"id": "t1"}, adapter=lambda payload: "adapted") == "adapted"
