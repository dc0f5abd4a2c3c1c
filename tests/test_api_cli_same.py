"""``tracescore.score_traces`` and ``tracescore score FILE --out`` build from one recipe and score through one stage,
so they write byte-identical result lines on the same inputs (#29 acceptance 1): reviewer-entered labels, a lone
surrogate, broken lines, a judge stand-in (the real ``anthropic`` SDK against the loopback fake, on both paths)."""

from __future__ import annotations

import json
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

import tracescore
from tests.conftest import REPO
from tests.fakes.anthropic import FakeAnthropic
from tracescore.calibrate.labels import Label, add_labels
from tracescore.calibrate.required import LABEL
from tracescore.calibrate.sampling import Candidate, Item, Picked, Sample, item_id, record_sample
from tracescore.cli import main
from tracescore.errors import ConfigError
from tracescore.judge.anthropic import AnthropicJudge
from tracescore.store.db import Store

SAMPLES = REPO / "cookbook" / "data" / "traces.jsonl"
NOW = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)
LABELLED = "t-reviewed"


def _reviewed() -> dict[str, object]:
    """A trace with no label of its own: a reviewer enters its required doc ids (it came back)."""
    return {
        "id": LABELLED,
        "timestamp": "2026-11-01T10:00:00+00:00",
        "question": "How long is the return window?",
        "steps": [{"kind": "search", "tool": "web_search", "query": "return window",
                   "hits": [{"rank": 1, "doc_id": "policy-returns-v4", "url": "https://help.acme.com/returns"}]}],
        "answer": "You have 30 days.",
    }  # fmt: skip


def _lines(tmp_path: Path) -> list[bytes]:
    samples = SAMPLES.read_bytes().splitlines()[:6]
    surrogate_id = json.loads(samples[1]) | {"id": "t-\ud800"}
    surrogate_text = json.loads(samples[2]) | {"id": "t-meta", "metadata": {"note": "half a pair: \udc00"}}
    return [
        samples[0],
        json.dumps(_reviewed()).encode(),
        json.dumps(surrogate_id).encode(),  # a JSON "\ud800" escape: no file, store or platform can hold it
        b'{"id": "cut-short", "question": "why',  # a broken line: not JSON
        json.dumps(surrogate_text).encode(),  # a lone trailing surrogate the JSON decoder refuses
        b'{"id": "not-a-trace", "steps": "nope"}',  # JSON, but not a trace
        *samples[3:],
    ]


def _label(db: Path) -> None:
    """A reviewer's answer on a queued claim of ``LABELLED``, stored as ``calibrate`` stores it."""
    item = Item(item_id(LABELLED, 0, "You have 30 days."), LABELLED, 0, "You have 30 days.")
    with Store(db) as store:
        record_sample(store, Sample("s1", [Picked(Candidate(item, "run-1", "grounded/right", "supported", "m", "r"),
                                                  "random", 1.0)], {}), now=NOW)  # fmt: skip
        add_labels(store, [Label(item.item_id, LABEL, "policy-returns-v4", "ann", NOW)], now=NOW)


def test_the_api_and_the_cli_write_byte_identical_result_lines(tmp_path: Path) -> None:
    lines = _lines(tmp_path)
    traces = tmp_path / "traces.jsonl"
    traces.write_bytes(b"\n".join(lines) + b"\n")
    _label(tmp_path / "labelled.db")
    for name in ("cli", "api"):  # the same store on both paths, each its own copy (the judge cache fills as it runs)
        shutil.copy(tmp_path / "labelled.db", tmp_path / f"{name}.db")
    # one thread: which call first writes the fake's prompt cache (and so pays its creation) depends on timing
    (tmp_path / "tracescore.toml").write_text("[job]\njudge_concurrency = 1\n")

    with FakeAnthropic() as fake:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        args = ["score", str(traces), "--store", str(tmp_path / "cli.db"), "--out", str(tmp_path / "cli.jsonl"),
                "-q", "--config", str(tmp_path / "tracescore.toml")]  # fmt: skip
        ran = CliRunner().invoke(main, args, env=env)
        cli_calls = len(fake.messages())
    assert ran.exit_code == 1, ran.output  # 4 lines could not be scored: each is in the results with its reason
    with FakeAnthropic() as fake:
        judge = AnthropicJudge(api_key="test-key", base_url=fake.url)
        results = tracescore.score_traces(lines, judge=judge, store=tmp_path / "api.db")
        judge.close()
        api_calls = len(fake.messages())

    cli = (tmp_path / "cli.jsonl").read_bytes().splitlines()
    api = [r.encoded()[1].encode() for r in results]
    assert len(cli) == len(lines) and cli_calls >= 5 and api_calls == cli_calls
    assert api == cli
    by_id = {row["trace_id"]: row for row in map(json.loads, cli)}
    # what the API did not do before: the reviewer's label, the lone surrogates and the broken lines as on the CLI
    reviewed = by_id[LABELLED]
    assert reviewed["metadata"]["label_sources"]["required_doc_ids"]["source"] == "human label"
    assert reviewed["scores"]["retrieval.recall_at_5"] == 1.0
    assert "lone surrogate" in by_id["t-\\ud800"]["errors"][0] and not by_id["t-\\ud800"]["scores"]
    assert by_id["t-meta"]["errors"][0].startswith("line 5: not JSON") and not by_id["t-meta"]["scores"]
    cut = json.loads(cli[3])
    assert cut["trace_id"] is None and cut["errors"][0].startswith("line 4: truncated line")
    assert by_id["not-a-trace"]["errors"][0].startswith("line 6: ") and not by_id["not-a-trace"]["scores"]
    judged = [row for row in by_id.values() if row["scores"].get("grounding.rate") is not None]
    assert judged and all(row["judge"]["model"] == judge.model for row in judged)


def test_a_lone_surrogate_in_a_dicts_text_is_reported_on_its_trace_as_score_reports_it() -> None:
    """A dict can carry what no JSONL line can: a lone surrogate inside any text; the stage refuses it there too."""
    sample = json.loads(SAMPLES.read_bytes().splitlines()[0])
    bad, good = tracescore.score_traces([sample | {"id": "t-bad", "metadata": {"note": "\ud800"}}, sample])
    assert bad.errors == ["line 1 (t-bad): holds text that is not valid Unicode (a lone surrogate, such as a JSON"
                          " \\ud800 escape)"] and not bad.scores  # fmt: skip
    assert good.scores and not good.errors


def _paths(tmp_path: Path, extra: str = "") -> tuple[list[str], list[str]]:
    """``score`` and ``backfill`` of the same file, store and config (``extra`` TOML appended)."""
    (tmp_path / "t.jsonl").write_bytes(SAMPLES.read_bytes().splitlines()[0] + b"\n")
    config = tmp_path / "tracescore.toml"
    config.write_text(f'[source]\nkind = "jsonl"\npath = "t.jsonl"\n\n[job]\nstore = "{tmp_path / "s.db"}"\n{extra}')
    score = ["score", str(tmp_path / "t.jsonl"), "--store", str(tmp_path / "s.db"), "--config", str(config), "-q"]
    backfill = ["backfill", "--config", str(config), "--from", "2026-01-01", "--to", "2027-01-01", "-q"]
    return score, backfill


def _said(args: list[str], needle: str) -> tuple[int, list[str]]:
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}  # never reached
    ran = CliRunner().invoke(main, args, env=env)
    return ran.exit_code, [line for line in ran.output.splitlines() if needle in line]


def test_the_budget_refusal_reads_the_same_on_score_backfill_and_the_api(tmp_path: Path) -> None:
    score, backfill = _paths(tmp_path, '\n[scoring]\nmax_cost = 1.0\n\n[judge]\nmodel = "claude-sonnet-5-5"\n')
    said = [_said(args, "needs a price") for args in (score, backfill)]
    assert said[0][0] == said[1][0] == 2 and len(said[0][1]) == 1
    assert said[0][1] == said[1][1]  # one line, whichever command (the CLI's flag and the config key both named)
    judge = AnthropicJudge(model="claude-sonnet-5-5", api_key="test-key", base_url="http://127.0.0.1:9")
    with pytest.raises(ConfigError) as refused:
        tracescore.score_traces([], judge=judge, max_cost=1.0)
    judge.close()
    assert said[0][1] == [f"tracescore: {refused.value}"]


def test_a_missing_anthropic_sdk_is_said_the_same_on_score_and_backfill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    score, backfill = _paths(tmp_path)
    monkeypatch.setitem(sys.modules, "anthropic", None)  # type: ignore[arg-type]  # the SDK not installed
    said = [_said(args, "anthropic SDK") for args in (score, backfill)]
    assert said[0][0] == said[1][0] == 0
    assert said[0][1] == said[1][1] and len(said[0][1]) == 1 and said[0][1][0].startswith("warning: the judge needs")
