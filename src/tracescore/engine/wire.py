"""A chunk's way to and from a worker process, packed so that crossing the pipe costs little next to scoring it.

Pickling 64 ``Record``s and 64 ``Scored`` (each with its store rows) per chunk cost the parent and the workers about a
tenth of the scoring itself (light traces, counted with callgrind), which a 2-core ``--workers 2`` run cannot spare,
and copying heavy lines through the pipe (78 KB each) cost the parent about as much as the scoring left it. So:

- lines of a regular file go as their offsets there, and the worker reads them itself, one read per chunk, from the
  very file the parent read (same device and inode: a log rotated or replaced since is another file); if it cannot,
  the parent sends the bytes. A file rewritten in place while it is scored (same inode) is read as it is then. Other
  records (stdin, pipes, platforms) go as flat lists of payloads and line numbers;
- a chunk's results go as one msgpack blob of plain fields; the few Python objects a result may carry (its
  timestamp, its line's dict, the ``TraceResult`` a platform sink needs, the chunk's digest) travel beside it,
  pickled. A chunk msgpack cannot encode (a lone surrogate in a string, an int past 64 bits) goes pickled whole: the
  same ``Scored`` come out either way."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import msgspec

from tracescore.engine.stage import Plan, Scored, score_chunk
from tracescore.sources.base import FileRef, Record
from tracescore.store.db import ResultRows

Records = tuple[int, int, list[Any], list[int | None], FileRef | None, list[str | None] | None]
"""A chunk of records for a worker: (first sequence number, window, payloads, line numbers, None, trace URLs or None
when no record has one), or, for lines of a file, (..., each line's (offset, size) there, line numbers, the file,
None): the worker reads them itself."""

_ENCODE = msgspec.msgpack.Encoder().encode
# per result: seq, chunk, key, readable, text, store row of the result (its line left out: it is ``text``),
# claim rows, failure, scorer errors, values, skipped
_Plain = tuple[int, int, str, bool, str, tuple[Any, ...], list[tuple[Any, ...]], str | None, bool, int, bool]
_DECODE = msgspec.msgpack.Decoder(list[_Plain]).decode
_LINE = 5  # where the result row holds the result line


@dataclass(frozen=True, slots=True)
class Packed:
    """A chunk's results: ``plain`` (msgpack) and, by index in the chunk, each result's Python objects."""

    plain: bytes
    objects: dict[int, tuple[Any, Any, Any]]  # index -> (timestamp, data, result), where any is not None
    digest: Any


class Unread(Exception):
    """A worker could not read a chunk's lines from their file (gone, another file at its path, or shorter)."""


def pack_records(items: list[tuple[int, int, Record]], *, inline: bool = False) -> Records:
    """A chunk of (seq, window, record), all of one window with consecutive seqs, as flat lists; lines of one file go
    as where they lie (unless ``inline``), so the parent does not copy their bytes through the pipe."""
    seq, window, first = items[0]
    ref = first.at[0] if first.at is not None and not inline else None
    lines = [r.line for _, _, r in items]
    urls = [r.url for _, _, r in items] if any(r.url for _, _, r in items) else None
    if ref is not None:
        spans = []
        for _, _, r in items:
            if r.at is None or r.at[0] != ref:
                break
            spans.append((r.at[1], r.size))
        else:
            return seq, window, spans, lines, ref, urls
    return seq, window, [r.payload for _, _, r in items], lines, None, urls


def unpack_records(records: Records) -> list[tuple[int, int, Record]]:
    """The records of a chunk, their lines read from the file when they came as offsets (``Unread`` if they cannot
    be: the parent then sends the bytes)."""
    seq, window, payloads, lines, ref = records[:5]
    urls = records[5] if len(records) > 5 else None
    if ref is not None:
        start, end = payloads[0][0], payloads[-1][0] + payloads[-1][1]
        view = _buffer(end - start)
        try:
            got = _read_at(_open(ref), view, start)
        except OSError as exc:
            raise Unread(f"{ref.path}: {exc}") from None
        if got != end - start:
            raise Unread(f"{ref.path}: {end - start} bytes expected at {start}, {got} read")
        payloads = [view[at - start : at - start + size].tobytes() for at, size in payloads]
    links = urls if urls is not None else [None] * len(lines)
    rows = enumerate(zip(payloads, lines, links, strict=True))
    return [(seq + i, window, Record(payload, line, url=url)) for i, (payload, line, url) in rows]


_OPEN: list[tuple[FileRef, int]] = []  # the worker's open file (one: a run reads its files one after another)
_BUFFER: list[bytearray] = [bytearray()]  # the worker's read buffer, reused chunk after chunk


_KEPT = 8 << 20  # a chunk larger than this (a line of many MB) is read into a buffer of its own, not kept


def _buffer(size: int) -> memoryview:
    """``size`` bytes of the worker's read buffer, reused up to ``_KEPT`` bytes. A 4 MiB ``bytes`` per chunk cost more
    than the read itself: fresh pages, faulted in and zeroed, for every chunk (heavy lines: 47 us a line read and
    sliced against 20 read into this buffer and copied out). One huge line is not held for the rest of the run."""
    if size > _KEPT:
        return memoryview(bytearray(size))
    if len(_BUFFER[0]) < size:
        _BUFFER[0] = bytearray(min(max(size, 4 << 20), _KEPT))
    return memoryview(_BUFFER[0])[:size]


def _read_at(fd: int, view: memoryview, offset: int) -> int:
    """Read into ``view`` from ``offset`` of ``fd`` until it is full or the file ends; the bytes read."""
    done = 0
    while done < len(view):
        got = os.preadv(fd, [view[done:]], offset + done) if _PREADV else _pread_into(fd, view[done:], offset + done)
        if not got:
            break
        done += got
    return done


_PREADV = hasattr(os, "preadv")


def _pread_into(fd: int, view: memoryview, offset: int) -> int:  # pragma: no cover - a platform without preadv
    data = os.pread(fd, len(view), offset)
    view[: len(data)] = data
    return len(data)


def _open(ref: FileRef) -> int:
    """A descriptor of the very file the parent read (``Unread`` when its path names another file now)."""
    if _OPEN and _OPEN[0][0] == ref:
        return _OPEN[0][1]
    if _OPEN:
        os.close(_OPEN.pop()[1])
    fd = os.open(ref.path, os.O_RDONLY | os.O_NONBLOCK)  # never waits: a FIFO put at the path is not the file
    opened = os.fstat(fd)
    if (opened.st_dev, opened.st_ino) != (ref.device, ref.inode):
        os.close(fd)
        raise Unread(f"{ref.path} names another file than the one read (rotated or replaced)")
    _OPEN.append((ref, fd))
    return fd


def pack(out: list[Scored]) -> Packed | list[Scored]:
    """The wire form of a worker's chunk of results (``out`` itself when msgpack cannot hold it)."""
    plain = []
    objects: dict[int, tuple[Any, Any, Any]] = {}
    digest = out[-1].digest if out else None
    for i, s in enumerate(out):
        rows = s.rows
        if (s.digest is not None and i != len(out) - 1) or not _plain_types(s):
            return out
        if rows is None:  # skipped: no rows (a result always has a row of 8 fields)
            row: tuple[Any, ...] = ()
            claims = []
        elif rows.result[_LINE] is s.text:
            row, claims = rows.result[:_LINE] + rows.result[_LINE + 1 :], rows.claims
        else:  # rows built from another line than the one sent: keep both as they are
            return out
        plain.append((s.seq, s.chunk, s.key, s.readable, s.text, row, claims, s.failure, s.scorer_errors, s.values,
                      s.skipped))  # fmt: skip
        if s.timestamp is not None or s.data is not None or s.result is not None:
            objects[i] = (s.timestamp, s.data, s.result)
    try:
        return Packed(_ENCODE(plain), objects, digest)
    except (TypeError, ValueError, OverflowError, UnicodeEncodeError):
        return out


def score_packed(plan: Plan, records: Records) -> Packed | list[Scored]:
    """In a worker process: ``score_chunk`` of a packed chunk of records, its results packed."""
    return pack(score_chunk(plan, unpack_records(records)))


def _plain_types(s: Scored) -> bool:
    """Whether ``s``'s plain fields have the types the parent's decoder expects (so decoding it cannot fail)."""
    return (
        type(s.seq) is int and type(s.chunk) is int and type(s.key) is str and type(s.text) is str
        and type(s.values) is int and (s.failure is None or type(s.failure) is str)
        and type(s.readable) is bool and type(s.scorer_errors) is bool and type(s.skipped) is bool
    )  # fmt: skip


def unpack(got: Packed | list[Scored]) -> list[Scored]:
    """The ``Scored`` of a chunk, as the worker built them."""
    if not isinstance(got, Packed):
        return got
    objects = got.objects
    out = []
    for i, (seq, chunk, key, readable, text, row, claims, failure, errors, values, skipped) in enumerate(
        _DECODE(got.plain)
    ):
        timestamp, data, result = objects.get(i, (None, None, None))
        rows = ResultRows((*row[:_LINE], text, *row[_LINE:]), claims) if row else None
        out.append(
            Scored(seq, chunk, key, timestamp, readable, data, text, rows, result, failure, errors, values, skipped)
        )
    if out:
        out[-1].digest = got.digest
    return out
