"""#30 item 1: the evaluators on the run objects the installed ``langsmith`` SDK hands an evaluator ``(run, example)``.

``evaluate`` passes the target's root ``RunTree`` as the ``on_end`` of ``_forward`` left it: its ``child_runs`` the
``RunTree`` objects ``create_child`` made (each with its parent's metadata merged into its own), UUID ids, datetime
times. ``evaluate_existing(..., load_nested=True)`` passes a ``schemas.Run`` read back from the server, its children
``schemas.Run`` objects set on ``child_runs``. Both, built here with the SDK's own classes from the fixture run trees
(a retriever, a ``web_search`` tool and ``fetch_url`` tool runs), must score as ``tracescore score`` scores the same
canonical trace as a dict: the same keys and values, the same comments, the same absences with their reasons.
A ``RunTree`` holds what the target returned, not yet serialized: hits as pydantic models or ``Document`` objects
score as the JSON the SDK posts for them (they once read as results that "identify nothing").
"""

from __future__ import annotations

import dataclasses
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from tests.fakes.langsmith_runs import load_samples, run_tree
from tests.integrations.conftest import cli_lines
from tracescore.integrations import langsmith as ts

run_trees = pytest.importorskip("langsmith.run_trees")
schemas = pytest.importorskip("langsmith.schemas")
PROJECT = "00000000-0000-4000-8000-0000000000bb"
SAMPLES = load_samples()


def _hops(trace: dict[str, Any]) -> dict[str, Any]:
    """``trace`` searching three times before its fetches: its searches are steps 1, 2 and 3, which the fixture
    stores as a ``@traceable`` retriever, a ``web_search`` tool and a LangChain retriever (``Document`` dicts)."""
    searches = [s for s in trace["steps"] if s["kind"] == "search"]
    again = [dict(searches[0], query=f"{searches[0]['query']} {n}") for n in ("again", "once more")]
    steps = [*searches[:1], *again, *searches[1:], *(s for s in trace["steps"] if s["kind"] != "search")]
    return dict(trace, id=f"{trace['id']}-hops", steps=steps)


# the samples (each searching once, as step 1) and six of them searching three times
TRACES = SAMPLES + [_hops(t) for t in SAMPLES if any(s["kind"] == "search" for s in t["steps"])][:6]


def _times(run: dict[str, Any]) -> dict[str, datetime]:
    return {name: datetime.fromisoformat(run[name]) for name in ("start_time", "end_time")}


class Hit(BaseModel):
    """A search hit as a ``@traceable`` search tool may return it: a pydantic model, not a dict."""

    doc_id: str | None = None
    url: str | None = None
    title: str | None = None
    snippet: str | None = None


@dataclasses.dataclass
class Document:
    """LangChain's ``Document`` shape, as an object (what a LangChain retriever's run holds before it is posted)."""

    page_content: str
    metadata: dict[str, Any]
    type: str = "Document"


def _objects(outputs: dict[str, Any]) -> dict[str, Any]:
    """``outputs`` with each hit dict the object a target returns in process (``evaluate`` hands those over)."""
    return {key: [Document(**h) if "page_content" in h else Hit(**h) for h in value] if isinstance(value, list)
            else value for key, value in outputs.items()}  # fmt: skip


def _run_tree(runs: list[dict[str, Any]], *, objects: bool = False) -> Any:
    """The root ``RunTree`` with its child runs, made as ``@traceable`` makes them (``create_child``, then ``end``);
    ``objects``: the search runs' hits as the objects the target returned (``Hit`` models, ``Document`` objects)."""
    root, children = runs[0], runs[1:]
    tree = run_trees.RunTree(id=uuid.UUID(root["id"]), name=root["name"], run_type=root["run_type"],
                             inputs=root["inputs"], extra=root["extra"], project_name="search-agent",
                             reference_example_id=root["reference_example_id"], **_times(root))  # fmt: skip
    for child in children:
        times = _times(child)
        made = tree.create_child(child["name"], child["run_type"], run_id=uuid.UUID(child["id"]),
                                 inputs=child["inputs"], start_time=times["start_time"])  # fmt: skip
        made.end(outputs=_objects(child["outputs"]) if objects else child["outputs"], end_time=times["end_time"])
    tree.end(outputs=root["outputs"], end_time=_times(root)["end_time"])
    return tree


def _sdk_run(runs: list[dict[str, Any]]) -> Any:
    """The root ``schemas.Run`` as ``_load_traces_for_experiment`` returns it: children sorted on ``child_runs``."""
    root = schemas.Run(**runs[0])
    root.child_runs = sorted((schemas.Run(**child) for child in runs[1:]), key=lambda r: r.dotted_order)
    return root


def _said(results: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    present = [r for r in results if r["key"] != ts.ABSENT_KEY]
    absent = [r["comment"].splitlines() for r in results if r["key"] == ts.ABSENT_KEY]
    assert len(absent) <= 1 and all("score" not in r and "value" not in r for r in results if r["key"] == ts.ABSENT_KEY)
    values = {r["key"]: r["value"] if "value" in r else r["score"] for r in present}
    comments = {r["key"]: r["comment"] for r in present if r.get("comment") is not None}
    return values, comments, absent[0] if absent else []


@pytest.mark.parametrize("shape", ["run_tree", "run_tree_objects", "schemas_run"])
@pytest.mark.parametrize("experiment", [True, False], ids=["example-labels", "metadata-labels"])
def test_sdk_run_objects_score_as_score_scores_the_dict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                        shape: str, experiment: bool) -> None:  # fmt: skip
    monkeypatch.chdir(tmp_path)  # no stray tracescore.toml
    expected = cli_lines(tmp_path, TRACES)
    [evaluator] = ts.evaluators()
    kinds: set[tuple[str, str]] = set()
    for trace in TRACES:
        runs, example = run_tree(trace, PROJECT, experiment=experiment)
        kinds |= {(r["run_type"], r["name"]) for r in runs[1:]}
        run = _sdk_run(runs) if shape == "schemas_run" else _run_tree(runs, objects=shape == "run_tree_objects")
        assert len(run.child_runs) == len(runs) - 1 and not isinstance(run.child_runs[0], dict)
        values, comments, absent = _said(evaluator(run, schemas.Example(**example) if example else None)["results"])
        line = expected[trace["id"]]
        assert values == line["scores"], trace["id"]
        assert comments == (line.get("comments") or {}), trace["id"]
        assert absent == [f"{name}: {why}" for name, why in line["missing"].items()], trace["id"]
    # the fixture's shapes were all there: a LangChain retriever, a @traceable retriever, a search tool, fetches
    assert {"retriever", "tool"} == {kind for kind, _ in kinds}
    assert {"VectorStoreRetriever", "retrieve_docs", "web_search", "fetch_url"} <= {name for _, name in kinds}


def test_a_run_tree_child_inherits_the_roots_metadata_and_still_scores_alone() -> None:
    """``create_child`` copies the root's metadata (here its ``labels``) onto every child: the children's copies are
    not read as labels or roots of their own, so the tree scores once, as its root."""
    trace = TRACES[0]
    runs, _ = run_tree(trace, PROJECT, experiment=False)
    tree = _run_tree(runs)
    assert tree.child_runs[0].extra["metadata"]["labels"] == runs[0]["extra"]["metadata"]["labels"]
    record = ts.to_record(tree)
    assert record["root"]["id"] == runs[0]["id"] and [r["id"] for r in record["runs"]] == [r["id"] for r in runs[1:]]
    assert all(r["parent_run_id"] == runs[0]["id"] and r["trace_id"] == runs[0]["id"] for r in record["runs"])
