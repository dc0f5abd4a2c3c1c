"""The one Messages API body of a judge request, sent as is by the direct judge and the Message Batches prefill and
counted by the dry-run estimate, so a batch reply always lands under the key the direct judge looks up.
"""

from __future__ import annotations

from typing import Any

from tracescore.judge.protocol import JudgeRequest

__all__ = ["MAX_TOKENS", "message_params", "output_schema", "prompt_texts", "reply_text"]

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


def prompt_texts(params: dict[str, Any]) -> list[str]:
    """Every text block of a body (system, then the user turn), for token estimates."""
    texts = [block["text"] for block in params["system"]]
    for message in params["messages"]:
        texts += [block["text"] for block in message["content"]]
    return texts


def reply_text(message: Any) -> str:
    """The text of a Messages API reply (the structured output's JSON)."""
    return "".join(block.text for block in message.content if getattr(block, "type", "") == "text")
