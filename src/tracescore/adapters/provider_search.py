"""Provider built-in web search (OpenAI, Anthropic, Gemini) read out of one model call's recorded output."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel, Field

from tracescore.adapters.fields import parse_maybe_json
from tracescore.adapters.hits import extract_hits
from tracescore.adapters.notes import note
from tracescore.trace import BlindSpot, Citation, FetchStep, Hit, SearchStep


# -- provider built-in web search -----------------------------------------------------------------------------------
class ProviderSearch(BaseModel):
    """Searches a model call ran with its provider's built-in web search, the URLs its answer cites, blind spots."""

    searches: list[SearchStep] = Field(default_factory=list)
    fetches: list[FetchStep] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    blind_spots: list[BlindSpot] = Field(default_factory=list)


_SEARCH_TOOL_TYPES = re.compile(r"^web_search(_preview)?(_\d+)?$")
_GEMINI_SEARCH_KEYS = ("googleSearch", "google_search", "googleSearchRetrieval", "google_search_retrieval")


def _nodes(value: Any, depth: int = 12) -> Iterator[Mapping[str, Any]]:
    """Every mapping inside ``value`` (JSON strings decoded), depth first, in document order."""
    value = parse_maybe_json(value)
    if depth < 0:
        return
    if isinstance(value, Mapping):
        yield value
        children: Iterable[Any] = value.values()
    elif isinstance(value, list | tuple):
        children = value
    else:
        return
    for child in children:
        if isinstance(child, Mapping | list | tuple) or (isinstance(child, str) and child[:1] in ("{", "[")):
            yield from _nodes(child, depth - 1)


def declared_search_tool(request: Any) -> str | None:
    """The provider built-in web search tool a model call declares (OpenAI ``web_search``, Anthropic
    ``web_search_20250305``, Gemini ``googleSearch``), or None."""
    for node in _nodes(request):
        kind = node.get("type")
        if isinstance(kind, str) and _SEARCH_TOOL_TYPES.match(kind):
            return kind
        for key in _GEMINI_SEARCH_KEYS:
            if key in node:
                return key
    return None


def _get(node: Mapping[str, Any], *keys: str) -> Any:
    """The first of ``keys`` present (camelCase REST and snake_case SDK spellings of one field)."""
    for key in keys:
        if node.get(key) is not None:
            return parse_maybe_json(node[key])
    return None


def builtin_search(output: Any, request: Any = None, seen: set[str] | None = None) -> ProviderSearch:
    """Built-in web searches in one model call's recorded output, with the URLs its answer cites.

    OpenAI Responses ``web_search_call`` items (query; ``action.sources`` when included) and ``url_citation``
    annotations (which are the results the answer used: they become the hits when the call lists no sources);
    Anthropic ``server_tool_use`` + ``web_search_tool_result`` blocks and ``citations`` on text blocks (its
    ``web_fetch`` server tool calls, ``web_fetch_tool_result`` blocks, are the ``fetches``); Gemini
    ``groundingMetadata`` (``webSearchQueries``, ``groundingChunks``, ``groundingSupports``). A declared search tool
    whose calls or results the output does not show is a blind spot. ``seen`` (search ids) skips a response recorded
    twice (a parent and a child generation).
    """
    seen = seen if seen is not None else set()
    found = ProviderSearch()
    searches: list[tuple[str, SearchStep]] = []
    cited: list[Hit] = []
    anthropic_results: dict[str, list[Hit] | None] = {}
    anthropic_calls: list[tuple[str, str]] = []
    anthropic_fetches: list[tuple[str, str]] = []
    anthropic_fetched: dict[str, Mapping[str, Any]] = {}
    for node in _nodes(output):
        kind = node.get("type")
        if kind == "web_search_call":
            action = _get(node, "action") or {}
            query = action.get("query") if isinstance(action, Mapping) else None
            if not query and isinstance(action, Mapping) and isinstance(action.get("queries"), list):
                query = "; ".join(str(q) for q in action["queries"])
            sources = action.get("sources") if isinstance(action, Mapping) else None
            hits = extract_hits(sources, ()) if isinstance(sources, list) else None
            key = f"openai:{node.get('id') or len(searches)}"
            searches.append((key, SearchStep(tool="web_search", query=str(query or ""), hits=hits or [])))
        elif kind == "url_citation":
            inner = _get(node, "url_citation")
            source = inner if isinstance(inner, Mapping) else node
            url = source.get("url")
            if isinstance(url, str) and url:
                title = source.get("title") if isinstance(source.get("title"), str) else None
                cited.append(Hit(url=url, title=title))
                found.citations.append(Citation(url=url))
        elif kind == "server_tool_use" and node.get("name") == "web_search":
            query = _get(node, "input")
            query = query.get("query") if isinstance(query, Mapping) else query
            anthropic_calls.append((str(node.get("id") or ""), str(query or "")))
        elif kind == "server_tool_use" and node.get("name") == "web_fetch":
            target = _get(node, "input")
            target = target.get("url") if isinstance(target, Mapping) else target
            anthropic_fetches.append((str(node.get("id") or ""), str(target or "")))
        elif kind == "web_fetch_tool_result":
            result = _get(node, "content")
            anthropic_fetched[str(node.get("tool_use_id") or "")] = result if isinstance(result, Mapping) else {}
        elif kind == "web_search_tool_result":
            content = _get(node, "content")
            hits = extract_hits(content, ()) if isinstance(content, list) else []
            anthropic_results[str(node.get("tool_use_id") or "")] = hits
        elif kind == "text" and isinstance(node.get("citations"), list):  # Anthropic: citations on a text block
            sentence = node.get("text") if isinstance(node.get("text"), str) else None
            for citation in node["citations"]:
                url = citation.get("url") if isinstance(citation, Mapping) else None
                if isinstance(url, str) and url:
                    found.citations.append(Citation(url=url, sentence=(sentence or "").strip() or None))
        metadata = _get(node, "groundingMetadata", "grounding_metadata")
        if isinstance(metadata, Mapping):
            _gemini(metadata, searches, found)
    for call_id, query in anthropic_calls:
        hits = anthropic_results.get(call_id)
        searches.append((f"anthropic:{call_id}", SearchStep(tool="web_search", query=query, hits=hits or [])))
        if hits is None:
            found.blind_spots.append(
                BlindSpot(kind="search", tool="web_search", reason=f"Anthropic web_search {call_id}: no result block")
            )
    for call_id, url in anthropic_fetches:
        if f"anthropic-fetch:{call_id}" not in seen:
            seen.add(f"anthropic-fetch:{call_id}")
            _anthropic_fetch(call_id, url, anthropic_fetched.get(call_id), found)
    if cited:
        openai = [s for k, s in searches if k.startswith("openai:")]
        if openai and not any(s.hits for s in openai):  # the cited results are those the answer used
            key, last = next((k, s) for k, s in reversed(searches) if k.startswith("openai:"))
            searches[searches.index((key, last))] = (key, last.model_copy(update={"hits": _ranked(cited)}))
        elif not openai and not searches:  # search-preview models: annotations without a web_search_call item
            searches.append(("openai:annotations", SearchStep(tool="web_search", query="", hits=_ranked(cited))))
    for key, step in searches:
        if key not in seen:
            seen.add(key)
            found.searches.append(step)
    openai_steps = [s for k, s in searches if k.startswith("openai:")]
    # OpenAI shows results only as `action.sources` or as the answer's url_citation annotations: blind when neither
    unread = openai_steps if not any(s.hits for s in openai_steps) else []
    for step in unread:
        found.blind_spots.append(
            BlindSpot(
                kind="search",
                tool=step.tool,
                reason=f"OpenAI web_search_call {step.query!r}: results not recorded (no sources, no url_citation)",
            )
        )
    declared = declared_search_tool(request)
    if declared and not searches:
        found.blind_spots.append(
            BlindSpot(
                kind="search",
                tool=declared,
                reason=f"model call declares built-in search {declared!r} but its recorded output shows no search "
                "calls or results",
            )
        )
    return found


def add_builtin_search(
    label: str,
    output: Any,
    request: Any,
    seen: set[str],
    steps: list[SearchStep | FetchStep],
    citations: list[Citation],
    blind: list[BlindSpot],
) -> None:
    """One model call's built-in searches added to the trace an adapter builds (each blind spot once), and noted."""
    found = builtin_search(output, request, seen)
    steps.extend(found.searches)
    steps.extend(found.fetches)
    citations.extend(found.citations)
    blind.extend(b for b in found.blind_spots if b not in blind)
    if found.searches or found.fetches or found.blind_spots:
        note(
            label,
            "built-in search",
            f"{len(found.searches)} searches, {len(found.fetches)} fetches, {len(found.citations)} cited URLs"
            + "".join(f"; blind spot: {b.reason}" for b in found.blind_spots),
        )


def _anthropic_fetch(call_id: str, url: str, result: Mapping[str, Any] | None, found: ProviderSearch) -> None:
    """One Anthropic ``web_fetch`` server tool call as a fetch step: the page text of its ``web_fetch_result``
    document, status error for a ``web_fetch_tool_result_error``, a blind spot when no result block was recorded."""
    if result is None:
        found.fetches.append(FetchStep(tool="web_fetch", url=url or None))
        reason = f"Anthropic web_fetch {call_id}: no result block"
        found.blind_spots.append(BlindSpot(kind="fetch", tool="web_fetch", reason=reason))
        return
    if result.get("type") != "web_fetch_result":  # web_fetch_tool_result_error {error_code}
        found.fetches.append(FetchStep(tool="web_fetch", url=url or None, status="error"))
        return
    document = _get(result, "content")
    source = _get(document, "source") if isinstance(document, Mapping) else None
    text = source.get("data") if isinstance(source, Mapping) and source.get("type") == "text" else None
    fetched_url = result.get("url") if isinstance(result.get("url"), str) and result.get("url") else url
    step = FetchStep(tool="web_fetch", url=fetched_url or None, text=text if isinstance(text, str) else "")
    found.fetches.append(step)


def _ranked(hits: list[Hit]) -> list[Hit]:
    unique: dict[str, Hit] = {}
    for hit in hits:
        unique.setdefault(hit.url or "", hit)
    return [h.model_copy(update={"rank": i}) for i, h in enumerate(unique.values(), start=1)]


def _gemini(metadata: Mapping[str, Any], searches: list[tuple[str, SearchStep]], found: ProviderSearch) -> None:
    queries = _get(metadata, "webSearchQueries", "web_search_queries", "retrievalQueries", "retrieval_queries")
    queries = [str(q) for q in queries] if isinstance(queries, list) else []
    chunks = _get(metadata, "groundingChunks", "grounding_chunks")
    chunks = chunks if isinstance(chunks, list) else []
    hits: list[Hit] = []
    urls: list[str | None] = []
    for position, chunk in enumerate(chunks, start=1):
        source = _get(chunk, "web", "retrievedContext", "retrieved_context") if isinstance(chunk, Mapping) else None
        url = source.get("uri") if isinstance(source, Mapping) else None
        urls.append(url if isinstance(url, str) else None)
        if isinstance(source, Mapping) and (url or source.get("title")):
            text = source.get("text") if isinstance(source.get("text"), str) else None
            title = source.get("title") if isinstance(source.get("title"), str) else None
            hits.append(Hit(rank=position, url=url if isinstance(url, str) else None, title=title, snippet=text))
    supports = _get(metadata, "groundingSupports", "grounding_supports")
    for support in supports if isinstance(supports, list) else []:
        if not isinstance(support, Mapping):
            continue
        segment = _get(support, "segment")
        sentence = segment.get("text") if isinstance(segment, Mapping) else None
        for index in _get(support, "groundingChunkIndices", "grounding_chunk_indices") or []:
            if isinstance(index, int) and 0 <= index < len(urls) and urls[index]:
                found.citations.append(
                    Citation(url=urls[index], sentence=sentence if isinstance(sentence, str) else None)
                )
    if not queries and not chunks:
        return
    key = "gemini:" + json.dumps([queries, urls])
    searches.append((key, SearchStep(tool="google_search", query="; ".join(queries), hits=hits)))
    if queries and not hits:
        found.blind_spots.append(
            BlindSpot(kind="search", tool="google_search", reason=f"Gemini searched {queries!r}: no grounding chunks")
        )
