"""Required doc ids entered by reviewers become the retrieval labels of their traces for later runs and backfills.

A reviewer answers ``retrieval.required_doc_ids`` on an item (ids or URLs, separated by spaces or commas; ``a|b``
for alternatives, any one of which will do; ``none`` for a question that should be refused); URLs are normalised as
retrieval compares them. The latest answer for a trace wins. Precedence: a dataset item's label (the trace came from
a platform's dataset item or example and carries one) > the human label > the trace's own metadata. Each applied id
(or group) is checked against the trace's hits: one that never came back is a real retrieval miss, reported
(``never_retrieved``) and kept in the label. What was applied is recorded in the trace's metadata under
``label_sources`` so the result line says where its label came from.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from tracescore.adapters import Adapter
from tracescore.adapters.structs import replace
from tracescore.store.db import Store
from tracescore.trace import Trace
from tracescore.urls import is_url, normalize_url

LABEL = "retrieval.required_doc_ids"
_SPLIT = re.compile(r"[\s,;]+")
_NONE = {"none", "-", "[]"}


def _key(ident: str) -> str:
    return normalize_url(ident) if is_url(ident) else ident.strip()


def parse_required(text: str) -> list[str | list[str]]:
    """A reviewer's answer as ids: split on spaces, commas or semicolons, URLs normalised, duplicates dropped;
    ``a|b`` is a group of alternatives (any one will do); ``none`` (or ``-``) means no document is needed (a refusal
    case): an empty list."""
    if text.strip().lower() in _NONE:
        return []
    entries: dict[str | frozenset[str], str | list[str]] = {}
    for part in _SPLIT.split(text):
        members = list(dict.fromkeys(_key(m) for m in part.split("|") if m.strip()))
        if len(members) == 1:
            entries.setdefault(members[0], members[0])
        elif members:
            entries.setdefault(frozenset(members), members)
    return list(entries.values())


@dataclass(frozen=True)
class HumanRequired:
    """The latest reviewer answer for one trace: the ids, who entered them, when, and on which item."""

    trace_id: str
    doc_ids: tuple[str | list[str], ...]
    author: str
    labelled_at: datetime
    item_id: str


def human_required(store: Store) -> dict[str, HumanRequired]:
    """Per trace id, the latest ``retrieval.required_doc_ids`` a reviewer entered on one of its queued items."""
    rows = store.query(
        "SELECT i.trace_id, l.value, l.author, l.labelled_at, l.item_id FROM calibration_labels l"
        " JOIN calibration_items i ON i.item_id = l.item_id WHERE l.label = ? ORDER BY l.labelled_at, l.rowid",
        (LABEL,),
    )
    out: dict[str, HumanRequired] = {}
    for trace_id, value, author, labelled_at, item_id in rows:
        out[trace_id] = HumanRequired(
            trace_id, tuple(parse_required(value)), author, datetime.fromisoformat(labelled_at), item_id
        )
    return out


def _from_dataset(trace: Trace) -> str | None:
    """The dataset item / example a trace was run from, when it names one."""
    item = trace.metadata.get("dataset_item_id")
    platform = [v for v in trace.metadata.values() if isinstance(v, Mapping)]  # e.g. a run's own ids, by platform
    example = next((str(v["reference_example_id"]) for v in platform if v.get("reference_example_id")), None)
    found = item or example
    return str(found) if found else None


def _retrieved(trace: Trace) -> set[str]:
    keys: set[str] = set()
    for search in trace.searches:
        for hit in search.hits:
            if hit.doc_id:
                keys.add(hit.doc_id.strip())
            if hit.url:
                keys.add(_key(hit.url))
    return keys


def apply_required(trace: Trace, human: Mapping[str, HumanRequired]) -> Trace:
    """``trace`` with its required doc ids by precedence (dataset item > human label > trace metadata) and what was
    applied, with ids that never came back in a search, under ``metadata["label_sources"]``; unchanged when no human
    label exists for it."""
    entered = human.get(trace.id)
    if entered is None:
        return trace
    note: dict[str, Any] = {
        "author": entered.author,
        "labelled_at": entered.labelled_at.isoformat(),
        "item_id": entered.item_id,
    }
    dataset = _from_dataset(trace)
    labels = trace.labels
    if dataset is not None and labels.required_doc_ids is not None:
        note |= {"source": "dataset item", "dataset_item": dataset, "human_ignored": list(entered.doc_ids)}
        ids = labels.required_doc_ids
    else:
        note |= {"source": "human label"}
        if labels.required_doc_ids is not None and list(labels.required_doc_ids) != list(entered.doc_ids):
            note["replaced"] = list(labels.required_doc_ids)
        ids = list(entered.doc_ids)
        labels = replace(labels, required_doc_ids=ids)
    retrieved = _retrieved(trace)
    # a group of alternatives never came back when none of its members did
    note["never_retrieved"] = [i for i in ids if retrieved.isdisjoint(map(_key, [i] if isinstance(i, str) else i))]
    sources = dict(trace.metadata.get("label_sources") or {}) | {"required_doc_ids": note}
    return replace(trace, labels=labels, metadata=trace.metadata | {"label_sources": sources})


def with_human_required(store: Store, adapter: Adapter) -> Adapter:
    """``adapter`` followed by ``apply_required`` with the reviewer labels in ``store`` (read once, now); the
    adapter itself when no reviewer entered any."""
    human = human_required(store)
    if not human:
        return adapter

    def adapt(payload: object) -> Trace:
        return apply_required(adapter(payload), human)

    return adapt
