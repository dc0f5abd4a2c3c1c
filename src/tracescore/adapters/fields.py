"""Platform-agnostic field helpers for adapters: decode maybe-JSON values, look up field paths, pull ranked hits and
page text out of the shapes tool calls commonly record, and the ``MappingConfig`` that says where to look.

Shared by every platform adapter (Langfuse, LangSmith, …): they differ in how they walk their records, not in how a
search result or a fetched page is recognised. Nothing here does I/O.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from fnmatch import fnmatchcase
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tracescore.trace import BlindSpot, Citation, Hit, Labels, SearchStep

__all__ = [
    "MISSING",
    "MappingConfig",
    "MappingNote",
    "ProviderSearch",
    "answer_text",
    "builtin_search",
    "collect_notes",
    "declared_search_tool",
    "find_flat",
    "note",
    "tool_output",
    "tool_semantics",
    "extract_hits",
    "extract_labels",
    "extract_text",
    "first_path",
    "get_path",
    "hit_from_item",
    "last_assistant_message",
    "last_user_message",
    "message_role",
    "message_text",
    "parse_maybe_json",
    "question_text",
    "span_attributes",
    "split_path",
    "text_of",
    "unflatten_indexed",
]


class _Missing:
    """Sentinel: a path that leads nowhere (distinct from a value that is ``None``)."""

    _instance: _Missing | None = None

    def __new__(cls) -> _Missing:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()

_MAX_JSON_DEPTH = 3
_PATH_TOKEN = re.compile(r"[^.\[\]]+|\[(-?\d+)\]")


# -- decoding ---------------------------------------------------------------------------------------------------
def parse_maybe_json(value: Any, *, max_depth: int = _MAX_JSON_DEPTH) -> Any:
    """Decode ``value`` when it is JSON text (also double-encoded, up to ``max_depth`` layers); else return it as is.

    Platforms hand back tool inputs/outputs as objects, as JSON strings, or as JSON strings of JSON strings; a plain
    string that merely looks like JSON but does not parse is kept as text.
    """
    for _ in range(max_depth):
        if isinstance(value, bytes | bytearray):
            value = value.decode("utf-8", errors="replace")
        if not isinstance(value, str):
            return value
        text = value.strip()
        if not text or text[0] not in '[{"' and text not in ("null", "true", "false"):
            return value
        try:
            value = json.loads(text)
        except ValueError:
            return _python_literal(text, value)
        except RecursionError:
            return value
    return value


def _python_literal(text: str, original: Any) -> Any:
    """A Python ``repr`` of a dict/list (``"{'query': 'x'}"``, as some SDKs record tool inputs), else ``original``."""
    if text[0] not in "[{" or len(text) > 1_000_000:
        return original
    try:
        found = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return original
    return found if isinstance(found, dict | list) else original


# -- paths ------------------------------------------------------------------------------------------------------
def split_path(path: str) -> list[str | int]:
    """``"a.b[0].c"`` or ``"a.b.0.c"`` → ``["a", "b", 0, "c"]``; numeric segments (also ``-1``) become indexes."""
    parts: list[str | int] = []
    for match in _PATH_TOKEN.finditer(path):
        token = match.group(1) if match.group(1) is not None else match.group(0)
        parts.append(int(token) if re.fullmatch(r"-?\d+", token) else token)
    return parts


def get_path(obj: Any, path: str | Sequence[str | int], default: Any = MISSING) -> Any:
    """The value at a dotted/indexed ``path`` inside ``obj``, decoding JSON strings met on the way.

    Mapping keys that themselves contain dots (OpenTelemetry attributes such as ``"retrieval.documents.0.document.id"``)
    are matched greedily, longest key first. An empty path returns ``obj``. A path that leads nowhere returns
    ``default`` (the ``MISSING`` sentinel unless given).
    """
    parts = split_path(path) if isinstance(path, str) else list(path)
    found = _walk(parse_maybe_json(obj), parts)
    return default if found is MISSING else found


def _walk(obj: Any, parts: list[str | int]) -> Any:
    if not parts:
        return obj
    if isinstance(obj, Mapping):
        # longest dotted key first, so flat OTel attribute maps resolve
        for n in range(len(parts), 0, -1):
            key = ".".join(str(p) for p in parts[:n])
            if key in obj:
                found = _walk(parse_maybe_json(obj[key]), parts[n:])
                if found is not MISSING:
                    return found
        return MISSING
    if isinstance(obj, list | tuple):
        head = parts[0]
        if isinstance(head, int) and -len(obj) <= head < len(obj):
            return _walk(parse_maybe_json(obj[head]), parts[1:])
        return MISSING
    return MISSING


def first_path(obj: Any, paths: Iterable[str], *, skip_empty: bool = True) -> Any:
    """The value at the first of ``paths`` that resolves (skipping ``None`` and ``""`` unless told); else MISSING."""
    for path in paths:
        found = get_path(obj, path)
        if found is MISSING:
            continue
        if skip_empty and (found is None or found == "" or found == [] or found == {}):
            continue
        return found
    return MISSING


def unflatten_indexed(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Flat ``{prefix}.{i}.{rest}`` keys → a list of nested dicts ordered by ``i`` (OpenInference attribute style).

    ``{"retrieval.documents.0.document.id": "a", "retrieval.documents.0.document.score": 0.9}`` with prefix
    ``"retrieval.documents"`` gives ``[{"document": {"id": "a", "score": 0.9}}]``.
    """
    items: dict[int, dict[str, Any]] = {}
    head = prefix + "."
    for key, value in attributes.items():
        if not isinstance(key, str) or not key.startswith(head):
            continue
        index, _, rest = key[len(head) :].partition(".")
        if not index.isdigit() or not rest:
            continue
        node = items.setdefault(int(index), {})
        *parents, leaf = rest.split(".")
        for part in parents:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[leaf] = value
    return [items[i] for i in sorted(items)]


# -- text -------------------------------------------------------------------------------------------------------
def text_of(value: Any) -> str | None:
    """Readable text of a value: a string as is; chat content parts joined; other objects as compact JSON."""
    value = parse_maybe_json(value)
    if value is None or value is MISSING:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(p, Mapping) and "text" in p for p in value) and value:
        return "\n".join(str(p["text"]) for p in value)
    if isinstance(value, Mapping) and isinstance(value.get("content"), str | list) and "role" in value:
        return text_of(value["content"])
    return json.dumps(value, ensure_ascii=False, default=str)


USER_ROLES = ("user", "human")
ASSISTANT_ROLES = ("assistant", "ai", "model")


def message_role(message: Any) -> str | None:
    """The role of a chat message: OpenAI ``role``, LangChain ``type`` (``human``/``ai``) or ``id[-1]`` class names."""
    if not isinstance(message, Mapping):
        return None
    role = message.get("role") or message.get("type")
    if not role and isinstance(message.get("id"), list) and message["id"]:  # serialised LangChain message
        role = {"HumanMessage": "human", "AIMessage": "ai"}.get(str(message["id"][-1]))
    return str(role).lower() if role else None


def message_text(message: Mapping[str, Any]) -> str | None:
    """Text of one chat message: ``content`` (string or parts), Gemini/OTel ``parts``, or LangChain ``kwargs``."""
    for key in ("content", "parts", "text"):
        value = message.get(key)
        if isinstance(value, list):
            texts = [
                str(p.get("text") if p.get("text") is not None else p.get("content"))
                for p in value
                if isinstance(p, Mapping) and isinstance(p.get("text", p.get("content")), str)
            ]
            if texts:
                return "\n".join(texts)
        elif isinstance(value, str) and value:
            return value
    kwargs = message.get("kwargs")
    return message_text(kwargs) if isinstance(kwargs, Mapping) else None


_REPR_MESSAGE = re.compile(r"""^role='(\w+)' content=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")""", re.DOTALL)


def _as_message(message: Any) -> Any:
    """A chat message; a Python-repr'd message object (``"role='user' content='…' name=None …"``, Agno) decoded."""
    if isinstance(message, str):
        match = _REPR_MESSAGE.match(message)
        if match:
            try:
                return {"role": match.group(1), "content": ast.literal_eval(match.group(2))}
            except (ValueError, SyntaxError):
                return message
    return message


def _last_message(messages: Any, roles: tuple[str, ...]) -> str | None:
    messages = parse_maybe_json(messages)
    if isinstance(messages, Mapping) and isinstance(messages.get("messages"), list):
        messages = messages["messages"]
    if not isinstance(messages, list):
        return None
    for message in reversed([_as_message(m) for m in messages]):
        if (
            message_role(message) in roles
            or message_role(message.get("kwargs") if isinstance(message, Mapping) else None) in roles
        ):
            return message_text(message)
    return None


def last_user_message(messages: Any) -> str | None:
    """Text of the last user/human message of a chat message list (or ``{"messages": [...]}``), or None."""
    return _last_message(messages, USER_ROLES)


def last_assistant_message(messages: Any) -> str | None:
    """Text of the last assistant/ai/model message of a chat message list (or ``{"messages": [...]}``), or None."""
    return _last_message(messages, ASSISTANT_ROLES)


def extract_text(value: Any, paths: Sequence[str]) -> str | None:
    """Page text from a fetch output: the output itself when it is a string, else the first of ``paths`` found."""
    value = parse_maybe_json(value)
    if isinstance(value, str):
        return value
    found = first_path(value, paths)
    return None if found is MISSING else text_of(found)


# -- hits -------------------------------------------------------------------------------------------------------
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


def tool_output(value: Any) -> Any:
    """A tool call's result: a LangChain tool message's ``content`` (plain or serialised) or a lone ``{"output": x}``
    unwrapped; anything else as decoded."""
    value = parse_maybe_json(value)
    for _ in range(3):
        if not isinstance(value, Mapping):
            break
        lc_id = value.get("id")
        if "content" in value and (
            message_role(value) == "tool" or value.get("tool_call_id") is not None or value.get("type") == "tool"
        ):
            value = parse_maybe_json(value["content"])
        elif isinstance(value.get("kwargs"), Mapping) and isinstance(lc_id, list) and lc_id[-1:] == ["ToolMessage"]:
            value = parse_maybe_json(value["kwargs"].get("content"))
        elif set(value) == {"output"}:
            value = parse_maybe_json(value["output"])
        else:
            break
    return value


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
    name = attributes.get("gen_ai.tool.name") or attributes.get("tool.name")
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
    """Ranked hits from a search output: a list itself, or the first list found at ``paths``; None when none is.

    Ranks are the explicit ``rank``/``position`` of an item when given, else its 1-based list position (items that
    identify nothing are skipped but still take their position, so ranks stay those the agent saw).
    """
    items = _items_at(value, paths)
    if items is None:
        return None
    hits: list[Hit] = []
    for position, item in enumerate(items, start=1):
        hit = hit_from_item(item)
        if hit is not None:
            hits.append(hit if hit.rank is not None else hit.model_copy(update={"rank": position}))
    return hits


# -- labels -----------------------------------------------------------------------------------------------------
_LABEL_FIELDS = tuple(Labels.model_fields)


def extract_labels(metadata: Any, paths: Sequence[str]) -> Labels:
    """``Labels`` from a metadata object: the first of ``paths`` holding a labels object, else top-level label keys.

    Unknown keys are ignored; a value of the wrong type is dropped rather than failing the trace.
    """
    metadata = parse_maybe_json(metadata)
    if not isinstance(metadata, Mapping):
        return Labels()
    found = first_path(metadata, paths)
    source = found if isinstance(found, Mapping) else metadata
    raw = {key: parse_maybe_json(source[key]) for key in _LABEL_FIELDS if key in source}
    clean: dict[str, Any] = {}
    for key, value in raw.items():
        try:
            Labels.model_validate({key: value})
        except ValueError:
            continue
        clean[key] = value
    return Labels.model_validate(clean)


# -- configuration ----------------------------------------------------------------------------------------------
class MappingConfig(BaseModel):
    """Where an adapter finds searches, fetches, hits, page text, question, answer and labels in native records.

    Tool names match case-insensitively against the observation/run name; ``*`` globs are allowed. Paths are dotted
    (``a.b.0.c``), evaluated against the decoded input/output/metadata of the record. The defaults cover the common
    conventions (LangChain retrievers, OpenInference, plain ``{url,title,snippet}`` lists, ``outputs["output"]``).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    search_types: list[str] = Field(
        default_factory=lambda: ["RETRIEVER", "retriever"],
        description="observation types / run types that are always searches",
    )
    tool_types: list[str] = Field(
        default_factory=lambda: ["TOOL", "tool"],
        description="observation types / run types of tool calls; only these are matched against the tool names",
    )
    search_tools: list[str] = Field(
        default_factory=lambda: [
            "search*",
            "*[_.: -]search*",
            "*websearch*",
            "retrieve*",
            "*[_.: -]retrieve*",
            "*retriever*",
            "tavily*",
            "serp*",
            "searx*",
        ],
        description="tool names (globs) whose calls are searches; camelCase names are matched as snake_case "
        "(``DuckDuckGoSearch`` → ``duck_duck_go_search``), so ``*[_.: -]search*`` matches ``web_search`` and "
        "``tool.search.wikipedia`` but not ``research``",
    )
    fetch_tools: list[str] = Field(
        default_factory=lambda: [
            "fetch*",
            "*fetch",
            "browse*",
            "open_url",
            "open_page",
            "read_url",
            "scrape*",
            "get_page",
            "web_fetch",
            "crawl*",
        ],
        description="tool names (globs) whose calls fetch a page",
    )
    query_paths: list[str] = Field(
        default_factory=lambda: [
            "query",
            "q",
            "search_query",
            "input",
            "question",
            "args.query",
            "kwargs.query",
            "arguments.query",
        ],
        description="paths of the query in a search call's input (a plain string input is the query)",
    )
    hits_paths: list[str] = Field(
        default_factory=lambda: [
            "documents",
            "results",
            "hits",
            "output",
            "retrieval.documents",
            "organic_results",
            "items",
            "data",
            "web.results",
            "sources",
        ],
        description="paths of the hit list in a search call's output (a list output is the hit list)",
    )
    url_paths: list[str] = Field(
        default_factory=lambda: ["url", "href", "link", "uri", "args.url", "kwargs.url", "arguments.url", "input.url"],
        description="paths of the URL in a fetch call's input (or output)",
    )
    doc_id_paths: list[str] = Field(
        default_factory=lambda: ["doc_id", "document_id", "id"],
        description="paths of the document id in a fetch call's input (or output)",
    )
    text_paths: list[str] = Field(
        default_factory=lambda: [
            "text",
            "content",
            "page_content",
            "markdown",
            "raw_content",
            "body",
            "output",
            "result",
            "document.content",
        ],
        description="paths of the page text in a fetch call's output (a string output is the text)",
    )
    status_paths: list[str] = Field(
        default_factory=lambda: ["status", "status_code", "http_status"],
        description="paths of the HTTP status in a fetch call's output",
    )
    question_paths: list[str] = Field(
        default_factory=lambda: [
            "question",
            "query",
            "input",
            "prompt",
            "user_input",
            "inputs.question",
            "inputs.input",
            "new_message",
            "contents",
        ],
        description="paths of the question in the root input (chat messages: the last user message)",
    )
    answer_paths: list[str] = Field(
        default_factory=lambda: [
            "answer",
            "output",
            "final_output",
            "response",
            "content",
            "text",
            "result",
            "outputs.output",
            "choices.0.message.content",
            "candidates.0.content",
        ],
        description="paths of the final answer in the root output (chat messages: the last assistant message)",
    )
    labels_paths: list[str] = Field(
        default_factory=lambda: ["labels", "tracescore.labels", "expected", "reference"],
        description="paths of a labels object in trace metadata (else top-level label keys are used)",
    )

    def is_search(self, name: str | None, kind: str | None = None) -> bool:
        """A search call: its type is a search type, or it is a tool call whose name matches a search tool glob."""
        if kind is not None and kind in self.search_types:
            return True
        return (kind is None or kind in self.tool_types) and _matches(name, self.search_tools)

    def is_fetch(self, name: str | None, kind: str | None = None) -> bool:
        """A fetch call: a tool call whose name matches a fetch tool glob (and no search glob)."""
        if kind is not None and kind not in self.tool_types:
            return False
        return _matches(name, self.fetch_tools) and not _matches(name, self.search_tools)


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _matches(name: str | None, globs: Iterable[str]) -> bool:
    if not name:
        return False
    lowered = name.lower()
    snake = _CAMEL.sub("_", name).lower()
    return any(fnmatchcase(lowered, g.lower()) or fnmatchcase(snake, g.lower()) for g in globs)


def question_text(value: Any, mapping: MappingConfig) -> str:
    """The user's question in a root input: a string, the last user chat message, else the first question path."""
    value = parse_maybe_json(value)
    if value in (None, "", MISSING):
        return ""
    if isinstance(value, str):
        return value
    from_messages = last_user_message(value)
    if from_messages is not None:
        return from_messages
    if isinstance(value, Mapping) and message_role(value) in USER_ROLES:
        return message_text(value) or ""
    found = first_path(value, mapping.question_paths)
    if found is MISSING:
        return ""  # an object with no question field: a JSON dump of it is not the question (callers fall back)
    return question_text(found, mapping) if not isinstance(found, str) else found


def answer_text(value: Any, mapping: MappingConfig) -> str:
    """The final answer in a root output: a string, the last assistant message, else the first answer path."""
    value = parse_maybe_json(value)
    if value in (None, "", MISSING):
        return ""
    if isinstance(value, str):
        return value
    from_messages = last_assistant_message(value)
    if from_messages is not None:
        return from_messages
    if isinstance(value, Mapping) and message_role(value) in ASSISTANT_ROLES:
        return message_text(value) or ""
    found = first_path(value, mapping.answer_paths)
    if found is MISSING:
        if first_path(value, mapping.answer_paths, skip_empty=False) is not MISSING:
            return ""  # an answer field that is there but empty is an empty answer, not the whole output as text
        return text_of(value) or ""
    return found if isinstance(found, str) else answer_text(found, mapping)


# -- mapping notes (what an adapter found and skipped, for ``tracescore.adapters.inspect``) -------------------------
class MappingNote(BaseModel):
    """One decision an adapter took on one native record: what it took the record for, or why it skipped it."""

    model_config = ConfigDict(frozen=True)

    record: str
    decision: str
    reason: str = ""


_NOTES: ContextVar[list[MappingNote] | None] = ContextVar("tracescore_mapping_notes", default=None)


def note(record: str, decision: str, reason: str = "") -> None:
    """Record an adapter decision when a ``collect_notes()`` block is listening; free otherwise."""
    notes = _NOTES.get()
    if notes is not None:
        notes.append(MappingNote(record=record, decision=decision, reason=reason))


class collect_notes:  # noqa: N801 - used as a context manager, named like one
    """``with collect_notes() as notes:`` gathers the ``MappingNote``s of the adapter calls inside the block."""

    def __enter__(self) -> list[MappingNote]:
        self._notes: list[MappingNote] = []
        self._token = _NOTES.set(self._notes)
        return self._notes

    def __exit__(self, *exc: object) -> None:
        _NOTES.reset(self._token)


# -- provider built-in web search -----------------------------------------------------------------------------------
class ProviderSearch(BaseModel):
    """Searches a model call ran with its provider's built-in web search, the URLs its answer cites, blind spots."""

    searches: list[SearchStep] = Field(default_factory=list)
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
    Anthropic ``server_tool_use`` + ``web_search_tool_result`` blocks and ``citations`` on text blocks; Gemini
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
