"""The surface, semantic and dead-link scores are in the catalog and the README, under the names the scorers write."""

from __future__ import annotations

import re

from tests.docs_pages import built, page
from tracescore.catalog import entries, entry
from tracescore.judge.rubrics import load_rubric
from tracescore.scorers import deadlinks, semantic
from tracescore.scorers.surface import SURFACE_SCORES

NAMES = (*SURFACE_SCORES, semantic.SCORE, deadlinks.SCORE)


def test_every_new_score_is_in_the_catalog_once_with_its_rubric_version() -> None:
    for name in NAMES:
        found = [e for e in entries() if e.name == name]
        assert len(found) == 1, name
    assert {e.name for e in entries() if e.stage == "surface"} == set(SURFACE_SCORES)
    assert {entry(n).version for n in SURFACE_SCORES} == {load_rubric("surface").version}  # type: ignore[union-attr]
    assert entry(semantic.SCORE).version == load_rubric("semantic").version  # type: ignore[union-attr]
    assert entry(deadlinks.SCORE).judged is False  # type: ignore[union-attr]


def test_readme_documents_every_new_score_and_the_partition() -> None:
    for name in NAMES:
        assert re.search(rf"\| `{re.escape(name)}` \|", built("reference/scores.md")), name
    readme = page("concepts/decision-surface.md")
    for cell in ("**SMART**", "**MISSED**", "**BLIND**", "**NO-OP**", "**discovered support**"):
        assert cell in readme
