"""A reviewer can enter alternatives (``a|b``) as a required doc id (#34): they become a group of the label."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.calibrate.test_required import RECALL, _lines, _queue_and_label, _trace
from tracescore.calibrate.required import apply_required, human_required, parse_required
from tracescore.cli import main
from tracescore.store.db import Store
from tracescore.trace import Trace


def test_parse_reads_a_pipe_as_alternatives_normalised_and_deduplicated() -> None:
    got = parse_required("faq-returns|HTTPS://Blog.ACME.com/holiday-returns/?utm_source=x, shipping-v2 b|c c|b a|a")
    assert got == [["faq-returns", "https://blog.acme.com/holiday-returns"], "shipping-v2", ["b", "c"], "a"]
    assert parse_required("x| ,y") == ["x", "y"]  # an alternative with one member is a plain id


def test_an_entered_group_is_applied_and_reported_never_retrieved_only_when_no_member_came_back(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        _queue_and_label(store, "t1", "faq-returns|https://blog.acme.com/holiday-returns, faq-x|faq-y")
        human = human_required(store)
    trace = apply_required(Trace.model_validate(_trace("t1")), human)
    assert trace.labels.required_doc_ids == [
        ["faq-returns", "https://blog.acme.com/holiday-returns"],
        ["faq-x", "faq-y"],
    ]
    assert trace.metadata["label_sources"]["required_doc_ids"]["never_retrieved"] == [["faq-x", "faq-y"]]


def test_the_next_run_scores_recall_over_the_entered_groups(tmp_path: Path) -> None:
    traces = tmp_path / "t.jsonl"
    traces.write_text(json.dumps(_trace("t1")) + "\n")
    db, env = tmp_path / "ts.db", {"ANTHROPIC_API_KEY": None}
    with Store(db) as store:
        _queue_and_label(store, "t1", "missing-doc|https://BLOG.acme.com/holiday-returns/, policy-x")
    result = CliRunner(env=env).invoke(main, ["score", str(traces), "--store", str(db), "--out", str(tmp_path / "o")])
    assert result.exit_code == 0, result.output
    line = _lines(tmp_path / "o")["t1"]
    assert line["scores"][RECALL] == 0.5  # type: ignore[index]  # the blog post satisfies group 1; policy-x missing
    assert line["comments"][RECALL] == "missing required docs in top 5: policy-x"  # type: ignore[index]
