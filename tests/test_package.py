"""The public face: exports, the exported JSON Schema and the README's contract."""

from __future__ import annotations

import json
import re

import tracescore
from tests.conftest import REPO
from tests.docs_pages import built, page
from tracescore.catalog import entries, entry
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


def test_the_docs_catalog_documents_every_score_name_and_the_readme_only_catalog_names() -> None:
    readme = built("reference/scores.md")
    shown = set(re.findall(r"`((?:retrieval|trajectory|grounding|citation|answer|surface)\.[a-z0-9_]+)`",
                           (REPO / "README.md").read_text()))
    assert len(shown) >= 10 and sorted(n for n in shown if entry(n) is None) == []
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
        assert re.search(rf"`{re.escape(name.replace('_5', '_{k}'))}`", readme), name


def _catalog_table() -> str:
    return "\n".join(line for line in built("reference/scores.md").splitlines() if line.startswith("|"))


def test_every_catalog_name_is_in_the_readme_table() -> None:
    table = _catalog_table()
    for e in entries():
        assert f"`{e.name}`" in table, f"{e.name} is in the catalog but not in the docs' score catalog table"


def test_every_name_a_scorer_emits_on_the_samples_is_in_the_catalog() -> None:
    traces = [json.loads(line) for line in (REPO / "cookbook" / "data" / "traces.jsonl").read_text().splitlines()]
    emitted = {name for r in tracescore.score_traces(traces) for name in r.scores}
    emitted |= {name for r in tracescore.score_traces(traces, k=3) for name in r.scores}
    assert {"retrieval.recall_at_3", "grounding.rate", "diagnosis"} <= emitted  # judged names too (absent)
    assert sorted(n for n in emitted if entry(n) is None) == []


def test_the_docs_python_api_example_runs() -> None:
    readme = page("reference/api.md")
    example = readme.split("## Python API", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    namespace: dict[str, object] = {"__name__": "readme_example"}
    exec(compile(example, "docs/reference/api.md", "exec"), namespace)  # noqa: S102 - the documented example, as a user runs it
    assert namespace["results"] and namespace["summary"] is not None
