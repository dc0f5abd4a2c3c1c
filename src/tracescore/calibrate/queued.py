"""What a platform queue holds, as the store remembers it: items recorded for a queue, which are on it already, and
the blind text a reviewer reads beside a queued trace.

A platform queue item is a whole trace (or root run), so each trace carries one claim there; the
store remembers the platform's reference of every pushed item so that no item is ever pushed twice, and a push that
stopped halfway resumes with what is still pending.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from tracescore.calibrate.sampling import Item
from tracescore.store.db import Store


def review_text(item: Item, limit: int = 5000) -> str:
    """What the reviewer reads beside the trace: the claim, its document, URL and quote. Never the verdict."""
    head = [
        f"**tracescore calibration item {item.item_id}** (claim {item.claim_index + 1} of this answer)",
        f"**Claim:** {item.claim}",
    ]
    if item.url or item.doc:
        head.append(f"**Document:** {item.url or item.doc}")
    if item.quote:
        head.append(f"**Quote:** \u201c{item.quote}\u201d")
    head.append(
        "Label it with grounding.verdict (does the document support the claim?), grounding.grounded,"
        " citation.supports, answer.correct, retrieval.required_doc_ids."
    )
    text = "\n\n".join(head)
    if item.document:
        room = limit - len(text) - 40
        body = item.document if len(item.document) <= room else item.document[: max(room, 0)] + "…"
        text += f"\n\n**Document text shown to the judge:**\n\n{body}"
    return text[:limit]


def _item(data: str) -> Item:
    fields = json.loads(data)
    return Item(**{**fields, "cited": tuple(fields.get("cited") or ())})


def pending(store: Store, queue: str) -> list[Item]:
    """Items recorded for ``queue`` that are not on the platform yet (a push that stopped halfway resumes here)."""
    rows = store.query(
        "SELECT item FROM calibration_items WHERE queue = ? AND platform_ref IS NULL ORDER BY item_id", (queue,)
    )
    return [_item(r[0]) for r in rows]


def pushed(store: Store, queue: str) -> dict[str, tuple[str, str]]:
    """Items already on the platform queue ``queue``: item id → (trace id, platform reference)."""
    rows = store.query(
        "SELECT item_id, trace_id, platform_ref FROM calibration_items WHERE queue = ? AND platform_ref IS NOT NULL",
        (queue,),
    )
    return {r[0]: (r[1], r[2]) for r in rows}


def unpushed(store: Store, queue: str, items: Iterable[Item]) -> Iterator[Item]:
    """The items to put on platform queue ``queue``: never one the store remembers there, and one per trace (a
    trace-level queue item carries one claim; a trace counts as queued once its item is handed out)."""
    done = pushed(store, queue)
    on_queue = {trace for trace, _ in done.values()}
    for item in items:
        if item.item_id in done or item.trace_id in on_queue:
            continue
        on_queue.add(item.trace_id)
        yield item


def queued_traces(store: Store, queue: str) -> set[str]:
    """Traces that already have an item in ``queue`` (a trace-level queue takes one claim per trace, ever)."""
    return {r[0] for r in store.query("SELECT trace_id FROM calibration_items WHERE queue = ?", (queue,))}


def mark_pushed(store: Store, item: str, ref: str) -> None:
    """Remember that ``item`` is on its platform queue as ``ref``: it is never pushed there again."""
    store.write("UPDATE calibration_items SET platform_ref = ? WHERE item_id = ?", [(ref, item)])
    store.commit()
