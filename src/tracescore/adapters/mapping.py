"""``MappingConfig``: where adapters look for searches, fetches, hits, text, question, answer and labels."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from fnmatch import fnmatchcase
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tracescore.adapters.fields import MISSING, first_path, parse_maybe_json
from tracescore.adapters.text import (
    ASSISTANT_ROLES,
    USER_ROLES,
    last_assistant_message,
    last_user_message,
    message_role,
    message_text,
    text_of,
)


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
            "*serper*",
            "searx*",
            "duckduckgo*",
            "wikipedia*",
            "arxiv*",
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
            "*[_.: -]scrape*",
            "requests_get",
            "visit_webpage",
            "visit_page",
            "navigate_browser",
            "inspect_file_as_text",
            "find_archived_url",
        ],
        description="tool names (globs) whose calls fetch a page",
    )
    page_tools: list[str] = Field(
        default_factory=lambda: ["page_down", "page_up", "find_on_page_ctrl_f", "find_next"],
        description="tool names (globs) that show more of the page the agent has open (a text browser's scrolling "
        "and find-on-page): their text is part of that page's fetch, not a new fetch and not a search",
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
        default_factory=lambda: [
            "url",
            "href",
            "link",
            "uri",
            "args.url",
            "kwargs.url",
            "arguments.url",
            "input.url",
            "file_path",
        ],
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
            "task",
        ],
        description="paths of the question in the root input (chat messages: the last user message); ``task`` is "
        "an agent's (smolagents)",
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

    def kind_of(self, name: str | None, kind: str | None) -> str | None:
        """``"search"`` or ``"fetch"`` by a call's type and name (``is_search``, then ``is_fetch``), else None."""
        if self.is_search(name, kind):
            return "search"
        return "fetch" if self.is_fetch(name, kind) else None

    def is_page(self, name: str | None) -> bool:
        """A call that shows more of the page already open (``page_tools``), neither a search nor a fetch."""
        return _matches(name, self.page_tools)

    def kind_by_role(self, role: str | None, *names: str | None) -> str | None:
        """``"search"``, ``"fetch"`` or ``"page"`` of a call known only by its tool semantics (``role`` "search" or
        "tool", from ``adapters.hits.tool_semantics``) and its names, else None. The first name given decides (a
        ``tool.name`` before the span's own name: smolagents names the span ``ArchiveSearchTool`` and the tool
        ``find_archived_url``); a later name is read only when the ones before it are empty."""
        if role == "search":
            return "search"
        name = next((n for n in names if n), None)
        if role != "tool" or name is None:
            return None
        if self.is_page(name):
            return "page"
        return "search" if self.is_search(name, None) else "fetch" if self.is_fetch(name, None) else None


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _matches(name: str | None, globs: Iterable[str]) -> bool:
    if not name:
        return False
    lowered = name.lower()
    snake = _CAMEL.sub("_", name).lower()
    return any(fnmatchcase(lowered, g.lower()) or fnmatchcase(snake, g.lower()) for g in globs)


def _chat_text(value: Any, last_message: Callable[[Any], str | None], roles: tuple[str, ...]) -> str | None:
    """Text of a decoded root value that is empty, a string, a chat message list or one message of ``roles``; None
    when it is an object to read by path."""
    if value in (None, "", MISSING):
        return ""
    if isinstance(value, str):
        return value
    from_messages = last_message(value)
    if from_messages is not None:
        return from_messages
    if isinstance(value, Mapping) and message_role(value) in roles:
        return message_text(value) or ""
    return None


def question_text(value: Any, mapping: MappingConfig) -> str:
    """The user's question in a root input: a string, the last user chat message, else the first question path."""
    value = parse_maybe_json(value)
    text = _chat_text(value, last_user_message, USER_ROLES)
    if text is not None:
        return text
    found = first_path(value, mapping.question_paths)
    if found is MISSING:
        return ""  # an object with no question field: a JSON dump of it is not the question (callers fall back)
    return question_text(found, mapping) if not isinstance(found, str) else found


def answer_text(value: Any, mapping: MappingConfig) -> str:
    """The final answer in a root output: a string, the last assistant message, else the first answer path."""
    value = parse_maybe_json(value)
    text = _chat_text(value, last_assistant_message, ASSISTANT_ROLES)
    if text is not None:
        return text
    found = first_path(value, mapping.answer_paths)
    if found is MISSING:
        if first_path(value, mapping.answer_paths, skip_empty=False) is not MISSING:
            return ""  # an answer field that is there but empty is an empty answer, not the whole output as text
        return text_of(value) or ""
    return found if isinstance(found, str) else answer_text(found, mapping)
