"""Issue #35 item 5: a misspelt ``--case-key`` or ``--group-by`` is an error naming the closest fields that exist; a
field only some result lines hold is a warning with the count."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.conftest import REPO
from tracescore.cli import main

SAMPLES = REPO / "cookbook" / "data" / "traces.jsonl"


def _cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """The samples' results, each with a metadata.case_id, and metadata.provider dropped from every fifth line."""
    out = tmp_path / "r.jsonl"
    scored = _cli("score", str(SAMPLES), "--out", str(out), "--store", str(tmp_path / "s.db"), "-q", "--no-judge")
    assert scored.exit_code == 0, scored.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    for i, line in enumerate(lines):
        line["metadata"]["case_id"] = f"case-{i}"
        if i % 5 == 0:
            del line["metadata"]["provider"]
    out.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return out


@pytest.mark.parametrize(
    ("args", "flag", "key", "suggested"),
    [
        (["report", "--group-by", "metadata.providr"], "--group-by", "metadata.providr", "metadata.provider"),
        (["report", "--group-by", "providr"], "--group-by", "providr", "metadata.provider"),
        (["report", "--group-by", "metadata.provider", "--case-key", "metadata.caseid"], "--case-key",
         "metadata.caseid", "metadata.case_id"),
        (["gate", "--case-key", "metadata.caseid"], "--case-key", "metadata.caseid", "metadata.case_id"),
    ],
)
def test_a_key_no_result_line_holds_is_an_error_naming_the_closest(
    results: Path, args: list[str], flag: str, key: str, suggested: str
) -> None:
    command, *options = args
    result = _cli(command, str(results), *options, "--baseline" if command == "gate" else "--format",
                  str(results) if command == "gate" else "json")  # fmt: skip
    assert result.exit_code == 2, result.output
    assert result.stderr.strip().splitlines() == [
        f"tracescore: {flag} {key!r}: no result line of {results} holds it (38 read); did you mean {suggested}?"
    ]
    assert result.stdout == ""  # no report, no gate verdict


def test_a_key_that_matches_nothing_lists_the_fields_that_exist(results: Path, tmp_path: Path) -> None:
    (tmp_path / "tracescore.toml").write_text('[gate]\ncase_key = "metadata.question_id"\n')
    result = _cli("gate", str(results), "--config", str(tmp_path / "tracescore.toml"))
    assert result.exit_code == 2
    assert "--case-key 'metadata.question_id': no result line" in result.stderr
    assert "the fields that exist: metadata.case_id, metadata.environment" in result.stderr


def test_a_key_only_some_lines_hold_is_a_warning_with_the_count(results: Path) -> None:
    report = _cli("report", str(results), "--group-by", "metadata.provider", "--format", "json")
    assert report.exit_code == 0
    assert (
        f"warning: --group-by 'metadata.provider' is missing from 8 of 38 result lines of {results};"
        " those are grouped as (none)"
    ) in report.stderr
    assert json.loads(report.stdout)["groups"]
    gate = _cli("gate", str(results), "--baseline", str(results), "--case-key", "metadata.case_id")
    assert gate.exit_code == 1 and "`case-35`" in gate.stdout  # a verdict by case (the samples have unread citations)
    assert "--case-key" not in gate.stderr  # every line holds it
