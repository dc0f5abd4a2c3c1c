"""A span of time as ``tracescore.toml`` writes it: ``"90s"``, ``"15m"``, ``"2h"``, ``"7d"`` (``[job] lookback``, a
scorer option such as ``[scorers.stale] stale_after``)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Annotated

from pydantic import BeforeValidator

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(s|m|h|d)\s*$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> timedelta:
    """``"90s"``, ``"15m"``, ``"2h"``, ``"7d"`` → timedelta; anything else is a ValueError saying what is allowed."""
    match = _DURATION.match(text)
    if not match:
        raise ValueError(f"expected a duration such as '90s', '15m', '2h' or '7d', got {text!r}")
    return timedelta(seconds=float(match.group(1)) * _UNITS[match.group(2)])


def _as_duration(value: object) -> object:
    return parse_duration(value) if isinstance(value, str) else value


Duration = Annotated[timedelta, BeforeValidator(_as_duration)]
"""An option's type for a span of time written ``"365d"``, ``"12h"``, ``"90s"`` in ``tracescore.toml``."""


def format_duration(value: timedelta) -> str:
    """A span as ``tracescore.toml`` writes it (``"365d"``, ``"90m"``), the largest whole unit."""
    seconds = int(value.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds and seconds % size == 0:
            return str(seconds // size) + unit
    return str(seconds) + "s"
