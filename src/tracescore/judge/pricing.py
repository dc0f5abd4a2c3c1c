"""The judge's price tables (one per provider) and cost estimate (USD), read by the judge, the scorers, the dry run
and the batches.

Kept apart from ``judge/anthropic.py`` so a scorer or an estimate can price a call without importing the SDK. A
judge is priced by its identity (``judge/providers.py``): the model id on Anthropic's API, ``bedrock:<model id>``,
``vertex:<region>:<model id>``. Bedrock and Vertex charge Anthropic's list price on their global endpoints (a
Bedrock model id starting ``global.``, Vertex region ``global``) and 10% more on regional ones (a Bedrock
in-region id or a geographic inference profile such as ``us.``/``eu.``; any other Vertex region) for the models
from Claude Sonnet 4.5 and Haiku 4.5 on; prompt-cache writes and reads are priced as on Anthropic's API. A model
not in its provider's table (a Bedrock application inference profile ARN, say) is "cost unknown", never $0.

OpenAI's table (``openai:<model>``) lists its own cached-input price per model (no cache-write charge); a model on
another OpenAI-compatible server (``openai:<host>:<model>``) or any model not in a table is priced only by
``[judge.price]`` (``set_price``, ``0`` allowed for a team's own server).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple, Protocol

from tracescore.judge.providers import parse_identity

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
"""Batches are billed at half the synchronous price: Anthropic's Message Batches, and OpenAI's Batch API (input and
output at 50 % of the list price; a cached-input discount on top of it is taken to halve the same way)."""

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
# OpenAI's list prices (standard tier, context under 270K): (input, output, cached input) USD per million tokens.
# gpt-5.5 and gpt-5.4 (mini, nano) as developers.openai.com/api/docs/pricing listed them through 2026-11 (quoted by
# several trackers: no copy of the page itself was at hand, 2026-12-06); the older rows as last listed. A model OpenAI
# announced since (gpt-5.6-*, gpt-6-*) is left out until its price is read from that page: unpriced, its cost is
# "unknown" and a budget is refused (``[judge.price]`` prices it meanwhile), never a guessed figure.
OPENAI_PRICES_PER_MTOK: dict[str, tuple[float, float, float]] = {
    "gpt-5.5": (5.0, 30.0, 0.5),
    "gpt-5.4": (2.5, 15.0, 0.25),
    "gpt-5.4-mini": (0.75, 4.5, 0.075),
    "gpt-5.4-nano": (0.2, 1.25, 0.02),
    "gpt-5.2": (1.75, 14.0, 0.175),
    "gpt-5.1": (1.25, 10.0, 0.125),
    "gpt-4.1": (2.0, 8.0, 0.5),
    "gpt-4.1-mini": (0.4, 1.6, 0.1),
    "gpt-4o-mini": (0.15, 0.6, 0.075),
}
PROVIDER_PRICES: Mapping[str, Mapping[str, tuple[float, ...]]] = {
    "anthropic": PRICES_PER_MTOK,
    "bedrock": BEDROCK_PRICES_PER_MTOK,
    "vertex": VERTEX_PRICES_PER_MTOK,
    "openai": OPENAI_PRICES_PER_MTOK,
}
REGIONAL_PREMIUM = 1.1
"""A regional (not global) Bedrock or Vertex endpoint costs 10% more (every model in the tables above)."""
_BEDROCK_GLOBAL = "global."
_BEDROCK_GEOGRAPHIC = ("us.", "eu.", "apac.", "jp.", "au.", "ca.", "us-gov.")


class Price(NamedTuple):
    """USD per million tokens; ``cached_input`` None: Anthropic's rule (cache reads 0.1x input, writes 1.25x)."""

    input: float
    output: float
    cached_input: float | None = None


_CONFIGURED: dict[str, Price] = {}


def set_price(judge: str, price: Price) -> None:
    """``[judge.price]`` for the judge identity ``judge``: wins over the tables, for the rest of the process."""
    _CONFIGURED[judge] = price


def price_of(judge: str | None) -> Price | None:
    """USD per million tokens of the judge identity ``judge``: ``[judge.price]``, else its provider's table; None
    when neither has it."""
    if judge in _CONFIGURED:
        return _CONFIGURED[judge]
    provider, region, model = parse_identity(judge or "")
    if provider == "bedrock":
        base = model.removeprefix(_BEDROCK_GLOBAL)
        regional = base == model
        for geo in _BEDROCK_GEOGRAPHIC:
            base = base.removeprefix(geo)
    else:
        base, regional = model, provider == "vertex" and region != "global"
    listed = PROVIDER_PRICES.get(provider, {}).get(base)  # azure-openai, a plugin: [judge.price] only
    if listed is None:
        return None
    price = Price(*listed)
    if not regional:
        return price
    return Price(price.input * REGIONAL_PREMIUM, price.output * REGIONAL_PREMIUM)


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
    per_in, per_out = price.input / 1e6, price.output / 1e6
    per_read = per_in * 0.1 if price.cached_input is None else price.cached_input / 1e6
    return input_tokens * per_in + cache_write * per_in * 1.25 + cache_read * per_read + output_tokens * per_out


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
