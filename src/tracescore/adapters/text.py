"""Readable text out of recorded values and chat messages (OpenAI, LangChain, Gemini, OTel shapes), for adapters."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from tracescore.adapters.fields import MISSING, first_path, parse_maybe_json


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
