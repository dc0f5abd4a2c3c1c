"""The report's agreement section: per judge × rubric × label figures, confusion matrix, PARTIAL, in every format."""

from __future__ import annotations

import html
import io
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from tests.report.calibration import MODEL, RUBRIC, calibrated_store
from tracescore.calibrate.labels import VERDICT_LABEL, Calibration
from tracescore.cli import main
from tracescore.report.agreement import agreement_section, agreement_to_json
from tracescore.report.render import render_html, render_markdown, render_report_terminal
from tracescore.report.render.agreement import agreement_html, agreement_markdown, render_agreement_terminal
from tracescore.report.summary import build_report
from tracescore.store.db import Store

UNMEASURED = ("claude-haiku-4-5", RUBRIC)


@pytest.fixture
def strong(tmp_path: Path) -> tuple[Store, Calibration]:
    return calibrated_store(tmp_path / "strong.db", 0.9)


@pytest.fixture
def weak(tmp_path: Path) -> tuple[Store, Calibration]:
    return calibrated_store(tmp_path / "weak.db", 0.45)


class _Tables(HTMLParser):
    """The confusion-matrix tables of a page: rows of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._in = False
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table" and ("class", "confusion") in attrs:
            self._in = True
            self.tables.append([])
        elif self._in and tag == "tr":
            self.tables[-1].append([])
        elif self._in and tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in = False
        elif self._in and tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def test_section_lists_the_results_judge_first_and_an_unmeasured_judge_visibly(
    strong: tuple[Store, Calibration],
) -> None:
    store, cal = strong
    section = agreement_section(store, {(MODEL, RUBRIC), UNMEASURED})
    first, *rest = section.entries
    assert (first.judge_model, first.rubric_version, first.label, first.used) == (MODEL, RUBRIC, VERDICT_LABEL, True)
    assert first.calibration is not None and first.calibration.calibration_id == cal.calibration_id
    assert first.partial is not None and first.partial[0] is True
    unmeasured = next(e for e in rest if e.judge_model == UNMEASURED[0])
    assert unmeasured.calibration is None and unmeasured.used
    assert agreement_section(store).entries[0].used is False  # no results given: nothing marked
    data = agreement_to_json(section)
    assert data[0]["figures"]["n"] == cal.n and data[0]["partial_above_chance"]["value"] is True
    assert next(d for d in data if d["judge_model"] == UNMEASURED[0])["calibration"] is None


def test_markdown_shows_every_figure_and_the_confusion_matrix(strong: tuple[Store, Calibration]) -> None:
    store, cal = strong
    text = "\n".join(agreement_markdown(agreement_section(store, {(MODEL, RUBRIC), UNMEASURED})))
    f = cal.detail
    assert f"n = {cal.n} labelled items" in text
    raw = f["raw"]
    assert f"raw agreement {raw['value']:.2f} (95% CI {raw['interval'][0]:.2f}–{raw['interval'][1]:.2f})" in text
    k = f["kappa"]
    assert f"linear-weighted kappa {k['value']:.2f} (95% CI {k['interval'][0]:.2f}–{k['interval'][1]:.2f})" in text
    assert "unweighted kappa" in text and "AUROC" in text
    assert "human–human ceiling: no item labelled by two reviewers" in text
    assert "| human \\ judge | supported | partial | unsupported | contradicted |" in text
    for human, row in zip(f["categories"], f["confusion"], strict=True):
        assert f"| {human} | " + " | ".join(map(str, row)) + " |" in text
    for c in f["categories"]:
        p, r = f["precision"][c], f["recall"][c]
        assert re.search(
            rf"\| {c} \| {f['support'][c]} \| {'—' if p is None else f'{p:.2f}'} \| "
            rf"{'—' if r is None else f'{r:.2f}'} \|",
            text,
        )
    assert "never calibrated against human labels" in text  # the unmeasured judge
    assert "PARTIAL not above chance" not in text


def test_partial_not_above_chance_is_said_when_its_interval_includes_zero(weak: tuple[Store, Calibration]) -> None:
    store, cal = weak
    low, high = cal.detail["per_class_kappa"]["partial"]["interval"]
    assert low <= 0 <= high  # the input that must trigger it
    section = agreement_section(store, {(MODEL, RUBRIC)})
    assert "**PARTIAL not above chance:" in "\n".join(agreement_markdown(section))
    assert 'merge_partial = "contradicted"' in html.unescape(agreement_html(section))
    console = Console(file=io.StringIO(), width=200)
    render_agreement_terminal(section, console)
    assert "PARTIAL not above chance" in console.file.getvalue()  # type: ignore[attr-defined]


def test_html_confusion_matrix_is_a_table_of_the_stored_counts(strong: tuple[Store, Calibration]) -> None:
    store, cal = strong
    page = render_html(build_report([]), agreement=agreement_section(store, {(MODEL, RUBRIC)}))
    parser = _Tables()
    parser.feed(page)
    (table,) = parser.tables
    header, *rows = table
    assert header == ["human \\ judge", *cal.detail["categories"]]
    assert [[int(v) for v in row[1:]] for row in rows] == cal.detail["confusion"]
    assert sum(int(v) for row in rows for v in row[1:]) == cal.n


def test_terminal_and_report_without_a_section_are_unchanged(strong: tuple[Store, Calibration]) -> None:
    store, _ = strong
    report = build_report([])
    with_section = Console(file=io.StringIO(), width=200)
    render_report_terminal(report, with_section, agreement=agreement_section(store, {(MODEL, RUBRIC)}))
    out = with_section.file.getvalue()  # type: ignore[attr-defined]
    assert "Judge agreement with human labels" in out and "linear-weighted kappa" in out
    assert "confusion (rows: human, columns: judge)" in out
    plain = Console(file=io.StringIO(), width=200)
    render_report_terminal(report, plain)
    assert "Judge agreement" not in plain.file.getvalue()  # type: ignore[attr-defined]
    assert "Judge agreement" not in render_markdown(report)


def test_cli_report_reads_the_calibrations_from_the_store(tmp_path: Path, strong: tuple[Store, Calibration]) -> None:
    store, cal = strong
    store.finish_run(store.runs()[-1]["id"], {})
    db = str(store.path)
    md = CliRunner().invoke(main, ["report", "run:latest", "--store", db, "--format", "markdown"])
    assert md.exit_code == 0, md.output
    assert "### Judge agreement with human labels" in md.output and "judge of these results" in md.output
    js = CliRunner().invoke(main, ["report", "run:latest", "--store", db, "--format", "json"])
    (entry,) = json.loads(js.output)["agreement"]
    assert entry["calibration"]["calibration_id"] == cal.calibration_id and entry["used_by_results"]
    lines = tmp_path / "r.jsonl"
    lines.write_text(json.dumps({"trace_id": "x", "scores": {"retrieval.retrieved_any": True}}) + "\n")
    bare = CliRunner().invoke(
        main, ["report", str(lines), "--store", str(tmp_path / "none.db"), "--format", "markdown"]
    )
    assert bare.exit_code == 0 and "Judge agreement" not in bare.output  # no store: no section
