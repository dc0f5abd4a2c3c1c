"""OpenAI's Batch API as a ``BatchAPI`` (``judge/batches.py``), through the ``openai`` SDK: ``backfill --judge-batch``
with ``[judge] provider = "openai"`` on OpenAI's own API (another server's ``base_url`` is refused before this).

- create: the requests go as a JSONL file, one line each: ``{"custom_id", "method": "POST", "url":
  "/v1/chat/completions", "body"}`` with the direct judge's body (``chat_params``: the same model, messages and strict
  ``response_format``), uploaded with ``files.create(purpose="batch")``; then ``batches.create(input_file_id,
  endpoint="/v1/chat/completions", completion_window="24h", metadata={"tracescore_intent": <ledger intent id>})``,
  sent once (a 429 says it was not created, and is waited out here; a 5xx, a connection error or a cut answer may
  have created it: the ledger looks for the batch tagged with its intent). An upload that fails leaves at worst an
  unused file, never a batch.
- poll: ``batches.retrieve``; ``validating``, ``in_progress``, ``finalizing`` and ``cancelling`` are under way,
  ``completed``, ``failed``, ``expired`` and ``cancelled`` have ended. ``request_counts`` (``total``, ``completed``,
  ``failed``) is said as ``succeeded`` = completed, ``errored`` = failed, and the rest of ``total`` as ``expired``
  (an expired batch), ``canceled`` (a cancelled one) or ``errored`` (a failed one).
- results: the lines of ``output_file_id`` and ``error_file_id`` (``files.content``), matched by ``custom_id``. A line
  whose ``response.status_code`` is 200 succeeded (its ``body`` is a ``ChatCompletion``, billed at the batch price);
  an ``error.code`` ``batch_expired`` / ``batch_cancelled`` is expired / canceled; anything else errored. A request in
  neither file is expired, canceled or errored as its batch ended (a failed batch, rejected at validation, has no
  files: ``errors`` says why). A file that does not decode, or holds fewer lines than ``request_counts`` counted, was
  cut short: read again at the next poll, nothing billed from it.

Limits: 50,000 requests and 200 MB per input file (a slice is split by count; our requests are a few kB each).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from typing import Any, Final

from tracescore.errors import ConfigError
from tracescore.judge.batches import (
    BatchError,
    BatchItem,
    BatchState,
    BatchTransient,
    ServerBatch,
    sdk_errors,
)
from tracescore.judge.calling import TIMEOUT_SECONDS, WAIT_MAX, retry_after_header
from tracescore.judge.protocol import JudgeReply, JudgeRequest
from tracescore.judge.providers import DEFAULT_MODELS, ProviderSettings
from tracescore.judge.request import MAX_TOKENS, chat_params

ENDPOINT: Final = "/v1/chat/completions"
INTENT_TAG = "tracescore_intent"
"""The batch's metadata key holding the ledger's intent id: how a create whose answer was lost is found again."""
_UNDER_WAY = frozenset({"validating", "in_progress", "finalizing", "cancelling"})
_LEFT = {"expired": "expired", "cancelled": "canceled", "failed": "errored"}  # a request an ended batch did not run
_CODES = {"batch_expired": "expired", "batch_cancelled": "canceled"}
_CREATE_ATTEMPTS = 4


def _said(what: str, *, create: bool = False) -> AbstractContextManager[None]:
    """The SDK's errors as ``BatchError``s (``create``: an answer lost or cut short may hide a batch created)."""
    import openai

    lost = (openai.APIConnectionError, openai.InternalServerError, json.JSONDecodeError)
    return sdk_errors(
        what, create=create, base=openai.OpenAIError, not_found=openai.NotFoundError, limited=openai.RateLimitError,
        lost=lost,
    )  # fmt: skip


class OpenAIBatches:
    """``BatchAPI`` over ``openai.OpenAI`` (the key: ``api_key``, else ``[judge] api_key_env``'s variable, else
    ``OPENAI_API_KEY``). ``self.model`` is the judge's identity, ``openai:<model>``, as the direct judge's."""

    max_requests = 50_000

    def __init__(
        self,
        settings: ProviderSettings,
        model: str | None = None,
        *,
        api_key: str | None = None,
        max_tokens: int = MAX_TOKENS,
        timeout: float = TIMEOUT_SECONDS,
        http_client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        try:
            import openai
        except ImportError as exc:
            raise ConfigError(
                f"[judge] provider = 'openai' needs the openai SDK ({exc}): pip install 'tracescore[openai]'"
            ) from None
        self.model_id = model or DEFAULT_MODELS["openai"]
        self.model = settings.identity(self.model_id)
        self.max_tokens, self.sleep = max_tokens, sleep
        variable = settings.api_key_env or "OPENAI_API_KEY"
        key = api_key or os.environ.get(variable)
        if not key:
            raise ConfigError(f"no OpenAI API key: set {variable} (or run with --no-judge)")
        url = settings.base_url or os.environ.get("OPENAI_BASE_URL") or None
        self.client = openai.OpenAI(  # polls and reads: the SDK's retries (429 with Retry-After, 5xx, timeouts)
            api_key=key, base_url=url, timeout=timeout, max_retries=3, http_client=http_client
        )

    def close(self) -> None:
        self.client.close()

    def create(self, intent: str, requests: Sequence[tuple[str, JudgeRequest]]) -> str:
        import openai

        lines = [
            {"custom_id": key, "method": "POST", "url": ENDPOINT,
             "body": chat_params(request, self.model_id, self.max_tokens)}
            for key, request in requests
        ]  # fmt: skip
        data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
        with _said("batch input upload"):
            uploaded = self.client.files.create(file=("tracescore-judge.jsonl", data), purpose="batch")
        once = self.client.with_options(max_retries=0)
        for attempt in range(1, _CREATE_ATTEMPTS + 1):
            try:
                with _said("batch create", create=True):
                    created = once.batches.create(
                        input_file_id=uploaded.id, endpoint=ENDPOINT, completion_window="24h",
                        metadata={INTENT_TAG: intent},
                    )  # fmt: skip
                return str(created.id)
            except BatchError as exc:
                limited = exc.__cause__
                if not isinstance(limited, openai.RateLimitError) or attempt == _CREATE_ATTEMPTS:
                    raise
                wait = retry_after_header(limited.response.headers)
                self.sleep(min(wait if wait is not None else 2.0**attempt, WAIT_MAX))
        raise AssertionError("unreachable")  # pragma: no cover

    def listed(self, since: datetime) -> list[ServerBatch]:
        """The batches created at or after ``since``. The list's order is not documented (it answers newest first):
        its pages are followed until one holds no batch that recent."""
        found = []
        with _said("cannot list batches"):
            page = self.client.batches.list(limit=100)
            while True:
                recent = [b for b in page.data if _when(b.created_at) >= since]
                found += [_server(b) for b in recent]
                if not recent or not page.has_next_page():
                    break
                page = page.get_next_page()
        return found

    def state(self, batch_id: str) -> BatchState:
        with _said(f"batch {batch_id}"):
            batch = self.client.batches.retrieve(batch_id)
        counts = batch.request_counts
        total, done, failed = (counts.total, counts.completed, counts.failed) if counts else (0, 0, 0)
        said = dict.fromkeys(("succeeded", "errored", "expired", "canceled"), 0)
        said["succeeded"], said["errored"] = done, failed
        left = _LEFT.get(batch.status)
        if left is not None:
            said[left] += max(0, total - done - failed)
        return BatchState(batch.status not in _UNDER_WAY, said, batch.status, batch)

    def results(self, batch_id: str, state: BatchState, keys: Sequence[str]) -> list[BatchItem]:
        batch = state.raw
        lines: list[dict[str, Any]] = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                lines += self._lines(batch_id, file_id)
        said = state.request_counts
        answered = sum(1 for line in lines if (line.get("response") or {}).get("status_code") == 200)
        if answered < said["succeeded"] or len(lines) < said["succeeded"] + said["errored"]:
            raise BatchTransient(f"batch {batch_id}: its files held {len(lines)} lines, fewer than the API counted")
        found = {line["custom_id"]: self._item(line) for line in lines}
        why = "; ".join(e.message or e.code or "" for e in (batch.errors.data or [])) if batch.errors else ""
        left = _LEFT.get(batch.status, "errored")
        missing = [BatchItem(k, left, error=why or f"not in the files of a batch {batch.status}") for k in keys
                   if k not in found]  # fmt: skip
        return [*found.values(), *missing]

    def cancel(self, batch_id: str) -> None:
        with _said(f"cannot cancel batch {batch_id}"):
            self.client.batches.cancel(batch_id)

    def _lines(self, batch_id: str, file_id: str) -> list[dict[str, Any]]:
        with _said(f"batch {batch_id}: file {file_id}"):
            text = self.client.files.content(file_id).text
        try:
            return [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError as exc:
            raise BatchTransient(f"batch {batch_id}: file {file_id} cut short ({exc}); read again later") from exc

    def _item(self, line: dict[str, Any]) -> BatchItem:
        from openai.types.chat import ChatCompletion

        key, response, error = line["custom_id"], line.get("response") or {}, line.get("error") or {}
        if response.get("status_code") == 200:
            completion = ChatCompletion.model_validate(response["body"])
            choice = completion.choices[0] if completion.choices else None
            text = (choice.message.content or "") if choice is not None else ""
            return BatchItem(key, "succeeded", _reply(completion, self.model, key), text)
        if error:
            return BatchItem(key, _CODES.get(error.get("code") or "", "errored"), error=error.get("message"))
        failure = ((response.get("body") or {}).get("error") or {}).get("message")
        return BatchItem(key, "errored", error=f"HTTP {response.get('status_code')}: {failure}")


def _reply(completion: Any, model: str, key: str) -> JudgeReply:
    """What a reply billed, counted as the direct judge counts it (``prompt_tokens`` includes the cached part)."""
    usage = completion.usage
    cached = (usage.prompt_tokens_details.cached_tokens or 0) if usage and usage.prompt_tokens_details else 0
    prompt, output = (usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0)
    return JudgeReply(None, model, key, input_tokens=prompt - cached, output_tokens=output, cache_read_tokens=cached)


def _when(created_at: int) -> datetime:
    return datetime.fromtimestamp(created_at, UTC)


def _server(batch: Any) -> ServerBatch:
    counts = batch.request_counts
    tag = (batch.metadata or {}).get(INTENT_TAG) or ""  # "": not ours (never matched by size)
    return ServerBatch(batch.id, _when(batch.created_at), counts.total if counts else 0, tag)
