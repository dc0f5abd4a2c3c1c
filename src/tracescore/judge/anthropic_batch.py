"""Anthropic's Message Batches API (``/v1/messages/batches``) as a ``BatchAPI`` (``judge/batches.py``).

A batch holds up to 100,000 requests, each ``{"custom_id", "params"}`` with the direct judge's body
(``message_params``); ``processing_status`` is ``in_progress``, ``canceling`` or ``ended``, and ``request_counts``
already names the four result types. The API keeps no metadata on a batch, so an unrecorded create is found by its
size (``ServerBatch.tag`` None). Polls and reads go through the SDK's retries; the create is sent once.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

from tracescore.judge.batches import (
    BatchItem,
    BatchState,
    ServerBatch,
    sdk_errors,
)
from tracescore.judge.protocol import JudgeReply, JudgeRequest
from tracescore.judge.request import MAX_TOKENS, message_params, reply_text


def _said(what: str, *, create: bool = False) -> AbstractContextManager[None]:
    """The SDK's errors as ``BatchError``s (``create``: a connection error or 5xx may have created it)."""
    import anthropic

    return sdk_errors(
        what, create=create, base=anthropic.AnthropicError, not_found=anthropic.NotFoundError,
        limited=anthropic.RateLimitError, lost=(anthropic.APIConnectionError, anthropic.InternalServerError),
    )  # fmt: skip


class AnthropicBatches:
    """``BatchAPI`` over an ``anthropic.Anthropic`` client (None: one from the environment, closed by ``close``)."""

    max_requests = 100_000

    def __init__(self, model: str, client: Any = None, *, max_tokens: int = MAX_TOKENS) -> None:
        self.model, self.max_tokens = model, max_tokens
        self._own = client is None
        if client is None:
            import anthropic

            client = anthropic.Anthropic(max_retries=3)
        self.client = client

    def close(self) -> None:
        if self._own:
            self.client.close()

    def create(self, intent: str, requests: Sequence[tuple[str, JudgeRequest]]) -> str:
        body = [{"custom_id": k, "params": message_params(r, self.model, self.max_tokens)} for k, r in requests]
        with _said("message batch create", create=True):
            return str(self.client.with_options(max_retries=0).messages.batches.create(requests=body).id)

    def listed(self, since: datetime) -> list[ServerBatch]:
        """The list is newest first; its pages are followed until a batch older than ``since``."""
        found = []
        with _said("cannot list message batches"):
            for batch in self.client.messages.batches.list(limit=100):
                if batch.created_at < since:
                    break
                size = sum(int(v) for v in batch.request_counts.to_dict().values())  # every request, from the start
                found.append(ServerBatch(batch.id, batch.created_at, size))
        return found

    def state(self, batch_id: str) -> BatchState:
        with _said(f"message batch {batch_id}"):
            batch = self.client.messages.batches.retrieve(batch_id)
        counts = batch.request_counts.to_dict()
        return BatchState(batch.processing_status == "ended", counts, batch.processing_status, batch)

    def results(self, batch_id: str, state: BatchState, keys: Sequence[str]) -> list[BatchItem]:
        with _said(f"message batch {batch_id}"):
            return [_item(self.model, item) for item in self.client.messages.batches.results(batch_id)]

    def cancel(self, batch_id: str) -> None:
        with _said(f"cannot cancel message batch {batch_id}"):
            self.client.messages.batches.cancel(batch_id)


def _item(model: str, item: Any) -> BatchItem:
    kind = item.result.type
    if kind != "succeeded":
        error = getattr(getattr(getattr(item.result, "error", None), "error", None), "message", None)
        return BatchItem(item.custom_id, kind, error=error)
    message = item.result.message
    tokens = message.usage
    reply = JudgeReply(
        output=None,
        model=model,
        key=item.custom_id,
        input_tokens=tokens.input_tokens,
        output_tokens=tokens.output_tokens,
        cache_read_tokens=tokens.cache_read_input_tokens or 0,
        cache_write_tokens=tokens.cache_creation_input_tokens or 0,
    )
    return BatchItem(item.custom_id, kind, reply, reply_text(message))
