"""The no-platform loop: a local CSV sheet, one row per item, blind (no judge verdict on it).

``write_sheet`` writes the items with empty label columns; ``read_sheet`` reads the reviewers' labels back, validated:
a bad row is reported with its row number (the header is row 1) and the rest are kept. ``read_agreement_sheet``
reads a sheet that already holds both sides (``item_id, human, judge[, judge_score]``) from any source, so its
agreement is computed by the same code.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from tracescore.calibrate.agreement import Pair
from tracescore.calibrate.labels import LABELS, Label, LabelSpec, label_spec
from tracescore.calibrate.sampling import Item
from tracescore.errors import InputError, MissingInputError, OutputError

ITEM_COLUMNS = ("item_id", "trace_id", "question", "claim", "document", "url", "quote", "cited")
LABEL_COLUMNS = {spec.name: spec for spec in LABELS}
_META_COLUMNS = ("reviewer", "labelled_at", "notes")
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


@dataclass
class SheetRead:
    """What a sheet held: the valid labels (or pairs) and one message per bad row."""

    labels: list[Label] = field(default_factory=list)
    pairs: list[Pair] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def _cell(text: str | None) -> str:
    """Text a spreadsheet shows as text: a leading formula character is escaped with an apostrophe."""
    text = text or ""
    return "'" + text if text.startswith(_FORMULA) else text


def write_sheet(path: str | Path, items: Sequence[Item], labels: Sequence[LabelSpec] = ()) -> int:
    """Write a blind sheet: the item columns filled, every label column (tracescore's, then ``labels``: a judged
    criterion's) and the reviewer left for people; OutputError names the path and the OS's reason when it cannot be
    written."""
    try:
        _write_rows(path, items, [*LABEL_COLUMNS, *(s.name for s in labels if s.name not in LABEL_COLUMNS)])
    except OSError as exc:
        raise OutputError(f"cannot write {str(path)!r}: {exc.strerror or exc}") from exc
    return len(items)


def _write_rows(path: str | Path, items: Sequence[Item], columns: Sequence[str]) -> None:
    with Path(path).open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow([*ITEM_COLUMNS, *columns, *_META_COLUMNS])
        for item in items:
            document = item.document if item.document is not None else (item.doc or "")
            writer.writerow(
                [
                    item.item_id,
                    item.trace_id,
                    _cell(item.question),
                    _cell(item.claim),
                    _cell(document),
                    item.url or "",
                    _cell(item.quote),
                    " ".join(item.cited),
                    *([""] * len(columns)),
                    "",
                    "",
                    "",
                ]
            )


def _rows(path: str | Path, required: Sequence[str]) -> tuple[list[tuple[int, dict[str, str]]], list[str]]:
    try:
        with Path(path).open(newline="", encoding="utf-8-sig") as fh:
            reader = csv.DictReader(fh)
            header = [h.strip() for h in reader.fieldnames or []]
            missing = [c for c in required if c not in header]
            if missing:
                raise InputError(
                    f"sheet {str(path)!r} lacks column(s) {', '.join(missing)}; its header is {', '.join(header)}"
                )
            rows = [
                (number, {(k or "").strip(): (v or "") for k, v in row.items() if k is not None})
                for number, row in enumerate(reader, start=2)
            ]
    except FileNotFoundError as exc:  # a bad argument, as for every command
        raise MissingInputError(f"cannot read sheet {str(path)!r}: {exc}") from exc
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(f"cannot read sheet {str(path)!r}: {exc}") from exc
    return rows, []


def read_sheet(
    path: str | Path, *, now: datetime, known_items: set[str] | None = None, source: str = "sheet"
) -> SheetRead:
    """Labels from a filled sheet (blank cells are not labels); a row with a bad value is reported and skipped."""
    rows, errors = _rows(path, ("item_id", "reviewer"))
    out = SheetRead(errors=errors)
    columns = dict(LABEL_COLUMNS) | _judged_columns(rows[0][1] if rows else {})
    for number, row in rows:
        item = row.get("item_id", "").strip()
        reviewer = row.get("reviewer", "").strip()
        given = {name: row[name] for name in columns if row.get(name, "").strip()}
        if not given:
            continue
        problems: list[str] = []
        if not item:
            problems.append("item_id is empty")
        elif known_items is not None and item not in known_items:
            problems.append(f"item_id {item!r} was never queued")
        if not reviewer:
            problems.append("reviewer is empty; say who labelled the row")
        when = now
        stamp = row.get("labelled_at", "").strip()
        if stamp:
            try:
                when = datetime.fromisoformat(stamp)
                if when.tzinfo is None:
                    raise ValueError("no time zone")
            except ValueError:
                problems.append(f"labelled_at {stamp!r} is not an ISO time with a zone, e.g. 2026-11-30T20:00:00Z")
        values: dict[str, str] = {}
        for name, raw in given.items():
            try:
                values[name] = columns[name].normalise(raw)
            except ValueError as exc:
                problems.append(str(exc))
        if problems:
            out.errors.append(f"row {number}: {'; '.join(problems)}")
            continue
        out.labels += [Label(item, name, value, reviewer, when, source) for name, value in values.items()]
    return out


def _judged_columns(row: dict[str, str]) -> dict[str, LabelSpec]:
    """The sheet's other label columns: each a judged score's name (a ``[[criteria]]`` criterion's)."""
    out: dict[str, LabelSpec] = {}
    for name in row:
        if name not in (*ITEM_COLUMNS, *LABEL_COLUMNS, *_META_COLUMNS):
            with suppress(ValueError):
                out[name] = label_spec(name)
    return out


def read_agreement_sheet(path: str | Path, spec: LabelSpec | None = None) -> SheetRead:
    """Pairs from a sheet with ``item_id, human, judge`` (and optionally a numeric ``judge_score``) per row; with the
    ``spec`` of the label the sheet holds, both values are read in that label's one vocabulary (its synonyms, such
    as yes/no for a true/false label, accepted as ``pull`` accepts them); a value outside it is kept as written, so
    the figures refuse the sheet naming it (the sheet holds another label)."""
    rows, errors = _rows(path, ("item_id", "human", "judge"))
    out = SheetRead(errors=errors)
    seen: set[str] = set()
    for number, row in rows:
        item, human, judge = (row.get(c, "").strip() for c in ("item_id", "human", "judge"))
        raw_score = row.get("judge_score", "").strip()
        problems = [f"{c} is empty" for c, v in (("item_id", item), ("human", human), ("judge", judge)) if not v]
        if item in seen:
            problems.append(f"item_id {item!r} appears twice")
        score: float | None = None
        if raw_score:
            try:
                score = float(raw_score)
            except ValueError:
                problems.append(f"judge_score {raw_score!r} is not a number")
        values = {"human": human.lower(), "judge": judge.lower()}
        if spec is not None:
            for column, raw in values.items():
                with suppress(ValueError):  # outside the vocabulary: kept, so the figures name it and refuse
                    values[column] = spec.normalise(raw)
        if problems:
            out.errors.append(f"row {number}: {'; '.join(problems)}")
            continue
        seen.add(item)
        out.pairs.append(Pair(item, values["human"], values["judge"], score))
    return out
