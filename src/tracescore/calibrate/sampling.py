"""What reviewers label: a stratified random sample of judged claims, plus an optional "find the failures" slice.

Strata are diagnosis cell × judge verdict; every non-empty stratum gets at least one item, the rest is allocated in
proportion to stratum size, and each item records its inclusion probability (n_h / N_h). The sample depends only on
the seed and the candidate set, never on row order. Only the ``random`` slice feeds the reported agreement; the
``failures`` slice (unverified quotes, partial verdicts, drift, supported-but-unfetched) is for finding bugs. Items
already queued are never queued again, and a per-day budget caps what is queued. A reviewer sees an ``Item``: the
claim with its document, URL and quote, never the judge's verdict.
"""

from __future__ import annotations

import hashlib
import json
import random
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from tracescore.calibrate.labels import VERDICT_LABEL
from tracescore.errors import ConfigError
from tracescore.judge.passages import MAX_SHARE, chunk_text, select_passages
from tracescore.scorers.grounding import GROUNDING_RATE, collect_evidence
from tracescore.store.db import Store
from tracescore.trace import Trace

FAILURE_KINDS = ("unverified_quote", "partial", "drift", "supported_unfetched")
_SUPPORTS = {"supported": "yes", "partial": "partial"}


def item_id(trace_id: str, claim_index: int, text: str) -> str:
    """A stable id for one claim of one trace (the same claim re-scored in another run keeps it)."""
    digest = hashlib.sha256(json.dumps([trace_id, claim_index, " ".join(text.split())]).encode()).hexdigest()
    return digest[:20]


@dataclass(frozen=True)
class Item:
    """What a reviewer is shown: one claim, the document it was judged against, its URL and the quote. No verdict."""

    item_id: str
    trace_id: str
    claim_index: int
    claim: str
    doc: str | None = None
    url: str | None = None
    quote: str | None = None
    document: str | None = None
    cited: tuple[str, ...] = ()
    question: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {"cited": list(self.cited)}


@dataclass(frozen=True)
class Candidate:
    """A judged claim that may be sampled: the blind item, its stratum, the judge's values and failure flags."""

    item: Item
    run_id: str
    diagnosis: str
    verdict: str
    judge_model: str | None
    rubric_version: str | None
    judge_values: dict[str, str] = field(default_factory=dict)
    failures: tuple[str, ...] = ()
    judge_sample: dict[str, Any] | None = None  # [scoring] judge_sample: the rate and why its trace was judged

    @property
    def stratum(self) -> str:
        return f"{self.diagnosis}|{self.verdict}"


@dataclass(frozen=True)
class Picked:
    """A sampled candidate with its slice and, for the random slice, its inclusion probability."""

    candidate: Candidate
    slice: Literal["random", "failures"]
    inclusion_probability: float | None


@dataclass
class Sample:
    """One sampling round: what to queue, the strata sizes and allocation, and notes (budget, skipped)."""

    sample_id: str
    picked: list[Picked]
    strata: dict[str, tuple[int, int]]  # stratum → (candidates N_h, sampled n_h)
    notes: list[str] = field(default_factory=list)

    @property
    def items(self) -> list[Item]:
        return [p.candidate.item for p in self.picked]


def _url(doc: str | None) -> str | None:
    return doc if doc and doc.startswith(("http://", "https://")) else None


def candidates(store: Store, run_id: str) -> list[Candidate]:
    """The judged claims of a stored run, with diagnosis cell, judge model/rubric and failure flags."""
    diagnosis = {
        tid or f"line:{line}": cell or "undiagnosed"
        for tid, line, cell in store.query("SELECT trace_id, line, diagnosis FROM results WHERE run_id = ?", (run_id,))
    }
    judge: dict[str, tuple[str | None, str | None]] = {}
    sampled: dict[str, dict[str, Any]] = {}  # trace → its judge_sample tag (rate, by hash or flagged)
    for tid, meta in store.query(
        "SELECT trace_id, metadata FROM scores WHERE run_id = ? AND name = ?", (run_id, GROUNDING_RATE)
    ):
        m = json.loads(meta or "{}")
        judge[tid] = (m.get("judge_model"), m.get("rubric_version"))
        if isinstance(m.get("judge_sample"), dict):
            sampled[tid] = m["judge_sample"]
    unfetched = {
        (tid, target)
        for tid, target, fetched in store.query(
            "SELECT trace_id, normalized, fetched FROM citations WHERE run_id = ?", (run_id,)
        )
        if not fetched
    }
    out: list[Candidate] = []
    for row in store.claims(run_id):
        tid = row["trace_id"]
        failures = []
        if row["quote_check"] == "not found":
            failures.append("unverified_quote")
        if row["verdict"] == "partial":
            failures.append("partial")
        if row["drift_to"]:
            failures.append("drift")
        if row["cited_verdict"] == "supported" and any((tid, c) in unfetched for c in row["cited"]):
            failures.append("supported_unfetched")
        values = {VERDICT_LABEL: row["verdict"], "grounding.grounded": str(row["verdict"] == "supported").lower()}
        if row["cited"]:
            values["citation.supports"] = _SUPPORTS.get(row["cited_verdict"] or "", "no")
        model, rubric = judge.get(tid, (None, None))
        item = Item(
            item_id(tid, row["claim_index"], row["text"]),
            tid,
            row["claim_index"],
            row["text"],
            row["doc"],
            _url(row["doc"]),
            row["quote"],
            None,
            tuple(row["cited"]),
        )
        out.append(
            Candidate(
                item, run_id, diagnosis.get(tid, "undiagnosed"), row["verdict"], model, rubric, values, tuple(failures),
                sampled.get(tid),
            )
        )
    return out


def verdict_candidates(store: Store, run_id: str, name: str, ask: str) -> list[Candidate]:
    """The verdicts of one judged score that gives one per trace (a ``[[criteria]]`` criterion: its score metadata
    holds ``verdict``, its quote and source) in a stored run, as candidates: the reviewer sees ``ask`` (the
    criterion's rubric) with the quote and its source, never the verdict; the judge value is kept under the score's
    name, the label its calibration measures. Absent scores give none (nothing was judged)."""
    diagnosis = {
        tid or f"line:{line}": cell or "undiagnosed"
        for tid, line, cell in store.query("SELECT trace_id, line, diagnosis FROM results WHERE run_id = ?", (run_id,))
    }
    out: list[Candidate] = []
    for tid, meta in store.query(
        "SELECT trace_id, metadata FROM scores WHERE run_id = ? AND name = ? AND reason IS NULL", (run_id, name)
    ):
        m = json.loads(meta or "{}")
        if not isinstance(m.get("verdict"), str):
            continue
        verdict = m["verdict"]
        item = Item(item_id(tid, 0, name), tid, 0, ask, m.get("source"), _url(m.get("source")), m.get("quote"))
        sampled = m["judge_sample"] if isinstance(m.get("judge_sample"), dict) else None
        failures = ("unverified_quote",) if m.get("quote_check") == "not found" else ()
        out.append(Candidate(item, run_id, diagnosis.get(tid, "undiagnosed"), f"{name}={verdict}",
                             m.get("judge_model"), m.get("rubric_version"), {name: verdict}, failures, sampled))
    return out


def attach_documents(
    pool: Sequence[Candidate], traces: Mapping[str, Trace], *, max_share: float = MAX_SHARE
) -> list[Candidate]:
    """Fill each item's question, document and URL from its trace: the passages of the named document that the
    judge was shown for this claim (the store keeps no page text). Items whose trace or document is gone keep none."""
    out: list[Candidate] = []
    for c in pool:
        trace = traces.get(c.item.trace_id)
        if trace is None:
            out.append(c)
            continue
        doc = next((d for d in collect_evidence(trace) if c.item.doc in (d.name, d.ref, d.url)), None)
        document = None
        if doc is not None:
            passages = select_passages(chunk_text(doc.text), [c.item.claim], max_share=max_share)
            document = "\n[…]\n".join(p.text for p in passages)
        item = replace(
            c.item,
            question=trace.question,
            document=document,
            url=(doc.url if doc is not None else None) or c.item.url,
        )
        out.append(replace(c, item=item))
    return out


def queued_ids(store: Store) -> set[str]:
    """Every item id ever queued (either slice): these are never queued again."""
    return {row[0] for row in store.query("SELECT item_id FROM calibration_items")}


def queued_on(store: Store, day: datetime) -> int:
    """How many items were queued on the UTC day of ``day`` (the per-day budget counts these)."""
    start = day.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    rows = store.query(
        "SELECT COUNT(*) FROM calibration_items WHERE queued_at >= ? AND queued_at < ?",
        (start.isoformat(), (start + timedelta(days=1)).isoformat()),
    )
    return int(rows[0][0])


def _allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    """One per stratum, the rest in proportion to size (largest remainder, ties by stratum name), capped by size."""
    alloc = {s: 1 for s in sizes}
    left = n - len(sizes)
    while left > 0:
        room = {s: sizes[s] - alloc[s] for s in sizes if sizes[s] > alloc[s]}
        if not room:
            break
        total = sum(room.values())
        shares = {s: left * r / total for s, r in room.items()}
        whole = {s: min(int(v), room[s]) for s, v in shares.items()}
        if sum(whole.values()) == 0:
            for s in sorted(room, key=lambda s: (-(shares[s] - int(shares[s])), s))[:left]:
                whole[s] = 1
        for s, k in whole.items():
            alloc[s] += k
        left -= sum(whole.values())
    return alloc


def sample(
    pool: Sequence[Candidate],
    *,
    n: int,
    seed: int,
    failures: int = 0,
    exclude: set[str] | frozenset[str] = frozenset(),
    budget_left: int | None = None,
    per_trace: bool = False,
    exclude_traces: set[str] | frozenset[str] = frozenset(),
) -> Sample:
    """A stratified random sample of ``n`` claims (and up to ``failures`` more from the failure kinds).

    ``exclude``: item ids already queued. ``budget_left``: how many more items today's budget allows; the random
    slice is served first. ``per_trace``: first draw one claim per trace (a platform queue item is a whole trace,
    so it can carry one claim's labels), its 1/claims folded into the inclusion probability; ``exclude_traces``:
    traces already in that queue. ConfigError when ``n`` is below the number of non-empty strata.
    """
    sample_id = uuid.uuid4().hex
    notes: list[str] = []
    fresh: dict[str, Candidate] = {}
    for c in sorted(pool, key=lambda c: c.item.item_id):
        if c.item.item_id not in exclude and c.item.item_id not in fresh and c.item.trace_id not in exclude_traces:
            fresh[c.item.item_id] = c
    skipped = len({c.item.item_id for c in pool} & set(exclude))
    if skipped:
        notes.append(f"{skipped} item(s) already queued earlier: not queued again")
    first_stage: dict[str, float] = {}
    if per_trace:
        fresh, first_stage = _one_per_trace(fresh, seed)
        notes.append("one claim per trace (a platform queue labels a whole trace): inclusion probabilities include it")
    strata: dict[str, list[Candidate]] = {}
    for c in fresh.values():
        strata.setdefault(c.stratum, []).append(c)
    if n < len(strata):
        raise ConfigError(
            f"sample size {n} is below the {len(strata)} non-empty strata (diagnosis × verdict); "
            f"ask for at least {len(strata)} so every stratum is present"
        )
    if budget_left is not None and budget_left < n:
        if budget_left < len(strata):
            notes.append(
                f"today's budget allows {max(budget_left, 0)} more item(s), fewer than the {len(strata)} strata:"
                " nothing queued today"
            )
            return Sample(sample_id, [], {s: (len(c), 0) for s, c in strata.items()}, notes)
        notes.append(f"sample cut from {n} to {budget_left} by today's budget")
        n = budget_left
    alloc = _allocate({s: len(c) for s, c in strata.items()}, n)
    picked: list[Picked] = []
    for name in sorted(strata):
        members = strata[name]
        chosen = random.Random(f"{seed}|random|{name}").sample(members, alloc[name])
        p = alloc[name] / len(members)
        picked += [
            Picked(c, "random", p * first_stage.get(c.item.item_id, 1.0))
            for c in sorted(chosen, key=lambda c: c.item.item_id)
        ]
    room = failures if budget_left is None else min(failures, budget_left - len(picked))
    if failures and room <= 0:
        notes.append("no room left in today's budget for the failures slice")
    elif room > 0:
        taken = {p.candidate.item.item_id for p in picked}
        flagged = [c for c in fresh.values() if c.failures and c.item.item_id not in taken]
        chosen = random.Random(f"{seed}|failures").sample(flagged, min(room, len(flagged)))
        picked += [Picked(c, "failures", None) for c in sorted(chosen, key=lambda c: c.item.item_id)]
    counts = {s: sum(1 for p in picked if p.slice == "random" and p.candidate.stratum == s) for s in strata}
    return Sample(sample_id, picked, {s: (len(strata[s]), counts[s]) for s in strata}, notes)


def _one_per_trace(fresh: dict[str, Candidate], seed: int) -> tuple[dict[str, Candidate], dict[str, float]]:
    """One claim per trace, drawn by seed; each kept claim's first-stage probability (1 / the trace's claims)."""
    by_trace: dict[str, list[Candidate]] = {}
    for c in fresh.values():
        by_trace.setdefault(c.item.trace_id, []).append(c)
    kept: dict[str, Candidate] = {}
    probability: dict[str, float] = {}
    for trace_id in sorted(by_trace):
        claims = by_trace[trace_id]
        chosen = random.Random(f"{seed}|trace|{trace_id}").choice(claims)
        kept[chosen.item.item_id] = chosen
        probability[chosen.item.item_id] = 1.0 / len(claims)
    return dict(sorted(kept.items())), probability


def record_sample(store: Store, drawn: Sample, *, now: datetime, queue: str | None = None) -> int:
    """Remember every queued item (so it is never queued again) with its slice, probability and judge values;
    returns how many were new (an item already remembered keeps its first row)."""
    rows = [
        (
            p.candidate.item.item_id,
            drawn.sample_id,
            p.slice,
            p.candidate.stratum,
            p.inclusion_probability,
            p.candidate.run_id,
            p.candidate.item.trace_id,
            p.candidate.item.claim_index,
            p.candidate.judge_model,
            p.candidate.rubric_version,
            json.dumps({"values": p.candidate.judge_values}
                       | ({"judge_sample": p.candidate.judge_sample} if p.candidate.judge_sample else {})),
            json.dumps(p.candidate.item.as_dict(), ensure_ascii=False),
            queue,
            None,
            now.astimezone(UTC).isoformat(),
        )
        for p in drawn.picked
    ]
    before = len(queued_ids(store))
    if rows:
        store.write(f"INSERT OR IGNORE INTO calibration_items VALUES ({', '.join('?' * 15)})", rows)
        store.commit()
    return len(queued_ids(store)) - before

