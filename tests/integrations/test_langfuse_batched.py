"""#30 item 2 (batched evaluation): tracescore's mapper and evaluators inside the real
``Langfuse.run_batched_evaluation`` (SDK 5) over the observations stored in the loopback fake Langfuse.

The root observation of each stored trace goes through ``mapper`` (the whole trace read back by trace id) and the
evaluators; the scores written back must be the result lines of ``tracescore score --source langfuse`` over the same
stored traces: the same names with the catalog's data types, the same values and comments, none for an absent score.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langsmith_runs import load_samples
from tests.integrations.conftest import cookbook
from tests.test_both_platforms import WINDOW, _langfuse_trace
from tracescore.catalog import entry
from tracescore.cli.main import main
from tracescore.integrations import langfuse as ts

langfuse = pytest.importorskip("langfuse")


def test_batched_evaluation_scores_stored_traces_as_score_source_langfuse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, langfuse_pair: tuple[FakeLangfuse, Any]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    samples = load_samples(10)
    fake, client = langfuse_pair
    for sample in samples:
        fake.add_trace(*_langfuse_trace(sample))
    out = tmp_path / "results.jsonl"
    done = CliRunner().invoke(main, ["score", "--source", "langfuse", *WINDOW, "--no-write-back", "--out",
                                     str(out), "--store", "t.db", "-q"], env=env_for(fake))
    assert done.exit_code == 0, done.output
    expected = {line["trace_id"]: line for line in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert not fake.scores  # the CLI wrote nothing back
    cookbook("langfuse_experiment").stored(client, max_concurrency=1)  # the README's example
    client.flush()
    scores = list(fake.scores.values())

    assert set(expected) == {s["id"] for s in samples}
    by_trace: dict[str, list[dict[str, Any]]] = {}
    for s in scores:
        by_trace.setdefault(s["traceId"], []).append(s)
    assert set(by_trace) == set(expected)
    for trace_id, got in by_trace.items():
        line = expected[trace_id]
        assert {s.get("observationId") for s in got} == {f"{trace_id}-o00"}  # on the root observation
        scored = {s["name"]: s for s in got if s["name"] != ts.ABSENT_KEY}
        assert len(scored) == len(got) - 1 and set(scored) == set(line["scores"]), trace_id
        for name, value in line["scores"].items():
            kind = entry(name).kind  # type: ignore[union-attr]
            assert scored[name]["dataType"] == kind, name
            want = (1 if value else 0) if kind == "BOOLEAN" else value
            assert scored[name]["value"] == (want if kind == "CATEGORICAL" else pytest.approx(want)), name
            assert scored[name].get("comment") == line.get("comments", {}).get(name), name
        [absent] = [s for s in got if s["name"] == ts.ABSENT_KEY]
        assert absent["dataType"] == "TEXT"
        assert absent["value"].splitlines() == [f"{n}: {r}" for n, r in line["missing"].items()]
