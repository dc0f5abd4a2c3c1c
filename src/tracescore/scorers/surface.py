"""The search API as a decision surface: a per-URL oracle and the SMART / MISSED / BLIND / NO-OP partition.

Every URL the agent saw is one item: its **surface** (title, URL, domain, snippet and provider metadata exactly as
the search result showed them) and, when the agent fetched it, its **page** (passages of the stored text, selected
for the question and the gold answer like grounding selects them). One judge call per trace (the ``surface``
rubric; a few for very wide traces) labels each part ``supports`` / ``contradicts`` / ``neither`` against the gold
answer (``gold_answer``, else ``expected_answer_contains``). Every ``supports``/``contradicts`` carries a verbatim
quote verified in code against the part it names; an unverifiable quote downgrades the label to ``neither`` and is
counted.

The partition, per URL seen in a search result: SMART (surface supports, fetched), MISSED (surface supports, not
fetched), BLIND (surface does not support, fetched), NO-OP (neither). A fetched page that supports while its surface
did not is post-fetch **discovered support**. "Fetched" is the agent's decision: a fetch step for the URL, whatever
its status; a page that failed or came back empty is never labelled (it did not yield).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Protocol
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from tracescore.errors import JudgeError
from tracescore.judge.passages import MAX_SHARE, approx_tokens, chunk_text, select_passages
from tracescore.judge.protocol import Judge, JudgeRequest, JudgeUsage
from tracescore.judge.quotes import verify_quote
from tracescore.judge.rubrics import load_rubric
from tracescore.scores import Score, absent, score
from tracescore.trace import Hit, Trace
from tracescore.urls import normalize_url

__all__ = [
    "CELLS",
    "MAX_CALL_TOKENS",
    "SURFACE_SCORES",
    "Complementarity",
    "SurfaceItem",
    "SurfaceJudgement",
    "UrlRow",
    "collect_items",
    "oracle_requests",
    "complementarity",
    "gold_text",
    "partition",
    "render_surface",
    "support_rows",
    "surface_requests",
    "surface_scorer",
    "surface_scores",
    "take_url_rows",
    "unscorable",
]

SURFACE_SCORES = (
    "surface.support_any",
    "surface.first_support_rank",
    "surface.smart",
    "surface.missed",
    "surface.blind",
    "surface.noop",
    "surface.contradiction_ratio",
    "surface.fetch_yield",
    "surface.discovered_support",
)
CELLS = ("smart", "missed", "blind", "noop")
NO_JUDGE = "no judge configured"
JUDGE_ERROR = "judge_error"
BUDGET_REASON = "judge budget spent"
MAX_CALL_TOKENS = 12_000  # items are packed into one call up to this many tokens; a wider trace takes a few calls
_FAILED_STATUS = re.compile(r"^(4|5)\d\d$|error|fail|timeout", re.IGNORECASE)
_TAG = re.compile(r"<(/?)(items?|surface|page|question|gold_answer)\b", re.IGNORECASE)
Label = Literal["supports", "contradicts", "neither"]


# -- the oracle's reply shape (structured output): only supports/contradicts are listed ----------------------------
class PartLabel(BaseModel):
    id: str = Field(description="the item id, e.g. U3")
    part: Literal["surface", "page"]
    label: Literal["supports", "contradicts"]
    quote: str


class SurfaceJudgement(BaseModel):
    labels: list[PartLabel] = Field(description="every surface or page that supports or contradicts; others: neither")


# -- items ----------------------------------------------------------------------------------------------------------
@dataclass
class SurfaceItem:
    """One URL the agent saw: where it ranked, its surface as shown, and whether (and what) it fetched."""

    key: str
    url: str | None
    rank: int | None = None  # best rank within its own search call; None for a page fetched without a search hit
    search: int | None = None  # index of the search call where it ranked best
    surface: str | None = None
    fetched: bool = False
    page: str | None = None  # the stored text of a successful fetch

    @property
    def domain(self) -> str:
        return (urlsplit(self.url).hostname or "") if self.url else ""


def render_surface(hit: Hit) -> str:
    """A hit's surface as the oracle labels it: the fields the agent saw, in a fixed order (absent ones left out)."""
    lines = [f"title: {hit.title}"] if hit.title else []
    if hit.url:
        lines += [f"url: {hit.url}", f"domain: {urlsplit(hit.url).hostname or ''}"]
    elif hit.doc_id:
        lines.append(f"doc_id: {hit.doc_id}")
    if hit.snippet:
        lines.append(f"snippet: {hit.snippet}")
    meta = dict(hit.metadata) | ({"score": hit.score} if hit.score is not None else {})
    if meta:
        lines.append(f"metadata: {json.dumps(meta, sort_keys=True, ensure_ascii=False, default=str)}")
    return "\n".join(lines)


def _key(url: str | None, doc_id: str | None) -> str | None:
    return normalize_url(url) if url else doc_id


def collect_items(trace: Trace) -> list[SurfaceItem]:
    """Every URL seen in a search result (first seen first), then pages fetched without a hit; fetches attached."""
    items: dict[str, SurfaceItem] = {}
    aliases: dict[str, str] = {}  # doc_id → key, so a fetch naming only the doc id finds its hit
    for s_index, search in enumerate(trace.searches):
        for rank, hit in search.ranked_hits():
            key = _key(hit.url, hit.doc_id)
            if key is None:
                continue
            if hit.doc_id:
                aliases.setdefault(hit.doc_id, key)
            item = items.get(key)
            text = render_surface(hit)
            if item is None:
                items[key] = SurfaceItem(key, hit.url, rank, s_index, text)
                continue
            if item.surface is not None and text not in item.surface:
                item.surface += "\n" + text  # shown again, differently: the agent saw both
            if item.rank is None or rank < item.rank:
                item.rank, item.search = rank, s_index
    for fetch in trace.fetches:
        key = _key(fetch.url, fetch.doc_id)
        if key is None:
            continue
        key = key if key in items else aliases.get(fetch.doc_id or "", key)
        item = items.setdefault(key, SurfaceItem(key, fetch.url))
        item.fetched = True
        failed = fetch.status is not None and bool(_FAILED_STATUS.search(str(fetch.status)))
        if not failed and fetch.text.strip():
            item.page = fetch.text if item.page is None or fetch.text in item.page else item.page + "\n\n" + fetch.text
    return list(items.values())


def gold_text(trace: Trace) -> tuple[str | None, str | None]:
    """The gold answer the oracle labels against, or None with the reason it is absent."""
    labels = trace.labels
    if labels.expect_refusal:
        return None, "refusal case: no gold answer for the surface to support"
    if labels.gold_answer and labels.gold_answer.strip():
        return labels.gold_answer.strip(), None
    if labels.expected_answer_contains:
        return "; ".join(labels.expected_answer_contains), None
    return None, "no gold_answer or expected_answer_contains label"


# -- the request ----------------------------------------------------------------------------------------------------
def _escape(text: str) -> str:
    """Text inside the request cannot open or close our delimiters: tag-like sequences are neutralised."""
    return _TAG.sub(lambda m: "&lt;" + m.group(1) + m.group(2), text)


def _page_passages(page: str, queries: Sequence[str], max_share: float) -> str:
    out: list[str] = []
    last = -1
    for passage in select_passages(chunk_text(page), queries, max_share=max_share):
        if out and passage.index != last + 1:
            out.append("[…]")
        out.append(passage.text)
        last = passage.index
    return "\n".join(out)


def _item_block(label: str, item: SurfaceItem, queries: Sequence[str], max_share: float) -> str:
    if item.surface is not None:
        parts = [f'<item id="{label}">', f"<surface>\n{_escape(item.surface)}\n</surface>"]
    else:  # fetched without appearing in a search result: a page, no surface
        url = (item.url or item.key).replace('"', "%22").replace("<", "%3C").replace(">", "%3E")
        parts = [f'<item id="{label}" url="{url}" note="fetched directly, no search result">']
    if item.page is not None:
        parts.append(f"<page>\n{_escape(_page_passages(item.page, queries, max_share))}\n</page>")
    parts.append("</item>")
    return "\n".join(parts)


def surface_requests(
    trace: Trace,
    items: Sequence[SurfaceItem],
    gold: str,
    *,
    max_share: float = MAX_SHARE,
    max_call_tokens: int = MAX_CALL_TOKENS,
) -> list[tuple[JudgeRequest, dict[str, SurfaceItem]]]:
    """The oracle calls of a trace (usually one), each with its item ids; question and gold are the shared prefix."""
    rubric = load_rubric("surface")
    prefix = f"<question>{_escape(trace.question)}</question>\n<gold_answer>{_escape(gold)}</gold_answer>"
    queries = [f"{trace.question} {gold}", gold]
    calls: list[tuple[list[str], dict[str, SurfaceItem]]] = []
    used = max_call_tokens  # forces a first call
    for n, item in enumerate(items, start=1):
        label = f"U{n}"
        block = _item_block(label, item, queries, max_share)
        size = approx_tokens(block)
        if used + size > max_call_tokens and not (calls and not calls[-1][0]):
            calls.append(([], {}))
            used = 0
        calls[-1][0].append(block)
        calls[-1][1][label] = item
        used += size
    return [
        (JudgeRequest(rubric, "<items>\n" + "\n".join(blocks) + "\n</items>", SurfaceJudgement, prefix=prefix), ids)
        for blocks, ids in calls
    ]


# -- per-URL rows ---------------------------------------------------------------------------------------------------
@dataclass
class UrlRow:
    """One URL of one trace: its labels after quote verification, its partition cell and the quotes behind it."""

    url: str | None
    key: str
    domain: str
    rank: int | None
    search: int | None
    fetched: bool
    surface: Label | None  # None: the URL was fetched without appearing in a search result
    page: Label | None  # None: not fetched, or the fetch yielded no readable page
    cell: str | None  # smart / missed / blind / noop; None without a surface
    discovered: bool = False
    surface_quote: str | None = None
    page_quote: str | None = None
    unverified: list[str] = field(default_factory=list)
    call: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def partition(surface_supports: bool, fetched: bool) -> str:
    """The decision cell of one URL: pre-fetch surface support × the agent's fetch decision."""
    if surface_supports:
        return "smart" if fetched else "missed"
    return "blind" if fetched else "noop"


def _verified_labels(
    judgement: SurfaceJudgement, ids: dict[str, SurfaceItem], call: str
) -> tuple[dict[str, UrlRow], list[str]]:
    """Each item's labels with every quote checked against the part it names; unverifiable → neither, counted."""
    rows: dict[str, UrlRow] = {}
    for label, item in ids.items():
        rows[label] = UrlRow(
            item.url, item.key, item.domain, item.rank, item.search, item.fetched,
            "neither" if item.surface is not None else None,
            "neither" if item.page is not None else None,
            None, call=call,
        )  # fmt: skip
    unverified: list[str] = []
    for entry in judgement.labels:
        label = entry.id.strip().upper()
        found, row = ids.get(label), rows.get(label)
        if found is None or row is None:
            unverified.append(f"{entry.id}: no such item")
            continue
        item = found
        text = item.surface if entry.part == "surface" else item.page
        current = row.surface if entry.part == "surface" else row.page
        if text is None or current is None:
            unverified.append(f"{item.url or item.key}: no {entry.part} to quote")
            continue
        if current == "supports" or (current == "contradicts" and entry.label == "contradicts"):
            continue  # supports wins over contradicts; a second quote for the same label adds nothing
        if not verify_quote(entry.quote, text).found:
            note = f"{item.url or item.key} ({entry.part}, {entry.label}): {entry.quote!r}"
            row.unverified.append(note)
            unverified.append(note)
            continue
        if entry.part == "surface":
            row.surface, row.surface_quote = entry.label, entry.quote
        else:
            row.page, row.page_quote = entry.label, entry.quote
    for row in rows.values():
        if row.surface is not None:
            row.cell = partition(row.surface == "supports", row.fetched)
            row.discovered = row.surface != "supports" and row.page == "supports"
    return rows, unverified


# -- scores ---------------------------------------------------------------------------------------------------------
def surface_scores(rows: Sequence[UrlRow], meta: dict[str, Any], unverified: Sequence[str] = ()) -> list[Score]:
    """The surface.* scores of one trace from its per-URL rows (pure: the maths, no judge)."""
    shown = [r for r in rows if r.surface is not None]
    supporting = [r for r in shown if r.surface == "supports"]
    contradicting = [r for r in shown if r.surface == "contradicts"]
    fetched = [r for r in rows if r.fetched]
    cells = {c: sum(1 for r in shown if r.cell == c) for c in CELLS}
    meta = dict(meta) | {"unverified_quotes": len(unverified)}
    if unverified:
        meta["unverified"] = list(unverified[:10])
    out = [score("surface.support_any", bool(supporting), **meta)]
    ranks = [r.rank for r in supporting if r.rank is not None]
    out.append(
        score("surface.first_support_rank", float(min(ranks)), **meta)
        if ranks
        else absent("surface.first_support_rank", "no search result's surface supports the gold answer", **meta)
    )
    missed = [r.url or r.key for r in shown if r.cell == "missed"]
    for cell in CELLS:
        comment = f"supporting results never opened: {', '.join(missed[:3])}" if cell == "missed" and missed else None
        out.append(score(f"surface.{cell}", float(cells[cell]), comment=comment, urls=len(shown), **meta))
    out.append(
        score(
            "surface.contradiction_ratio",
            len(contradicting) / len(supporting),
            contradicting=len(contradicting),
            supporting=len(supporting),
            **meta,
        )
        if supporting
        else absent("surface.contradiction_ratio", "no search result's surface supports the gold answer", **meta)
    )
    yielded = [r for r in fetched if r.page == "supports"]
    out.append(
        score("surface.fetch_yield", len(yielded) / len(fetched), fetched=len(fetched), yielded=len(yielded), **meta)
        if fetched
        else absent("surface.fetch_yield", "no page fetched", **meta)
    )
    discovered = [r.url or r.key for r in shown if r.discovered]
    out.append(
        score(
            "surface.discovered_support",
            float(len(discovered)),
            comment=f"supported only after opening: {', '.join(discovered[:3])}" if discovered else None,
            **meta,
        )
    )
    return out


def unscorable(trace: Trace) -> str | None:
    """Why the oracle would not label this trace (no gold answer, an unreadable step, no search), or None."""
    gold, why = gold_text(trace)
    if gold is None:
        return why or "no gold answer"
    if trace.blind_spots:
        spot = trace.blind_spots[0]
        return f"a {spot.kind} step could not be read: {spot.reason}"
    if not trace.searches:
        return "no search step"
    return None


def oracle_requests(
    trace: Trace, *, max_share: float = MAX_SHARE, max_call_tokens: int = MAX_CALL_TOKENS
) -> list[JudgeRequest]:
    """The requests ``surface_scorer`` will send for ``trace`` (same content keys), for batch prefill and estimates."""
    gold, _ = gold_text(trace)
    if unscorable(trace) is not None or gold is None:
        return []
    calls = surface_requests(trace, collect_items(trace), gold, max_share=max_share, max_call_tokens=max_call_tokens)
    return [request for request, _ in calls]


def _all_absent(reason: str, comment: str | None = None, **meta: Any) -> list[Score]:
    return [Score(name=n, reason=reason, comment=comment, metadata=meta) for n in SURFACE_SCORES]


def surface_scorer(
    *,
    judge: Judge | None,
    no_judge_reason: str = NO_JUDGE,
    max_cost: float | None = None,
    max_share: float = MAX_SHARE,
    max_call_tokens: int = MAX_CALL_TOKENS,
) -> Callable[[Trace], list[Score]]:
    """Scorer factory for the surface stage: the per-URL oracle, the partition and the surface.* scores.

    Without a judge or a gold answer every surface.* score is absent with the reason; so is it when a search or a
    fetch could not be read (the partition would rest on a blind spot), when the trace has no search step, on a judge
    error (``judge_error``) and once ``max_cost`` USD is spent. The per-URL rows ride on ``surface.smart``'s metadata
    (``urls``) until ``take_url_rows`` moves them to their own table.
    """
    rubric = load_rubric("surface")

    def score_surface(trace: Trace) -> list[Score]:
        if judge is None:
            return _all_absent(no_judge_reason)
        why, (gold, _) = unscorable(trace), gold_text(trace)
        if why is not None or gold is None:
            return _all_absent(why or "no gold answer")
        if max_cost is not None and judge.usage.cost_usd >= max_cost:
            return _all_absent(f"{BUDGET_REASON} (${judge.usage.cost_usd:.4f} of max ${max_cost:.4f})")
        meta: dict[str, Any] = {"judge_model": judge.model, "rubric_version": rubric.version}
        items = collect_items(trace)
        rows: list[UrlRow] = []
        unverified: list[str] = []
        spent = JudgeUsage()  # this trace's oracle calls (cache hits cost nothing), for the result line
        for request, ids in surface_requests(trace, items, gold, max_share=max_share, max_call_tokens=max_call_tokens):
            try:
                reply = judge.judge(request)
            except JudgeError as exc:
                return _all_absent(JUDGE_ERROR, comment=str(exc), **meta)
            if not reply.cached:
                spent.bill(reply)
            labelled, bad = _verified_labels(reply.output, ids, reply.key)
            rows += labelled.values()
            unverified += bad
        meta["oracle_calls"], meta["judge_usage"] = spent.calls, spent.as_dict()
        fetch_tokens = sum(approx_tokens(item.page) for item in items if item.page is not None)
        extra: dict[str, dict[str, Any]] = {
            "surface.smart": {"urls": [r.as_dict() for r in rows]},
            "surface.fetch_yield": {"fetch_tokens": fetch_tokens},  # what the agent read, for the provider report
        }
        return [
            s.model_copy(update={"metadata": s.metadata | extra[s.name]}) if s.name in extra else s
            for s in surface_scores(rows, meta, unverified)
        ]

    score_surface.__name__ = "surface"
    return score_surface


def take_url_rows(scores: dict[str, Score]) -> list[UrlRow]:
    """Move the per-URL rows off ``surface.smart``'s metadata (they go to their own store table, not twice)."""
    smart = scores.get("surface.smart")
    if smart is None or "urls" not in smart.metadata:
        return []
    rows = [UrlRow(**row) for row in smart.metadata["urls"]]
    scores["surface.smart"] = smart.model_copy(
        update={"metadata": {k: v for k, v in smart.metadata.items() if k != "urls"}}
    )
    return rows


# -- complementarity across providers (pure, over results) ---------------------------------------------------------
@dataclass(frozen=True)
class Complementarity:
    """Same questions, several providers: whose surface supported which question, alone or together."""

    providers: tuple[str, ...]
    questions: int  # questions that ran on at least two providers with a surface label
    supported: dict[str, int]  # provider → questions its surface supported
    only: dict[str, list[str]]  # provider → questions only its surface supported
    union: int  # questions at least one provider's surface supported
    none: list[str]  # questions no provider's surface supported


class _Scored(Protocol):
    @property
    def scores(self) -> Mapping[str, Score]: ...

    @property
    def metadata(self) -> Mapping[str, Any]: ...


def _lookup(result: _Scored, key: str) -> str | None:
    if key == "trace_id":
        value = getattr(result, "trace_id", None)
    else:
        value = result.metadata.get(key.removeprefix("metadata."))
    return None if value is None else str(value)


def support_rows(
    results: Iterable[_Scored], *, case_key: str = "trace_id", provider_key: str = "metadata.provider"
) -> list[tuple[str, str, bool | None]]:
    """(case, provider, surface.support_any) per result (``TraceResult``); results missing a key are left out."""
    out: list[tuple[str, str, bool | None]] = []
    for result in results:
        case, provider = _lookup(result, case_key), _lookup(result, provider_key)
        if case is None or provider is None:
            continue
        found = result.scores.get("surface.support_any")
        value = found.value if found is not None else None
        out.append((case, provider, value if isinstance(value, bool) else None))
    return out


def complementarity(rows: Iterable[tuple[str, str, bool | None]]) -> Complementarity:
    """From (case key, provider, surface.support_any) rows: per-provider support, sole support and the union.

    Only questions that ran on at least two providers count; an absent support (None) is left out, never read as
    False. A provider that ran a question twice supports it when any run's surface did.
    """
    by_case: dict[str, dict[str, bool]] = {}
    for case, provider, ok in rows:
        if ok is None:
            continue
        seen = by_case.setdefault(case, {})
        seen[provider] = seen.get(provider, False) or ok
    shared = {c: p for c, p in by_case.items() if len(p) >= 2}
    providers = tuple(sorted({p for per in shared.values() for p in per}))
    supported = {p: sum(1 for per in shared.values() if per.get(p)) for p in providers}
    only: dict[str, list[str]] = {p: [] for p in providers}
    union = 0
    none: list[str] = []
    for case in sorted(shared):
        yes = [p for p, ok in shared[case].items() if ok]
        union += bool(yes)
        if len(yes) == 1:
            only[yes[0]].append(case)
        if not yes:
            none.append(case)
    return Complementarity(providers, len(shared), supported, only, union, none)
