"""The one Messages API body of a judge request, sent as is by the direct judge and the Message Batches prefill and
counted by the dry-run estimate, so a batch reply always lands under the key the direct judge looks up; and its
Chat Completions form for the OpenAI judge (the same texts, the schema as a strict ``response_format`` or, for a
server that takes none, in the system prompt).
"""

from __future__ import annotations

import json
from typing import Any

from tracescore.judge.protocol import JudgeRequest

MAX_TOKENS = 8192


def output_schema(request: JudgeRequest) -> dict[str, Any]:
    """The reply's JSON schema as the API takes it (the SDK's ``transform_schema``, as ``messages.parse`` sends it)."""
    schema = request.output.model_json_schema()
    try:
        from anthropic import transform_schema
    except ImportError:  # no SDK: no call can be made either; the estimate only needs the texts
        return schema
    return transform_schema(schema)


def message_params(request: JudgeRequest, model: str, max_tokens: int = MAX_TOKENS) -> dict[str, Any]:
    """The Messages API body of a judge request: rubric and shared prefix marked for caching, structured output."""
    content: list[dict[str, Any]] = []
    if request.prefix:
        content.append({"type": "text", "text": request.prefix, "cache_control": {"type": "ephemeral"}})
    content.append({"type": "text", "text": request.content})
    return {
        "model": model,
        "max_tokens": max_tokens,
        "system": [{"type": "text", "text": request.rubric.system, "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": content}],
        "output_config": {"format": {"type": "json_schema", "schema": output_schema(request)}},
    }


def chat_params(
    request: JudgeRequest, model: str, max_tokens: int = MAX_TOKENS, *, structured: bool = True, openai: bool = True
) -> dict[str, Any]:
    """The Chat Completions body of a judge request: the rubric as the system message, the prefix and content as the
    user turn (OpenAI caches a repeated prefix by itself), the reply's schema as ``response_format`` json_schema
    strict (the ``openai`` SDK's own conversion, as ``chat.completions.parse`` sends it) or, ``structured=False``,
    written into the system message with the instruction to reply with that JSON object only. ``openai``: OpenAI's
    own API, which takes ``max_completion_tokens`` (its newer models refuse ``max_tokens``); other servers get
    ``max_tokens``, which vLLM, Ollama, LiteLLM and llama.cpp all read."""
    from openai.lib._parsing._completions import type_to_response_format_param

    response_format: dict[str, Any] = dict(type_to_response_format_param(request.output))  # type: ignore[arg-type]
    system = request.rubric.system
    if not structured:
        schema = json.dumps(response_format["json_schema"]["schema"], ensure_ascii=False)
        system += (
            "\n\nReply with one JSON object and nothing else (no prose, no code fence), valid against this JSON"
            f" schema:\n{schema}"
        )
    user = f"{request.prefix}\n\n{request.content}" if request.prefix else request.content
    params: dict[str, Any] = {
        "model": model,
        "max_completion_tokens" if openai else "max_tokens": max_tokens,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}],
    }
    if structured:
        params["response_format"] = response_format
    return params


def prompt_texts(params: dict[str, Any]) -> list[str]:
    """Every text block of a body (system, then the user turn), for token estimates."""
    texts = [block["text"] for block in params["system"]]
    for message in params["messages"]:
        texts += [block["text"] for block in message["content"]]
    return texts


def reply_text(message: Any) -> str:
    """The text of a Messages API reply (the structured output's JSON)."""
    return "".join(block.text for block in message.content if getattr(block, "type", "") == "text")
