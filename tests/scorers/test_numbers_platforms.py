"""#33 acceptance 3: without a judge, the bundled sample traces' report has a grounding section (the numbers scores),
and the numbers scores of each sample are the same — value and comment — read from the JSONL file, from Langfuse and
from LangSmith (each sample stored in the loopback fakes and scored through the real SDKs)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import SAMPLES, load_samples, seed
from tests.test_both_platforms import WINDOW, _langfuse_trace
from tracescore.cli import main

# the names as written (not imported from the catalog), so on a checkout without them the test fails, not errors
GROUNDING_UNSUPPORTED_NUMBERS = "grounding.unsupported_numbers"
GROUNDING_NUMBERS_CHECKED = "grounding.numbers_checked"
NAMES = (GROUNDING_UNSUPPORTED_NUMBERS, GROUNDING_NUMBERS_CHECKED)


def _jsonl(tmp_path: Path) -> tuple[str, dict[str, dict[str, tuple[float, str | None]]]]:
    out = tmp_path / "results.jsonl"
    run = CliRunner().invoke(main, ["score", str(SAMPLES), "--out", str(out), "--store", "jsonl.db"], env={})
    assert run.exit_code == 0, run.output
    got: dict[str, dict[str, tuple[float, str | None]]] = {}
    for line in out.read_text().splitlines():
        row = json.loads(line)
        got[row["trace_id"]] = {n: (row["scores"][n], row.get("comments", {}).get(n)) for n in NAMES
                                if n in row["scores"]}  # fmt: skip
    return run.output, got


def test_the_sample_report_has_a_grounding_section_without_a_judge(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no stray tracescore.toml, no key
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    report, scores = _jsonl(tmp_path)
    rows = {m.group(1): int(m.group(2)) for m in
            re.finditer(r"│ grounding\s+│ (grounding\.\w+)\s*│\s*(\d+) │", report)}  # fmt: skip
    assert rows[GROUNDING_NUMBERS_CHECKED] == rows[GROUNDING_UNSUPPORTED_NUMBERS] == 30, report
    assert rows["grounding.rate"] == 0  # the judge's scores stay absent without one
    assert sum(1 for s in scores.values() if s) == 30
    # a sample whose answer states a number the evidence never does is named in the comment
    flagged = [s[GROUNDING_UNSUPPORTED_NUMBERS] for s in scores.values() if s and s[GROUNDING_UNSUPPORTED_NUMBERS][0]]
    assert flagged and all(comment and "not in any evidence" in comment for _, comment in flagged)


def test_the_numbers_scores_are_the_same_from_jsonl_langfuse_and_langsmith(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    samples: list[dict[str, Any]] = load_samples()
    _, from_jsonl = _jsonl(tmp_path)
    with FakeLangfuse() as langfuse, FakeLangSmith() as langsmith:
        for sample in samples:
            langfuse.add_trace(*_langfuse_trace(sample))
        seed(langsmith, samples)
        lf = CliRunner().invoke(main, ["score", "--source", "langfuse", *WINDOW, "--store", "lf.db", "-q"],
                                env=env_for(langfuse))
        ls = CliRunner().invoke(main, ["score", "--source", "langsmith", "--project", "search-agent", *WINDOW,
                                       "--store", "ls.db", "-q"],
                                env={"LANGSMITH_API_KEY": "k", "LANGSMITH_ENDPOINT": langsmith.url})
        assert lf.exit_code == 0, lf.output
        assert ls.exit_code == 0, ls.output
        from_langfuse: dict[str, dict[str, tuple[float, str | None]]] = {s["id"]: {} for s in samples}
        for s in langfuse.scores.values():
            if s["name"] in NAMES:
                from_langfuse[s["traceId"]][s["name"]] = (s["value"], s.get("comment"))
        source_trace = {r["id"]: r["extra"]["metadata"]["source_trace"] for r in langsmith.runs
                        if r["parent_run_id"] is None}  # fmt: skip
        from_langsmith: dict[str, dict[str, tuple[float, str | None]]] = {s["id"]: {} for s in samples}
        for f in langsmith.feedback.values():
            if f["key"] in NAMES:  # a feedback with no comment of its own says its value (the LangSmith sink's rule)
                said = None if f.get("comment") == f"{f['key']} = {f['score']:g}" else f.get("comment")
                from_langsmith[source_trace[f["run_id"]]][f["key"]] = (f["score"], said)
    assert sum(1 for s in from_jsonl.values() if s) == 30
    assert from_langfuse == from_jsonl
    assert from_langsmith == from_jsonl
