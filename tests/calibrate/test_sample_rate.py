"""A calibration of a judge whose runs judged a sample (#32, item 1): its items come from judged traces only, it
records ``judge_sample`` (the rate, and how many items came from hash-chosen and from flagged traces), and the
report's agreement section and the gate's judge line show it. The run is a real ``tracescore score`` with the real
``anthropic`` SDK against the loopback fake."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

from tests.calibrate.test_labels import _reviewer
from tests.engine.test_judge_sample import _traces
from tests.fakes.anthropic import FakeAnthropic
from tracescore.calibrate.labels import VERDICT_LABEL, add_labels, latest_calibration, measure_and_record
from tracescore.calibrate.sampling import candidates, record_sample, sample
from tracescore.calibrate.trust import judge_is_trusted
from tracescore.cli import main
from tracescore.report.render.agreement import figure_lines
from tracescore.store.db import Store

NOW = datetime(2026, 11, 30, 20, 0, tzinfo=UTC)
MODEL, RUBRIC = "claude-sonnet-4-6", "grounding-1"


def test_a_calibration_over_a_sampled_run_records_the_rate_and_the_report_and_gate_show_it(tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in _traces(200)), encoding="utf-8")
    (tmp_path / "tracescore.toml").write_text("[scoring]\njudge_sample = 0.25\n", encoding="utf-8")
    with FakeAnthropic() as fake:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        args = ["score", str(path), "--store", str(tmp_path / "ts.db"), "-q",
                "--config", str(tmp_path / "tracescore.toml")]
        result = CliRunner().invoke(main, args, env=env)
        assert result.exit_code == 0, result.output
    with Store(tmp_path / "ts.db") as store:
        run_id = store.runs()[-1]["id"]
        lines = {r["trace_id"]: r for r in store.results(run_id)}
        pool = candidates(store, run_id)
        # only judged traces give claims to label, each tagged with why it was judged
        assert pool and all(lines[c.item.trace_id]["judge"]["sample"] == c.judge_sample for c in pool)
        by = {c.judge_sample["by"] for c in pool if c.judge_sample}
        assert by == {"hash", "flagged"} and all(c.judge_sample for c in pool)
        drawn = sample(pool, n=60, seed=4)
        record_sample(store, drawn, now=NOW)
        items = {p.candidate.item.item_id: (p.slice, p.candidate.verdict) for p in drawn.picked}
        add_labels(store, _reviewer(items, "ann", 1, 0.9), now=NOW)
        measure_and_record(store, judge_model=MODEL, rubric_version=RUBRIC, label=VERDICT_LABEL, now=NOW)
        calibration = latest_calibration(store, MODEL, RUBRIC)
    assert calibration is not None
    picked = [p.candidate.judge_sample["by"] for p in drawn.picked]  # type: ignore[index]
    recorded = calibration.detail["judge_sample"]
    assert recorded == {"rates": [0.25], "items": {"hash": picked.count("hash"), "flagged": picked.count("flagged"),
                                                   "every_trace": 0}}  # fmt: skip
    assert recorded["items"]["hash"] and recorded["items"]["flagged"]
    note = f"judge_sample 0.25: {picked.count('hash')} hash-chosen + {picked.count('flagged')} flagged items"
    assert f"items from {note}" in figure_lines(calibration.detail)  # the report's agreement section
    assert note in judge_is_trusted(calibration)[1]  # the line the gate gives beside a judged rule
