"""tracescore's stage scores inside a Langfuse experiment (SDK 5): ``run_experiment(task=…, evaluators=…)``, and
the same scores on traces already stored in Langfuse with ``run_batched_evaluation(mapper=…)``.

    export LANGFUSE_PUBLIC_KEY=… LANGFUSE_SECRET_KEY=… LANGFUSE_BASE_URL=…
    python cookbook/langfuse_experiment.py            # an experiment over the cookbook's cases
    python cookbook/langfuse_experiment.py --stored   # score the root observations stored in the project

The task here is a stand-in agent that returns the recorded trace of its case (in the trace format, labels left to
the item's ``expected_output``); return your agent's trace in its place. Each item's trace gets one score per present
stage score with the catalog's data type and one TEXT ``tracescore.absent`` listing what could not be scored and
why; the experiment run gets its contingency cells (``diagnosis:<cell>``). With ``ANTHROPIC_API_KEY`` set, one
``AnthropicJudge`` scores the judged stages (grounding, citation support, surface, semantic match) for the whole
experiment, and the run also gets what it spent (``tracescore.judge.calls``, ``.input_tokens``, ``.output_tokens``,
``.cost_usd``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from langfuse import Langfuse

from tracescore import AnthropicJudge, Judge
from tracescore.integrations import langfuse as ts

CASES = {
    t["id"]: t
    for t in map(json.loads, (Path(__file__).parent / "data" / "traces.jsonl").read_text(encoding="utf-8").splitlines())
}
ROOTS = json.dumps([{"type": "boolean", "column": "isRootObservation", "operator": "=", "value": True}])


def task(*, item: Any, **_: Any) -> dict[str, Any]:
    """The agent under test (a stand-in): the trace of the case its item names, without the labels."""
    case = CASES[(item["input"] if isinstance(item, dict) else item.input)["case"]]
    return {k: v for k, v in case.items() if k != "labels"}


def items(limit: int = 10) -> list[dict[str, Any]]:
    """Experiment items for the first ``limit`` cases: the question as input, the labels as expected output."""
    return [{"input": {"case": t["id"], "question": t["question"]},
             "expected_output": {k: v for k, v in (t.get("labels") or {}).items() if v is not None}}
            for t in list(CASES.values())[:limit]]  # fmt: skip


def experiment(client: Langfuse, data: list[Any], judge: Judge | None = None, **options: Any) -> Any:
    """Every item through ``task``, scored by tracescore's evaluators (``judge``: the judged stages too, one judge
    for the experiment); the cells, and the judge's spend, on the run."""
    scoring = ts.Experiment(judge=judge, k=5)
    return client.run_experiment(name="tracescore", data=data, task=task, evaluators=scoring.evaluators,
                                 run_evaluators=scoring.run_evaluators, **options)  # fmt: skip


def stored(client: Langfuse, **options: Any) -> Any:
    """Every stored trace (its root observation) scored as ``tracescore score --source langfuse`` scores it."""
    return client.run_batched_evaluation(mapper=ts.mapper(client.api), evaluators=ts.evaluators(k=5), filter=ROOTS,
                                         **options)  # fmt: skip


if __name__ == "__main__":
    missing = [v for v in ("LANGFUSE_PUBLIC_KEY", "LANGFUSE_SECRET_KEY") if not os.environ.get(v)]
    if missing:  # the SDK would only warn "Client will be disabled" and send nothing
        print(f"langfuse_experiment.py: set {' and '.join(missing)} (and LANGFUSE_BASE_URL for a self-hosted"
              " server)", file=sys.stderr)
        sys.exit(2)  # a usage error, as tracescore's own missing credentials
    langfuse = Langfuse()
    judge = AnthropicJudge() if os.environ.get("ANTHROPIC_API_KEY") else None
    try:
        print(stored(langfuse) if "--stored" in sys.argv else experiment(langfuse, items(), judge).format())
    finally:
        langfuse.shutdown()
        if judge is not None:
            judge.close()
