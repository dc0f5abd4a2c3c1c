"""``tracescore inspect``: the mapping report of one record, from a JSON export or a JSONL line."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.conftest import SAMPLES, SHARED_DATA
from tracescore.cli import main


def test_inspect_a_real_langfuse_export_shows_the_search_it_found() -> None:
    path = SHARED_DATA / "langfuse_traces" / "agno-2025-06-11.json"
    out = CliRunner().invoke(main, ["inspect", str(path), "--source", "langfuse", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert [s["tool"] for s in report["searches"]] == ["duckduckgo_search"]
    assert report["error"] is None


def test_inspect_a_jsonl_line_and_a_record_that_cannot_be_adapted(tmp_path: Path) -> None:
    out = CliRunner().invoke(main, ["inspect", str(SAMPLES), "--line", "2"])
    assert out.exit_code == 0, out.output
    assert "search" in out.output.lower()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "x", "steps": [{"kind": "teleport"}]}\n')
    failed = CliRunner().invoke(main, ["inspect", str(bad)])
    assert failed.exit_code == 1 and "teleport" in failed.output
    past = CliRunner().invoke(main, ["inspect", str(bad), "--line", "3"])
    assert past.exit_code == 2 and "past the end" in past.output
    unknown = CliRunner().invoke(main, ["inspect", str(bad), "--source", "nope"])
    assert unknown.exit_code == 2 and "unknown source 'nope'" in unknown.output
