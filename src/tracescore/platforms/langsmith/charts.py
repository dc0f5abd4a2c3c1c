"""The stage-split dashboard on LangSmith: the manual steps, because its API gives no way to make it.

LangSmith projects have custom charts (a section of charts, each of series with a metric, a group-by and filters,
plus markdown text blocks: ``langsmith.types.custom_charts_section``). But the ``langsmith`` SDK (0.15) only reads
them: ``Langsmith(...).sessions.dashboard(session_id)`` is ``POST /api/v1/sessions/{id}/dashboard``, "GET with body
payload — no resources created" (the project's prebuilt dashboard). The SDK has no call, and no generated request
type, that creates or updates a chart or a section; the REST endpoints behind the LangSmith UI's dashboards
(``/api/v1/charts...``) are not part of its generated client, so their request bodies are unknown here. Rather
than send a guessed body, ``dashboard --to langsmith`` sends nothing and prints each chart to make by hand, with
the chart type, metric, feedback key, group-by and filter the UI asks for; the calibration line becomes a text
block, which LangSmith dashboards have.

tracescore marks its feedback with ``source_info.tool = "tracescore"``; LangSmith chart filters cannot select on
``source_info``, so each chart is limited to the feedback key (human labels from a calibration queue use other
keys).
"""

from __future__ import annotations

from tracescore.platforms.dashboards import DashboardContext, DashboardSpec, Outcome, Widget

#: ``--by`` → the LangSmith chart group-by (plain attribute, or a run metadata key)
GROUP_BY = {
    "name": "Run name",
    "provider": "Metadata: ls_provider",
    "model": "Metadata: ls_model_name",
    "environment": "Metadata: the key your runs carry the environment in (e.g. environment)",
}


def _chart(spec: DashboardSpec, widget: Widget) -> str:
    if widget.kind == "series":
        return (
            f"line chart {widget.title!r}: metric Feedback score, average, key {widget.score!r};"
            f" group by {GROUP_BY[spec.by]}; root runs only"
        )
    if widget.kind == "cells":
        return (
            f"bar chart {widget.title!r}: metric Feedback count, key {widget.score!r}; group by Feedback label"
            f" {widget.score!r} (one bar per cell); root runs only"
        )
    return (
        f"bar chart {widget.title!r}: metric Run count, filter feedback key {widget.score!r} score > 0"
        " (the filter `and(eq(feedback_key, \"" + widget.score + "\"), gt(feedback_score, 0))`); root runs only"
    )


def chart_steps(spec: DashboardSpec, project: str | None) -> list[str]:
    """The manual steps that make the dashboard of ``spec`` in the LangSmith UI."""
    where = f"project {project!r}" if project else "the tracing project tracescore scores"
    steps = [
        f"in LangSmith, open {where} → Dashboards → New dashboard, name it {spec.name!r}, time buckets of 1 day",
    ]
    steps += [f"add a {_chart(spec, w)}" for w in spec.widgets]
    steps.append(
        f"add a text block beside the grounding.rate chart: 'Judge behind grounding.rate: {spec.agreement_text}'"
    )
    return steps


class LangSmithCharts:
    """``sync`` sends no request: every chart is a manual step (see the module docstring for why)."""

    def __init__(self, project: str | None = None) -> None:
        self.project = project

    def sync(self, spec: DashboardSpec, *, dry_run: bool) -> Outcome:
        out = Outcome("LangSmith (not contacted)", dry_run=dry_run)
        out.notes.append(
            "the langsmith SDK has no call that creates a chart or a dashboard (it only reads a project's prebuilt"
            " dashboard): nothing was created; make it by hand"
        )
        out.notes.append(
            "LangSmith charts cannot filter on the source_info tracescore writes: each chart selects its feedback key"
        )
        out.manual += chart_steps(spec, self.project)
        return out


def build(context: DashboardContext) -> LangSmithCharts:
    """No client: nothing is sent. The project: ``--project``, else ``[source] project``."""
    return LangSmithCharts(context.options.get("project") or context.project)
