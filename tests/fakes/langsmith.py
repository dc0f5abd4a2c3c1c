"""A fake LangSmith API on loopback, following the request shapes of the ``langsmith`` SDK's sync ``Client``.

Routes (as the SDK 0.15 sends them, see ``langsmith/client.py``):

- ``GET /info``: server info (version, batch ingest config);
- ``GET /sessions?name=…&limit=1`` and ``GET /sessions/{id}``: project lookup (``read_project``);
- ``POST /runs/query``: ``list_runs`` with ``session``, ``is_root``, ``trace``, ``start_time``, ``filter``
  (``lt/lte/gt/gte/eq(field, "value")`` and ``and(...)``), ``select`` and ``cursor``; a ``limit`` over 100 is a 400
  (as the real server, langsmith-sdk issue #3455); answers ``{"runs": [...], "cursors": {"next": …}}``;
- ``GET /runs/{id}``, ``GET /examples/{id}``: single reads (what a naive loop uses);
- ``GET /examples?id=…``: reference examples of an experiment (offset paging); datasets, examples by dataset,
  experiment sessions and synchronous run ingest (``evaluate``): ``langsmith_experiments.py``;
- ``POST /feedback`` (a repeated id is a 409 conflict, a missing ``session_id`` a 400), ``PATCH /feedback/{id}``,
  ``GET /feedback/{id}``, ``GET /feedback?run=…``;
- ``GET /feedback-configs?key=…`` (offset paging) and ``POST /feedback-configs``: an identical config returns as
  is, a different one for an existing key is a 400 "Feedback config already exists" (``create_feedback_config``'s
  docstring, SDK 0.15). As on LangSmith, a key's first feedback creates its config when none exists: the
  ``feedback_config`` the feedback carries, else a bare ``{"type": "continuous"}``; a score outside a continuous
  config's bounds, or not a category of a categorical one, is a 400.

Besides the base class's faults, ``repeat_pages`` makes the next N run pages come back twice (a cursor that does not
advance), as a flaky proxy or a retried request would; ``lose_feedback_responses(n, delay)`` stores the next N created
feedbacks and then answers only after ``delay`` seconds (the client has timed out: the write landed, its answer did
not — the client's retry must meet a conflict, not create a copy).
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from copy import deepcopy
from datetime import UTC, datetime
from typing import Any

from tests.fakes.base import FakeServer, Request, Response
from tests.fakes.langsmith_experiments import handle_experiments
from tests.fakes.langsmith_queues import handle_queues
from tests.fakes.langsmith_v2 import handle_v2

TENANT_ID = "00000000-0000-4000-8000-00000000feed"
MAX_PAGE = 100
_FILTER = re.compile(r"^(lt|lte|gt|gte|eq)\(\s*([a-z_]+)\s*,\s*\"([^\"]*)\"\s*\)$")


def _ts(value: str) -> datetime:
    parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


class FakeLangSmith(FakeServer):
    """In-memory projects, runs, examples, feedback and feedback configs behind the LangSmith v1 routes."""

    backend = "clickhouse_only"  # or "dual", "smithdb_only": /info flags, v2 queries, v1 refusals (langsmith_v2.py)

    def __init__(self, *, page_size: int = MAX_PAGE, latency: float = 0.0) -> None:
        super().__init__(latency=latency)
        self.page_size = page_size
        self.repeat_pages = 0
        self.projects: dict[str, dict[str, Any]] = {}
        self.runs: list[dict[str, Any]] = []
        self.examples: dict[str, dict[str, Any]] = {}
        self.datasets: dict[str, dict[str, Any]] = {}  # langsmith_experiments.py: what evaluate() reads
        self.feedback: dict[str, dict[str, Any]] = {}
        self.feedback_configs: dict[str, dict[str, Any]] = {}
        self.feedback_creates = 0
        self.conflicts = 0
        self._lost_responses = 0
        self._lost_delay = 0.0
        self._data_lock = threading.Lock()

    # ------------------------------------------------------------------ seeding
    def add_project(self, name: str, *, reference_dataset_id: str | None = None) -> str:
        project_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"project:{name}"))
        self.projects[project_id] = {
            "id": project_id,
            "name": name,
            "tenant_id": TENANT_ID,
            "start_time": "2026-01-01T00:00:00+00:00",
            "reference_dataset_id": reference_dataset_id,
            "extra": None,
        }
        return project_id

    def add_runs(self, runs: list[dict[str, Any]]) -> None:
        self.runs.extend(runs)

    def add_example(self, example: dict[str, Any]) -> None:
        self.examples[str(example["id"])] = example

    def lose_feedback_responses(self, count: int, delay: float) -> None:
        """Store the next ``count`` created feedbacks, then answer each only after ``delay`` seconds."""
        self._lost_responses, self._lost_delay = count, delay

    def feedback_for(self, run_id: str) -> dict[str, dict[str, Any]]:
        """The stored feedback of one run, by key (a key stored twice would be a duplicate: see ``duplicates``)."""
        return {f["key"]: f for f in self.feedback.values() if f.get("run_id") == run_id}

    def duplicates(self) -> list[tuple[str, str]]:
        """(run_id, key) pairs that carry more than one feedback: must stay empty."""
        seen: dict[tuple[str, str], int] = {}
        for f in self.feedback.values():
            pair = (str(f.get("run_id")), str(f["key"]))
            seen[pair] = seen.get(pair, 0) + 1
        return [pair for pair, n in seen.items() if n > 1]

    # ------------------------------------------------------------------ routing
    def handle(self, request: Request) -> Response:
        path, method = request.path.rstrip("/"), request.method
        queued = handle_queues(self, request) or handle_v2(self, request) or handle_experiments(self, request)
        if queued is not None:
            return queued
        if path == "/info" and method == "GET":
            return Response(200, {"version": "0.11.0", "batch_ingest_config": {"use_multipart_endpoint": True}})
        if path == "/sessions" and method == "GET":
            return self._sessions(request)
        if path.startswith("/sessions/") and method == "GET":
            project = self.projects.get(path.rsplit("/", 1)[1])
            return Response(200, project) if project else Response(404, {"detail": "Project not found"})
        if path == "/runs/query" and method == "POST":
            return self._query_runs(request.json() or {})
        if path.startswith("/runs/") and method == "GET":  # read_run (the naive loop's way; limited to 30/min)
            run = next((r for r in self.runs if r["id"] == path.rsplit("/", 1)[1]), None)
            return Response(200, deepcopy(run)) if run else Response(404, {"detail": "Run not found"})
        if path == "/examples" and method == "GET":
            return self._examples(request)
        if path.startswith("/examples/") and method == "GET":
            example = self.examples.get(path.rsplit("/", 1)[1])
            return Response(200, deepcopy(example)) if example else Response(404, {"detail": "Example not found"})
        if path == "/feedback" and method == "POST":
            return self._create_feedback(request.json() or {})
        if path == "/feedback" and method == "GET":
            runs = set(request.query.get("run", []))
            keys = set(request.query.get("key", []))
            rows = [
                f for f in self.feedback.values()
                if (not runs or f.get("run_id") in runs) and (not keys or f["key"] in keys)
            ]
            offset = int(request.query.get("offset", ["0"])[0])
            limit = int(request.query.get("limit", ["100"])[0])
            return Response(200, rows[offset : offset + limit])
        if path.startswith("/feedback/") and method in ("PATCH", "GET"):
            return self._one_feedback(path.rsplit("/", 1)[1], request)
        if path.startswith("/feedback/") and method == "DELETE":
            return self._delete_feedback(path.rsplit("/", 1)[1])
        if path == "/feedback-configs" and method == "POST":
            return self._create_feedback_config(request.json() or {})
        if path == "/feedback-configs" and method == "GET":
            keys = set(request.query.get("key", []))
            rows = [deepcopy(c) for k, c in self.feedback_configs.items() if not keys or k in keys]
            offset = int(request.query.get("offset", ["0"])[0])
            limit = int(request.query.get("limit", ["100"])[0])
            return Response(200, rows[offset : offset + limit])
        return Response(404, {"detail": f"fake LangSmith has no route {method} {path}"})

    def _sessions(self, request: Request) -> Response:
        names = request.query.get("name")
        rows = [p for p in self.projects.values() if not names or p["name"] in names]
        return Response(200, rows[: int(request.query.get("limit", ["100"])[0])])

    # ------------------------------------------------------------------ runs
    def _query_runs(self, body: dict[str, Any]) -> Response:
        limit = body.get("limit")
        if limit is not None and int(limit) > MAX_PAGE:
            return Response(400, {"detail": f"limit must be less than or equal to {MAX_PAGE}"})
        try:
            predicate = self._filter(body.get("filter"))
        except ValueError as exc:
            return Response(400, {"detail": str(exc)})
        sessions = set(body.get("session") or [])
        start = _ts(body["start_time"]) if body.get("start_time") else None
        rows = [
            r for r in self.runs
            if (not sessions or r["session_id"] in sessions)
            and (body.get("is_root") is None or (r.get("parent_run_id") is None) == bool(body["is_root"]))
            and (not body.get("trace") or r["trace_id"] == body["trace"])
            and (not body.get("id") or r["id"] in body["id"])
            and (start is None or _ts(r["start_time"]) >= start)
            and predicate(r)
        ]
        rows.sort(key=lambda r: (r["start_time"], r["id"]), reverse=True)
        size = min(int(limit) if limit else MAX_PAGE, self.page_size)
        offset = int(str(body.get("cursor") or "o:0").split(":", 1)[1])
        page = rows[offset : offset + size]
        next_offset = offset + len(page)
        with self._data_lock:
            repeat = self.repeat_pages > 0 and body.get("cursor") is not None
            if repeat:
                self.repeat_pages -= 1
        if repeat:
            next_offset = offset  # the cursor does not advance: the same page comes back once more
        select = body.get("select")
        out = [{k: deepcopy(v) for k, v in r.items() if not select or k in select or k == "id"} for r in page]
        more = offset + len(page) < len(rows) or repeat
        return Response(200, {"runs": out, "cursors": {"next": f"o:{next_offset}" if more else None}})

    @staticmethod
    def _filter(text: str | None) -> Any:
        if not text:
            return lambda run: True
        text = text.strip()
        if text.startswith("and(") and text.endswith(")"):
            parts = _split_args(text[4:-1])
            preds = [FakeLangSmith._filter(p) for p in parts]
            return lambda run: all(p(run) for p in preds)
        match = _FILTER.match(text)
        if not match:
            raise ValueError(f"fake LangSmith cannot parse filter {text!r}")
        op, field, value = match.groups()
        if field == "start_time":
            bound = _ts(value)
            compare = {"lt": bound.__gt__, "lte": bound.__ge__, "gt": bound.__lt__, "gte": bound.__le__,
                       "eq": bound.__eq__}[op]
            return lambda run: compare(_ts(run["start_time"]))
        if op != "eq":
            raise ValueError(f"fake LangSmith compares only start_time with {op}")
        return lambda run: str(run.get(field)) == value

    # ------------------------------------------------------------------ examples
    def _examples(self, request: Request) -> Response:
        ids = request.query.get("id", [])
        rows = [e for i, e in self.examples.items() if not ids or i in ids]
        offset = int(request.query.get("offset", ["0"])[0])
        limit = int(request.query.get("limit", ["100"])[0])
        if limit > MAX_PAGE:
            return Response(400, {"detail": f"limit must be less than or equal to {MAX_PAGE}"})
        return Response(200, rows[offset : offset + limit])

    # ------------------------------------------------------------------ feedback
    def _create_feedback(self, body: dict[str, Any]) -> Response:
        missing = [k for k in ("id", "key") if not body.get(k)]
        if missing:
            return Response(422, {"detail": f"missing {missing}"})
        if body.get("run_id") and not body.get("session_id"):
            return Response(400, {"detail": "session_id is required for run feedback"})
        run = next((r for r in self.runs if r["id"] == body.get("run_id")), None)
        if body.get("run_id") and run is None:
            return Response(404, {"detail": f"run {body['run_id']} not found"})
        config = self.feedback_configs.get(body["key"])
        refused = _outside(config["feedback_config"], body) if config else None
        if refused:
            return Response(400, {"detail": refused})
        with self._data_lock:
            if body["key"] not in self.feedback_configs:  # LangSmith's rule: the first feedback makes the config
                self._store_config(body["key"], body.get("feedback_config") or {"type": "continuous"}, body)
            if body["id"] in self.feedback:
                self.conflicts += 1
                return Response(409, {"detail": f"feedback {body['id']} already exists"})
            stored = deepcopy(body)
            stored.setdefault("modified_at", stored.get("created_at"))
            stored.setdefault("trace_id", run["trace_id"] if run else None)  # the server fills it in
            self.feedback[body["id"]] = stored
            self.feedback_creates += 1
            lose = self._lost_responses > 0
            if lose:
                self._lost_responses -= 1
        if lose:
            time.sleep(self._lost_delay)
        return Response(200, stored)

    # ---- removals (DELETE /feedback/{id}) and feedback someone else gave
    def _delete_feedback(self, feedback_id: str) -> Response:
        with self._data_lock:
            gone = self.feedback.pop(feedback_id, None)
        return Response(200, {}) if gone else Response(404, {"detail": f"feedback {feedback_id} not found"})

    def add_feedback(self, item: dict[str, Any]) -> None:
        """Seed feedback someone else gave (a human in the app, another evaluator), stored as given."""
        with self._data_lock:
            self.feedback[item["id"]] = deepcopy(item)

    def feedback_of(self, run_id: str) -> list[dict[str, Any]]:
        """Every stored feedback of one run (several per key show as several)."""
        with self._data_lock:
            return [deepcopy(f) for f in self.feedback.values() if f.get("run_id") == run_id]

    def _one_feedback(self, feedback_id: str, request: Request) -> Response:
        with self._data_lock:
            stored = self.feedback.get(feedback_id)
            if stored is None:
                return Response(404, {"detail": f"feedback {feedback_id} not found"})
            if request.method == "PATCH":
                update = request.json() or {}
                unknown = set(update) - {"score", "value", "comment", "correction"}
                if unknown:
                    return Response(422, {"detail": f"cannot update {sorted(unknown)}"})
                stored.update(update)
                stored["modified_at"] = datetime.now(UTC).isoformat()
            return Response(200, deepcopy(stored))

    def _create_feedback_config(self, body: dict[str, Any]) -> Response:
        key, config = body.get("feedback_key"), body.get("feedback_config")
        if not key or not isinstance(config, dict):
            return Response(422, {"detail": "feedback_key and feedback_config are required"})
        with self._data_lock:
            existing = self.feedback_configs.get(key)
            if existing is not None:
                if existing["feedback_config"] != config:
                    return Response(400, {"detail": "Feedback config already exists"})
                return Response(200, existing)
            row = self._store_config(key, config, body)
        return Response(200, row)

    def _store_config(self, key: str, config: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        row = {
            "id": str(uuid.uuid4()),
            "feedback_key": key,
            "feedback_config": deepcopy(config),
            "tenant_id": TENANT_ID,
            "modified_at": datetime.now(UTC).isoformat(),
            "is_lower_score_better": body.get("is_lower_score_better"),
            "is_enforced": bool(body.get("is_enforced")),
            "is_first": True,
        }
        self.feedback_configs[key] = row
        return row


def _outside(config: dict[str, Any], body: dict[str, Any]) -> str | None:
    """Why a feedback does not fit its key's config (a category it lacks, a score out of bounds), or None."""
    key, score = body["key"], body.get("score")
    if config.get("type") == "categorical":
        labels = {c.get("label") for c in config.get("categories", [])}
        values = {c.get("value") for c in config.get("categories", [])}
        if body.get("value") not in labels or score not in values:
            return f"value {body.get('value')!r} is not a category of {key!r}"
    if config.get("type") == "continuous" and isinstance(score, int | float):
        low, high = config.get("min"), config.get("max")
        if (low is not None and score < low) or (high is not None and score > high):
            return f"score {score} of {key!r} is outside the feedback config's bounds [{low}, {high}]"
    return None


def _split_args(text: str) -> list[str]:
    """Split ``a(..), b(..)`` at top-level commas (outside parentheses and quotes)."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif not quoted and ch == "(":
            depth += 1
        elif not quoted and ch == ")":
            depth -= 1
        elif not quoted and ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]
