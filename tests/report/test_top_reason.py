"""The top reason absent counts the reasons one declared template writes together: a reason that names each trace's
own URL ("no cited source the agent fetched has a findable date (<url>)") was split into one count per URL, so a
rarer fixed reason was shown as the top one (the README's first command showed "answer cites no URL or doc id", 6
traces, for `citation.stale_rate`, where 24 of its 38 absences were the undated sources)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from tracescore.catalog import Reasons
from tracescore.cli import main
from tracescore.report.tally import top_reason

REPO = Path(__file__).resolve().parents[2]


def test_one_templates_texts_count_together_and_show_as_the_template() -> None:
    fixed = Reasons.NO_JUDGE.text
    stale = Reasons.STALE_LABEL
    assert top_reason({}) == ""
    two = {stale.format(pairs="a→b"): 4, stale.format(pairs="c→d"): 3}
    assert top_reason({fixed: 6, **two}) == "stale label; update the label"  # #45: no <pairs> placeholder
    assert top_reason({fixed: 8, stale.format(pairs="a→b"): 4, stale.format(pairs="c→d"): 3}) == fixed
    assert top_reason({stale.format(pairs="a→b"): 4}) == "stale label: a→b; update the label"  # one text: itself
    assert top_reason({"a reason no scorer declares": 2, fixed: 1}) == "a reason no scorer declares"


def test_the_score_summary_names_the_commonest_reason_of_the_sample_traces(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    result = CliRunner(env={"ANTHROPIC_API_KEY": None, "COLUMNS": "240"}).invoke(
        main, ["score", str(REPO / "cookbook" / "data" / "traces.jsonl"), "--out", str(out),
               "--store", str(tmp_path / "s.db")])  # fmt: skip
    assert result.exit_code == 0, result.output
    reasons: dict[str, int] = {}
    for line in map(json.loads, out.read_text(encoding="utf-8").splitlines()):
        if (reason := line["missing"].get("citation.stale_rate")) is not None:
            reasons[reason] = reasons.get(reason, 0) + 1
    undated = sum(n for r, n in reasons.items() if "has a findable date (" in r)
    assert undated > max(n for r, n in reasons.items() if "has a findable date (" not in r)  # the data's premise
    # piped (100 columns) the reasons go under the table: "expected_answer_contains" beside it would be cut (#45)
    shown = next(line for line in result.stdout.splitlines() if line.startswith("  citation.stale_rate: "))
    shown = shown.removeprefix("  citation.stale_rate: ")
    expected = r"no cited source the agent fetched has a findable date"
    assert re.fullmatch(expected, shown.replace("- ", "-")), shown
