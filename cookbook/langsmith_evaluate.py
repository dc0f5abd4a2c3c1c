"""tracescore's stage scores inside a LangSmith experiment: ``evaluate(agent, data=…, evaluators=…)``.

    export LANGSMITH_API_KEY=…                      # LANGSMITH_ENDPOINT for a self-hosted server
    python cookbook/langsmith_evaluate.py search-agent-cases

``search-agent-cases`` is a dataset whose examples carry ``inputs`` ``{"case", "question"}`` and the labels as
``outputs`` (``examples()`` builds them from ``cookbook/data/traces.jsonl``). The agent here is a stand-in that
replays the recorded searches and fetches of the case as ``@traceable`` retriever and tool runs; put yours in its
place. Each run gets one feedback per present stage score (``retrieval.recall_at_5``, ``citation.coverage``,
``answer.correct``, ``diagnosis``, …), one ``tracescore.absent`` feedback listing what could not be scored and why,
and the experiment gets its contingency cells (``diagnosis:<cell>``). With ``ANTHROPIC_API_KEY`` set, one
``AnthropicJudge`` scores the judged stages (grounding, citation support, surface, semantic match) for the whole
experiment, and the experiment also gets what it spent (``tracescore.judge.calls``, ``.input_tokens``,
``.output_tokens``, ``.cost_usd``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from langsmith import Client, evaluate, traceable

from tracescore import AnthropicJudge, Judge
from tracescore.integrations import langsmith as ts

CASES = {
    t["id"]: t
    for t in map(json.loads, (Path(__file__).parent / "data" / "traces.jsonl").read_text(encoding="utf-8").splitlines())
}


def _only(*names: str) -> Any:
    return lambda inputs: {n: inputs[n] for n in names}


@traceable(run_type="retriever", name="retrieve_docs", process_inputs=_only("query"))
def _search(query: str, hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: h.get(k) for k in ("doc_id", "url", "title", "snippet")} for h in hits]


@traceable(run_type="tool", name="fetch_url", process_inputs=_only("url", "doc_id"))
def _fetch(url: str | None, doc_id: str | None, page: dict[str, Any]) -> dict[str, Any]:
    return {"text": page.get("text") or "", "status": page.get("status")}


@traceable(name="search_agent")
def agent(inputs: dict[str, Any]) -> dict[str, Any]:
    """The agent under test (a stand-in): replays the recorded steps of the case its example names."""
    case = CASES[inputs["case"]]
    for step in case["steps"]:
        if step["kind"] == "search":
            _search(step["query"], step.get("hits") or [])
        else:
            _fetch(step.get("url"), step.get("doc_id"), step)
    return {"output": case["answer"]}


def examples(limit: int = 10) -> list[dict[str, Any]]:
    """Dataset examples for the first ``limit`` cases: the question as input, the labels as outputs."""
    return [{"inputs": {"case": t["id"], "question": t["question"]},
             "outputs": {k: v for k, v in (t.get("labels") or {}).items() if v is not None}}
            for t in list(CASES.values())[:limit]]  # fmt: skip


def run(client: Client, dataset: str, judge: Judge | None = None, **options: Any) -> Any:
    """The experiment: every example through ``agent``, scored by tracescore's evaluators (``judge``: the judged
    stages too, one judge for the experiment); the cells, and the judge's spend, in its summary."""
    scoring = ts.Experiment(judge=judge, k=5)
    return evaluate(agent, data=dataset, evaluators=scoring.evaluators, summary_evaluators=scoring.summary_evaluators,
                    client=client, experiment_prefix="tracescore", **options)  # fmt: skip


if __name__ == "__main__":
    if not (os.environ.get("LANGSMITH_API_KEY") or os.environ.get("LANGCHAIN_API_KEY")):  # else a traceback later
        print("langsmith_evaluate.py: set LANGSMITH_API_KEY (and LANGSMITH_ENDPOINT for a self-hosted server)",
              file=sys.stderr)
        sys.exit(2)  # a usage error, as tracescore's own missing credentials
    judge = AnthropicJudge() if os.environ.get("ANTHROPIC_API_KEY") else None
    try:
        results = run(Client(), sys.argv[1] if len(sys.argv) > 1 else "search-agent-cases", judge)
        print(f"experiment {results.experiment_name}: {len(list(results))} runs scored")
    finally:
        if judge is not None:
            judge.close()
