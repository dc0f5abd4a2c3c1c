"""A provider's batch API as ``backfill --judge-batch`` drives it (``engine/batch.py``): create a batch of judge
requests, list the batches created since a moment, poll one, read an ended one's results, cancel one.

Two implementations: Anthropic's Message Batches (``judge/anthropic_batch.py``) and OpenAI's Batch API
(``judge/openai_batch.py``); ``judge/make.py`` picks one for ``[judge] provider``. The ledger, the recovery of an
unrecorded create, the waiting and the billing are ``engine/batch.py``'s alone, the same for both. An implementation
says what its API answered in these terms and raises only this module's errors.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from tracescore.judge.protocol import JudgeReply, JudgeRequest

RESULT_TYPES = ("succeeded", "errored", "expired", "canceled")
"""What became of one request of an ended batch (Anthropic's result types; OpenAI's outcomes are said in them)."""


class BatchError(Exception):
    """A batch API call failed (the message names the call and the API's answer)."""


class BatchUnsure(BatchError):
    """A create whose request may have reached the API (a connection error, a 5xx): it may exist server-side."""


class BatchNotFound(BatchError):
    """The batch is gone server-side (404)."""


class BatchTransient(BatchError):
    """Worth asking again later (429, 5xx, a connection error, a body cut short)."""


@contextmanager
def sdk_errors(
    what: str,
    *,
    create: bool,
    base: type[Exception],
    not_found: type[Exception],
    limited: type[Exception],
    lost: tuple[type[Exception], ...],
) -> Iterator[None]:
    """An SDK's errors (``base``: its root) said as ``BatchError``s: ``not_found`` (404) is ``BatchNotFound``;
    ``lost`` (a connection error, a 5xx, an answer cut short) is ``BatchTransient``, or on a ``create``
    ``BatchUnsure`` (the batch may exist); ``limited`` (429) is ``BatchTransient``, on a create ``BatchError``
    (it surely was not made); the rest ``BatchError``."""
    try:
        yield
    except not_found as exc:
        raise BatchNotFound(f"{what}: {exc}"[:300]) from exc
    except lost as exc:
        raise (BatchUnsure if create else BatchTransient)(f"{what}: {type(exc).__name__}: {exc}"[:300]) from exc
    except limited as exc:
        raise (BatchError if create else BatchTransient)(f"{what}: {type(exc).__name__}: {exc}"[:300]) from exc
    except base as exc:
        raise BatchError(f"{what}: {type(exc).__name__}: {exc}"[:300]) from exc


@dataclass(frozen=True)
class ServerBatch:
    """One batch of the API's list: what an unrecorded create is matched by. ``tag``: the intent id the batch was
    created under, when the API keeps one (OpenAI's ``metadata``); None: matched by its size (Anthropic)."""

    id: str
    created_at: datetime
    size: int
    tag: str | None = None


@dataclass(frozen=True)
class BatchState:
    """One poll: whether the batch ended, and its ``request_counts`` in ``RESULT_TYPES`` (zero until it ended).
    ``status``: the API's own word for it; ``raw``: the API's object (what ``results`` reads the files from)."""

    ended: bool
    request_counts: dict[str, int] = field(default_factory=dict)
    status: str = ""
    raw: Any = None


@dataclass(frozen=True)
class BatchItem:
    """One request's result: its kind (``RESULT_TYPES``); for a succeeded one the reply's usage (billed) and text."""

    custom_id: str
    kind: str
    reply: JudgeReply | None = None
    text: str = ""
    error: str | None = None


class BatchAPI(Protocol):
    """What ``BatchPrefill`` needs of a provider's batch API. ``model``: the judge's identity (the cache key, the
    price); ``max_requests``: the API's limit of requests per batch."""

    model: str
    max_requests: int

    def create(self, intent: str, requests: Sequence[tuple[str, JudgeRequest]]) -> str:
        """Create one batch of ``(custom_id, request)``, sent once (a retried create could make two); its id.
        ``BatchUnsure`` when it may have been created anyway, ``BatchError`` when it surely was not."""
        ...

    def listed(self, since: datetime) -> list[ServerBatch]:
        """The API's batches created at or after ``since``."""
        ...

    def state(self, batch_id: str) -> BatchState: ...

    def results(self, batch_id: str, state: BatchState, keys: Sequence[str]) -> list[BatchItem]:
        """Every request's result of an ended batch (``keys``: its custom_ids, as recorded); ``BatchTransient`` when
        the read came back incomplete."""
        ...

    def cancel(self, batch_id: str) -> None: ...

    def close(self) -> None: ...
