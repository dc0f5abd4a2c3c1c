"""Reading the rows of one export file so that bad input loses nothing else, and what a source makes of what it
could not read.

A row that cannot be read (a JSONL line or JSON record that is not JSON, not an object or not UTF-8; a CSV row that
is not UTF-8) is an ``Unreadable`` naming file and line, and the file is read on; a file that cannot be read, or
breaks part-way (a cut gzip stream, a bad Parquet page, a JSON record that is not JSON), is one ``Unreadable`` and the
rows read before the break are kept. ``ExportRoot.numbered`` (``sources.exports``) reads through these. The platform
source then flags the trace the row belonged to (its id, when the row is legible that far) as unreadable, or reports
the row as a record of its own (``unread_records``); ``with_unread`` makes either the record's error.
"""

from __future__ import annotations

import csv
import gzip
import json
import re
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import IO, Any

from tracescore.errors import AdapterError
from tracescore.sources.base import Record

_CHUNK = 1 << 16  # bytes read at a time from a JSONL file (a gzip stream hands back what it has so far)
BROKEN_STREAM = (EOFError, zlib.error, gzip.BadGzipFile)
"""What a compressed stream whose bytes are bad raises (the file's content, not a failing disk or network)."""


@dataclass(frozen=True)
class Unreadable:
    """Part of an export file that could not be read: a row (``line``: its line or record number) or, with ``line``
    None, the file from ``after`` on (the rows before it are read); why; and the id of the trace the row names, when
    it is legible that far."""

    uri: str
    line: int | None
    reason: str
    trace_id: str | None = None
    after: int = 0

    def __str__(self) -> str:
        name = self.uri.removesuffix(".gz")
        unit = "row" if name.endswith(".parquet") else "record" if name.endswith(".json") else "line"
        if self.line is not None:
            return f"export file {self.uri!r} {unit} {self.line}: {self.reason}"
        if self.after:
            read = f"{unit}s 1-{self.after} are read"
            return f"export file {self.uri!r} unreadable after {unit} {self.after} ({self.reason}); {read}"
        return f"export file {self.uri!r} unreadable: {self.reason}"

    def note(self) -> str:
        """The line of ``ExportRoot.notes`` (a caller that passes no list to ``numbered``)."""
        return f"{self.uri}: line {self.line} skipped: {self.reason}" if self.line is not None else str(self)


def jsonl_rows(raw: IO[bytes], uri: str, bad: list[Unreadable], key: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """The rows of a JSONL stream, line by line as bytes (a line that is not UTF-8 is that line's problem, not the
    file's); a stream that breaks (a cut gzip file) ends with the line it cut, its trace id when legible."""
    n, pending = 0, bytearray()
    read = getattr(raw, "read1", raw.read)  # gzip's read(n) drops what it decompressed when the stream then breaks
    try:
        while chunk := read(_CHUNK):
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0:
                pending += chunk[start:end]
                n += 1
                row = _json_line(bytes(pending), uri, n, bad, key)
                if row is not None:
                    yield n, row
                pending.clear()
                start = end + 1
            pending += chunk[start:]
    except BROKEN_STREAM as exc:  # the stream broke: what was read stays read
        cut = f"; line {n + 1} cut" if pending.strip() else ""
        bad.append(Unreadable(uri, None, f"{type(exc).__name__}: {exc}{cut}", _guess(bytes(pending), key), n))
        return
    if pending.strip():
        row = _json_line(bytes(pending), uri, n + 1, bad, key)
        if row is not None:
            yield n + 1, row


def _json_line(line: bytes, uri: str, n: int, bad: list[Unreadable], key: str) -> dict[str, Any] | None:
    """One JSONL row; a line that is not UTF-8, not JSON or not an object is reported with file and line."""
    if line.isspace() or not line:
        return None
    try:
        row = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as exc:
        bad.append(Unreadable(uri, n, f"not UTF-8 (byte {exc.start}: {exc.reason})", _guess(line, key)))
        return None
    except (ValueError, RecursionError) as exc:
        bad.append(Unreadable(uri, n, f"not JSON ({str(exc)[:80]})", _guess(line, key)))
        return None
    if not isinstance(row, dict):
        bad.append(Unreadable(uri, n, "not a JSON object"))
        return None
    return row


def csv_rows(text: IO[str], uri: str, bad: list[Unreadable], key: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """The rows of a CSV file (numbered from 2, after the header); a row that is not UTF-8 is reported."""
    for n, row in enumerate(csv.DictReader(text), start=2):
        if any(_not_utf8(v) for item in row.items() for v in item):
            legible = row.get(key)
            trace_id = legible if isinstance(legible, str) and legible and not _not_utf8(legible) else None
            bad.append(Unreadable(uri, n, "not UTF-8", trace_id))
        else:
            yield n, row


def json_records(text: str, uri: str, bad: list[Unreadable], key: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """The records of a JSON document (an array of objects, or one object), record by record: a record that is not
    an object or not UTF-8 is reported and the next read; one that is not JSON ends the file there (the records
    after it cannot be told apart), the records before it kept."""
    at = _skip(text, 0)
    if at == len(text):
        return
    if not text.startswith("[", at):  # one object
        yield from _json_record(text, at, 1, uri, bad, key)[1]
        return
    n, at = 0, at + 1
    while not text.startswith("]", at := _skip(text, at)):
        n += 1
        end, found = _json_record(text, at, n, uri, bad, key)
        yield from found
        at = _skip(text, end) if end is not None else len(text)
        if end is None or text.startswith("]", at):
            return
        if not text.startswith(",", at):
            bad.append(Unreadable(uri, None, f"no ',' or ']' after record {n}", after=n))
            return
        at += 1


def _json_record(
    text: str, at: int, n: int, uri: str, bad: list[Unreadable], key: str
) -> tuple[int | None, list[tuple[int, dict[str, Any]]]]:
    """Record ``n`` of a JSON document, at ``at``: where it ends (None when it is not JSON: the rest of the file is
    lost, and reported) and the row, unless it is reported."""
    try:
        record, end = json.JSONDecoder().raw_decode(text, at)
    except (ValueError, RecursionError) as exc:
        reason = f"record {n} is not JSON ({str(exc)[:80]}); the records after it cannot be told apart"
        bad.append(Unreadable(uri, None, reason, _guess(text[at : at + 4096], key), n - 1))
        return None, []
    if _not_utf8(text[at:end]):
        bad.append(Unreadable(uri, n, "not UTF-8", _guess(text[at:end], key)))
    elif not isinstance(record, dict):
        bad.append(Unreadable(uri, n, "not a JSON object"))
    else:
        return end, [(n, record)]
    return end, []


def _skip(text: str, at: int) -> int:
    """The first position from ``at`` that is not JSON whitespace."""
    while at < len(text) and text[at] in " \t\n\r":
        at += 1
    return at


def _not_utf8(value: Any) -> bool:
    """Whether text read with ``surrogateescape`` held bytes that are not UTF-8."""
    if not isinstance(value, str):
        return isinstance(value, list) and any(_not_utf8(v) for v in value)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _guess(raw: bytes | str, key: str) -> str | None:
    """The ``key`` field (the trace id) of a row that cannot be read whole, when that much of it is legible."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw.encode("utf-8", "replace").decode()
    try:
        row = json.loads(text)
    except (ValueError, RecursionError):
        row = None
    if isinstance(row, dict):
        value = row.get(key)
        return str(value) if isinstance(value, str | int) and value != "" and "\ufffd" not in str(value) else None
    match = re.search(rf'"{re.escape(key)}"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)[\s,}}]', text)
    if match is None:
        return None
    try:
        value = json.loads(match.group(1))
    except ValueError:
        return None
    return str(value) if value != "" and "\ufffd" not in str(value) else None


def unread_error(trace_id: str, reasons: Sequence[str]) -> str:
    """The error of a trace some of whose rows could not be read: it is not scored from the rest."""
    rows = "a row" if len(reasons) == 1 else f"{len(reasons)} rows"
    return f"trace {trace_id}: {rows} of it could not be read, so it is not scored: " + "; ".join(reasons)


def unread_records(
    problems: Iterable[tuple[Unreadable, bool]], traces: Collection[str], keeps: Callable[[str, bool], bool]
) -> tuple[dict[str, list[str]], list[Record]]:
    """What one shard makes of the unreadable parts it met (each with whether it came from the shard's own file):
    the reasons by trace for the traces it scores (``unread_error`` flags them), and a record of its own, carrying
    the error, for each part of no trace here that is this shard's to report (of its own file, or naming a trace the
    shard scores). Every part is thus reported by exactly one shard."""
    flagged: dict[str, list[str]] = {}
    loose: list[Record] = []
    for problem, own in problems:
        trace_id = problem.trace_id
        if trace_id and trace_id in traces:
            flagged.setdefault(trace_id, []).append(str(problem))
        elif keeps(trace_id, own) if trace_id else own:
            payload = {"error": str(problem)} | ({"id": trace_id} if trace_id else {})
            loose.append(Record(payload=payload))
    return flagged, loose


def with_unread(payload: object, adapter: Callable[[object], Any]) -> Any:
    """``adapter`` for a platform export's payloads: one carrying an ``error`` (rows that could not be read) is that
    trace's (or row's) error. Bind it with ``functools.partial`` (picklable: processes)."""
    if isinstance(payload, dict) and payload.get("error"):
        raise AdapterError(str(payload["error"]))
    return adapter(payload)
