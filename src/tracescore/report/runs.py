"""Where result lines come from for ``report`` and ``gate``: a result file, or a run kept in the local store.

A spec is a path to a JSONL result file (``-`` for stdin), Parquet results (a ``.parquet`` file or a folder of them,
local or ``s3://``, as ``score --engine ray --out`` writes), or ``run:ID`` (an id or unique prefix), ``run:latest``
or ``run:latest~N`` (the N-th run before the latest) in the store: a finished run, or one that was interrupted
(``partial_reason`` says so, for such a run and for a ``.partial`` file). A line that is not a result line (not JSON,
binary, a trace line, anything else) becomes a result carrying only its error, so one bad line never stops a report;
a file or run that yields no scored trace at all raises ``NoResultsError`` once it has been read to the end, so a
report or a gate can never pass on nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

from tracescore.errors import ConfigError, MissingInputError, NoResultsError
from tracescore.sinks.parquet import is_parquet_spec, read_parquet_results
from tracescore.sources.jsonl import read_jsonl
from tracescore.store.db import Store

RUN_PREFIX = "run:"
INTERRUPTED = "interrupted"  # the status of a run SIGINT or SIGTERM stopped (its results so far are kept)
PARTIAL_SUFFIX = ".partial"  # the output of an interrupted ``score --out FILE`` stays as FILE.partial
_READABLE = ("done", INTERRUPTED)  # the runs a run: spec can name
TRACE_KEYS = ("steps", "question", "schema_version")  # a canonical trace line has these; a result line has ``scores``
_FIRST_ERRORS = 3  # line errors quoted when a file holds nothing readable


def is_scored(result: Mapping[str, Any]) -> bool:
    """Whether a result line holds a scored trace (a present or an absent score), not only an error."""
    return bool(result.get("scores")) or bool(result.get("missing"))


def _not_a_result(data: object) -> str | None:
    """Why a parsed line is not a result line (``scores`` / ``missing`` objects, or an ``errors`` list), or None."""
    if not isinstance(data, dict):
        return f"not a result line (a JSON {type(data).__name__}, not an object)"
    if "scores" not in data and "missing" not in data and "errors" not in data:
        if any(key in data for key in TRACE_KEYS):
            return "a trace line, not a result line (it has steps/question, no scores)"
        return "not a result line (no scores, missing or errors)"
    if not isinstance(data.get("scores", {}), dict) or not isinstance(data.get("missing", {}), dict):
        return "not a result line (scores and missing must be objects)"
    if not isinstance(data.get("errors", []), list):
        return "not a result line (errors must be a list)"
    for name, value in data.get("scores", {}).items():
        if value is not None and not isinstance(value, bool | int | float | str):
            return f"not a result line (score {name!r} is a JSON {type(value).__name__}, not a number, bool or text)"
    for name, reason in data.get("missing", {}).items():
        if not isinstance(reason, str):
            return f"not a result line (the reason {name!r} is missing is a JSON {type(reason).__name__}, not text)"
    return None


def _why_not_json(payload: object, exc: Exception) -> str:
    """Binary data, nesting too deep, a line cut short, or the parser's own message."""
    if _binary(payload):
        return "binary data"
    if isinstance(exc, RecursionError):
        return "nested too deeply to read"
    if isinstance(exc, json.JSONDecodeError) and exc.pos >= len(exc.doc.rstrip("\r\n")) - 1:
        return "truncated: the line ends before its JSON does"
    return str(exc)[:120]


def _binary(payload: object) -> bool:
    """Whether a line is binary data rather than text: not UTF-8, or holding control characters."""
    raw = payload if isinstance(payload, bytes) else str(payload).encode("utf-8", "replace")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return any(ord(ch) < 32 and ch not in "\t\r\n" for ch in text)


def _nothing(label: str, lines: int, scored_errors: list[str], bad: dict[str, int], first: list[str]) -> str:
    """The one-line reason a file or run holds no scored trace, with the fix."""
    if not lines:
        return f"{label} is empty: no result line to read; give the results of `tracescore score … --out FILE`"
    traces = bad.get("trace", 0)
    if traces and traces * 2 >= lines:
        return (
            f"{label} is a traces file, not a results file ({traces} of {lines} line(s) are trace lines);"
            f" score it first: tracescore score {label} --out results.jsonl"
        )
    if bad:
        return f"{label} holds no result: none of its {lines} line(s) could be read ({'; '.join(first)})"
    return (
        f"{label} holds no scored trace: all {lines} result line(s) are errors"
        f" ({'; '.join(scored_errors[:_FIRST_ERRORS])})"
    )


def read_results(path: str | Path) -> Iterator[dict[str, Any]]:
    """The result lines of a JSONL file; a bad line yields ``{"trace_id": None, "errors": ["…: line N: …"]}``.

    Raises ``NoResultsError`` after the last line when the file held no scored trace (empty, unreadable, traces).
    """
    lines, scored = 0, 0
    bad: dict[str, int] = {}
    first: list[str] = []
    errors: list[str] = []
    for record in read_jsonl(path):
        lines += 1
        try:
            data = json.loads(record.payload)  # type: ignore[arg-type]
            reason = _not_a_result(data)
            kind = "trace" if reason and reason.startswith("a trace line") else "other"
        except (ValueError, RecursionError) as exc:
            reason = f"not JSON ({_why_not_json(record.payload, exc)})"
            kind = "other"
        if reason is not None:
            bad[kind] = bad.get(kind, 0) + 1
            if len(first) < _FIRST_ERRORS:
                first.append(f"line {record.line}: {reason}")
            yield {"trace_id": None, "errors": [f"{path}: line {record.line}: {reason}"], "line": record.line}
            continue
        if is_scored(data):
            scored += 1
        elif len(errors) < _FIRST_ERRORS:
            errors.append("; ".join(map(str, data.get("errors") or ["no score"]))[:160])
        yield data
    if not scored:
        raise NoResultsError(_nothing("stdin" if str(path) == "-" else str(path), lines, errors, bad, first))


def _parquet_lines(spec: str) -> Iterator[dict[str, Any]]:
    """Parquet result lines, streamed; ``NoResultsError`` at the end when none held a scored trace."""
    count = scored = 0
    for result in read_parquet_results(spec):
        count += 1
        scored += is_scored(result)
        yield result
    if not scored:
        held = f"{count} result line(s), all errors" if count else "no result line"
        raise NoResultsError(f"{spec} holds no scored trace ({held})")


def _holds_results(store: Store, run_id: str) -> bool:
    with closing(store.results(run_id)) as lines:  # type: ignore[type-var]  # a generator: it has close()
        return next(lines, None) is not None


def resolve_run(store: Store, spec: str, notes: list[str] | None = None) -> str:
    """The run id a ``run:`` spec names; the message lists what exists when it names none or several.

    ``run:latest~N`` counts the finished runs that scored something: a scheduled run that found every trace already
    scored (no result line) is skipped, and ``notes`` (when given) gets a line naming the run taken instead."""
    wanted = spec.removeprefix(RUN_PREFIX)
    runs = [r for r in store.runs() if r["status"] in _READABLE]
    if wanted.startswith("latest"):
        back = wanted.removeprefix("latest").removeprefix("~") or "0"
        if not back.isdigit():
            raise NoResultsError(f"bad run spec {spec!r}; expected run:latest or run:latest~N")
        idle = 0
        for run in reversed(runs):
            if not _holds_results(store, str(run["id"])):
                idle += 1
                continue
            if back == "0":
                if idle and notes is not None:
                    notes.append(
                        f"{spec} is run {str(run['id'])[:12]} (started {run['started_at']}), the latest that scored"
                        f" something: {idle} later finished run(s) scored no trace (nothing new to score)"
                    )
                return str(run["id"])
            back = str(int(back) - 1)
        raise NoResultsError(
            f"{spec!r}: the store {str(store.path)!r} holds only {len(runs) - idle} finished run(s) that scored"
            f" something" + (f" ({idle} more scored no trace)" if idle else "")
        )
    matches = [r["id"] for r in runs if str(r["id"]).startswith(wanted)]
    if len(matches) != 1:
        known = ", ".join(str(r["id"])[:8] for r in runs[-5:]) or "none"
        what = "no finished run" if not matches else f"{len(matches)} runs"
        raise NoResultsError(f"{spec!r} matches {what} in {str(store.path)!r}; latest runs: {known}")
    return str(matches[0])


def partial_reason(spec: str, store_path: str | Path) -> str | None:
    """Why the results of ``spec`` are partial (a ``.partial`` file, or a run that was interrupted), or None."""
    if spec.startswith(RUN_PREFIX):
        if not Path(store_path).is_file():
            return None
        with Store(store_path) as store:
            run_id = resolve_run(store, spec)
            run = next(r for r in store.runs() if r["id"] == run_id)
        if run["status"] != INTERRUPTED:
            return None
        summary = run["summary"] or {}
        why = f" by {summary['signal']}" if summary.get("signal") else ""
        done = int(summary.get("scored", 0)) + int(summary.get("failed", 0))
        return (
            f"run {run_id[:12]} ({run['command']}) was interrupted{why} after {done} traces: its results are partial;"
            " re-run the command to finish"
        )
    if spec.endswith(PARTIAL_SUFFIX):
        return (
            f"{spec} is the output of an interrupted run: it holds only the traces scored before the stop;"
            " re-run the command to finish"
        )
    return None


def _is_sqlite(path: str) -> bool:
    with open(path, "rb") as fh:
        return fh.read(16) == b"SQLite format 3\x00"


def _once(spec: str, lines: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The lines of a results file, refused once read whole (ConfigError naming the first ids) when a trace id comes
    twice: a results file holds one line per trace, and a doubled one (two files concatenated, a run appended to
    another) would count its cases twice in every mean, band and verdict."""
    seen: set[str] = set()
    twice: dict[str, None] = {}
    for line in lines:
        trace_id = line.get("trace_id")
        if isinstance(trace_id, str):
            if trace_id in seen:
                twice[trace_id] = None
            seen.add(trace_id)
        yield line
    if twice:
        first = ", ".join(repr(t) for t in list(twice)[:3]) + (f" and {len(twice) - 3} more" if len(twice) > 3 else "")
        raise ConfigError(
            f"{spec!r} holds {len(twice)} trace id(s) more than once ({first}): a results file has one line per trace;"
            " score again to one --out file, or keep one line of each"
        )


def results_from(
    spec: str, store_path: str | Path, notes: list[str] | None = None
) -> tuple[str, Iterator[dict[str, Any]]]:
    """A label and the result lines for a spec (a result file, or ``run:…`` in the store at ``store_path``);
    ``notes`` gets the line ``resolve_run`` writes when ``run:latest`` skipped runs that scored nothing."""
    if not spec.startswith(RUN_PREFIX):
        if is_parquet_spec(spec):
            return spec, _once(spec, _parquet_lines(spec))
        if spec != "-" and not Path(spec).is_file():
            raise MissingInputError(f"no result file {spec!r}; give a results JSONL file (from --out) or run:latest")
        if spec != "-" and _is_sqlite(spec):
            raise NoResultsError(f"{spec!r} is a store, not a result file; use run:latest --store {spec}")
        return spec, _once(spec, read_results(spec))
    if not Path(store_path).is_file():
        raise MissingInputError(f"no store {str(store_path)!r} to read {spec!r} from; pass --store PATH")
    store = Store(store_path)
    run_id = resolve_run(store, spec, notes)

    def lines() -> Iterator[dict[str, Any]]:
        count = scored = 0
        try:
            for result in store.results(run_id):
                count += 1
                scored += is_scored(result)
                yield result
        finally:
            store.close()
        if not scored:
            held = f"{count} result line(s), all errors" if count else "no result line"
            raise NoResultsError(f"run {run_id[:12]} in {str(store_path)!r} holds no scored trace ({held})")

    return f"run {run_id[:12]}", lines()
