"""The LangSmith tests run against each query backend of the fake (``tests/fakes/langsmith_v2.py``)."""

from __future__ import annotations

import pytest

from tests.fakes.langsmith_v2 import BACKENDS


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """``clickhouse_only``, ``dual`` or ``smithdb_only``: what the fake's ``/info`` says and which queries it serves."""
    return str(request.param)

