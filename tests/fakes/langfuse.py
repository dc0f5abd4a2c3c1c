"""A fake Langfuse (server "v4", observations-first) on loopback, shaped after the public OpenAPI spec and what the
``langfuse`` 5.x SDK sends.

Serves ``GET /api/public/v2/observations`` (cursor paging, newest first, max 1000 per page, field groups, plain
filters and the JSON ``filter``), ``POST /api/public/scores`` (a JSON list; 202, or 207 with per-score errors;
upsert keyed like ClickHouse on id + name + calendar date of ``timestamp``), ``/api/public/score-configs`` and
``GET /api/public/v3/scores``. Faults come from ``FakeServer.faults``; ``repeat_pages`` serves a page twice.
"""

from __future__ import annotations

import base64
import json
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from tests.fakes.base import FakeServer, Request, Response
from tests.fakes.langfuse_queues import handle_queues

PUBLIC_KEY = "pk-lf-test"
SECRET_KEY = "sk-lf-test"
PROJECT_ID = "proj-test"
MAX_BODY = 1_048_576
MAX_OBSERVATIONS_PAGE = 1000
MAX_SCORES_PAGE = 100

FIELD_GROUPS: dict[str, tuple[str, ...]] = {
    "core": ("id", "traceId", "startTime", "endTime", "projectId", "parentObservationId", "type"),
    "basic": (
        "name",
        "level",
        "statusMessage",
        "version",
        "environment",
        "bookmarked",
        "public",
        "userId",
        "sessionId",
        "isRootObservation",
    ),
    "time": ("completionStartTime", "createdAt", "updatedAt"),
    "io": ("input", "output"),
    "metadata": ("metadata",),
    "model": ("model", "internalModelId", "modelParameters"),
    "usage": ("usageDetails", "costDetails", "totalCost", "usagePricingTierName"),
    "prompt": ("promptId", "promptName", "promptVersion"),
    "metrics": ("latency", "timeToFirstToken"),
    "trace_context": ("tags", "release", "traceName"),
}
SCORE_TYPES = ("NUMERIC", "BOOLEAN", "CATEGORICAL", "TEXT", "CORRECTION")


def _parse_time(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(json.dumps({"offset": offset}).encode()).decode()


def _offset(cursor: str | None) -> int:
    if not cursor:
        return 0
    return int(json.loads(base64.urlsafe_b64decode(cursor.encode()))["offset"])


def _raw_io(value: Any) -> Any:
    """v2 returns input/output as raw strings: objects are JSON-encoded, strings kept as stored."""
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)


class FakeLangfuse(FakeServer):
    """The fake: ``add_trace`` loads data; ``scores`` holds what was written (upserted), ``score_writes`` each write."""

    def __init__(self, latency: float = 0.0) -> None:
        super().__init__(latency=latency)
        self.observations: list[dict[str, Any]] = []
        self.scores: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.score_writes: list[dict[str, Any]] = []
        self.score_configs: list[dict[str, Any]] = []
        self.experiment_items: list[dict[str, Any]] = []
        self.reject_score: Callable[[dict[str, Any]], str | None] = lambda item: None
        self.repeat_pages = 0
        self.anonymous_errors = False  # 207 error messages that name no score (neither id nor index)
        self._state = threading.Lock()

    # -- data ---------------------------------------------------------------------------------------------------
    def add_trace(self, trace: dict[str, Any], observations: Iterable[dict[str, Any]]) -> None:
        """Load one exported trace (``{"trace": …, "observations": […]}`` shape) as v4 observation rows.

        The root rows (no parent) carry the trace's name, input, output and metadata when they have none.
        """
        tags = list(trace.get("tags") or [])
        for obs in observations:
            row = dict(obs)
            row["traceId"] = trace["id"]
            row.setdefault("projectId", PROJECT_ID)
            row.setdefault("environment", trace.get("environment") or "default")
            row["isRootObservation"] = not row.get("parentObservationId")
            row["tags"] = tags
            row["traceName"] = trace.get("name") or ""
            row.setdefault("release", trace.get("release"))
            if row["isRootObservation"]:
                for key in ("input", "output", "metadata"):
                    if row.get(key) in (None, "", {}) and trace.get(key) not in (None, ""):
                        row[key] = trace[key]
            for key in ("userId", "sessionId"):
                row.setdefault(key, trace.get(key))
            self.observations.append(row)

    def add_experiment_item(
        self,
        trace_id: str,
        expected_output: Any,
        *,
        item_metadata: dict[str, Any] | None = None,
        experiment: str = "exp-1",
    ) -> None:
        """Mark a loaded trace as one item of an experiment over a dataset item with ``expected_output``."""
        root = next(r for r in self.observations if r["traceId"] == trace_id and r["isRootObservation"])
        n = len(self.experiment_items)
        self.experiment_items.append(
            {
                "id": f"ei-{n}",
                "traceId": trace_id,
                "startTime": root["startTime"],
                "endTime": root.get("endTime"),
                "level": "DEFAULT",
                "environment": root.get("environment") or "default",
                "experimentId": experiment,
                "experimentName": experiment,
                "experimentItemId": f"dataset-item-{n}",
                "experimentDatasetId": "ds-1",
                "input": root.get("input"),
                "output": root.get("output"),
                "expectedOutput": expected_output,
                "experimentItemMetadata": item_metadata or {},
            }
        )

    def score_counts(self) -> Counter[str]:
        """How many accepted writes each score id received."""
        return Counter(w["id"] for w in self.score_writes)

    # -- routing ------------------------------------------------------------------------------------------------
    def handle(self, request: Request) -> Response:
        if not self._authorized(request):
            return Response(401, {"message": "Invalid credentials. Confirm that you've configured the correct host."})
        path, method = request.path, request.method
        queued = handle_queues(self, request)  # annotation queues, comments, annotation scores
        if queued is not None:
            return queued
        if path == "/api/public/v2/observations" and method == "GET":
            return self._observations(request)
        if path == "/api/public/scores" and method == "POST":
            return self._create_scores(request)
        if path == "/api/public/v3/scores" and method == "GET":
            return self._get_scores(request)
        if path.startswith("/api/public/scores/") and method == "DELETE":
            return self._delete_score(path.rsplit("/", 1)[1])
        if path == "/api/public/experiment-items" and method == "GET":
            return self._experiment_items(request)
        if path == "/api/public/score-configs" and method == "GET":
            return self._list_configs(request)
        if path == "/api/public/score-configs" and method == "POST":
            return self._create_config(request)
        return Response(404, {"message": f"no route {method} {path}"})

    @staticmethod
    def _authorized(request: Request) -> bool:
        header = request.headers.get("Authorization") or request.headers.get("authorization") or ""
        expected = "Basic " + base64.b64encode(f"{PUBLIC_KEY}:{SECRET_KEY}".encode()).decode()
        return header == expected

    # -- observations -------------------------------------------------------------------------------------------
    def _observations(self, request: Request) -> Response:
        q = {k: v[-1] for k, v in request.query.items()}
        if q.get("parseIoAsJson") == "true":
            return Response(400, {"message": "parseIoAsJson is deprecated; input/output are raw strings"})
        limit = int(q.get("limit", 50))
        if not 1 <= limit <= MAX_OBSERVATIONS_PAGE:
            return Response(400, {"message": f"limit must be between 1 and {MAX_OBSERVATIONS_PAGE}"})
        groups = [g.strip() for g in q.get("fields", "core,basic").split(",") if g.strip()]
        unknown = [g for g in groups if g not in FIELD_GROUPS]
        if unknown:
            return Response(400, {"message": f"unknown field groups: {unknown}"})
        try:
            keep = self._row_filter(request)
        except ValueError as exc:
            return Response(400, {"message": str(exc)})
        rows = sorted(
            (r for r in self.observations if keep(r)),
            key=lambda r: (_parse_time(r["startTime"]), r["id"]),
            reverse=True,
        )
        offset = _offset(q.get("cursor"))
        page = rows[offset : offset + limit]
        expand = set(filter(None, q.get("expandMetadata", "").split(",")))
        data = [self._shape(r, {"core", *groups}, expand) for r in page]
        meta: dict[str, Any] = {}
        if offset + limit < len(rows):
            with self._state:
                repeat = self.repeat_pages > 0
                self.repeat_pages -= 1 if repeat else 0
            meta["cursor"] = _cursor(offset if repeat else offset + limit)
        return Response(200, {"data": data, "meta": meta})

    def _row_filter(self, request: Request) -> Callable[[dict[str, Any]], bool]:
        q = {k: v[-1] for k, v in request.query.items()}
        if "filter" in request.query:  # the JSON filter overrides every plain filter
            conditions = json.loads(q["filter"])
            checks = [self._condition(c) for c in conditions]
            return lambda r: all(check(r) for check in checks)
        envs = request.query.get("environment")
        plain = {
            "name": "name",
            "type": "type",
            "traceId": "traceId",
            "userId": "userId",
            "sessionId": "sessionId",
            "level": "level",
            "version": "version",
            "parentObservationId": "parentObservationId",
        }
        lo = _parse_time(q["fromStartTime"]) if "fromStartTime" in q else None
        hi = _parse_time(q["toStartTime"]) if "toStartTime" in q else None
        root = q.get("isRootObservation")

        def keep(r: dict[str, Any]) -> bool:
            start = _parse_time(r["startTime"])
            if lo is not None and start < lo or hi is not None and start >= hi:
                return False
            if envs and r.get("environment") not in envs:
                return False
            if root is not None and bool(r.get("isRootObservation")) != (root == "true"):
                return False
            return all(r.get(field) == q[param] for param, field in plain.items() if param in q)

        return keep

    @staticmethod
    def _condition(c: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
        column, op, value = c.get("column"), c.get("operator"), c.get("value")
        if column == "startTime":
            bound = _parse_time(value)
            ops: dict[str, Callable[[datetime], bool]] = {
                ">": lambda t: t > bound,
                "<": lambda t: t < bound,
                ">=": lambda t: t >= bound,
                "<=": lambda t: t <= bound,
            }
            if op not in ops:
                raise ValueError(f"bad datetime operator {op!r}")
            return lambda r: ops[op](_parse_time(r["startTime"]))
        if column in ("tags", "traceTags"):
            wanted = set(value)
            if op == "any of":
                return lambda r: bool(wanted & set(r.get("tags") or []))
            if op == "all of":
                return lambda r: wanted <= set(r.get("tags") or [])
            if op == "none of":
                return lambda r: not wanted & set(r.get("tags") or [])
            raise ValueError(f"bad arrayOptions operator {op!r}")
        field = {
            "traceName": "traceName",
            "environment": "environment",
            "name": "name",
            "type": "type",
            "traceId": "traceId",
            "isRootObservation": "isRootObservation",
        }.get(str(column))
        if field is None:
            raise ValueError(f"unknown filter column {column!r}")
        if op in ("any of", "none of"):
            options = set(value)
            return (lambda r: r.get(field) in options) if op == "any of" else (lambda r: r.get(field) not in options)
        if op == "=":
            return lambda r: r.get(field) == value
        if op == "<>":
            return lambda r: r.get(field) != value
        raise ValueError(f"bad operator {op!r} for column {column!r}")

    @staticmethod
    def _shape(row: dict[str, Any], groups: set[str], expand: set[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for group in groups:
            for key in FIELD_GROUPS[group]:
                value = row.get(key)
                if key in ("input", "output"):
                    value = _raw_io(value)
                elif key == "metadata":
                    value = _truncated_metadata(value, expand)
                elif key in ("name", "statusMessage", "version", "userId", "sessionId") and value is None:
                    value = ""  # absent strings come back as "", not null
                out[key] = value
        return out

    # -- scores -------------------------------------------------------------------------------------------------
    def _create_scores(self, request: Request) -> Response:
        if len(request.body) > MAX_BODY:
            return Response(413, {"message": f"request body {len(request.body)} bytes exceeds {MAX_BODY}"})
        body = request.json()
        if not isinstance(body, list):
            return Response(400, {"message": "expected a JSON list of scores"})
        errors: list[dict[str, Any]] = []
        accepted = 0
        for index, item in enumerate(body):
            reason = self._invalid(item) or self.reject_score(item)
            if reason:
                where = "a score" if self.anonymous_errors else f"scores[{index}] (id={item.get('id')})"
                errors.append({"message": f"{where}: {reason}"})
                continue
            self._upsert(item)
            accepted += 1
        if not errors:
            return Response(202, {"message": "Accepted"})
        return Response(207, {"accepted": accepted, "rejected": len(errors), "errors": errors})

    def _invalid(self, item: Any) -> str | None:
        if not isinstance(item, dict):
            return "a score must be an object"
        if not item.get("name") or "value" not in item:
            return "name and value are required"
        if not (item.get("traceId") or item.get("sessionId") or item.get("datasetRunId")):
            return "one of traceId, sessionId, datasetRunId is required"
        data_type = item.get("dataType", "NUMERIC")
        if data_type not in SCORE_TYPES:
            return f"unknown dataType {data_type!r}"
        value = item["value"]
        if data_type == "BOOLEAN" and value not in (0, 1):
            return "boolean score values must be 0 or 1"
        if data_type == "NUMERIC" and not isinstance(value, int | float):
            return "numeric score values must be numbers"
        if data_type == "CATEGORICAL" and not isinstance(value, str):
            return "categorical score values must be strings"
        if "timestamp" in item:
            stamp = str(item["timestamp"])
            if not (stamp.endswith("Z") or "+" in stamp[10:] or "-" in stamp[10:]):
                return "timestamp must be ISO 8601 with a timezone offset"
        if item.get("configId"):
            config = next((c for c in self.score_configs if c["id"] == item["configId"]), None)
            if config is None:
                return f"score config {item['configId']} not found"
            if config["name"] != item["name"]:
                return f"score name {item['name']!r} does not match config name {config['name']!r}"
            if config["dataType"] != data_type:
                return f"data type {data_type} does not match config data type {config['dataType']}"
            low, high = config.get("minValue"), config.get("maxValue")
            if data_type == "NUMERIC" and ((low is not None and value < low) or (high is not None and value > high)):
                return f"value {value} is outside the range of config {config['name']!r}"
            if data_type == "CATEGORICAL" and value not in {c["label"] for c in config.get("categories") or []}:
                return f"value {value!r} is not a category of config {config['name']!r}"
        return None

    def _upsert(self, item: dict[str, Any]) -> None:
        now = _iso(datetime.now(UTC))
        stamp = _parse_time(item["timestamp"]) if "timestamp" in item else datetime.now(UTC)
        score_id = item.get("id") or str(uuid.uuid4())
        key = (score_id, item["name"], stamp.astimezone(UTC).date().isoformat())
        stored = {
            **item,
            "id": score_id,
            "timestamp": _iso(stamp),
            "projectId": PROJECT_ID,
            "dataType": item.get("dataType", "NUMERIC"),
            "source": item.get("source", "API"),
            "environment": item.get("environment") or "default",
            "createdAt": now,
            "updatedAt": now,
        }
        with self._state:
            if key in self.scores:
                stored["createdAt"] = self.scores[key]["createdAt"]
            self.scores[key] = stored
            self.score_writes.append(stored)

    def _get_scores(self, request: Request) -> Response:
        q = {k: v[-1] for k, v in request.query.items()}
        limit = int(q.get("limit", 50))
        if not 1 <= limit <= MAX_SCORES_PAGE:
            return Response(400, {"message": f"limit must be between 1 and {MAX_SCORES_PAGE}"})
        groups = set(filter(None, q.get("fields", "").split(",")))
        if groups - {"details", "subject", "annotation"}:
            return Response(400, {"message": f"unknown field groups: {sorted(groups)}"})
        keys = ("traceId", "sessionId", "name", "id")  # the spec's query filters (v3 scores: sessionId too)
        rows = [s for s in self.scores.values() if all(s.get(k) == q[k] for k in keys if k in q)]
        rows.sort(key=lambda s: (s["timestamp"], s["id"]), reverse=True)
        offset = _offset(q.get("cursor"))
        data = []
        for s in rows[offset : offset + limit]:
            value: Any = s["value"]
            if s["dataType"] == "BOOLEAN":
                value = bool(value)
            out = {
                k: s[k]
                for k in (
                    "id",
                    "projectId",
                    "name",
                    "dataType",
                    "source",
                    "timestamp",
                    "environment",
                    "createdAt",
                    "updatedAt",
                )
            } | {"value": value}
            if "details" in groups:
                out |= {"comment": s.get("comment"), "configId": s.get("configId"), "metadata": s.get("metadata")}
            if "subject" in groups:
                # a session score's subject is its session (ScoreSubjectSessionV3), a trace score's its trace
                out["subject"] = {"kind": "session", "id": s["sessionId"]} if s.get("sessionId") and not s.get(
                    "traceId") else {"kind": "trace", "id": s["traceId"]}  # fmt: skip
            data.append(out)
        meta: dict[str, Any] = {"limit": limit}
        if offset + limit < len(rows):
            meta["cursor"] = _cursor(offset + limit)
        return Response(200, {"data": data, "meta": meta})

    # -- score removals (DELETE /api/public/scores/{id}; there is no batch form) ---------------------------------
    def _delete_score(self, score_id: str) -> Response:
        """Every stored score with this id goes (204); an unknown id is a 404, as Langfuse answers."""
        with self._state:
            keys = [key for key in self.scores if key[0] == score_id]
            for key in keys:
                del self.scores[key]
        return Response(204) if keys else Response(404, {"message": "Score not found within authorized project"})

    def add_score(self, item: dict[str, Any]) -> None:
        """Seed a score someone else wrote (``source`` ANNOTATION for a human label, another evaluator's API score)."""
        self._upsert(item)

    def session_scores(self, session_id: str | None = None) -> list[dict[str, Any]]:
        """The stored session scores (``sessionId`` set, no ``traceId``), of one session or of every one."""
        with self._state:
            return [dict(s) for s in self.scores.values() if s.get("sessionId") and not s.get("traceId")
                    and (session_id is None or s["sessionId"] == session_id)]  # fmt: skip

    def scores_of(self, trace_id: str) -> list[dict[str, Any]]:
        """The stored scores of one trace."""
        with self._state:
            return [dict(s) for s in self.scores.values() if s.get("traceId") == trace_id]

    # -- experiments --------------------------------------------------------------------------------------------
    _EXPERIMENT_GROUPS: dict[str, tuple[str, ...]] = {
        "core": (
            "id",
            "traceId",
            "startTime",
            "endTime",
            "level",
            "environment",
            "experimentId",
            "experimentName",
            "experimentItemId",
        ),
        "dataset": ("experimentDatasetId",),
        "io": ("input", "output", "expectedOutput"),
        "metadata": ("metadata",),
        "itemMetadata": ("experimentItemMetadata",),
        "experimentMetadata": ("experimentMetadata",),
    }

    def _experiment_items(self, request: Request) -> Response:
        q = {k: v[-1] for k, v in request.query.items()}
        if "fromStartTime" not in q:
            return Response(400, {"message": "fromStartTime is required"})
        limit = int(q.get("limit", 50))
        if not 1 <= limit <= 100:
            return Response(400, {"message": "limit must be between 1 and 100"})
        groups = {"core", *filter(None, q.get("fields", "core,dataset").split(","))}
        if groups - set(self._EXPERIMENT_GROUPS):
            return Response(400, {"message": f"unknown field groups: {sorted(groups)}"})
        lo = _parse_time(q["fromStartTime"])
        hi = _parse_time(q["toStartTime"]) if "toStartTime" in q else None
        rows = [
            e
            for e in self.experiment_items
            if lo <= _parse_time(e["startTime"]) and (hi is None or _parse_time(e["startTime"]) < hi)
        ]
        rows.sort(key=lambda e: (e["startTime"], e["id"]), reverse=True)
        offset = _offset(q.get("cursor"))
        data = [
            {k: e.get(k) for g in groups for k in self._EXPERIMENT_GROUPS[g]} for e in rows[offset : offset + limit]
        ]
        for item in data:
            for key in ("input", "output", "expectedOutput"):
                if key in item:
                    item[key] = _raw_io(item[key])
        meta = {"cursor": _cursor(offset + limit)} if offset + limit < len(rows) else {}
        return Response(200, {"data": data, "meta": meta})

    # -- score configs ------------------------------------------------------------------------------------------
    def _list_configs(self, request: Request) -> Response:
        q = {k: v[-1] for k, v in request.query.items()}
        page, limit = int(q.get("page", 1)), int(q.get("limit", 50))
        items = self.score_configs[(page - 1) * limit : page * limit]
        total = len(self.score_configs)
        meta = {"page": page, "limit": limit, "totalItems": total, "totalPages": max(1, -(-total // limit))}
        return Response(200, {"data": items, "meta": meta})

    def _create_config(self, request: Request) -> Response:
        body = request.json() or {}
        if not body.get("name") or body.get("dataType") not in ("NUMERIC", "BOOLEAN", "CATEGORICAL", "TEXT"):
            return Response(400, {"message": "name and a valid dataType are required"})
        if body["dataType"] == "CATEGORICAL" and not body.get("categories"):
            return Response(400, {"message": "categorical configs need categories"})
        now = _iso(datetime.now(UTC))
        config = {
            "id": str(uuid.uuid4()),
            "name": body["name"],
            "dataType": body["dataType"],
            "isArchived": False,
            "categories": body.get("categories"),
            "description": body.get("description"),
            "projectId": PROJECT_ID,
            "createdAt": now,
            "updatedAt": now,
            "minValue": body.get("minValue"),
            "maxValue": body.get("maxValue"),
        }
        self.score_configs.append(config)
        return Response(200, config)


def _truncated_metadata(value: Any, expand: set[str]) -> Any:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {"value": value[:200]}
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        text = item if isinstance(item, str) else json.dumps(item)
        out[key] = item if key in expand or len(text) <= 200 else text[:200]
    return out


def env_for(server: FakeLangfuse) -> dict[str, str]:
    """The environment variables that point tracescore at ``server``."""
    return {"LANGFUSE_PUBLIC_KEY": PUBLIC_KEY, "LANGFUSE_SECRET_KEY": SECRET_KEY, "LANGFUSE_BASE_URL": server.url}


@contextmanager
def sdk_client(server: FakeLangfuse, **options: Any) -> Iterator[Any]:
    """A real ``langfuse.Langfuse`` client pointed at ``server``, cleaned up completely on exit.

    The SDK keeps one client per public key in the process (``LangfuseResourceManager``): a client made in an earlier
    test would answer for this one (its server stopped, or its HTTP client closed), and its ``shutdown()`` leaves its
    own HTTP client open. So the registry is emptied before and after, and the client gets an ``httpx.Client`` that is
    closed here.
    """
    import httpx
    from langfuse import Langfuse
    from langfuse._client.resource_manager import LangfuseResourceManager

    LangfuseResourceManager.reset()
    with httpx.Client() as http:
        client = Langfuse(
            public_key=PUBLIC_KEY, secret_key=SECRET_KEY, base_url=server.url, httpx_client=http, **options
        )
        try:
            yield client
        finally:
            client.shutdown()
            LangfuseResourceManager.reset()
