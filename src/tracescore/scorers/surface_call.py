"""The surface oracle's calls: every URL the agent saw as one item (surface as shown, page as fetched), packed into
delimited requests against the gold answer, and the reply shape the judge must fill.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, Field

from tracescore.judge.passages import MAX_SHARE, approx_tokens, chunk_text, select_passages
from tracescore.judge.protocol import JudgeRequest
from tracescore.judge.rubrics import Rubric, load_rubric
from tracescore.reasons import Reasons
from tracescore.scorers.answer import gold_answers
from tracescore.trace import Hit, Trace, fetch_failed
from tracescore.urls import normalize_url

MAX_CALL_TOKENS = 12_000  # items are packed into one call up to this many tokens; a wider trace takes a few calls
_TAG = re.compile(r"<(/?)(items?|surface|page|question|gold_answer)\b", re.IGNORECASE)


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
        failed = fetch_failed(fetch.status)
        if not failed and fetch.text.strip():
            item.page = fetch.text if item.page is None or fetch.text in item.page else item.page + "\n\n" + fetch.text
    return list(items.values())


def gold_text(trace: Trace) -> tuple[str | None, str | None]:
    """The gold answer the oracle labels against, or None with the reason it is absent."""
    labels = trace.labels
    if labels.expect_refusal:
        return None, Reasons.SURFACE_REFUSAL.text
    if golds := [gold.strip() for gold in gold_answers(labels) if gold.strip()]:
        return " OR ".join(golds), None  # several acceptable answers (gold_answers): any of them is the gold
    if labels.expected_answer_contains:
        return "; ".join(labels.expected_answer_contains), None
    return None, Reasons.NO_GOLD_OR_EXPECTED.text


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
    rubric: Rubric | None = None,
) -> list[tuple[JudgeRequest, dict[str, SurfaceItem]]]:
    """The oracle calls of a trace (usually one), each with its item ids; question and gold are the shared prefix.
    ``rubric``: default the bundled ``surface``."""
    rubric = rubric or load_rubric("surface")
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
