"""The store's schema history: ordered, named, append-only migrations (``Store`` applies the ones not yet recorded in
its ``migrations`` table). An applied migration is never edited; a new one is appended at the end.
"""

from __future__ import annotations

from tracescore.store.citations_view import CITATIONS_VIEW_MIGRATION
from tracescore.store.current_view import CURRENT_VIEW_MIGRATION, NOT_COMPUTED_REASONS_MIGRATION
from tracescore.store.scores_view import SCORES_VIEW_MIGRATION
from tracescore.store.sessions import SESSION_EVIDENCE_MIGRATION
from tracescore.store.spend import JUDGE_SPEND_MIGRATION

MIGRATIONS: list[tuple[str, str]] = [
    (
        "0001_initial",
        """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY, started_at TEXT NOT NULL, finished_at TEXT, command TEXT NOT NULL,
            source TEXT, status TEXT NOT NULL DEFAULT 'running', summary TEXT
        );
        CREATE TABLE results (
            id INTEGER PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs(id), trace_id TEXT, line INTEGER,
            timestamp TEXT, diagnosis TEXT, scores TEXT NOT NULL, missing TEXT NOT NULL, errors TEXT NOT NULL,
            notes TEXT NOT NULL, metadata TEXT NOT NULL
        );
        CREATE INDEX results_run ON results(run_id);
        CREATE INDEX results_trace ON results(trace_id);
        CREATE TABLE scores (
            run_id TEXT NOT NULL, trace_id TEXT NOT NULL, name TEXT NOT NULL, value REAL, label TEXT,
            reason TEXT, comment TEXT, metadata TEXT
        );
        CREATE INDEX scores_run_name ON scores(run_id, name);
        CREATE TABLE citations (
            run_id TEXT NOT NULL, trace_id TEXT NOT NULL, sentence_index INTEGER NOT NULL, marker TEXT,
            target TEXT NOT NULL, kind TEXT NOT NULL, normalized TEXT NOT NULL, fetched INTEGER NOT NULL,
            seen INTEGER NOT NULL
        );
        CREATE INDEX citations_run ON citations(run_id, trace_id);
        """,
    ),
    (
        "0002_judge",
        """
        CREATE TABLE judge_cache (
            key TEXT PRIMARY KEY, model TEXT NOT NULL, rubric TEXT NOT NULL, request TEXT NOT NULL,
            reply TEXT NOT NULL, created_at TEXT NOT NULL
        );
        CREATE TABLE claims (
            run_id TEXT NOT NULL, trace_id TEXT NOT NULL, claim_index INTEGER NOT NULL, sentence_index INTEGER,
            text TEXT NOT NULL, verdict TEXT NOT NULL, judge_verdict TEXT, doc TEXT, quote TEXT, quote_check TEXT,
            reason TEXT, cited TEXT NOT NULL, cited_verdict TEXT, drift_to TEXT, calls TEXT NOT NULL
        );
        CREATE INDEX claims_run ON claims(run_id, trace_id);
        """,
    ),
    (
        "0003_result_line",
        """
        ALTER TABLE results ADD COLUMN result_line TEXT;
        """,
    ),
    (
        "0004_job_state",
        """
        CREATE TABLE watermarks (
            source_key TEXT PRIMARY KEY, low TEXT NOT NULL, watermark TEXT NOT NULL, run_id TEXT,
            updated_at TEXT NOT NULL
        );
        CREATE TABLE scored_traces (
            scope TEXT NOT NULL, trace_key TEXT NOT NULL, trace_ts TEXT, status TEXT NOT NULL, run_id TEXT NOT NULL,
            scored_at TEXT NOT NULL, PRIMARY KEY (scope, trace_key)
        );
        CREATE TABLE backfills (
            id TEXT PRIMARY KEY, source_key TEXT NOT NULL, fingerprint TEXT NOT NULL, start TEXT NOT NULL,
            stop TEXT NOT NULL, chunks INTEGER NOT NULL, done_until TEXT NOT NULL, status TEXT NOT NULL,
            created_at TEXT NOT NULL, updated_at TEXT NOT NULL
        );
        CREATE INDEX backfills_source ON backfills(source_key, fingerprint, start, stop)
        """,
    ),
    (
        "0005_judge_batches",
        """
        CREATE TABLE judge_batches (
            id TEXT PRIMARY KEY, scope TEXT, slice_start TEXT, slice_stop TEXT, model TEXT NOT NULL,
            keys TEXT NOT NULL, status TEXT NOT NULL, attempt INTEGER NOT NULL, replaces TEXT, reason TEXT,
            created_at TEXT NOT NULL, updated_at TEXT NOT NULL
        );
        CREATE INDEX judge_batches_status ON judge_batches(model, status)
        """,
    ),
    (
        "0006_calibration",
        """
        CREATE TABLE calibration_items (
            item_id TEXT PRIMARY KEY, sample_id TEXT NOT NULL, slice TEXT NOT NULL, stratum TEXT NOT NULL,
            inclusion_probability REAL, run_id TEXT NOT NULL, trace_id TEXT NOT NULL, claim_index INTEGER NOT NULL,
            judge_model TEXT, rubric_version TEXT, judge TEXT NOT NULL, item TEXT NOT NULL, queue TEXT,
            platform_ref TEXT, queued_at TEXT NOT NULL
        );
        CREATE INDEX calibration_items_day ON calibration_items(queued_at);
        CREATE TABLE calibration_labels (
            item_id TEXT NOT NULL, label TEXT NOT NULL, value TEXT NOT NULL, author TEXT NOT NULL,
            source TEXT NOT NULL, labelled_at TEXT NOT NULL, external_id TEXT, pulled_at TEXT NOT NULL
        );
        CREATE INDEX calibration_labels_item ON calibration_labels(item_id, label, author);
        CREATE TABLE calibrations (
            id TEXT PRIMARY KEY, judge_model TEXT NOT NULL, rubric_version TEXT NOT NULL, label TEXT NOT NULL,
            n INTEGER NOT NULL, kappa REAL, kappa_low REAL, kappa_high REAL, raw REAL, raw_low REAL, raw_high REAL,
            measured_at TEXT NOT NULL, detail TEXT NOT NULL
        );
        CREATE INDEX calibrations_judge ON calibrations(judge_model, rubric_version, label, measured_at)
        """,
    ),
    (
        "0007_written_scores",
        """
        CREATE TABLE written_scores (
            seq INTEGER PRIMARY KEY AUTOINCREMENT, platform TEXT NOT NULL, score_id TEXT NOT NULL,
            trace_id TEXT NOT NULL, name TEXT NOT NULL, score TEXT NOT NULL, version TEXT, event TEXT NOT NULL,
            reason TEXT, run_id TEXT, at TEXT NOT NULL
        );
        CREATE INDEX written_scores_id ON written_scores(platform, score_id);
        CREATE INDEX written_scores_trace ON written_scores(platform, trace_id);
        CREATE INDEX scores_trace ON scores(trace_id)
        """,
    ),
    (
        "0008_link_cache",
        """
        CREATE TABLE link_cache (url TEXT PRIMARY KEY, status TEXT NOT NULL, checked_at TEXT NOT NULL)
        """,
    ),
    (
        "0010_lean_results",
        # the result line holds scores, missing, errors, notes and metadata: rows written before 0003 get their line
        # rebuilt from those columns (the key order Store.results() used), then the duplicate columns go
        """
        UPDATE results SET result_line = json_object(
            'trace_id', trace_id, 'line', line, 'timestamp', timestamp, 'scores', json(scores),
            'missing', json(missing), 'errors', json(errors), 'notes', json(notes), 'metadata', json(metadata)
        ) WHERE result_line IS NULL;
        ALTER TABLE results DROP COLUMN scores;
        ALTER TABLE results DROP COLUMN missing;
        ALTER TABLE results DROP COLUMN errors;
        ALTER TABLE results DROP COLUMN notes;
        ALTER TABLE results DROP COLUMN metadata
        """,
    ),
    ("0011_scores_view", SCORES_VIEW_MIGRATION),  # the per-score rows become a view over the result line
    ("0012_citations_view", CITATIONS_VIEW_MIGRATION),  # the per-citation rows become a view over one JSON array
    ("0013_current_scores", CURRENT_VIEW_MIGRATION),  # which absences were not computed; the current score per trace
    ("0014_judge_batch_outcome", "ALTER TABLE judge_batches ADD COLUMN outcome TEXT"),  # API counts, results, cost
    ("0015_backfill_done_from", "ALTER TABLE backfills ADD COLUMN done_from TEXT"),  # slices done newest first
    ("0016_not_computed_reasons", NOT_COMPUTED_REASONS_MIGRATION),  # not_computed holds reasons, not names: -90 %
    ("0017_judge_spend", JUDGE_SPEND_MIGRATION),  # the judge's spend per UTC day and run: [job] max_cost_per_day
    ("0018_due_traces", "CREATE TABLE due_traces (scope TEXT NOT NULL, trace_key TEXT NOT NULL, trace_ts TEXT,"
     " tries INTEGER NOT NULL, state TEXT NOT NULL, run_id TEXT NOT NULL, updated_at TEXT NOT NULL,"
     " PRIMARY KEY (scope, trace_key))"),  # the traces whose judge failed, judged again by later runs (store/due.py)
    ("0019_session_evidence", SESSION_EVIDENCE_MIGRATION),  # each session turn's hits and fetches (store/sessions.py)
    ("0020_sessions", """
        CREATE TABLE sessions (source_key TEXT NOT NULL, session_id TEXT NOT NULL, turns INTEGER NOT NULL,
            first_at TEXT, last_at TEXT, changed INTEGER NOT NULL, scored_up_to TEXT, scored_turns INTEGER,
            written_at TEXT, scores TEXT, PRIMARY KEY (source_key, session_id));
        CREATE TABLE sessions_folded (source_key TEXT PRIMARY KEY, results_id INTEGER NOT NULL)
    """),  # the conversations the job writes session scores for once idle (store/session_state.py)
]
