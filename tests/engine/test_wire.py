"""A chunk crossing to a worker process and back (``engine/wire.py``): what comes out is what the worker built.

Chunks are pickled and unpickled here as ``ProcessPoolExecutor`` does, so the test sees the bytes the pipe carries.
"""

from __future__ import annotations

import dataclasses
import json
import os
import pickle
import random
import threading
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from benchmarks.throughput import make_light_trace
from tests.engine.test_golden import faults_lines
from tracescore.adapters import Adapter, trace_from_json
from tracescore.engine import wire
from tracescore.engine.plan import deterministic_scorers
from tracescore.engine.stage import Plan, Scored, score_chunk
from tracescore.engine.wire import Packed, Unread, pack, pack_records, score_packed, unpack, unpack_records
from tracescore.report.tally import Summary, summarize
from tracescore.scorers.scored import Scorer
from tracescore.sources.base import FileRef, Record
from tracescore.sources.jsonl import read_jsonl


def _build() -> tuple[Adapter, list[Scorer]]:
    return trace_from_json, deterministic_scorers()


def _records() -> list[tuple[int, int, Record]]:
    """Planted faults (unreadable lines of every kind, adversarial traces) and light traces, some with timestamps in
    other offsets than UTC."""
    rng = random.Random(3)
    lines = faults_lines()
    for i in range(40):
        trace = make_light_trace(i, rng)
        if i % 3 == 0:
            zone = timezone(timedelta(hours=i % 12 - 5))
            trace["timestamp"] = datetime(2026, 11, 1, i % 24, tzinfo=UTC).astimezone(zone).isoformat()
        lines.append(json.dumps(trace).encode())
    return [(100 + n, 3, Record(line, n + 1, len(line))) for n, line in enumerate(lines)]


def _through_pipe(value: object) -> object:
    return pickle.loads(pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL))


def test_records_from_a_platform_arrive_with_their_trace_urls() -> None:
    """A worker gets each record's trace URL (the result line's ``trace_url``); records without one stay without."""
    items = [(seq, w, Record(r.payload, r.line, r.size, url=f"https://ui.example/t/{seq}" if seq % 2 else None))
             for seq, w, r in _records()[:10]]  # fmt: skip
    got = unpack_records(_through_pipe(pack_records(items)))  # type: ignore[arg-type]
    assert [r.url for _, _, r in got] == [r.url for _, _, r in items] and any(r.url for _, _, r in got)
    plain = unpack_records(_through_pipe(pack_records(_records()[:10])))  # type: ignore[arg-type]
    assert all(r.url is None for _, _, r in plain)


def test_records_arrive_with_their_sequence_numbers_lines_and_payloads() -> None:
    items = _records()
    got = unpack_records(_through_pipe(pack_records(items)))  # type: ignore[arg-type]
    assert [(seq, window, r.payload, r.line) for seq, window, r in got] == [
        (seq, window, r.payload, r.line) for seq, window, r in items
    ]


def test_a_packed_chunk_unpacks_to_the_scored_the_worker_built() -> None:
    items = _records()
    for keep_result, digest in ((False, None), (True, None), (False, summarize)):
        plan = Plan(_build, "run-w", oneshot=True, keep_result=keep_result, digest=digest)
        built = score_chunk(plan, items)
        packed = pack(built)
        assert isinstance(packed, Packed)  # the common chunk goes as msgpack, not pickled whole
        got = unpack(_through_pipe(packed))  # type: ignore[arg-type]
        assert got == built  # every field: line, store rows, timestamp, failure, the TraceResult, the digest
        assert [s.timestamp for s in got] == [s.timestamp for s in built]  # same offsets, not only same instants
        assert [type(c) for s in got if s.rows for c in s.rows.result] == [
            type(c) for s in built if s.rows for c in s.rows.result
        ]
        assert any(s.failure for s in got) and any(s.timestamp for s in got)
        assert any(s.rows and s.rows.result[-2] for s in got)  # citation rows crossed (their JSON array)
        if digest is not None:
            assert isinstance(got[-1].digest, Summary) and got[-1].digest.traces == sum(s.failure is None for s in got)
            assert all(s.data is None for s in got)


def test_the_worker_entry_point_scores_packed_records() -> None:
    items = _records()
    plan = Plan(_build, "run-e", oneshot=True)
    assert unpack(_through_pipe(score_packed(plan, pack_records(items)))) == score_chunk(plan, items)  # type: ignore[arg-type]


def test_a_chunk_msgpack_cannot_hold_goes_pickled_whole() -> None:
    """A lone surrogate in a string, an int past 64 bits, a field of an unexpected type: the chunk is sent as the
    Scored themselves (decoding it in the parent could not fail)."""
    plan = Plan(_build, "run-s", oneshot=True)
    built = score_chunk(plan, _records()[-3:])
    odd_ones = (
        dataclass_with(built[0], key="lone \ud800 surrogate"),
        dataclass_with(built[0], values=2**70),
        dataclass_with(built[0], key=7),  # a type the parent's decoder would refuse
        dataclass_with(built[0], values=True),
    )
    for odd in odd_ones:
        chunk = [odd, *built[1:]]
        packed = pack(chunk)
        assert isinstance(packed, list)
        assert unpack(_through_pipe(packed)) == chunk  # type: ignore[arg-type]


def test_a_skipped_record_crosses_without_rows() -> None:
    skipped = Scored(7, 0, "t-7", None, True, skipped=True)
    plan = Plan(_build, "run-k", oneshot=True)
    built = [skipped, *score_chunk(plan, [(8, 0, Record(b'{"id": "t-8", "answer": "A [1]."}', 1))])]
    packed = pack(built)
    assert isinstance(packed, Packed)
    assert unpack(_through_pipe(packed)) == built  # type: ignore[arg-type]


def dataclass_with(scored: Scored, **changes: object) -> Scored:
    return dataclasses.replace(scored, **changes)  # type: ignore[arg-type]


def test_the_comparison_can_fail() -> None:
    """A result changed after packing is seen as changed (the equality above compares what matters)."""
    plan = Plan(_build, "run-f", oneshot=True)
    built = score_chunk(plan, _records()[-2:])
    got = unpack(pack(built))
    assert got == built
    got[0].rows.claims.append(("x",))  # type: ignore[union-attr]
    assert got != built



def test_lines_of_a_file_go_as_offsets_and_the_worker_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    lines = [line for line in faults_lines() if line.strip()]
    path.write_bytes(b"\xef\xbb\xbf" + b"\n\n".join(lines) + b"\r\n")  # a BOM, blank lines between, CRLF at the end
    items = [(n, 0, record) for n, record in enumerate(read_jsonl(path))]
    packed = pack_records(items)
    assert packed[4] is not None and packed[4].path == str(path)
    assert len(pickle.dumps(packed)) < sum(len(r.payload) for _, _, r in items) / 20  # type: ignore[arg-type]
    got = unpack_records(_through_pipe(packed))  # type: ignore[arg-type]
    assert [(r.payload, r.line) for _, _, r in got] == [(r.payload, r.line) for _, _, r in items]
    path.write_bytes(path.read_bytes()[:-100])  # the file shrank after the parent read it (same inode)
    with pytest.raises(Unread, match="bytes expected"):
        unpack_records(packed)
    with pytest.raises(Unread, match="No such file"):
        unpack_records((0, 0, [(0, 5)], [1], FileRef(str(tmp_path / "elsewhere.jsonl"), 0, 0)))
    assert pack_records(items, inline=True)[4] is None  # the bytes themselves, when asked


def test_chunks_of_any_size_read_through_the_reused_buffer_come_out_whole(tmp_path: Path) -> None:
    """The worker reads every chunk into one buffer: a small chunk after a large one, and a large one after that,
    come out as their own lines (nothing left over from the chunk before, nothing cut short)."""
    path = tmp_path / "t.jsonl"
    lines = [b'{"id": "%d", "answer": "%s"}\n' % (n, b"x" * (n % 7) * 5_000) for n in range(40)]
    path.write_bytes(b"".join(lines))
    items = [(n, 0, record) for n, record in enumerate(read_jsonl(path))]
    for part in (items[:30], items[30:31], items[5:12], items, items[39:]):
        got = unpack_records(pack_records(part))
        assert [r.payload for _, _, r in got] == [r.payload for _, _, r in part] == [lines[s] for s, _, _ in part]
        assert all(type(r.payload) is bytes for _, _, r in got)  # bytes of their own, not views of the buffer


def test_a_chunk_over_the_kept_size_is_read_whole_and_not_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wire, "_KEPT", 10_000)
    monkeypatch.setattr(wire, "_BUFFER", [bytearray()])
    path = tmp_path / "t.jsonl"
    lines = [b'{"id": "a"}\n', b'{"id": "b", "answer": "%s"}\n' % (b"y" * 50_000), b'{"id": "c"}\n']
    path.write_bytes(b"".join(lines))
    items = [(n, 0, record) for n, record in enumerate(read_jsonl(path))]
    assert [r.payload for _, _, r in unpack_records(pack_records(items))] == lines
    assert len(wire._BUFFER[0]) == 0  # the large chunk's buffer was not kept
    assert [r.payload for _, _, r in unpack_records(pack_records(items[:1]))] == lines[:1]
    assert 0 < len(wire._BUFFER[0]) <= 10_000


def test_a_worker_never_reads_another_file_put_at_the_path(tmp_path: Path) -> None:
    """A log rotated (renamed, a new file created at its path) after the parent read it: the worker refuses the new
    file, even one long enough and with lines at the same offsets, and the parent sends the bytes it read."""
    path = tmp_path / "traces.jsonl"
    path.write_bytes(b'{"id": "old-1"}\n{"id": "old-2"}\n')
    items = [(n, 0, record) for n, record in enumerate(read_jsonl(path))]
    packed = pack_records(items)
    path.rename(tmp_path / "traces.jsonl.1")
    path.write_bytes(b'{"id": "new-1"}\n{"id": "new-2"}\n{"id": "new-3"}\n')
    with pytest.raises(Unread, match="another file"):
        unpack_records(packed)
    assert [r.payload for _, _, r in unpack_records(pack_records(items, inline=True))][0] == b'{"id": "old-1"}\n'


def test_lines_from_a_pipe_go_as_bytes(tmp_path: Path) -> None:
    """A FIFO cannot be read again at an offset (and opening it again could wait forever for a writer)."""
    fifo = tmp_path / "traces.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(b'{"id": "p-1"}\n{"id": "p-2"}\n'))
    writer.start()
    items = [(n, 0, record) for n, record in enumerate(read_jsonl(fifo))]
    writer.join()
    assert [r.at for _, _, r in items] == [None, None]
    assert pack_records(items)[4] is None and unpack_records(pack_records(items))[1][2].payload == b'{"id": "p-2"}\n'
