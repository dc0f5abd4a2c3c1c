"""Issue #49 acceptance 1 and 2: every section the README held moved into the docs, and the reference pages are
generated from the code — a score, a config key or a command added to the code shows on its page with no hand edit —
and the site builds with ``mkdocs build --strict``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click
import markdown
import pytest
from pydantic import BaseModel, Field

from tests.conftest import REPO
from tests.docs_pages import DOCS, built, generator
from tracescore import ScoreSpec, catalog, scorer
from tracescore.cli.main import main
from tracescore.config import schema
from tracescore.errors import ConfigError, TracescoreError
from tracescore.registry import Installed, Registry, load

# The README's section titles before #49 (``git show <before>:README.md``, every ``##`` and ``###``): each one is now
# a heading of a docs page.
OLD_README_SECTIONS = [
    "Set-up: two commands",
    "What you see",
    "Your first hour",
    "The score catalog (a public contract: names are stable)",
    "The judge: grounding, citation support and citation drift",
    "The judge on Amazon Bedrock or Google Vertex AI: `[judge] provider`",
    'The judge on OpenAI or your own server: `provider = "openai"`',
    "Redaction: what the judge never sees (`[judge] redact`)",
    "The trace format (input)",
    "The result format (output)",
    "Reports and the CI gate",
    "Reading the agreement figures",
    "Configuration: `tracescore.toml`",
    "Langfuse: read traces, write stage scores back",
    "LangSmith: read traces, write scores back as feedback",
    "LangSmith experiments: tracescore as `evaluate` evaluators",
    "Langfuse experiments: tracescore as `run_experiment` and `run_batched_evaluation` evaluators",
    "pytest: agent tests that fail on the broken stage",
    "OpenTelemetry / OpenInference span files",
    "The same scores in Langfuse and LangSmith",
    "Supported SDK and server versions",
    "Dashboards",
    "Calibrate the judge",
    "Scheduled scoring and backfills: `tracescore run`, `tracescore backfill`",
    "After a scoring change: the platform shows the current scores only",
    "Exit codes (every command)",
    "Scoring exports at scale",
    "The Ray engine",
    "Python API",
    "Development",
]


def _headings() -> dict[str, str]:
    found = {}
    for page in DOCS.rglob("*.md"):
        for title in re.findall(r"^#{1,4} (.+?)\s*$", page.read_text(encoding="utf-8"), re.M):
            found.setdefault(title, str(page.relative_to(REPO)))
    return found


def test_the_readme_is_at_most_250_lines() -> None:
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 250


@pytest.mark.parametrize("title", OLD_README_SECTIONS)
def test_every_old_readme_section_has_its_home_in_the_docs(title: str) -> None:
    assert title in _headings(), f"the README's old section {title!r} is a heading of no docs page"


def test_the_check_misses_a_section_no_page_holds() -> None:
    assert "A section nobody wrote" not in _headings()


def test_the_readme_names_no_test_file_and_holds_no_benchmark_table() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert not re.search(r"tests/\S+\.py", readme)
    assert "traces/s" not in readme and "benchmarks/" not in readme


def test_every_page_in_the_nav_exists_and_every_page_is_in_the_nav() -> None:
    import yaml

    class _Loader(yaml.SafeLoader):
        pass

    _Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda *_: None)
    nav = yaml.load((REPO / "mkdocs.yml").read_text(encoding="utf-8"), Loader=_Loader)["nav"]

    def pages(items: Any) -> list[str]:
        if isinstance(items, str):
            return [items]
        if isinstance(items, dict):
            return [p for v in items.values() for p in pages(v)]
        return [p for v in items for p in pages(v)]

    listed = set(pages(nav))
    assert all((DOCS / p).is_file() for p in listed), sorted(p for p in listed if not (DOCS / p).is_file())
    owned_elsewhere = {"guides/own-scorers.md", "guides/criteria.md", "guides/judge-providers.md",
                       "guides/judge-batches.md", "guides/conversations.md", "guides/session-scores.md"}  # fmt: skip
    on_disk = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")} - owned_elsewhere
    assert on_disk <= listed, sorted(on_disk - listed)


# --- acceptance 2: the reference is generated -----------------------------------------------------------------------
@scorer(stage="toxicity", version="toxicity-3", scores=[
    ScoreSpec("toxicity.rate", kind="numeric", better="lower", min=0, max=1, definition="toxic sentences / sentences",
              absent={"no answer in trace": "does not apply", "moderation API down": "not computed"})])
def _toxicity(trace: Any, *, threshold: float = 0.7) -> list[Any]:
    return []


def _with_plugin() -> Registry:
    plugin = Installed("toxicity", "tracescore_toxicity:toxicity", "tracescore-toxicity", "0.3.1", _toxicity)
    return Registry([*load().installed.values(), plugin])


def test_a_score_declared_by_a_new_scorer_shows_on_the_catalog_page() -> None:
    render = generator().scores_markdown
    assert "toxicity.rate" not in render()
    page = render(_with_plugin())
    row = next(line for line in page.splitlines() if line.startswith("| `toxicity.rate` |"))
    for cell in ("numeric", "lower is better", "0 .. 1", "`toxicity` (toxicity-3)", "toxic sentences / sentences",
                 "`no answer in trace` (does not apply)", "`moderation API down` (not computed)"):  # fmt: skip
        assert cell in row, (cell, row)
    assert "### toxicity" in page


def test_every_installed_score_is_on_the_catalog_page_with_its_version_and_reasons() -> None:
    page = built("reference/scores.md")
    assert "<!-- generated" not in page
    for e in catalog.entries():
        row = next((line for line in page.splitlines() if line.startswith(f"| `{e.name}` |")), None)
        assert row is not None, e.name
        assert f"({e.version}" in row and all(f"`{r.text}`" in row.replace("\\|", "|") for r in e.spec.reasons)


class _Telemetry(BaseModel):
    """``[telemetry]``: a section added to the code."""

    endpoint: str = Field(default="http://localhost:4318", description="where the spans go")
    sample: float = Field(default=0.25, description="share of traces sent")


def test_a_config_key_added_to_a_model_and_a_scorer_option_show_on_the_config_page() -> None:
    render = generator().config_markdown
    assert "telemetry" not in render()
    page = render({**schema(), "telemetry": _Telemetry}, _with_plugin())
    assert "### `[telemetry]`" in page
    assert "| `sample` | `float` | `0.25` | share of traces sent |" in page
    assert "#### `[scorers.toxicity]`" in page and "| `threshold` | `float` | `0.7` |" in page


def test_every_key_of_every_section_is_on_the_config_page() -> None:
    page = built("reference/config.md")
    for name, model in schema().items():
        assert f"### `[{name}]`" in page, name
        if "root" in model.model_fields:
            continue
        for key, field in model.model_fields.items():
            assert f"| `{field.alias or key}` |" in page, (name, key)


def test_a_new_error_class_shows_with_its_exit_code() -> None:
    class QuotaError(ConfigError):
        """The platform's quota is spent."""

        exit_code = 7

    try:
        assert "| 7 | The platform's quota is spent. |" in generator().errors_markdown(TracescoreError)
    finally:
        del QuotaError
        import gc

        gc.collect()
    assert "`QuotaError`" not in generator().errors_markdown()


@click.command("explain")
@click.option("--depth-of-field", type=int, default=3, show_default=True, help="how far to look")
def _explain(depth_of_field: int) -> None:
    """Explain one trace's diagnosis."""


extended = click.Group("tracescore", commands={**main.commands, "explain": _explain})


def _cli_page(command: str) -> str:
    text = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
    text = text.replace(":module: tracescore.cli.main", f":module: {__name__}")
    text = text.replace(":command: main", f":command: {command}")
    return markdown.markdown(text, extensions=["attr_list", "tables", "mkdocs-click"])


def test_the_cli_page_shows_every_command_and_option_and_a_new_one() -> None:
    page = _cli_page("extended")
    assert "explain" in page and "--depth-of-field" in page and "how far to look" in page
    for name, command in main.commands.items():
        assert name in page, name
        for param in command.params:
            for opt in getattr(param, "opts", []):
                if opt.startswith("--"):
                    assert opt in page, (name, opt)


@pytest.mark.slow
def test_mkdocs_build_strict_passes_and_shows_the_generated_reference(tmp_path: Path) -> None:
    from mkdocs.commands.build import build
    from mkdocs.config import load_config

    config = load_config(str(REPO / "mkdocs.yml"), site_dir=str(tmp_path / "site"), strict=True)
    build(config)
    scores = (tmp_path / "site" / "reference" / "scores" / "index.html").read_text(encoding="utf-8")
    assert all(e.name in scores for e in catalog.entries())
    cli = (tmp_path / "site" / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert all(name in cli for name in main.commands)
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    assert "score_traces" in api and "AnthropicJudge" in api


def test_every_relative_link_of_the_readme_resolves() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    relative = [link for link in links if "://" not in link]
    assert len(relative) >= 20
    assert [link for link in relative if not (REPO / link).exists()] == []
    assert "\n## Documentation\n" in readme
