"""``[scoring] judge_key`` (#32, item 1): what the sampling hash reads of a trace: its id, its question, or a field of
its metadata (the id when the trace lacks it), and a clear refusal of anything else."""

from __future__ import annotations

import pytest

from tracescore.config import Config, parse_sections
from tracescore.engine.recipe import options
from tracescore.engine.sampling import Sampling, share
from tracescore.errors import ConfigError
from tracescore.trace import Trace


def _trace(tid: str, question: str = "Who wrote Hamlet?", **metadata: object) -> Trace:
    return Trace(id=tid, question=question, metadata=metadata)


def test_each_key_reads_its_part_of_the_trace() -> None:
    a, b = _trace("lf-1", " Who wrote Hamlet? ", request={"id": "r-9"}), _trace("ls-77", request={"id": "r-9"})
    assert Sampling(key="trace_id").key_of(a) == "lf-1" and Sampling().key_of(b) == "ls-77"
    assert Sampling(key="question").key_of(a) == Sampling(key="question").key_of(b) == "Who wrote Hamlet?"
    by_request = Sampling(0.5, key="metadata.request.id")
    assert by_request.key_of(a) == by_request.key_of(b) == "r-9"
    assert by_request.key_of(_trace("x-1")) == "x-1"  # no such field: its own id
    assert by_request.key_of(_trace("x-2", request={"id": {"nested": 1}})) == "x-2"  # not a plain value: its id
    # the same key, the same draw on both platforms; the ids alone draw apart
    keys = [f"r-{i}" for i in range(400)]
    chosen = {k for k in keys if by_request.chosen(k)}
    assert chosen == {k for k in keys if share(k) < 0.5} and 150 < len(chosen) < 250


def test_the_key_comes_from_the_config_and_a_bad_one_is_refused_naming_the_forms() -> None:
    config = Config(parse_sections({"scoring": {"judge_key": "metadata.request_id", "judge_sample": 0.2}}))
    assert options(config).sampling == Sampling(0.2, key="metadata.request_id")
    for bad in ("id", "metadata.", "metadata", "labels.case"):
        with pytest.raises(ConfigError, match=r"judge_key must be 'trace_id', 'question' or 'metadata.<field>'"):
            parse_sections({"scoring": {"judge_key": bad}})
        with pytest.raises(ConfigError, match="judge_key"):
            Sampling(key=bad)
