"""Issue 35.4: one vocabulary per label, its synonyms accepted everywhere: ``calibrate agreement --label
grounding.grounded`` reads yes/no (as ``pull`` does) into the label's one stored form, true/false."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tracescore.cli.main import main


def _sheet(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(["item_id", "human", "judge"])
        writer.writerows(rows)
    return path


def _agreement(sheet: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["calibrate", "agreement", str(sheet), *args])
    return result.exit_code, result.output


@pytest.mark.parametrize("label", ["grounding.grounded", "answer.correct"])
def test_a_yes_no_label_takes_yes_no_in_calibrate_agreement_as_pull_does(tmp_path: Path, label: str) -> None:
    words = [("yes", "yes"), ("no", "yes"), ("Yes", "no"), ("no", "no"), ("y", "n"), ("1", "1")]
    canonical = {"yes": "true", "y": "true", "1": "true", "no": "false", "n": "false"}
    yes_no = _sheet(tmp_path / "yes.csv", [(f"i{i}", h, j) for i, (h, j) in enumerate(words)])
    true_false = _sheet(
        tmp_path / "true.csv", [(f"i{i}", canonical[h.lower()], canonical[j]) for i, (h, j) in enumerate(words)]
    )
    code, out = _agreement(yes_no, "--label", label, "--format", "json")
    assert code == 0, out
    figures = json.loads(out)
    assert figures["categories"] == ["true", "false"] and figures["n"] == len(words) and figures["errors"] == []
    assert figures == json.loads(_agreement(true_false, "--label", label, "--format", "json")[1])
    bad = _sheet(tmp_path / "bad.csv", [("i0", "yes", "yes"), ("i1", "maybe", "no"), ("i2", "no", "no")])
    code, out = _agreement(bad, "--label", label, "--format", "json")
    assert code == 2 and "['maybe']" in out and "['true', 'false']" in out and "--label" in out
