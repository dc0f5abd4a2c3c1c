"""Ranked search hits and tool-call semantics out of the shapes tool spans commonly record, for adapters."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tracescore.adapters.browser import markdown_hits, read_page
from tracescore.adapters.fields import get_path, parse_maybe_json, unflatten_indexed
from tracescore.adapters.text import message_role
from tracescore.trace import Hit

_URL_KEYS = ("url", "link", "href", "source", "uri", "file_path")
_ID_KEYS = ("doc_id", "document_id", "id", "docid", "_id")
_TITLE_KEYS = ("title", "name")
_SNIPPET_KEYS = ("snippet", "content", "page_content", "pageContent", "text", "description", "body", "summary", "chunk")
_RANK_KEYS = ("rank", "position")


def _first_str(mapping: Mapping[str, Any], keys: Iterable[str]) -> str | None:
    for key in keys:
        value = mapping.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def _looks_like_url(text: str) -> bool:
    return bool(re.match(r"^[a-z][a-z0-9+.-]*://\S+$", text.strip(), re.IGNORECASE))


def hit_from_item(item: Any) -> Hit | None:
    """One search result → ``Hit`` (rank left unset), from the common shapes; None when nothing identifies it.

    Recognised: LangChain documents (``page_content`` + ``metadata``), OpenInference documents (``{"document": {id,
    content, metadata, score}}``), plain ``{url, title, snippet}`` dicts (with usual synonyms) and bare URL strings.
    """
    item = parse_maybe_json(item)
    if isinstance(item, str):
        return Hit(url=item.strip()) if _looks_like_url(item) else None
    if not isinstance(item, Mapping):
        return None
    if isinstance(item.get("document"), Mapping):  # OpenInference
        item = item["document"]
    meta = parse_maybe_json(item.get("metadata"))
    meta = meta if isinstance(meta, Mapping) else {}
    url = _first_str(item, _URL_KEYS) or _first_str(meta, _URL_KEYS)
    doc_id = _first_str(item, _ID_KEYS) or _first_str(meta, _ID_KEYS)
    title = _first_str(item, _TITLE_KEYS) or _first_str(meta, _TITLE_KEYS)
    snippet = _first_str(item, _SNIPPET_KEYS)
    if url and not _looks_like_url(url) and doc_id is None:
        doc_id, url = url, None  # a "source" that is a file name or an id, not a URL
    elif url and not _looks_like_url(url):
        url = None
    if not any((url, doc_id, title, snippet)):
        return None
    rank = item.get("rank", item.get("position"))
    rank = rank if isinstance(rank, int) and not isinstance(rank, bool) and rank >= 1 else None
    score = parse_maybe_json(item.get("score"))
    score = float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None
    return Hit(rank=rank, doc_id=doc_id, url=url, title=title, snippet=snippet, score=score, metadata=dict(meta))


def _items_at(value: Any, paths: Sequence[str]) -> list[Any] | None:
    value = parse_maybe_json(value)
    if isinstance(value, list):
        return value
    if not isinstance(value, Mapping):
        return None
    for path in paths:
        found = get_path(value, path)
        if isinstance(found, list):
            return found
        if isinstance(found, Mapping):
            nested = _items_at(found, paths)
            if nested is not None:
                return nested
    for path in paths:  # flat OpenInference attributes: "retrieval.documents.0.document.id", …, at any depth
        flat = find_flat(value, path)
        if flat:
            return flat
    return None


def find_flat(value: Any, prefix: str, depth: int = 4) -> list[dict[str, Any]]:
    """Flat ``{prefix}.{i}.…`` attributes unflattened, from ``value`` or the first mapping below it that has them.

    OpenInference spans exported over OTel keep retrieved documents as flat keys under ``metadata.attributes``
    (``retrieval.documents.0.document.content``): no dotted path reaches keys that contain dots below a nested object.
    """
    value = parse_maybe_json(value)
    if not isinstance(value, Mapping) or depth < 0:
        return []
    found = unflatten_indexed(value, prefix)
    if found:
        return found
    for child in value.values():
        child = parse_maybe_json(child)
        if isinstance(child, Mapping):
            found = find_flat(child, prefix, depth - 1)
            if found:
                return found
    return []


def output_error(outputs: Any) -> str | None:
    """``"failed: <error>"`` when a tool's output is an object whose ``error`` field is set (not null, empty or
    false): the tool caught its failure and said so instead of raising; else None."""
    error = outputs.get("error") if isinstance(outputs, Mapping) else None
    detail = error if isinstance(error, str) else json.dumps(error, default=str) if error else ""
    return f"failed: {detail.strip()[:120]}" if detail.strip() else None


def tool_result(value: Any) -> tuple[Any, str | None]:
    """``(output, error)`` of a tool call's result: the output as ``tool_output`` unwraps it, and the reason when a
    LangChain tool message on the way says ``status: "error"`` (a tool with ``handle_tool_error`` returns its error
    as such a message: the call is not marked failed, its content is the error text) or the output is an object
    with a non-empty ``error`` field and no result list beside it (``{"error": "rate limited", "results": []}``:
    ``output_error``), else None. Either way the call failed: a search's results are not read, a fetch's page is
    not read."""
    value = parse_maybe_json(value)
    error: str | None = None
    for _ in range(3):
        if not isinstance(value, Mapping):
            break
        lc_id = value.get("id")
        if "content" in value and (
            message_role(value) == "tool" or value.get("tool_call_id") is not None or value.get("type") == "tool"
        ):
            error = error or _message_error(value)
            value = parse_maybe_json(value["content"])
        elif isinstance(value.get("kwargs"), Mapping) and isinstance(lc_id, list) and lc_id[-1:] == ["ToolMessage"]:
            error = error or _message_error(value["kwargs"])
            value = parse_maybe_json(value["kwargs"].get("content"))
        elif set(value) == {"output"}:
            value = parse_maybe_json(value["output"])
        else:
            break
    return value, error or (None if _holds_results(value) else output_error(value))


def _holds_results(value: Any) -> bool:
    """Whether an output object holds a non-empty list beside its ``error`` (a partial failure): those results were
    shown to the agent, so they are read (not reading them would count every URL cited from them as fabricated)."""
    return isinstance(value, Mapping) and any(
        isinstance(v, list) and not all(_blank(item) for item in v) for v in value.values()
    )


def _message_error(message: Mapping[str, Any]) -> str | None:
    """The reason a tool message with ``status: "error"`` gives (its content, cut), else None."""
    if str(message.get("status") or "").lower() != "error":
        return None
    content = message.get("content")
    detail = content if isinstance(content, str) else json.dumps(content, default=str)
    return f"tool message status error: {detail.strip()[:120]}" if detail.strip() else "tool message status error"


def tool_output(value: Any) -> Any:
    """A tool call's result: a LangChain tool message's ``content`` (plain or serialised) or a lone ``{"output": x}``
    unwrapped; anything else as decoded (``tool_result`` also says whether the message reported an error)."""
    return tool_result(value)[0]


def span_attributes(metadata: Any) -> Mapping[str, Any]:
    """The flat OTel span attributes of a record's metadata (Langfuse keeps them under ``metadata.attributes``)."""
    metadata = parse_maybe_json(metadata)
    if not isinstance(metadata, Mapping):
        return {}
    attributes = parse_maybe_json(metadata.get("attributes"))
    return attributes if isinstance(attributes, Mapping) else metadata


def tool_semantics(attributes: Mapping[str, Any], output: Any = None) -> tuple[str | None, str | None]:
    """``(role, tool name)`` of a generic span: role ``"search"`` for a retriever, ``"tool"`` for a tool call, None.

    Tool semantics: ``openinference.span.kind`` TOOL/RETRIEVER (any other kind, e.g. AGENT or CHAIN, is not a tool
    call even when it names a tool), ``gen_ai.operation.name = execute_tool``, a ``tool.name``/``gen_ai.tool.name``
    attribute or tool-call id, or an output that is a tool message (``tool_call_id``).
    """
    name = attributes.get("tool.name") or attributes.get("gen_ai.tool.name")
    name = str(name) if isinstance(name, str) and name.strip() else None
    kind = str(attributes.get("openinference.span.kind") or "").upper()
    if kind == "RETRIEVER":
        return "search", name
    if kind:
        return ("tool", name) if kind == "TOOL" else (None, None)
    if attributes.get("gen_ai.operation.name") == "execute_tool" or name or attributes.get("gen_ai.tool.call.id"):
        return "tool", name
    output = parse_maybe_json(output)
    if isinstance(output, Mapping) and (output.get("tool_call_id") is not None or message_role(output) == "tool"):
        return "tool", str(output.get("name")) if isinstance(output.get("name"), str) else None
    return None, None


def extract_hits(value: Any, paths: Sequence[str]) -> list[Hit] | None:
    """Ranked hits from a search output: a list itself, or the first list found at ``paths``, or text that is a
    Markdown result list (``adapters.browser.markdown_hits``: a text browser's search page); None when none is, or
    when the list holds items but none identifies a hit (plain text, unknown keys: the agent saw something there that
    cannot be read, a blind spot rather than 0 hits; a list of only empty items is 0 hits).

    Ranks are the explicit ``rank``/``position`` of an item when given, else its 1-based list position (items that
    identify nothing are skipped but still take their position, so ranks stay those the agent saw).
    """
    value = parse_maybe_json(value)
    if isinstance(value, str):  # a text browser's search page, or a plain Markdown result list
        page = read_page(value)
        return markdown_hits(page.text if page is not None else value)
    items = _items_at(value, paths)
    if items is None:
        return None
    hits: list[Hit] = []
    for position, item in enumerate(items, start=1):
        hit = hit_from_item(item)
        if hit is not None:
            hits.append(hit if hit.rank is not None else hit.model_copy(update={"rank": position}))
    if not hits and any(not _blank(item) for item in items):
        return None
    return hits


def _blank(item: Any) -> bool:
    """An item that shows nothing: null, whitespace text, or an object/list whose values are all null or empty."""
    if item is None:
        return True
    if isinstance(item, str):
        return not item.strip()
    if isinstance(item, Mapping):
        return all(v in (None, "", [], {}) for v in item.values())
    if isinstance(item, list):
        return all(v in (None, "", [], {}) for v in item)
    return False


def unread_shape(output: Any, paths: Sequence[str]) -> str:
    """Why a recorded search output gave no hits (``extract_hits`` said None), for its blind spot's reason."""
    if _items_at(output, paths):
        return "its results identify nothing (no url, id, title or snippet)"
    return f"output is {type(output).__name__}, no result list"
