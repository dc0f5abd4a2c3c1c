"""The judge's price table and cost estimate (USD), read by the judge, the scorers, the dry run and the batches.

Kept apart from ``judge/anthropic.py`` so a scorer or an estimate can price a call without importing the SDK.
"""

from __future__ import annotations

from typing import Protocol

__all__ = ["BATCH_DISCOUNT", "PRICES_PER_MTOK", "estimate_cost", "is_priced", "reply_cost"]

# USD per million tokens: (input, output). Cache writes cost 1.25x input, cache reads 0.1x input.
PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-sonnet-4-5": (3.0, 15.0),
    "claude-sonnet-4-5-20250929": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-haiku-4-5-20251001": (1.0, 5.0),
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-5-20251101": (5.0, 25.0),
    "claude-opus-4-6": (5.0, 25.0),
}
BATCH_DISCOUNT = 0.5
"""Message Batches are billed at half the synchronous price."""


def is_priced(model: str | None) -> bool:
    """Whether ``model`` has a price (unpriced models report "cost unknown", never $0)."""
    return (model or "") in PRICES_PER_MTOK


def estimate_cost(
    model: str, *, input_tokens: int, output_tokens: int, cache_read: int = 0, cache_write: int = 0
) -> float | None:
    """Estimated USD for one call, or None when the model is not in ``PRICES_PER_MTOK``."""
    price = PRICES_PER_MTOK.get(model)
    if price is None:
        return None
    per_in, per_out = price[0] / 1e6, price[1] / 1e6
    return input_tokens * per_in + cache_write * per_in * 1.25 + cache_read * per_in * 0.1 + output_tokens * per_out


class _Tokens(Protocol):
    model: str
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int


def reply_cost(reply: _Tokens) -> float | None:
    """Estimated USD of one judge reply's tokens: the one place a reply is priced (the usage total and per trace)."""
    return estimate_cost(
        reply.model,
        input_tokens=reply.input_tokens,
        output_tokens=reply.output_tokens,
        cache_read=reply.cache_read_tokens,
        cache_write=reply.cache_write_tokens,
    )
