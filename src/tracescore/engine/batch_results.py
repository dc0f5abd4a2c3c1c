"""The two reads of a batch API that ``BatchPrefill`` judges by: an ended batch's results, and the list of server
batches an unrecorded create may have become (each API's answers in ``judge/batches.py``'s terms).

Results: every succeeded reply is billed at the batch price (parsed or not) and, when it parses, kept in the judge
cache; errored, expired and canceled requests are only counted (the direct judge answers them when their trace is
scored). The tally goes into the ledger beside the API's own ``request_counts``.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from tracescore.judge.batches import BatchItem, ServerBatch
from tracescore.judge.pricing import BATCH_DISCOUNT
from tracescore.judge.protocol import JudgeRequest, JudgeUsage
from tracescore.store.batches import BILLED, RESULT_TYPES, JudgeBatch

RECOVER_SKEW_SECONDS = 600.0
"""How much earlier than its intent (by our clock) a server batch may say it was created and still be the intent's."""
ERRORS_KEPT = 20
"""Lines kept per batch about its requests that failed (the counts hold them all)."""


@dataclass
class Taken:
    """What reading one ended batch's results did: the ledger outcome, and lines for the run's errors."""

    outcome: dict[str, Any]
    errors: list[str] = field(default_factory=list)


def take_results(
    batch: JudgeBatch,
    items: list[BatchItem],
    request_counts: Mapping[str, int],
    requests: Mapping[str, JudgeRequest],
    *,
    cache: Any,
    usage: JudgeUsage,
    model: str,
) -> Taken:
    """Bill and cache the succeeded replies of ``items`` (the batch's results); the outcome to record."""
    read: Counter[str] = Counter()
    billed = JudgeUsage()
    errors: list[str] = []
    for item in items:
        kind = item.kind
        read[kind] += 1
        if kind != "succeeded" or item.reply is None:
            error = item.error
            if len(errors) < ERRORS_KEPT:
                errors.append(f"batch request {item.custom_id[:12]}: {kind}" + (f" ({error})" if error else ""))
            continue
        request = requests.get(item.custom_id)
        problem = _take(item, request, cache, model, (usage, billed))
        if problem:
            read["unreadable" if problem.startswith("unreadable") else "not_wanted"] += 1
            if len(errors) < ERRORS_KEPT:
                errors.append(f"batch reply {item.custom_id[:12]} {problem}"[:300])
    reported = {kind: int(request_counts.get(kind, 0)) for kind in RESULT_TYPES}
    if any(reported[kind] != read[kind] for kind in RESULT_TYPES):
        errors.append(f"batch {batch.id}: the API counted {reported}, its results held {dict(read)}")
    outcome = {
        "request_counts": reported,
        "read": dict(read),
        "billed": {name: getattr(billed, name) for name in BILLED},
    }
    return Taken(outcome, errors)


def _take(
    item: BatchItem, request: JudgeRequest | None, cache: Any, model: str, usages: tuple[JudgeUsage, ...]
) -> str | None:
    """Bill one succeeded reply and cache it; what went wrong, if anything."""
    key = item.custom_id
    assert item.reply is not None  # a succeeded item carries its usage
    reply = replace(item.reply, model=model)
    for usage in usages:
        usage.bill(reply, discount=BATCH_DISCOUNT)  # billed, whether or not it parses
    if request is None:  # not one of this slice's requests: nobody here can read it
        return "is not a request of this slice (billed, not cached)"
    try:
        parsed = request.output.model_validate_json(item.text)
    except ValueError as exc:
        return f"unreadable: {exc}"
    cache.judge_cache_put(
        key,
        model=model,
        rubric=request.rubric.version,
        request=json.dumps({"prefix": request.prefix, "content": request.content}, ensure_ascii=False),
        reply=parsed.model_dump_json(),
    )
    return None


def fitting(server: Iterable[ServerBatch], intent: JudgeBatch, since: datetime, taken: set[str]) -> list[str]:
    """The ids of the server batches ``intent`` may have become: not recorded (``taken``), created after ``since``,
    and tagged with the intent's id, or, where the API keeps no tag, with as many requests (Anthropic counts every
    request from the start, in ``processing`` until the batch ends)."""
    return [
        b.id
        for b in server
        if b.id not in taken
        and b.created_at >= since
        and (b.tag == intent.id if b.tag is not None else b.size == len(intent.keys))
    ]
