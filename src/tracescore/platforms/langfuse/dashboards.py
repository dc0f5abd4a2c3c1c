"""The stage-split dashboard on Langfuse, through the public ``/api/public/unstable`` dashboards API (SDK 5.x:
``api.unstable.dashboards`` and ``api.unstable.dashboard_widgets``; changelog 2026-07-17).

A widget is a standalone chart (``POST /dashboard-widgets``) placed on a dashboard's 12-column grid (a placement
in the dashboard's ``definition``, or ``POST /dashboards/{id}/placements``). A run reads every dashboard and every
widget of the project (paged), finds the dashboard by its exact name and each of our widgets by the key written at
the end of its description, then writes only what differs: a missing widget is created (and placed), a changed one
updated in place (``PATCH``), a missing dashboard created with all its placements in one request. A second run
sends no write; ``dry_run`` reads and writes nothing. Every request goes through our retry loop (bounded, honouring
``Retry-After``; the SDK's own retries off); a request that still fails stops the command with one line.

What Langfuse's score views cannot express, said each run (``Outcome.manual``/``notes``):
- tracescore's marks on its scores (the ``scorer_version`` metadata) cannot be filtered on: the score views have no
  metadata column. Each widget is limited to ``source`` API (no annotation, no Langfuse evaluator) and the score's
  name; another API client writing the same names would be counted too.
- ``--by provider`` and ``--by model`` have no dimension on trace-level scores (``observationModelName`` is the model
  of the observation a score is attached to; ours are attached to the trace): the series are left unsplit.
- a widget has no time granularity: Langfuse derives the buckets from the dashboard's date range.
- there is no text tile: the calibration of the judge behind ``grounding.rate`` is in that widget's title.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from tracescore.errors import SinkError, SourceError
from tracescore.platforms.dashboards import DashboardContext, DashboardSpec, Outcome, Step, Widget
from tracescore.platforms.langfuse.client import (
    LangfuseCredentials,
    classify_error,
    failure_line,
    make_client,
    request_options,
    retry_policy,
)
from tracescore.platforms.langfuse.settings import LangfuseSettings
from tracescore.retry import Verdict, call_with_retries

if TYPE_CHECKING:
    from langfuse.api import LangfuseAPI
    from langfuse.api.unstable import Dashboard, DashboardWidget

#: ``--by`` → the dimension of Langfuse's score views (None: none exists for trace-level scores)
SPLITS: dict[str, str | None] = {"environment": "environment", "name": "traceName", "provider": None, "model": None}
_VIEWS = {"NUMERIC": "scores-numeric", "BOOLEAN": "scores-boolean", "CATEGORICAL": "scores-categorical"}
_OURS = {"column": "source", "operator": "any of", "type": "stringOptions", "value": ["API"]}
_PAGE = 100
_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://tracescore.dev/dashboard-placement")
_T = TypeVar("_T")


def marker(spec: DashboardSpec, widget: Widget) -> str:
    """The last line of our widget's description: how a re-run finds it (key and dashboard name)."""
    return f"[tracescore {widget.key} on {spec.name!r}]"


def widget_fields(spec: DashboardSpec, widget: Widget) -> dict[str, Any]:
    """The fields of ``CreateDashboardWidgetRequest`` for ``widget``, as plain JSON values."""
    named = {"column": "name", "operator": "=", "type": "string", "value": widget.score}
    filters: list[dict[str, Any]] = [named, _OURS]
    dimensions: list[str] = []
    if widget.kind == "series":
        chart, metric = "LINE_TIME_SERIES", ("value", "avg")
        split = SPLITS[spec.by]
        dimensions = [split] if split else []
    elif widget.kind == "cells":
        chart, metric, dimensions = "BAR_TIME_SERIES", ("count", "count"), ["stringValue"]
    else:
        chart, metric = "NUMBER", ("count", "count")
        filters.append({"column": "value", "operator": ">", "type": "number", "value": 0})
    return {
        "name": widget.title,
        "description": f"{widget.description}\n{marker(spec, widget)}",
        "view": _VIEWS[widget.data_type],
        "dimensions": [{"field": d} for d in dimensions],
        "metrics": [{"measure": metric[0], "agg": metric[1]}],
        "filters": filters,
        "chart_type": chart,
    }


def describe(spec: DashboardSpec, widget: Widget) -> str:
    """What the widget is, in one line: chart, view, metric, split, filters."""
    f = widget_fields(spec, widget)
    metric = f["metrics"][0]
    split = ", split by " + f["dimensions"][0]["field"] if f["dimensions"] else ""
    where = " and ".join(
        f"{c['column']} {c['operator']} {', '.join(c['value']) if isinstance(c['value'], list) else c['value']}"
        for c in f["filters"]
    )
    return f"{f['chart_type']} of {f['view']}: {metric['agg']} of {metric['measure']}{split}; where {where}"


def _text(value: Any) -> str:
    return str(getattr(value, "value", value))


def _layout(index: int, widget: Widget, below: int) -> tuple[int, int, int, int]:
    """x, y, width, height: series two to a row (6×6), the fabricated count beside the last one; the cells widgets
    full width below them (``index`` counts within each of the two, ``below`` is the series' height)."""
    if widget.kind == "cells":
        return 0, below + 6 * index, 12, 6
    return 6 * (index % 2), 6 * (index // 2), 6, 6


def _existing(widget: DashboardWidget) -> dict[str, Any]:
    """A stored widget's fields in the form of ``widget_fields``, to compare."""
    return {
        "name": widget.name,
        "description": widget.description,
        "view": _text(widget.view),
        "dimensions": [{"field": d.field} for d in widget.dimensions],
        "metrics": [{"measure": m.measure, "agg": _text(m.agg)} for m in widget.metrics],
        "filters": [
            {k: v for k, v in (("column", f.column), ("operator", f.operator), ("type", f.type), ("value", f.value),
                               ("key", f.key)) if v is not None}
            for f in widget.filters
        ],
        "chart_type": _text(widget.chart_type),
    }


class LangfuseDashboards:
    """Creates or updates the stage-split dashboard over one bare client; every request retried by our loop."""

    def __init__(
        self,
        client: LangfuseAPI | None,
        settings: LangfuseSettings | None = None,
        where: str = "Langfuse",
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.client = client
        self.settings = settings or LangfuseSettings()
        self.where = where
        self.policy = retry_policy(self.settings.max_attempts, self.settings.backoff)
        self.options: Any = request_options(self.settings.timeout)
        self.sleep = sleep
        self._outcome = Outcome(where, dry_run=False)

    def sync(self, spec: DashboardSpec, *, dry_run: bool) -> Outcome:
        self._outcome = out = Outcome(self.where, dry_run=dry_run)
        self._say_limits(spec)
        if dry_run or self.client is None:
            out.notes.append("dry run: nothing read or written; a run creates what is missing, updates what differs")
            out.steps.append(Step("create", f"or update dashboard {spec.name!r}", f"{len(spec.widgets)} widgets"))
            out.steps += [Step("create", f"or update widget {w.title!r}", describe(spec, w)) for w in spec.widgets]
            return out
        client = self.client
        found = [d for d in self._pages(client.unstable.dashboards.list, "list dashboards") if d.name == spec.name]
        placed = {getattr(p, "widget_id", None) for board in found for p in board.definition.widgets}
        ours = self._our_widgets(client, spec, placed)
        ids = {w.key: self._widget(spec, w, ours.get(w.key)) for w in spec.widgets}
        if len(found) > 1:
            out.notes.append(f"{len(found)} dashboards are named {spec.name!r}; the most recently updated one is used")
        if found:
            self._update_dashboard(spec, max(found, key=lambda d: d.updated_at), ids)
        else:
            self._create_dashboard(spec, ids)
        return out

    # -- widgets ---------------------------------------------------------------------------------------------------
    def _our_widgets(
        self, client: LangfuseAPI, spec: DashboardSpec, placed: set[str | None]
    ) -> dict[str, DashboardWidget]:
        """Our widget of each key; a key found twice (a create the server stored and then answered with an error,
        so the retried create stored it again) keeps the one placed on the dashboard, else the newest, and the
        others are removed."""
        marks = {marker(spec, w): w.key for w in spec.widgets}
        mine: dict[str, list[DashboardWidget]] = {}
        for widget in self._pages(client.unstable.dashboard_widgets.list, "list dashboard widgets"):
            key = marks.get((widget.description or "").rsplit("\n", 1)[-1])
            if key is not None:
                mine.setdefault(key, []).append(widget)  # newest first
        found: dict[str, DashboardWidget] = {}
        for key, widgets in mine.items():
            found[key] = keep = next((w for w in widgets if w.id in placed), widgets[0])
            for extra in widgets:
                if extra is not keep:
                    what = f"duplicate widget {extra.name!r} ({extra.id})"
                    delete = client.unstable.dashboard_widgets.delete
                    self._write(partial(delete, extra.id, request_options=self.options), f"remove the {what}")
                    self._outcome.notes.append(f"removed the {what}: a create the server stored twice")
        return found

    def _widget(self, spec: DashboardSpec, widget: Widget, existing: DashboardWidget | None) -> str:
        from langfuse.api.unstable import DashboardWidgetDimension, DashboardWidgetFilter, DashboardWidgetMetric

        fields = widget_fields(spec, widget)
        typed = dict(
            fields,
            dimensions=[DashboardWidgetDimension(**d) for d in fields["dimensions"]],
            metrics=[DashboardWidgetMetric(**m) for m in fields["metrics"]],
            filters=[DashboardWidgetFilter(**f) for f in fields["filters"]],
        )
        assert self.client is not None
        widgets = self.client.unstable.dashboard_widgets
        what = f"widget {widget.title!r}"
        if existing is None:
            made = self._write(partial(widgets.create, **typed, request_options=self.options), f"create {what}")
            self._outcome.steps.append(Step("create", what))
            return str(made.id)
        if _existing(existing) == fields:
            self._outcome.steps.append(Step("unchanged", what))
            return existing.id
        changed = sorted(k for k, v in fields.items() if _existing(existing).get(k) != v)
        self._write(partial(widgets.update, existing.id, **typed, request_options=self.options), f"update {what}")
        self._outcome.steps.append(Step("update", what, "changed: " + ", ".join(changed)))
        return existing.id

    # -- the dashboard ---------------------------------------------------------------------------------------------
    def _placements(
        self, spec: DashboardSpec, ids: dict[str, str]
    ) -> Iterator[tuple[str, str, tuple[int, int, int, int]]]:
        below = 6 * -(-sum(w.kind != "cells" for w in spec.widgets) // 2)
        counted = {False: 0, True: 0}
        for widget in spec.widgets:
            pid = str(uuid.uuid5(_NAMESPACE, f"{spec.name}\x1f{widget.key}"))
            cells = widget.kind == "cells"
            yield pid, ids[widget.key], _layout(counted[cells], widget, below)
            counted[cells] += 1

    def _create_dashboard(self, spec: DashboardSpec, ids: dict[str, str]) -> None:
        from langfuse.api.unstable import DashboardDefinition, DashboardPlacement_Widget

        tiles: list[Any] = [
            DashboardPlacement_Widget(id=p, widget_id=w, x=x, y=y, width=width, height=height)
            for p, w, (x, y, width, height) in self._placements(spec, ids)
        ]
        definition = DashboardDefinition(widgets=tiles)
        assert self.client is not None
        boards = self.client.unstable.dashboards

        def create() -> Any:
            return boards.create(
                name=spec.name, description=spec.description, definition=definition, request_options=self.options
            )

        self._write(create, f"create dashboard {spec.name!r}")
        self._outcome.steps.append(Step("create", f"dashboard {spec.name!r}", f"{len(tiles)} widgets placed"))

    def _update_dashboard(self, spec: DashboardSpec, board: Dashboard, ids: dict[str, str]) -> None:
        from langfuse.api.unstable import CreateDashboardPlacementRequest_Widget

        assert self.client is not None
        boards = self.client.unstable.dashboards
        placed = {getattr(p, "widget_id", None) for p in board.definition.widgets}
        taken = {p.id for p in board.definition.widgets}
        added = 0
        for pid, wid, (x, y, width, height) in self._placements(spec, ids):
            if wid in placed:
                continue
            request = CreateDashboardPlacementRequest_Widget(
                id=None if pid in taken else pid, widget_id=wid, x=x, y=y, width=width, height=height
            )
            self._write(partial(boards.add_placement, board.id, request=request, request_options=self.options),
                        f"place a widget on dashboard {spec.name!r}")
            added += 1
        changed = [] if board.description == spec.description else ["description"]
        if changed:
            self._write(partial(boards.update, board.id, description=spec.description, request_options=self.options),
                        f"update dashboard {spec.name!r}")
        if added or changed:
            detail = ", ".join([*changed, *([f"{added} widgets placed"] if added else [])])
            self._outcome.steps.append(Step("update", f"dashboard {spec.name!r}", detail))
        else:
            self._outcome.steps.append(Step("unchanged", f"dashboard {spec.name!r}"))

    # -- requests --------------------------------------------------------------------------------------------------
    def _pages(self, list_page: Callable[..., Any], doing: str) -> Iterator[Any]:
        page = 1
        while True:
            answer = self._call(partial(list_page, page=page, limit=_PAGE, request_options=self.options), doing)
            self._outcome.reads += 1
            yield from answer.data
            if page >= (answer.meta.total_pages or 0) or not answer.data:
                return
            page += 1

    def _write(self, fn: Callable[[], _T], doing: str) -> _T:
        result = self._call(fn, doing, write=True)
        self._outcome.writes += 1
        return result

    def _call(self, fn: Callable[[], _T], doing: str, write: bool = False) -> _T:
        import httpx
        from langfuse.api.core.api_error import ApiError

        attempts = 0

        def once() -> _T:
            nonlocal attempts
            attempts += 1
            return fn()

        def retried(_attempt: int, _verdict: Verdict) -> None:
            self._outcome.retried += 1

        extra = {"sleep": self.sleep} if self.sleep is not None else {}
        try:
            return call_with_retries(once, classify=classify_error, policy=self.policy, on_retry=retried, **extra)
        except (ApiError, httpx.HTTPError, ValueError) as exc:
            line = failure_line(doing, exc, attempts, self.where)
            if write:
                raise SinkError(f"{line}; what was written before stays, a re-run finishes it") from exc
            raise SourceError(line) from exc

    def _say_limits(self, spec: DashboardSpec) -> None:
        out = self._outcome
        if SPLITS[spec.by] is None:
            out.manual.append(
                f"Langfuse cannot split trace-level scores by {spec.by} (its score views have no such dimension):"
                f" the time series are not split; to split them, tag the traces with the {spec.by} and, in each"
                " widget's editor, add the dimension 'Tags'"
            )
        out.notes.append(
            "each widget counts scores with source API and the tracescore score name (Langfuse's score views"
            " cannot filter on the scorer_version metadata tracescore writes)"
        )
        out.notes.append(
            "the widget API has no time granularity: Langfuse buckets the series by the dashboard's date range;"
            " pick a range whose buckets are days to read them as daily means and counts"
        )
        out.notes.append("Langfuse has no text tile: the judge's calibration is in the grounding.rate widget's title")


def build(context: DashboardContext) -> LangfuseDashboards:
    """The dashboard maker over one bare client (credentials from the environment), closed with the command; no
    client for a dry run."""
    settings: LangfuseSettings = context.sections.get("langfuse") or LangfuseSettings()
    if context.options.get("dry_run"):  # a dry run sends nothing: it needs no keys
        return LangfuseDashboards(None, settings, "Langfuse (not contacted: dry run)")
    credentials = LangfuseCredentials.from_env()
    client = context.resources.enter_context(make_client(credentials, timeout=settings.timeout))
    return LangfuseDashboards(client, settings, credentials.where)
