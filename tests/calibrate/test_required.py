"""Reviewer-entered required doc ids become the trace's retrieval label on later runs and backfills (#12 item 8)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

from click.testing import CliRunner

from tracescore.calibrate.labels import Label, add_labels
from tracescore.calibrate.required import LABEL, apply_required, human_required, parse_required
from tracescore.calibrate.sampling import Candidate, Item, Picked, Sample, item_id, record_sample
from tracescore.cli import main
from tracescore.store.db import Store
from tracescore.trace import Trace

NOW = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)
RECALL = "retrieval.recall_at_5"


def _trace(tid: str, **extra: object) -> dict[str, object]:
    return {
        "id": tid,
        "timestamp": "2026-11-01T10:00:00+00:00",
        "question": "How long is the return window?",
        "steps": [
            {
                "kind": "search",
                "tool": "web_search",
                "query": "return window",
                "hits": [
                    {"rank": 1, "doc_id": "policy-returns-v4", "url": "https://help.acme.com/returns"},
                    {"rank": 2, "url": "https://blog.acme.com/holiday-returns"},
                ],
            }
        ],
        "answer": "You have 30 days.",
        **extra,
    }


def _queue_and_label(store: Store, trace_id: str, value: str, *, author: str = "ann", minutes: int = 0) -> str:
    """Queue one claim of ``trace_id`` (through the real sampling record) and store a reviewer's answer on it."""
    item = Item(item_id(trace_id, 0, "You have 30 days."), trace_id, 0, "You have 30 days.")
    candidate = Candidate(item, "run-1", "grounded/right", "supported", "m", "r")
    record_sample(store, Sample("s1", [Picked(candidate, "random", 1.0)], {}), now=NOW)
    add_labels(store, [Label(item.item_id, LABEL, value, author, NOW + timedelta(minutes=minutes))], now=NOW)
    return item.item_id


def test_parse_normalises_urls_like_retrieval_and_reads_none_as_a_refusal() -> None:
    assert parse_required("policy-returns-v4, HTTPS://Blog.ACME.com/holiday-returns/?utm_source=x#top") == [
        "policy-returns-v4",
        "https://blog.acme.com/holiday-returns",
    ]
    assert parse_required("a a;b\nc") == ["a", "b", "c"]
    assert parse_required("none") == []


def test_human_label_applies_and_a_never_retrieved_id_is_reported_and_kept(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        _queue_and_label(store, "t1", "policy-returns-v4 policy-returns-v9")
        human = human_required(store)
    trace = apply_required(Trace.model_validate(_trace("t1")), human)
    assert trace.labels.required_doc_ids == ["policy-returns-v4", "policy-returns-v9"]
    note = trace.metadata["label_sources"]["required_doc_ids"]
    assert note["source"] == "human label" and note["author"] == "ann"
    assert note["never_retrieved"] == ["policy-returns-v9"]  # a real miss: reported, and still required
    untouched = Trace.model_validate(_trace("t2"))
    assert apply_required(untouched, human) is untouched


def test_precedence_dataset_item_over_human_label_over_trace_metadata(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        _queue_and_label(store, "t1", "policy-returns-v4")
        _queue_and_label(store, "t1", "https://blog.acme.com/holiday-returns", author="bob", minutes=5)  # latest wins
        human = human_required(store)
    from_metadata = Trace.model_validate(_trace("t1", labels={"required_doc_ids": ["stale-doc"]}))
    applied = apply_required(from_metadata, human)
    assert applied.labels.required_doc_ids == ["https://blog.acme.com/holiday-returns"]
    assert applied.metadata["label_sources"]["required_doc_ids"]["replaced"] == ["stale-doc"]
    from_dataset = Trace.model_validate(
        _trace("t1", labels={"required_doc_ids": ["gold-doc"]}, metadata={"dataset_item_id": "item-7"})
    )
    kept = apply_required(from_dataset, human)
    assert kept.labels.required_doc_ids == ["gold-doc"]
    note = kept.metadata["label_sources"]["required_doc_ids"]
    assert note["source"] == "dataset item" and note["human_ignored"] == ["https://blog.acme.com/holiday-returns"]
    assert note["never_retrieved"] == ["gold-doc"]
    langsmith_example = Trace.model_validate(
        _trace("t1", labels={"required_doc_ids": ["gold-doc"]}, metadata={"langsmith": {"reference_example_id": "e"}})
    )
    assert apply_required(langsmith_example, human).labels.required_doc_ids == ["gold-doc"]
    # a dataset trace with no label of its own takes the human's
    bare = Trace.model_validate(_trace("t1", metadata={"dataset_item_id": "item-7"}))
    assert apply_required(bare, human).labels.required_doc_ids == ["https://blog.acme.com/holiday-returns"]


def _lines(path: Path) -> dict[str, dict[str, object]]:
    return {row["trace_id"]: row for row in map(json.loads, path.read_text().splitlines())}


def test_a_human_entered_required_doc_id_makes_recall_present_on_the_next_run(tmp_path: Path) -> None:
    """Acceptance 4 (JSONL + store): `score`, a reviewer enters the ids, then `score` and `backfill` see them."""
    traces = tmp_path / "t.jsonl"
    traces.write_text("\n".join(json.dumps(_trace(t)) for t in ("t1", "t2")) + "\n")
    db = tmp_path / "ts.db"
    env = {"ANTHROPIC_API_KEY": None}
    first = CliRunner(env=env).invoke(main, ["score", str(traces), "--store", str(db), "--out", str(tmp_path / "1")])
    assert first.exit_code == 0, first.output
    before = _lines(tmp_path / "1")
    assert RECALL not in before["t1"]["scores"]  # type: ignore[operator]
    assert "no required_doc_ids label" in json.dumps(before["t1"]["missing"])

    with Store(db) as store:
        _queue_and_label(store, "t1", "policy-returns-v4, https://BLOG.acme.com/holiday-returns/, policy-x")

    again = CliRunner(env=env).invoke(main, ["score", str(traces), "--store", str(db), "--out", str(tmp_path / "2")])
    assert again.exit_code == 0, again.output
    after = _lines(tmp_path / "2")
    assert after["t1"]["scores"][RECALL] == 2 / 3  # type: ignore[index]
    assert "policy-x" in after["t1"]["comments"][RECALL]  # type: ignore[index]
    assert after["t1"]["metadata"]["label_sources"]["required_doc_ids"]["never_retrieved"] == ["policy-x"]  # type: ignore[index]
    assert RECALL not in after["t2"]["scores"]  # type: ignore[operator]  # no label entered for t2

    config = tmp_path / "tracescore.toml"
    config.write_text(f'[source]\nkind = "jsonl"\npath = "t.jsonl"\n\n[job]\nstore = "{db}"\n')
    args = ["backfill", "--config", str(config), "--from", "2026-11-01", "--to", "2026-11-02", "-q"]
    backfill = CliRunner(env=env).invoke(main, args)
    assert backfill.exit_code == 0, backfill.output
    with Store(db) as store:
        run = store.runs()[-1]
        assert run["command"] == "backfill"
        results = {r["trace_id"]: r for r in store.results(run["id"])}
    assert results["t1"]["scores"][RECALL] == 2 / 3
    assert RECALL not in results["t2"]["scores"]
