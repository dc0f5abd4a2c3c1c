"""The judge's price tables (one per provider) and cost estimate (USD), read by the judge, the scorers, the dry run
and the batches.

Kept apart from ``judge/anthropic.py`` so a scorer or an estimate can price a call without importing the SDK. A
judge is priced by its identity (``judge/providers.py``): the model id on Anthropic's API, ``bedrock:<model id>``,
``vertex:<region>:<model id>``. Bedrock and Vertex charge Anthropic's list price on their global endpoints (a
Bedrock model id starting ``global.``, Vertex region ``global``) and 10% more on regional ones (a Bedrock
in-region id or a geographic inference profile such as ``us.``/``eu.``; any other Vertex region) for the models
from Claude Sonnet 4.5 and Haiku 4.5 on; prompt-cache writes and reads are priced as on Anthropic's API. A model
not in its provider's table (a Bedrock application inference profile ARN, say) is "cost unknown", never $0.
"""

from __future__ import annotations

from typing import Protocol

from tracescore.judge.providers import parse_identity

__all__ = [
    "BATCH_DISCOUNT", "PRICES_PER_MTOK", "PROVIDER_PRICES", "REGIONAL_PREMIUM", "estimate_cost", "is_priced",
    "price_of", "priced_models", "reply_cost",
]  # fmt: skip

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

# Bedrock and Vertex list prices on their global endpoints, by each platform's model id (Bedrock: without the
# inference profile's ``global.``/``us.``/... prefix).
BEDROCK_PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "anthropic.claude-sonnet-4-6": (3.0, 15.0),
    "anthropic.claude-sonnet-4-5-20250929-v1:0": (3.0, 15.0),
    "anthropic.claude-haiku-4-5-20251001-v1:0": (1.0, 5.0),
    "anthropic.claude-opus-4-5-20251101-v1:0": (5.0, 25.0),
    "anthropic.claude-opus-4-6-v1": (5.0, 25.0),
}
VERTEX_PRICES_PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-sonnet-4-6": (3.0, 15.0),
    "claude-sonnet-4-5@20250929": (3.0, 15.0),
    "claude-haiku-4-5@20251001": (1.0, 5.0),
    "claude-opus-4-5@20251101": (5.0, 25.0),
    "claude-opus-4-6": (5.0, 25.0),
}
PROVIDER_PRICES: dict[str, dict[str, tuple[float, float]]] = {
    "anthropic": PRICES_PER_MTOK,
    "bedrock": BEDROCK_PRICES_PER_MTOK,
    "vertex": VERTEX_PRICES_PER_MTOK,
}
REGIONAL_PREMIUM = 1.1
"""A regional (not global) Bedrock or Vertex endpoint costs 10% more (every model in the tables above)."""
_BEDROCK_GLOBAL = "global."
_BEDROCK_GEOGRAPHIC = ("us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.")


def price_of(judge: str | None) -> tuple[float, float] | None:
    """USD per million (input, output) tokens of the judge identity ``judge``; None when not in its table."""
    provider, region, model = parse_identity(judge or "")
    if provider == "bedrock":
        base = model.removeprefix(_BEDROCK_GLOBAL)
        regional = base == model
        for geo in _BEDROCK_GEOGRAPHIC:
            base = base.removeprefix(geo)
    else:
        base, regional = model, provider == "vertex" and region != "global"
    price = PROVIDER_PRICES[provider].get(base)
    if price is None or not regional:
        return price
    return price[0] * REGIONAL_PREMIUM, price[1] * REGIONAL_PREMIUM


def priced_models(provider: str) -> list[str]:
    """The model ids ``provider``'s table prices (for the message of a budget without a price)."""
    return sorted(PROVIDER_PRICES.get(provider, {}))


def is_priced(model: str | None) -> bool:
    """Whether the judge identity ``model`` has a price (unpriced models report "cost unknown", never $0)."""
    return price_of(model) is not None


def estimate_cost(
    model: str, *, input_tokens: int, output_tokens: int, cache_read: int = 0, cache_write: int = 0
) -> float | None:
    """Estimated USD for one call of the judge identity ``model``, or None when its provider's table lacks it."""
    price = price_of(model)
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
