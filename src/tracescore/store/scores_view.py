"""The per-score rows as a view (migration 0011): the result line holds every value, absent reason and comment, so
``scores`` is computed from it plus ``results.score_metadata``, the one thing the line lacks ({score name: metadata}).

Nothing is stored twice and a trace costs one ``results`` row; reports, calibration and users query ``scores`` as
before (the README's example). Score names hold dots, so keys are matched with ``json_each``, never as JSON paths.
"""

from __future__ import annotations

import json
from itertools import compress
from operator import attrgetter

from tracescore.jsontext import encoder
from tracescore.result import TraceResult, _strict

# a score row's trace key: the trace id, or "line:N" for a line without one (as the per-score table always had it)
TRACE_KEY = "coalesce(nullif({r}trace_id, ''), 'line:' || coalesce({r}line, 'None'))"

# the old table's metadata moves to the new column, comments missing from lines 0010 rebuilt (it had none) are put on
# the line, the table and its indexes go, and the view takes its name and columns (value REAL, true/false as 1.0/0.0;
# label: a text value; reason: why absent); results_trace_key serves the view's trace_id lookups. Applied: never edit it
SCORES_VIEW_MIGRATION = f"""
    ALTER TABLE results ADD COLUMN score_metadata TEXT;
    CREATE INDEX scores_migrating ON scores(run_id, trace_id);
    UPDATE results SET score_metadata = (
        SELECT nullif(json_group_object(
            name, CASE WHEN json_valid(metadata) THEN json(metadata) ELSE metadata END
        ), '{{}}') FROM (
            SELECT name, metadata, min(rowid) FROM scores AS s
            WHERE s.run_id = results.run_id AND s.trace_id = {TRACE_KEY.format(r="results.")}
            AND s.metadata IS NOT NULL GROUP BY name
        )
    );
    UPDATE results SET result_line = json_set(result_line, '$.comments', json((
        SELECT json_group_object(name, comment) FROM (
            SELECT name, comment, min(rowid) FROM scores AS s
            WHERE s.run_id = results.run_id AND s.trace_id = {TRACE_KEY.format(r="results.")}
            AND s.comment IS NOT NULL AND s.comment != '' GROUP BY name
        )
    ))) WHERE json_type(result_line, '$.comments') IS NULL AND EXISTS (
        SELECT 1 FROM scores AS s WHERE s.run_id = results.run_id
        AND s.trace_id = {TRACE_KEY.format(r="results.")} AND s.comment IS NOT NULL AND s.comment != ''
    );
    DROP TABLE scores;
    DROP INDEX results_trace;
    CREATE INDEX results_trace_key ON results({TRACE_KEY.format(r="")});
    CREATE VIEW scores (run_id, trace_id, name, value, label, reason, comment, metadata) AS
    SELECT r.run_id, {TRACE_KEY.format(r="r.")}, s.key,
        CASE WHEN part.key = 'missing' THEN NULL WHEN s.type = 'true' THEN 1.0 WHEN s.type = 'false' THEN 0.0
            WHEN s.type IN ('integer', 'real') THEN CAST(s.value AS REAL) END,
        CASE WHEN part.key = 'scores' AND s.type = 'text' THEN s.value END,
        CASE WHEN part.key = 'missing' THEN s.value END,
        (SELECT c.value FROM json_each(r.result_line, '$.comments') AS c WHERE c.key = s.key),
        (SELECT m.value FROM json_each(r.score_metadata) AS m WHERE m.key = s.key)
    FROM results AS r, json_each(r.result_line) AS part, json_each(part.value) AS s
    WHERE part.key IN ('scores', 'missing')
    """


_METADATA = attrgetter("metadata")

_COMPACT = encoder(ensure_ascii=True, separators=(",", ":"))
"""``json.dumps(value, default=str, separators=(",", ":"), allow_nan=False)``, set up once."""


def score_metadata(result: TraceResult) -> str | None:
    """{score name: metadata} of the scores that carry any, as strict JSON (the view's json functions read it)."""
    scores = result.scores
    given = list(map(_METADATA, scores.values()))  # picked in C: most scores carry none (a dict comprehension over
    if not any(given):  # a trace's ~35 scores cost ~3 us)
        return None
    metadata = dict(compress(zip(scores, given, strict=True), given))
    try:
        return _COMPACT(metadata)
    except (ValueError, RecursionError):  # a non-finite float: written as the result line writes it ("NaN", ...)
        return json.dumps(_strict(metadata), default=str, separators=(",", ":"))
