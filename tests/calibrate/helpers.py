"""A local store holding scored traces with per-claim judge rows, written through the real Store."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from tracescore.result import CitationRow, ClaimRow, TraceResult
from tracescore.scores import score
from tracescore.store.db import Store

CELLS = (
    "retrieval_fail/right",
    "retrieval_fail/wrong",
    "ungrounded/right",
    "ungrounded/wrong",
    "grounded/right",
    "grounded/wrong",
)
VERDICT_WEIGHTS = {"supported": 6, "partial": 2, "unsupported": 2, "contradicted": 1}
MODEL, RUBRIC = "claude-opus-4-5", "grounding-1"
STARTED = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)  # every trace's start time (a LangSmith queue item needs it)


def scored_store(
    path: Path, traces: int = 200, seed: int = 3, trace_id: Callable[[int], str] = lambda t: f"trace-{t:03d}"
) -> tuple[Store, str]:
    """A store with one run of ``traces`` results, 1–3 judged claims each, every verdict and diagnosis cell."""
    rng = random.Random(seed)
    store = Store(path)
    run_id = store.start_run("score", "jsonl")
    for t in range(traces):
        cell = CELLS[t % len(CELLS)]
        url = f"https://example.org/doc{t}"
        claims = []
        for c in range(rng.randint(1, 3)):
            verdict = rng.choices(list(VERDICT_WEIGHTS), weights=list(VERDICT_WEIGHTS.values()))[0]
            unverified = verdict == "unsupported" and rng.random() < 0.3
            claims.append(
                ClaimRow(
                    claim_index=c,
                    sentence_index=c,
                    text=f"Claim {c} of trace {t}.",
                    verdict=verdict,
                    judge_verdict="supported" if unverified else verdict,
                    doc=url,
                    quote=f"quote {c} of doc {t}",
                    quote_check="not found" if unverified else "verified",
                    cited=[url] if c == 0 else [],
                    cited_verdict=verdict if c == 0 else None,
                    drift_to="https://example.org/other" if verdict == "unsupported" and c == 0 else None,
                )
            )
        result = TraceResult(
            trace_id=trace_id(t),
            timestamp=STARTED,
            scores={
                "diagnosis": score("diagnosis", cell),
                "grounding.rate": score("grounding.rate", 0.5, judge_model=MODEL, rubric_version=RUBRIC),
            },
            claims=claims,
            citations=[CitationRow(0, "[1]", url, "url", url, fetched=t % 4 != 0, seen=True)],
        )
        store.add_result(run_id, result)
    store.commit()
    return store, run_id
