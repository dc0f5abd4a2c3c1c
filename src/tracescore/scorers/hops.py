"""Multi-hop retrieval (#34): a ``hops`` label is the documents of each hop, in order (``[["doc-b"], ["doc-a"]]``:
the agent reads B before it can find A).

``retrieval.hops_found``: hops any of whose documents came back in any search call / hops, with each hop's first
rank in ``metadata.hop_ranks``; ``retrieval.hop_order``: every hop's document first came back only after a document
of the hop before was fetched (a failed fetch read nothing). Both are written only when the trace has a ``hops``
label, so every other trace's result line is as before.
"""

from __future__ import annotations

from tracescore.reasons import Reasons
from tracescore.registry import ScoreSpec, reasons
from tracescore.scores import Score, absent, score
from tracescore.trace import Trace, fetch_failed
from tracescore.urls import is_url, normalize_url

RETRIEVAL_HOPS_FOUND = "retrieval.hops_found"  # written only when the trace has a ``hops`` label
RETRIEVAL_HOP_ORDER = "retrieval.hop_order"
_WHY = Reasons
HOP_SPECS = (  # declared by the retrieval scorer (scorers/retrieval.py), which writes them
    ScoreSpec(RETRIEVAL_HOPS_FOUND, "numeric", "higher", 0, 1, absent=reasons(_WHY.NO_SEARCH_STEP, _WHY.EMPTY_HOP_ID),
              definition="hops (groups of a hops label) any of whose documents came back in any search call / hops;"
              " with a hops label only"),
    ScoreSpec(RETRIEVAL_HOP_ORDER, "boolean", "higher",
              absent=reasons(_WHY.NO_SEARCH_STEP, _WHY.EMPTY_HOP_ID, _WHY.HOP_NEVER_FOUND),
              definition="every hop's document came back only after a document of the hop before was fetched; with a"
              " hops label only"),
)  # fmt: skip

_NONE = Reasons.NO_SEARCH_STEP.text
_NO_SEARCH = (absent(RETRIEVAL_HOPS_FOUND, _NONE), absent(RETRIEVAL_HOP_ORDER, _NONE))


def _key(ident: str) -> str:
    return normalize_url(ident) if is_url(ident) else ident.strip()


def _keys(doc_id: str | None, url: str | None) -> set[str]:
    """The ids a hit or a fetch answers to: its doc_id and its normalised URL."""
    keys = {doc_id.strip()} if doc_id else set()
    if url:
        keys.add(_key(url))
    return keys


def hop_scores(trace: Trace) -> tuple[Score, ...]:
    """The two hop scores of a trace with a ``hops`` label; () without one."""
    hops = trace.labels.hops
    if hops is None:
        return ()
    groups = [[entry] if isinstance(entry, str) else list(entry) for entry in hops]
    if not all(m.strip() for group in groups for m in group):
        reason = Reasons.EMPTY_HOP_ID.format(hops=hops)
        return absent(RETRIEVAL_HOPS_FOUND, reason), absent(RETRIEVAL_HOP_ORDER, reason)
    if not trace.searches:
        return _NO_SEARCH
    keysets = [frozenset(map(_key, group)) for group in groups]
    seen: list[int | None] = [None] * len(groups)  # the step index a hop's document first came back at
    fetched: list[int | None] = [None] * len(groups)  # the step index a hop's document was first fetched at
    ranks: list[int | None] = [None] * len(groups)
    for step_index, step in enumerate(trace.steps):
        if step.kind == "search":  # by kind: on the hot path a step is the msgspec struct, not the model
            for rank, hit in step.ranked_hits():
                got = _keys(hit.doc_id, hit.url)
                for h, keys in enumerate(keysets):
                    if keys & got:
                        seen[h] = step_index if seen[h] is None else seen[h]
                        ranks[h] = rank if ranks[h] is None else min(rank, ranks[h])  # type: ignore[type-var]
        elif not fetch_failed(step.status):  # a fetch; a failed one read nothing
            got = _keys(step.doc_id, step.url)
            for h, keys in enumerate(keysets):
                if fetched[h] is None and keys & got:
                    fetched[h] = step_index
    found = sum(1 for s in seen if s is not None)
    named = [hop if isinstance(hop, str) else " or ".join(hop) for hop in hops]
    missing = [name for name, s in zip(named, seen, strict=True) if s is None]
    comment = f"hops never found: {', '.join(missing)}" if missing else None
    first = score(RETRIEVAL_HOPS_FOUND, found / len(groups), comment=comment, hop_ranks=ranks, missing=missing)
    if missing:
        return first, absent(RETRIEVAL_HOP_ORDER, Reasons.HOP_NEVER_FOUND.format(hops=", ".join(missing)))
    early = [
        named[h] for h in range(1, len(groups))
        if fetched[h - 1] is None or fetched[h - 1] > seen[h]  # type: ignore[operator]
    ]
    if early:
        comment = f"came back before the hop before was fetched: {', '.join(early)}"
        return first, score(RETRIEVAL_HOP_ORDER, False, comment=comment, early=early)
    return first, score(RETRIEVAL_HOP_ORDER, True)
