"""Issue #49 acceptance 3 (the public face): the README, the docs and the cookbook import only from ``tracescore``
and ``tracescore.integrations.langfuse`` / ``…langsmith`` / ``…pytest_plugin``, and every name they import from
``tracescore`` is exported there."""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator

import pytest

import tracescore
from tests.conftest import REPO

FACE = {"tracescore", "tracescore.integrations.langfuse", "tracescore.integrations.langsmith",
        "tracescore.integrations.pytest_plugin"}  # fmt: skip
_BLOCK = re.compile(r"^[ \t]*```python\n(.*?)^[ \t]*```", re.M | re.S)


def _sources() -> Iterator[tuple[str, str]]:
    """(where, Python source) of every Python block of the README and the docs, and every cookbook module."""
    for doc in [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), *sorted((REPO / "cookbook").rglob("*.md"))]:
        text = doc.read_text(encoding="utf-8")
        for found in _BLOCK.finditer(text):
            line = text[: found.start()].count("\n") + 1
            yield f"{doc.relative_to(REPO)}:{line}", textwrap.dedent(found.group(1))
    for module in sorted((REPO / "cookbook").rglob("*.py")):
        yield str(module.relative_to(REPO)), module.read_text(encoding="utf-8")


def outside_the_face(source: str) -> list[str]:
    """Each import of ``source`` from a tracescore module outside the public face, or of a name ``tracescore``
    does not export."""
    bad = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            bad += [a.name for a in node.names if a.name.split(".")[0] == "tracescore" and a.name not in FACE]
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tracescore":
            for alias in node.names:
                whole = f"{node.module}.{alias.name}"
                if node.module == "tracescore" and alias.name not in tracescore.__all__:
                    bad.append(f"{whole} (not in tracescore.__all__)")
                elif node.module not in FACE and whole not in FACE:
                    bad.append(f"from {node.module} import {alias.name}")
    return bad


@pytest.mark.parametrize(("where", "source"), list(_sources()), ids=lambda v: v if ":" in v or "/" in v else "")
def test_the_docs_readme_and_cookbook_import_only_the_public_face(where: str, source: str) -> None:
    assert outside_the_face(source) == [], where


def test_the_check_finds_a_deep_import_and_a_name_not_exported() -> None:
    assert outside_the_face("from tracescore.judge.anthropic import AnthropicJudge") == [
        "from tracescore.judge.anthropic import AnthropicJudge"]
    assert outside_the_face("import tracescore.report.render") == ["tracescore.report.render"]
    not_exported = ["tracescore.load_config (not in tracescore.__all__)"]
    assert outside_the_face("from tracescore import load_config") == not_exported
    assert outside_the_face("from tracescore.integrations import langfuse as ts\nimport tracescore") == []
    assert outside_the_face("from tracescore import AnthropicJudge, Judge, ScoreSpec, scorer") == []


def test_the_sources_are_found() -> None:
    wheres = [w for w, _ in _sources()]
    assert any(w.startswith("README.md:") for w in wheres) and any(w.startswith("docs/") for w in wheres)
    assert any(w.startswith("cookbook/") and w.endswith(".py") for w in wheres)
