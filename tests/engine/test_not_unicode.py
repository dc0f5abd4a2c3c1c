"""A lone surrogate (JSON ``\\ud800``) that a platform's JSON parser lets through is reported on its own trace and
never reaches a file or the store: the other traces are scored (it used to crash the whole run)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import SHARED_DATA
from tracescore.cli import main
from tracescore.engine.stage import Stage
from tracescore.sources.base import Record
from tracescore.trace import Trace

SPANS = SHARED_DATA / "openinference" / "all-spans.json"


def _with_surrogate(tmp_path: Path, old: str, new: str) -> Path:
    text = SPANS.read_text()
    assert old in text
    path = tmp_path / "spans.json"
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_lone_surrogate_in_a_span_fails_its_trace_only(tmp_path: Path, workers: str) -> None:
    clean = tmp_path / "clean.jsonl"
    base = CliRunner().invoke(
        main, ["score", str(SPANS), "--source", "otel", "--out", str(clean), "--store", str(tmp_path / "c.db"),
               "--no-judge", "-q"],  # fmt: skip
    )
    assert base.exit_code == 0, base.output
    spans = _with_surrogate(tmp_path, '"name": "ai.generateText.doGenerate"', '"name": "ai.generateText\\ud800"')
    out, store = tmp_path / "out.jsonl", tmp_path / "s.db"
    result = CliRunner().invoke(
        main, ["score", str(spans), "--source", "otel", "--out", str(out), "--store", str(store), "--no-judge", "-q",
               "--workers", workers],  # fmt: skip
    )
    assert result.exit_code == 1, result.output
    assert "1 of 10 lines could not be scored (each is in the results with its reason" in result.output
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    expected = [json.loads(line) for line in clean.read_text().splitlines()]
    assert len(lines) == len(expected) == 10
    broken = [line for line in lines if line["errors"]]
    assert len(broken) == 1
    assert broken[0]["errors"][0].endswith("holds text that is not valid Unicode (a lone surrogate, such as a JSON"
                                           " \\ud800 escape)")  # fmt: skip
    kept = [line for line in lines if not line["errors"]]
    assert [line["scores"] for line in kept] == [
        line["scores"] for line in expected if line["trace_id"] != broken[0]["trace_id"]
    ]
    with sqlite3.connect(store) as db:
        assert db.execute("SELECT count(*) FROM results").fetchone()[0] == 10


def test_a_lone_surrogate_in_a_trace_id_is_reported_with_the_id_spelled_out() -> None:
    # the model refuses a lone surrogate; an adapter that builds its trace without validating it can let one in
    trace = Trace.model_construct(**{**Trace.model_validate({"id": "t", "question": "q"}).__dict__, "id": "tr-\ud800"})
    stage = Stage(lambda payload: trace, [], "run", oneshot=False)
    record = Record({"id": "tr-\ud800"}, line=None)
    adapted, key, error = stage.adapt(record)
    assert adapted is None and key == "tr-\\ud800"
    assert error == "record (tr-\\ud800): holds text that is not valid Unicode (a lone surrogate, such as a JSON" \
        " \\ud800 escape) in its id"
    scored = stage.score(0, 0, record, adapted, key, error)
    scored.text.encode()  # writable
    assert scored.failure == error and not scored.readable
