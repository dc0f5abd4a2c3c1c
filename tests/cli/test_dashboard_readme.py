"""The README's "Dashboards" section and ``tracescore dashboard --help`` describe the same command and the same
widgets, in words (no screenshot). Issue #31: acceptance 3."""

from __future__ import annotations

import re
from pathlib import Path

import click
from click.testing import CliRunner

from tests.docs_pages import page
from tracescore.cli import main
from tracescore.cli.dashboard import dashboard
from tracescore.platforms.dashboards import BY_CHOICES, DEFAULT_NAME, dashboard_spec

REPO = Path(__file__).resolve().parents[2]


def _section() -> str:
    readme = page("guides/dashboards.md")
    assert "\n## Dashboards\n" in readme, "the README has no 'Dashboards' section"
    return readme.split("\n## Dashboards\n", 1)[1].split("\n## ", 1)[0]


def test_the_section_describes_every_widget_in_words() -> None:
    section = _section()
    assert not re.search(r"!\[|<img|\.(png|jpe?g|gif|svg)\b", section), "screenshot-free: words, not images"
    table = [line for line in section.splitlines() if line.startswith("| `")]
    spec = dashboard_spec(DEFAULT_NAME, "name", k=5, agreement="judge not calibrated")
    for widget in spec.widgets:
        rows = [row for row in table if f"`{widget.score}" in row.split("|")[1]]
        assert rows, f"no row of the widgets table describes {widget.score}"
        assert len(rows[0].split("|")[2].strip()) > 20, f"{widget.score}: the row says what the widget shows"
    assert "kappa" in section and "n=" in section


def test_the_section_and_the_help_name_the_same_options() -> None:
    section = _section()
    flags = [opt for p in dashboard.params if isinstance(p, click.Option) for opt in p.opts if opt.startswith("--")]
    assert {"--to", "--name", "--by", "--dry-run"} <= set(flags)
    for flag in flags:
        assert f"`{flag}" in section, f"{flag} is an option of `tracescore dashboard` but not in the README"
    for choice in BY_CHOICES:
        assert choice in section
    assert f"`{DEFAULT_NAME}`" in section
    assert "tracescore dashboard --to langfuse" in section


def test_the_help_names_every_widget() -> None:
    result = CliRunner().invoke(main, ["dashboard", "--help"])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    for widget in dashboard_spec(DEFAULT_NAME, "name", k=5, agreement="x").widgets:
        name = widget.score.replace("retrieval.recall_at_5", "recall at k")
        assert name in text, f"--help does not name the {widget.score} widget"
    assert "provider, model, environment or trace name" in text
