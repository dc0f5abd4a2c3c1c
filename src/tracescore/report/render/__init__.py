"""Renderers of reports and gate results: terminal (rich), Markdown, self-contained HTML, JUnit XML, JSON."""

from __future__ import annotations

from tracescore.report.render.gate_json import gate_to_json
from tracescore.report.render.html import render_html
from tracescore.report.render.junit import render_junit
from tracescore.report.render.markdown import render_gate_markdown, render_markdown
from tracescore.report.render.terminal import render_report_terminal

__all__ = [
    "gate_to_json",
    "render_gate_markdown",
    "render_html",
    "render_junit",
    "render_markdown",
    "render_report_terminal",
]
