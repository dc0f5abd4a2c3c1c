"""#33 item 5: ``grounding.unsupported_numbers`` and ``citation.stale_rate`` are gated like any score, through the CLI
(``tracescore score`` then ``tracescore gate --max …``, and the ``[gate.max]`` table), on traces scored for real."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner, Result

from tracescore.cli import main

PASSED, RULE_FAILED = 0, 1
# t1: states 40 where the page says 41 (1 unsupported), cites a page published 2024-03-03 (stale at 2026-05-17);
# t2: states 1998 as the page does (0 unsupported), cites a page updated 2026-04-01 (fresh). Means: 0.5 and 0.5.
TRACES = [
    {"id": "t1", "timestamp": "2026-05-17T12:00:00+00:00", "question": "How many branches does Acme run?",
     "steps": [{"kind": "search", "query": "acme branches", "hits": [{"url": "https://a.example/stores"}]},
               {"kind": "fetch", "url": "https://a.example/stores",
                "text": "Published: March 3, 2024\nAcme runs 41 branches."}],
     "answer": "FINAL ANSWER:\nIt runs 40 branches [1].\n\nSources:\n[1] https://a.example/stores"},
    {"id": "t2", "timestamp": "2026-05-17T12:00:00+00:00", "question": "When did Acme open?",
     "steps": [{"kind": "search", "query": "acme opened", "hits": [{"url": "https://b.example/history"}]},
               {"kind": "fetch", "url": "https://b.example/history",
                "text": "Last updated on 1 April 2026\nAcme opened in 1998."}],
     "answer": "FINAL ANSWER:\nIt opened in 1998 [1].\n\nSources:\n[1] https://b.example/history"},
]  # fmt: skip


def _scored(tmp_path: Path) -> Path:
    traces, out = tmp_path / "traces.jsonl", tmp_path / "results.jsonl"
    traces.write_text("".join(json.dumps(t) + "\n" for t in TRACES))
    run = CliRunner().invoke(main, ["score", str(traces), "--out", str(out), "--store", str(tmp_path / "s.db"), "-q"])
    assert run.exit_code == 0, run.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["scores"]["grounding.unsupported_numbers"] for line in lines] == [1.0, 0.0]
    assert [line["scores"]["citation.stale_rate"] for line in lines] == [1.0, 0.0]
    return out


def _gate(tmp_path: Path, results: Path, *args: str) -> Result:
    return CliRunner().invoke(main, ["gate", str(results), "--store", str(tmp_path / "s.db"), *args])


def test_max_unsupported_numbers_zero_fails_on_one_unsupported_number(tmp_path: Path) -> None:
    results = _scored(tmp_path)
    failed = _gate(tmp_path, results, "--max", "grounding.unsupported_numbers=0")
    assert failed.exit_code == RULE_FAILED, failed.output
    assert "grounding.unsupported_numbers" in failed.output and "0.5" in failed.output
    passed = _gate(tmp_path, results, "--max", "grounding.unsupported_numbers=0.5")
    assert passed.exit_code == PASSED, passed.output


def test_max_stale_rate_on_the_command_line_and_in_the_gate_table(tmp_path: Path) -> None:
    results = _scored(tmp_path)
    assert _gate(tmp_path, results, "--max", "citation.stale_rate=0.5").exit_code == PASSED
    failed = _gate(tmp_path, results, "--max", "citation.stale_rate=0.4")
    assert failed.exit_code == RULE_FAILED and "citation.stale_rate" in failed.output, failed.output
    config = tmp_path / "tracescore.toml"
    config.write_text('[gate.max]\n"citation.stale_rate" = 0.25\n"grounding.unsupported_numbers" = 0\n')
    table = _gate(tmp_path, results, "--config", str(config))
    assert table.exit_code == RULE_FAILED, table.output
    assert "citation.stale_rate" in table.output and "grounding.unsupported_numbers" in table.output
