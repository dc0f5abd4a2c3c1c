"""The per-citation rows as a view (migration 0012): each trace's rows are one JSON array in ``results.citation_rows``.

A table cost every trace one row per cited source plus an index entry each, with the run id and trace id repeated on
every row: about half of what writing a light trace to the store cost (#14). The view has the table's name, columns
and types, so ``Store.citations``, calibration sampling and users' queries read it unchanged; a lookup by run and
trace uses the results' indexes. Each trace's rows come in the order they were written, and a run's traces in the
order they were written too (the table gave a run's rows in trace-id order, its index's).
"""

from __future__ import annotations

from json.encoder import encode_basestring_ascii as _ASCII

from tracescore.result import CitationRow
from tracescore.store.scores_view import _COMPACT, TRACE_KEY

_KEY = TRACE_KEY.format(r="results.")

# The old rows move to the first result of their run with their trace key (two lines with one id in a run shared
# their rows in the table too: the view gives that key the same rows), in the order they were written; then the table
# goes and the view takes its name and columns. Applied: never edit it (no ";" inside a statement: they are split)
CITATIONS_VIEW_MIGRATION = f"""
    ALTER TABLE results ADD COLUMN citation_rows TEXT;
    UPDATE results SET citation_rows = (
        SELECT json_group_array(json_array(sentence_index, marker, target, kind, normalized, fetched, seen))
        FROM (
            SELECT * FROM citations AS c WHERE c.run_id = results.run_id AND c.trace_id = {_KEY} ORDER BY c.rowid
        )
    ) WHERE EXISTS (
        SELECT 1 FROM citations AS c WHERE c.run_id = results.run_id AND c.trace_id = {_KEY}
    ) AND results.id = (
        SELECT min(first.id) FROM results AS first
        WHERE first.run_id = results.run_id AND {TRACE_KEY.format(r="first.")} = {_KEY}
    );
    DROP TABLE citations;
    CREATE VIEW citations (run_id, trace_id, sentence_index, marker, target, kind, normalized, fetched, seen) AS
    SELECT r.run_id, {TRACE_KEY.format(r="r.")}, json_extract(c.value, '$[0]'), json_extract(c.value, '$[1]'),
        json_extract(c.value, '$[2]'), json_extract(c.value, '$[3]'), json_extract(c.value, '$[4]'),
        json_extract(c.value, '$[5]'), json_extract(c.value, '$[6]')
    FROM results AS r, json_each(r.citation_rows) AS c
    """


def citation_rows(rows: list[CitationRow]) -> str | None:
    """A trace's citation rows as the JSON array the view reads (None when it cites nothing)."""
    if not rows:
        return None
    try:
        return _written(rows)
    except _Other:
        return _COMPACT(
            [[c.sentence_index, c.marker, c.target, c.kind, c.normalized, int(c.fetched), int(c.seen)] for c in rows]
        )


_KINDS = {kind: _ASCII(kind) for kind in ("url", "doc_id", "text")}


class _Other(Exception):
    """A row holding a field of another type than its declared one: the json module writes the array."""


def _written(rows: list[CitationRow]) -> str:
    """The array ``_COMPACT`` writes, row by row (~20 % less CPU): the same bytes when every index is an int and every
    text a str (each written by the function the json encoder uses), which the types of ``CitationRow`` promise."""
    parts = []
    for c in rows:
        index, marker, target, kind, normalized = c.sentence_index, c.marker, c.target, c.kind, c.normalized
        if not (type(index) is int and type(target) is str and type(kind) is str and type(normalized) is str):
            raise _Other
        if marker is None:
            mark = "null"
        elif type(marker) is str:
            mark = _ASCII(marker)
        else:
            raise _Other
        written = _ASCII(target)
        # a URL is most often its own normalised form, and a kind one of three: each written once
        same = written if normalized == target else _ASCII(normalized)
        sort = _KINDS.get(kind) or _ASCII(kind)
        parts.append(f"[{index},{mark},{written},{sort},{same},{int(c.fetched)},{int(c.seen)}]")
    return "[" + ",".join(parts) + "]"
