"""Feedback configs from the catalog and the checks that decide whether an existing one will do, and the one line a
failed LangSmith request becomes: unit checks, then the real SDK against the fake."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import load_samples, seed
from tracescore.platforms.langsmith.configs import BOOLEAN, catalog_config, fits, same
from tracescore.platforms.langsmith.failures import describe, permanent
from tracescore.platforms.langsmith.sink import LangSmithSink
from tracescore.platforms.langsmith.source import make_client
from tracescore.result import TraceResult
from tracescore.scorers.diagnosis import CELLS
from tracescore.scores import score

KEY = "lsv2_pt_configs_test_key"
CONTINUOUS = {"type": "continuous"}


def test_catalog_configs_follow_the_catalog() -> None:
    assert catalog_config("answer.correct") == BOOLEAN
    assert catalog_config("retrieval.recall_at_3") == {"type": "continuous", "min": 0.0, "max": 1.0}
    assert catalog_config("citation.fabricated_count") == {"type": "continuous", "min": 0.0}  # no upper bound
    assert catalog_config("retrieval.first_hit_rank") == {"type": "continuous", "min": 1.0}
    assert catalog_config("grounding.rate@grounding-1") == catalog_config("grounding.rate")
    diagnosis = catalog_config("diagnosis")
    assert diagnosis is not None and diagnosis["type"] == "categorical"
    assert [c["label"] for c in diagnosis["categories"]] == list(CELLS)
    assert catalog_config("my.own_score") is None  # outside the catalog: LangSmith's own default


@pytest.mark.parametrize(
    ("have", "want", "is_same", "does_fit"),
    [
        (BOOLEAN, BOOLEAN, True, True),
        ({"type": "continuous", "min": 0, "max": 1}, BOOLEAN, True, True),  # numbers as numbers
        (CONTINUOUS, BOOLEAN, False, True),  # LangSmith's default takes any score, but is not the label's scale
        ({"type": "continuous", "min": 0.0, "max": 0.5}, BOOLEAN, False, False),
        ({"type": "continuous", "min": 0.0, "max": 1.0}, {"type": "continuous", "min": 0.0}, False, False),
        ({"type": "freeform"}, BOOLEAN, False, False),
        (
            {"type": "categorical", "categories": [{"value": 0, "label": "a"}, {"value": 1, "label": "b"}]},
            {"type": "categorical", "categories": [{"value": 0.0, "label": "a"}]},
            False,
            True,
        ),
        (
            {"type": "categorical", "categories": [{"value": 0, "label": "a"}]},
            {"type": "categorical", "categories": [{"value": 1.0, "label": "a"}]},
            False,
            False,
        ),
    ],
)
def test_same_and_fits(have: dict[str, Any], want: dict[str, Any], is_same: bool, does_fit: bool) -> None:
    assert same(have, want) is is_same
    assert fits(have, want) is does_fit


def test_a_key_whose_config_cannot_take_our_values_is_refused_without_a_request() -> None:
    with FakeLangSmith() as server:
        project_id = seed(server, load_samples(1), project="support-agent")
        run = next(r for r in server.runs if r["parent_run_id"] is None)["id"]
        client = make_client(api_key=KEY, endpoint=server.url, backoff=0.01)
        client.create_feedback_config("answer.token_f1", feedback_config={"type": "continuous", "min": 0, "max": 0.5})
        result = TraceResult(
            trace_id=run,
            timestamp=datetime(2026, 11, 20, 9, 0, tzinfo=UTC),
            scores={"answer.token_f1": score("answer.token_f1", 0.9), "answer.correct": score("answer.correct", True)},
            metadata={"langsmith": {"run_id": run, "session_id": project_id}},
        )
        with LangSmithSink(client) as sink:
            sink.write(result)
        sent = [r.json()["key"] for r in server.requests_to("/feedback", "POST") if r.path == "/feedback"]
    assert sent == ["answer.correct"]
    (refused,) = sink.report.rejected
    assert refused.name == "answer.token_f1" and not refused.retryable
    assert "'answer.token_f1'" in refused.reason and '"max": 0.5' in refused.reason and '"max": 1.0' in refused.reason


def test_a_refusal_is_described_whole_and_is_permanent() -> None:
    with FakeLangSmith() as server:
        client = make_client(api_key=KEY, endpoint=server.url, backoff=0.01)
        client.create_feedback_config("k", feedback_config=CONTINUOUS)
        with pytest.raises(Exception) as caught:
            client.create_feedback_config("k", feedback_config={"type": "freeform"})
    assert permanent(caught.value)
    assert describe(caught.value) == "POST /feedback-configs -> 400 Bad Request: Feedback config already exists"
    assert not permanent(TimeoutError("read timed out")) and describe(TimeoutError("x")) == "TimeoutError: x"
