"""#48 on real data: the Langfuse traces of ../shared/data that share a ``sessionId`` (four frameworks' demos all use
``session_abc``) are scored as one conversation; retrieval and trajectory stay each turn's own."""

from __future__ import annotations

import json

from tests.conftest import SHARED_DATA
from tracescore.engine.plan import deterministic_scorers
from tracescore.engine.recipe import score_stage
from tracescore.engine.sessions import group_turns
from tracescore.engine.stage import Stage
from tracescore.platforms.langfuse.adapter import trace_from_observations
from tracescore.sources.base import Record

DATA = SHARED_DATA / "langfuse_traces" / "worker_trace_fixtures"
FILES = ["autogen-2025-06-06", "llamaindex-2025-06-05", "pydantic-ai-2025-06-06", "pydantic-ai-tools-2025-06-06"]


def _records() -> list[Record]:
    return [Record(payload=json.loads((DATA / f"{name}.trace.json").read_text()), line=n)
            for n, name in enumerate(FILES, start=1)]  # fmt: skip


def test_real_traces_of_one_session_are_its_turns_and_keep_their_own_retrieval() -> None:
    traces = [trace_from_observations(r.payload) for r in _records()]
    assert {t.session_id for t in traces} == {"session_abc"}
    [session], singles = group_turns((t, n) for n, t in enumerate(traces))
    assert not singles and len(session.turns) == len(FILES) and not session.alone
    stamps = [t.timestamp for t, _ in session.turns]
    assert stamps == sorted(stamps)  # conversation order: by timestamp
    stage = Stage(trace_from_observations, deterministic_scorers(), "", oneshot=True)
    carried = {r.trace_id: r for r in score_stage(stage, _records(), carry=True)}
    alone = {r.trace_id: r for r in score_stage(stage, _records(), carry=False)}
    assert set(carried) == set(alone) == {t.id for t in traces}
    for trace_id, result in carried.items():
        assert not result.errors
        own = {n: s for n, s in result.scores.items() if n.startswith(("retrieval.", "trajectory."))}
        assert own and own == {n: s for n, s in alone[trace_id].scores.items() if n in own}, trace_id
