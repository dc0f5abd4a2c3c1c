"""A fake of Langfuse's unstable dashboards API on loopback, written from the ``langfuse`` 5.x SDK's generated types
(``langfuse.api.unstable.dashboards`` / ``dashboard_widgets``) and their docstrings, never from tracescore's code.

Serves ``/api/public/unstable/dashboards`` (GET page list, POST, GET/PATCH/DELETE one, POST/PATCH/DELETE
``/{id}/placements``) and ``/api/public/unstable/dashboard-widgets`` (GET page list, POST, GET/PATCH/DELETE one).
Request bodies are parsed with the SDK's request models (``CreateDashboardRequest``, ``CreateDashboardWidgetRequest``,
``UpdateDashboardWidgetRequest``, ``UpdateDashboardRequest``, ``CreateDashboardPlacementRequest``); every answer is
checked against its response model (``Dashboard``, ``DashboardWidget``, ``DashboardList``, ...) before it goes out.
Faults: ``faults`` (per path, any method, from ``FakeServer``) and ``write_faults`` (the next writes only, answered
before anything changes). Server rules taken from the docstrings: lists are 1-based pages (default limit 50), most
recently updated first;
``chartConfig.type`` must match ``chartType``; ``view: traces`` cannot be created; a filter's operator must fit its
``type`` (the table of ``DashboardWidgetFilter``); a placement must reference an existing widget, and a placement id
already on the dashboard is a 409; errors use the ``PublicApiError`` envelope (``message``, ``code``).

What the SDK does not say, and this fake therefore assumes: the dimension and measure names a score view accepts
(taken from the metrics API's documented lists for the same views, ``langfuse.api.metrics``; an unknown one is a
400, as the metrics API answers for high-cardinality dimensions), and that a PATCH replaces the lists it is given
whole. Error bodies are ``PublicApiError`` with a ``PublicApiErrorCode``; ``write_faults`` answer that envelope
too, while a ``faults`` entry answers the body it is given (as a proxy in front of the server might).
"""

from __future__ import annotations

import threading
import uuid
from collections import deque
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.fakes.base import FakeServer, Fault, Request, Response
from tests.fakes.langfuse import FakeLangfuse

PREFIX = "/api/public/unstable"
WRITES = frozenset({"POST", "PATCH", "PUT", "DELETE"})

_SCORE_DIMENSIONS = frozenset({
    "environment", "name", "source", "dataType", "configId", "timestampMonth", "timestampDay", "traceName", "tags",
    "traceRelease", "traceVersion", "observationName", "observationModelName", "observationPromptName",
    "observationPromptVersion",
})
DIMENSIONS: dict[str, frozenset[str]] = {
    "scores-numeric": _SCORE_DIMENSIONS | {"value"},
    "scores-boolean": _SCORE_DIMENSIONS | {"value", "booleanValue"},
    "scores-categorical": _SCORE_DIMENSIONS | {"stringValue"},
    "observations": frozenset({"environment", "type", "name", "level", "version", "tags", "release", "traceName",
                               "providedModelName", "promptName", "promptVersion", "isRootObservation"}),
}
MEASURES: dict[str, frozenset[str]] = {
    "scores-numeric": frozenset({"count", "value"}),
    "scores-boolean": frozenset({"count", "value"}),
    "scores-categorical": frozenset({"count"}),
    "observations": frozenset({"count", "latency", "totalCost", "totalTokens", "countScores"}),
}
OPERATORS: dict[str, frozenset[str]] = {  # DashboardWidgetFilter's table
    "string": frozenset({"=", "contains", "does not contain", "starts with", "ends with"}),
    "number": frozenset({"=", ">", "<", ">=", "<="}),
    "datetime": frozenset({">", "<", ">=", "<="}),
    "boolean": frozenset({"=", "<>"}),
    "null": frozenset({"is null", "is not null"}),
    "stringOptions": frozenset({"any of", "none of"}),
    "arrayOptions": frozenset({"any of", "none of", "all of"}),
    "categoryOptions": frozenset({"any of", "none of"}),
    "stringObject": frozenset({"=", "contains", "does not contain", "starts with", "ends with"}),
    "numberObject": frozenset({"=", ">", "<", ">=", "<="}),
    "booleanObject": frozenset({"=", "<>"}),
}


def _parse(model: Any, body: Any) -> Any:
    """``body`` read as the SDK reads a JSON object into ``model`` (camelCase aliases; ValueError when it does not
    fit)."""
    from langfuse.api.core.pydantic_utilities import parse_obj_as

    return parse_obj_as(model, body)


def _error(status: int, code: str, message: str) -> Response:
    return Response(status, {"message": message, "code": code})


class FakeLangfuseDashboards(FakeServer):
    """Dashboards and widgets of one project, in memory; ``writes()`` counts the requests that change something."""

    def __init__(self) -> None:
        super().__init__()
        self.dashboards: dict[str, dict[str, Any]] = {}
        self.widgets: dict[str, dict[str, Any]] = {}
        self._clock = datetime(2026, 12, 1, tzinfo=UTC)
        self._data_lock = threading.Lock()
        self.write_faults: deque[Fault] = deque()  # answered, in order, to the next writes instead of doing them
        self.stored_faults: deque[Fault] = deque()  # answered, in order, to the next writes after doing them (a
        # server that stored the write and failed before answering: the client sees an error and retries)

    # -- what tests read -------------------------------------------------------------------------------------------
    def writes(self) -> list[Request]:
        """The requests that would change the project (every POST/PATCH/PUT/DELETE under the unstable API)."""
        return [r for r in self.requests_to(PREFIX) if r.method in WRITES]

    def board(self, name: str) -> dict[str, Any]:
        (found,) = [d for d in self.dashboards.values() if d["name"] == name]
        return found

    # -- routing ---------------------------------------------------------------------------------------------------
    def handle(self, request: Request) -> Response:
        if not FakeLangfuse._authorized(request):
            return _error(401, "authentication_failed", "Invalid credentials. Confirm the host and the keys.")
        if request.method in WRITES and self.write_faults:
            fault = self.write_faults.popleft()
            status = fault.status or 500
            code = "rate_limited" if status == 429 else "internal_error"
            return Response(status, {"message": f"error {status}", "code": code}, fault.headers)
        answer = self._route(request)
        if request.method in WRITES and self.stored_faults and answer.status < 300:
            fault = self.stored_faults.popleft()
            status = fault.status or 500
            return Response(status, {"message": f"error {status}", "code": "internal_error"}, fault.headers)
        return answer

    def _route(self, request: Request) -> Response:
        parts = request.path.removeprefix(PREFIX).strip("/").split("/")
        with self._data_lock:
            if parts[0] == "dashboards":
                return self._dashboards(request, parts[1:])
            if parts[0] == "dashboard-widgets":
                return self._widgets(request, parts[1:])
        return _error(404, "resource_not_found", f"no route {request.method} {request.path}")

    def _now(self) -> str:
        self._clock += timedelta(seconds=1)
        return self._clock.isoformat().replace("+00:00", "Z")

    @staticmethod
    def _page(request: Request, items: list[dict[str, Any]]) -> dict[str, Any]:
        page = int(request.query.get("page", ["1"])[0])
        limit = int(request.query.get("limit", ["50"])[0])
        ordered = sorted(items, key=lambda i: i["updatedAt"], reverse=True)
        pages = max(1, -(-len(ordered) // limit))
        return {
            "data": ordered[(page - 1) * limit: page * limit],
            "meta": {"page": page, "limit": limit, "totalItems": len(ordered), "totalPages": pages},
        }

    @staticmethod
    def _checked(model: Any, body: dict[str, Any]) -> Response:
        _parse(model, body)  # the SDK's response type: a wrong shape is a bug of the fake
        return Response(200, body)

    # -- widgets ---------------------------------------------------------------------------------------------------
    def _widgets(self, request: Request, rest: list[str]) -> Response:
        from langfuse.api.unstable import (
            CreateDashboardWidgetRequest,
            DashboardWidget,
            DashboardWidgetList,
            UpdateDashboardWidgetRequest,
        )

        if not rest and request.method == "GET":
            return self._checked(DashboardWidgetList, self._page(request, list(self.widgets.values())))
        if not rest and request.method == "POST":
            body = request.json()
            try:
                _parse(CreateDashboardWidgetRequest, body)
            except ValueError as exc:
                return _error(400, "invalid_request", f"invalid widget: {exc}")
            problem = self._widget_problem(body)
            if problem:
                return _error(400, "invalid_request", problem)
            now = self._now()
            widget = {
                "id": uuid.uuid4().hex, "createdAt": now, "updatedAt": now, "name": body["name"],
                "description": body.get("description") or "", "view": body["view"],
                "dimensions": body["dimensions"], "metrics": body["metrics"], "filters": body["filters"],
                "chartType": body["chartType"], "chartConfig": {**(body.get("chartConfig") or {}),
                                                               "type": body["chartType"]},
            }
            self.widgets[widget["id"]] = widget
            return self._checked(DashboardWidget, widget)
        widget = self.widgets.get(rest[0]) if len(rest) == 1 else None
        if widget is None:
            return _error(404, "resource_not_found", f"widget {rest[0] if rest else ''!r} not found")
        if request.method == "GET":
            return self._checked(DashboardWidget, widget)
        if request.method == "PATCH":
            body = request.json() or {}
            _parse(UpdateDashboardWidgetRequest, body)
            if not body:
                return _error(400, "invalid_request", "at least one field is required")
            merged = {**widget, **body}
            if "chartType" in body and "chartConfig" not in body:
                merged["chartConfig"] = {"type": body["chartType"]}  # reset to the new type's defaults
            problem = self._widget_problem(merged)
            if problem:
                return _error(400, "invalid_request", problem)
            merged["chartConfig"] = {**merged.get("chartConfig", {}), "type": merged["chartType"]}
            merged["updatedAt"] = self._now()
            self.widgets[widget["id"]] = merged
            return self._checked(DashboardWidget, merged)
        if request.method == "DELETE":
            del self.widgets[widget["id"]]
            return Response(200, {"message": "Widget deleted"})
        return _error(405, "method_not_allowed", request.method)

    @staticmethod
    def _widget_problem(body: dict[str, Any]) -> str | None:
        view = body["view"]
        if view == "traces":
            return "the legacy traces view is not supported by this API"
        config = body.get("chartConfig") or {}
        if config.get("type") not in (None, body["chartType"]):
            return f"chartConfig.type {config.get('type')!r} does not match chartType {body['chartType']!r}"
        for d in body["dimensions"]:
            if d["field"] not in DIMENSIONS[view]:
                return f"unknown dimension {d['field']!r} for view {view!r}"
        for m in body["metrics"]:
            if m["measure"] not in MEASURES[view]:
                return f"unknown measure {m['measure']!r} for view {view!r}"
        if not body["metrics"]:
            return "at least one metric is required"
        for f in body["filters"]:
            allowed = OPERATORS.get(f["type"])
            if allowed is None or f["operator"] not in allowed:
                return f"operator {f['operator']!r} is not allowed for filter type {f['type']!r}"
            if f["type"].endswith("Object") or f["type"] == "categoryOptions":
                if not f.get("key"):
                    return f"filter type {f['type']!r} requires a key"
            if f["column"] not in DIMENSIONS[view] and f["column"] not in ("metadata", "scoreName"):
                return f"unknown filter column {f['column']!r} for view {view!r}"
        return None

    # -- dashboards ------------------------------------------------------------------------------------------------
    def _dashboards(self, request: Request, rest: list[str]) -> Response:
        from langfuse.api.unstable import (
            CreateDashboardRequest,
            Dashboard,
            DashboardList,
            DashboardPlacement_Widget,
            UpdateDashboardRequest,
        )

        if not rest and request.method == "GET":
            return self._checked(DashboardList, self._page(request, list(self.dashboards.values())))
        if not rest and request.method == "POST":
            body = request.json()
            try:
                _parse(CreateDashboardRequest, body)
            except ValueError as exc:
                return _error(400, "invalid_request", f"invalid dashboard: {exc}")
            tiles = (body.get("definition") or {}).get("widgets") or []
            missing = [t["widgetId"] for t in tiles if t.get("type") == "widget" and t["widgetId"] not in self.widgets]
            if missing:
                return _error(400, "invalid_request", f"widgets not found: {missing}")
            now = self._now()
            board = {"id": uuid.uuid4().hex, "createdAt": now, "updatedAt": now, "name": body["name"],
                     "description": body.get("description") or "", "definition": {"widgets": tiles},
                     "filters": body.get("filters") or []}
            self.dashboards[board["id"]] = board
            return self._checked(Dashboard, board)
        board = self.dashboards.get(rest[0])
        if board is None:
            return _error(404, "resource_not_found", f"dashboard {rest[0]!r} not found")
        if len(rest) == 1 and request.method == "GET":
            return self._checked(Dashboard, board)
        if len(rest) == 1 and request.method == "PATCH":
            body = request.json() or {}
            _parse(UpdateDashboardRequest, body)
            board.update({k: v for k, v in body.items() if v is not None}, updatedAt=self._now())
            return self._checked(Dashboard, board)
        if len(rest) == 1 and request.method == "DELETE":
            del self.dashboards[board["id"]]
            return Response(200, {"message": "Dashboard deleted"})
        if len(rest) == 2 and rest[1] == "placements" and request.method == "POST":
            return self._add_placement(board, request.json(), DashboardPlacement_Widget)
        return _error(405, "method_not_allowed", f"{request.method} {request.path}")

    def _add_placement(self, board: dict[str, Any], body: dict[str, Any], model: Any) -> Response:
        from langfuse.api.unstable import CreateDashboardPlacementRequest

        _parse(CreateDashboardPlacementRequest, body)
        tiles = board["definition"]["widgets"]
        if body.get("id") and any(t["id"] == body["id"] for t in tiles):
            return _error(409, "conflict", f"placement {body['id']!r} already exists on the dashboard")
        if body.get("type", "widget") == "widget" and body["widgetId"] not in self.widgets:
            return _error(404, "resource_not_found", f"widget {body['widgetId']!r} not found")
        bottom = max((t["y"] + t["height"] for t in tiles), default=0)
        given = {k: v for k, v in body.items() if v is not None}
        tile = {"type": "widget", "id": given.get("id") or uuid.uuid4().hex, "widgetId": body["widgetId"],
                "x": given.get("x", 0), "y": given.get("y", bottom), "width": given.get("width", 6),
                "height": given.get("height", 6)}
        tiles.append(tile)
        board["updatedAt"] = self._now()
        return self._checked(model, tile)
