"""The current score of each trace and name over all runs, as a view (migration 0013): ``current_scores``.

A score is current from the latest run that decided it: a value, or an absence that is a fact (``does not apply`` in
the catalog: a label removed, the judge turned off in the config). A later run that could not compute it (``not
computed``: a judge error, the budget, no key, a scorer that raised, an unreadable line) leaves that value current,
marked stale: ``stale_since`` (when the first such run started) and ``reason`` (why the latest one could not). A
score a later clean run no longer produces at all (a scorer or stage removed, k changed) is not current any more.

Which absences were not computed is decided when a result is stored, by the catalog (``absence_kind``, which reads
only the reason), and kept beside the line in ``results.not_computed``: those absences' reasons as the line words
them, each once (a JSON array; NULL when none), so the view is plain SQL that any SQLite client can query. Rows stored
before 0013 get the column from the reasons known at the migration; 0013 kept the absences' names (a run without the
judge repeated 14 of them, ~320 bytes a trace, where the one reason takes ~35), 0016 turns them into their reasons.
"""

from __future__ import annotations

import json
from itertools import compress
from typing import Any

from tracescore.catalog import NOT_COMPUTED, absence_kind
from tracescore.result import TraceResult
from tracescore.store.scores_view import TRACE_KEY

# the not-computed reasons of the releases before this migration (a judge failure, budget or key, a step that
# could not be read, a guard, unknown links, a retrieval scorer that raised); applied: never edit it
_OLD_NOT_COMPUTED = """(
    m.value IN ('judge_error', 'no judge configured', 'judge turned off (--no-judge)', 'retrieval was not scored',
        'not computed')
    OR m.value LIKE 'judge budget spent (%' OR m.value LIKE 'judge unavailable: %'
    OR m.value LIKE '% step(s) could not be read (%' OR m.value LIKE 'a % step could not be read: %'
    OR m.value LIKE 'trace over the scoring guard: %' OR m.value LIKE 'no cited URL could be checked (%'
)"""

_ENTRY = "SELECT 1 FROM entry AS e WHERE e.id = l.id AND e.name = n.name"

_VIEW = f"""CREATE VIEW current_scores (trace_id, name, value, label, reason, comment, metadata, run_id, stale_since) AS
    WITH line AS (
        SELECT r.id, r.run_id, {TRACE_KEY.format(r="r.")} AS trace_id, r.result_line, r.score_metadata,
            r.not_computed, coalesce(json_array_length(r.result_line, '$.errors'), 0) > 0 AS failed
        FROM results AS r
    ), entry AS (
        SELECT l.id, l.trace_id, s.key AS name, part.key AS part, s.type, s.value,
            part.key = 'missing' AND EXISTS (
                SELECT 1 FROM json_each(l.not_computed) AS k WHERE k.value = s.{{kept}}
            ) AS kept
        FROM line AS l, json_each(l.result_line) AS part, json_each(part.value) AS s
        WHERE part.key IN ('scores', 'missing')
    ), named AS (
        SELECT trace_id, name, max(CASE WHEN NOT kept THEN id END) AS decided, max(id) AS latest
        FROM entry GROUP BY trace_id, name
    ), stale AS (
        SELECT n.trace_id, n.name, min(l.id) AS first, max(l.id) AS last
        FROM named AS n JOIN line AS l ON l.trace_id = n.trace_id AND l.id > n.decided
        WHERE EXISTS ({_ENTRY} AND e.kept) OR (l.failed AND NOT EXISTS ({_ENTRY}))
        GROUP BY n.trace_id, n.name
    )
    SELECT n.trace_id, n.name,
        CASE WHEN d.part = 'missing' THEN NULL WHEN d.type = 'true' THEN 1.0 WHEN d.type = 'false' THEN 0.0
            WHEN d.type IN ('integer', 'real') THEN CAST(d.value AS REAL) END,
        CASE WHEN d.part = 'scores' AND d.type = 'text' THEN d.value END,
        CASE WHEN st.last IS NOT NULL THEN coalesce(
                (SELECT e.value FROM entry AS e WHERE e.id = st.last AND e.name = n.name),
                (SELECT json_extract(x.result_line, '$.errors[0]') FROM line AS x WHERE x.id = st.last))
            WHEN d.part = 'missing' THEN d.value END,
        (SELECT c.value FROM json_each(dl.result_line, '$.comments') AS c WHERE c.key = n.name),
        (SELECT m.value FROM json_each(dl.score_metadata) AS m WHERE m.key = n.name),
        dl.run_id,
        (SELECT u.started_at FROM line AS x JOIN runs AS u ON u.id = x.run_id WHERE x.id = st.first)
    FROM named AS n
    {{d_join}} entry AS d ON d.id = coalesce(n.decided, n.latest) AND d.name = n.name
    JOIN line AS dl ON dl.id = d.id
    LEFT JOIN stale AS st ON st.trace_id = n.trace_id AND st.name = n.name AND d.part = 'scores'
    WHERE NOT EXISTS (SELECT 1 FROM line AS l WHERE l.trace_id = n.trace_id AND l.id > n.latest AND NOT l.failed)
    """

CURRENT_VIEW_MIGRATION = f"""
    ALTER TABLE results ADD COLUMN not_computed TEXT;
    UPDATE results SET not_computed = nullif((
        SELECT json_group_array(m.key) FROM json_each(result_line, '$.missing') AS m WHERE {_OLD_NOT_COMPUTED}
    ), '[]') WHERE json_valid(result_line);
    {_VIEW.replace("{kept}", "key").replace("{d_join}", "JOIN")}"""

# each name's reason read from the line (a json_each of the line per name cost 4x the CPU: ~90 s a million rows); the
# view's last join is CROSS (SQLite then loops over ``named`` and finds each one's entry by id and name: with a plain
# JOIN it scanned every entry and searched ``named`` by name alone, quadratic: 1,200 traces took 4.6 s, now 0.22 s)
NOT_COMPUTED_REASONS_MIGRATION = f"""
    UPDATE results SET not_computed = nullif((
        SELECT json_group_array(DISTINCT json_extract(results.result_line, '$.missing."' || k.value || '"'))
        FROM json_each(results.not_computed) AS k
    ), '[]') WHERE not_computed IS NOT NULL;
    DROP VIEW current_scores;
    {_VIEW.replace("{kept}", "value").replace("{d_join}", "CROSS JOIN")}"""


_TEXT: dict[tuple[str | None, ...], str] = {}  # a trace's absence reasons → the column ("": none); a run has a few
_KEPT: dict[tuple[str, ...], str] = {}  # the not-computed reasons, each once → the column
_UNCOMPUTED: dict[str | None, bool] = {}  # a reason → whether it is not computed (the catalog reads it alone)
_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
_REMEMBERED = 4096  # entries a cache keeps before it starts over (reasons that vary: the budget's, a URL's)


def not_computed(result: TraceResult) -> str | None:
    """The reasons of ``result``'s absent scores that this run could not compute, as the result line words them, each
    once: a JSON array (None: none)."""
    reasons = tuple([s.reason for s in result.scores.values() if s.value is None])  # one lookup a trace, ~1 us
    text = _TEXT.get(reasons)
    if text is None:
        text = _learn(reasons)
    return text or None


def not_computed_of(missing: dict[str, str]) -> str | None:
    """``not_computed`` of a result from its line's ``missing`` ({name: reason as the line words it}), read in C from
    the dict the line was written from instead of in a pass over the scores: the same text, as an absence without a
    reason is worded "not computed", which is a reason not computed too (tests/store/test_current_view.py)."""
    reasons = tuple(missing.values())
    text = _TEXT.get(reasons)
    if text is None:
        text = _learn(reasons)
    return text or None


def _learn(reasons: tuple[str | None, ...]) -> str:
    """The column for a new tuple of reasons (one reason naming the trace makes every trace's new): each reason is
    classified once, and the column text of the same not-computed reasons is written once. The tuple is looked up and
    filtered in C: only a reason not seen before is classified in Python (a trace's tuple is new when one of its
    reasons names the trace, as the stale-source reason does: the others are known)."""
    if len(_TEXT) > _REMEMBERED:
        _TEXT.clear()
    if len(_UNCOMPUTED) > _REMEMBERED:
        _UNCOMPUTED.clear()
    kinds = list(map(_UNCOMPUTED.get, reasons))
    if None in kinds:
        for i, reason in enumerate(reasons):
            if kinds[i] is None:
                kinds[i] = _UNCOMPUTED[reason] = absence_kind(reason) == NOT_COMPUTED
    kept: dict[Any, None] = dict.fromkeys(compress(reasons, kinds))
    if None in kept or "" in kept:  # the line's word for an absence without a reason, in the order first worded
        kept = dict.fromkeys(reason or "not computed" for reason in kept)
    key = tuple(kept)
    text = _KEPT.get(key)
    if text is None:
        if len(_KEPT) > _REMEMBERED:
            _KEPT.clear()
        text = _KEPT[key] = _ENCODE(list(key)) if key else ""
    _TEXT[reasons] = text
    return text
