"""Result lines as Parquet: one file per shard, written atomically, read back (file or folder, local or ``s3://``)
as the same result-line dicts, streamed row group by row group so a report's memory stays flat.

Each top-level key of the result line is a column: ``trace_id``, ``timestamp``, ``line``, ``errors`` and ``notes``
(lists of strings) are typed; the objects (``scores``, ``missing``, ``comments``, ``metadata``, ``judge``) are JSON
text, because a score's value is a number, a boolean or a label (Parquet has no mixed-type map), so a value reads
back exactly as written. A key this version does not know lands in ``extra`` and comes back too.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from tracescore.errors import InputError, MissingInputError, NoResultsError
from tracescore.sources.exports import need_pyarrow

PARQUET_SUFFIX = ".parquet"
ROW_GROUP = 2_000
_JSON_COLUMNS = ("scores", "missing", "comments", "metadata", "judge")
_LIST_COLUMNS = ("errors", "notes")
_KNOWN = {"trace_id", "timestamp", "line", *_JSON_COLUMNS, *_LIST_COLUMNS}
_ALWAYS = ("scores", "missing", "errors")  # present in every result line, even empty
_SLUG = re.compile(r"[^A-Za-z0-9._=-]+")


def _schema() -> Any:
    import pyarrow as pa  # type: ignore[import-untyped]

    text, strings = pa.string(), pa.list_(pa.string())
    return pa.schema(
        [("trace_id", text), ("timestamp", text), ("line", pa.int64())]
        + [(name, text) for name in _JSON_COLUMNS]
        + [(name, strings) for name in _LIST_COLUMNS]
        + [("extra", text)]
    )


def shard_file(key: str) -> str:
    """The result file name of a shard: a readable slug of its key plus a hash of the key (stable, collision-free)."""
    slug = _SLUG.sub("_", key).strip("._")[:80] or "shard"
    return f"{slug}-{hashlib.sha256(key.encode()).hexdigest()[:12]}{PARQUET_SUFFIX}"


def _row(line: dict[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {name: line.get(name) for name in ("trace_id", "timestamp", "line")}
    for name in _JSON_COLUMNS:
        row[name] = json.dumps(line[name], ensure_ascii=False) if name in line else None
    for name in _LIST_COLUMNS:
        row[name] = [str(v) for v in line[name]] if name in line else None
    extra = {k: v for k, v in line.items() if k not in _KNOWN}
    row["extra"] = json.dumps(extra, ensure_ascii=False) if extra else None
    return row


def _line(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"trace_id": row["trace_id"]}
    for name in _JSON_COLUMNS + _LIST_COLUMNS:
        value = row.get(name)
        if value is None:
            if name in _ALWAYS:
                out[name] = {} if name != "errors" else []
            continue
        out[name] = json.loads(value) if name in _JSON_COLUMNS else list(value)
    for name in ("line", "timestamp"):
        if row.get(name) is not None:
            out[name] = row[name]
    if row.get("extra"):
        out.update(json.loads(row["extra"]))
    return out


def _filesystem(uri: str) -> tuple[Any, str]:
    """A pyarrow filesystem and the path in it: ``s3://…`` (credentials from the usual AWS environment) or local."""
    from pyarrow import fs

    if "://" in uri:
        try:
            return fs.FileSystem.from_uri(uri)  # type: ignore[no-any-return]
        except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid/OSError for a bad or unreachable URI
            raise InputError(f"cannot open {uri!r}: {exc}") from exc
    return fs.LocalFileSystem(), os.path.abspath(uri)


def write_results(uri: str, lines: Iterable[dict[str, Any]]) -> int:
    """Write result lines to one Parquet file, atomically: a local file goes to a hidden temp name, then is renamed
    (a killed writer leaves no half file under the final name); an ``s3://`` object appears whole on upload.
    Returns the number of rows."""
    need_pyarrow("writing Parquet results")
    import pyarrow as pa
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    filesystem, path = _filesystem(uri)
    local = "://" not in uri
    target = path
    if local:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        target = str(Path(path).with_name(f".{Path(path).name}.{uuid.uuid4().hex[:8]}.tmp"))
    schema = _schema()
    rows = 0
    with pq.ParquetWriter(target, schema, filesystem=filesystem, compression="zstd") as writer:
        batch: list[dict[str, Any]] = []
        for line in lines:
            batch.append(_row(line))
            if len(batch) >= ROW_GROUP:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                rows, batch = rows + len(batch), []
        if batch or not rows:
            writer.write_table(pa.Table.from_pylist(batch, schema=schema))
            rows += len(batch)
    if local:
        os.replace(target, path)
    return rows


def is_parquet_spec(spec: str) -> bool:
    """Whether a results spec names Parquet results: a ``.parquet`` file, a folder, or an ``s3://`` location."""
    return spec.endswith(PARQUET_SUFFIX) or spec.startswith("s3://") or (spec != "-" and Path(spec).is_dir())


def _files(uri: str) -> list[tuple[Any, str]]:
    """The Parquet files a spec names (a file, or every ``*.parquet`` under a folder, sorted; temp files skipped)."""
    from pyarrow import fs

    filesystem, path = _filesystem(uri)
    info = filesystem.get_file_info(path)
    if info.type == fs.FileType.File:
        return [(filesystem, path)]
    if info.type != fs.FileType.Directory:
        raise MissingInputError(
            f"no results at {uri!r}; give a .parquet file or a folder of them (from --engine ray --out)"
        )
    found = [
        f.path
        for f in filesystem.get_file_info(fs.FileSelector(path, recursive=True))
        if f.type == fs.FileType.File
        and f.base_name.endswith(PARQUET_SUFFIX)
        and not f.base_name.startswith((".", "_"))
    ]
    if not found:
        raise NoResultsError(f"{uri!r} holds no .parquet result file")
    return [(filesystem, p) for p in sorted(found)]


def read_parquet_results(uri: str) -> Iterator[dict[str, Any]]:
    """The result lines of a Parquet file or folder, one row group at a time (memory flat whatever the size)."""
    need_pyarrow(f"reading the Parquet results {uri!r}")
    import pyarrow.parquet as pq

    for filesystem, path in _files(uri):
        try:
            handle = filesystem.open_input_file(path)
            reader = pq.ParquetFile(handle)
        except Exception as exc:  # noqa: BLE001 - not Parquet, or cut short: name the file and go on
            yield {"trace_id": None, "errors": [f"{path}: not a readable Parquet results file ({exc})"[:300]]}
            continue
        with handle:
            names = set(reader.schema_arrow.names)
            if "trace_id" not in names or "scores" not in names:
                yield {"trace_id": None, "errors": [f"{path}: a Parquet file, but not tracescore results"]}
                continue
            for group in range(reader.num_row_groups):
                for row in reader.read_row_group(group).to_pylist():
                    yield _line(row)
