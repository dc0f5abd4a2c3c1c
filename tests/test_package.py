"""The public face: exports, the exported JSON Schema and the README's contract."""

from __future__ import annotations

import json
import re

import tracescore
from tests.conftest import REPO
from tracescore.trace import json_schema


def test_all_is_complete_and_sorted() -> None:
    public = {n for n in dir(tracescore) if not n.startswith("_") and n not in {"annotations"}}
    modules = {n for n in public if type(getattr(tracescore, n)).__name__ == "module"}
    assert set(tracescore.__all__) == public - modules
    assert list(tracescore.__all__) == sorted(tracescore.__all__)


def test_exported_schema_is_current() -> None:
    on_disk = json.loads((REPO / "schema" / "trace.schema.json").read_text())
    assert on_disk == json_schema(), "run: python -c 'import tracescore.trace' … to re-export (see README)"


def test_ci_runs_the_readme_test_command() -> None:
    ci = [x for x in (REPO / ".ci" / "run").read_text().splitlines() if x.strip() and not x.startswith("#")]
    assert ci[-1] in (REPO / "README.md").read_text()


def test_readme_documents_every_score_name() -> None:
    readme = (REPO / "README.md").read_text()
    for name in (
        "retrieval.recall_at_5",
        "retrieval.first_hit_rank",
        "retrieval.retrieved_any",
        "citation.coverage",
        "citation.unfetched_rate",
        "citation.fabricated_count",
        "answer.correct",
        "answer.token_f1",
        "answer.exact_match",
        "diagnosis",
    ):
        assert re.search(rf"`{re.escape(name)}`", readme), name
