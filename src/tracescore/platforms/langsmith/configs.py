"""LangSmith feedback configs from the score catalog, created before a key's first feedback.

LangSmith gives a key without a config one from its first feedback (a bare ``{"type": "continuous"}``), and then
refuses every other config for that key (400 "Feedback config already exists"). So the sink creates each key's
config from the catalog (type, bounds, categories) before it writes that key in a workspace, and ``calibrate setup``
finds the same config there and reuses it. ``FeedbackConfigs.ensure`` lists the keys' configs once
(``GET /feedback-configs?key=…``), creates the missing ones and says which existing ones do not fit:

- for writing scores (``strict=False``) a config fits when it takes every value the catalog allows (same type; for
  continuous, bounds that contain the catalog's range or none; for categorical, every category of ours);
- for the calibration labels (``strict=True``) it must be the same config (type, bounds, categories), since a
  reviewer answers on its scale.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from tracescore.catalog import entry
from tracescore.platforms.langsmith.failures import describe, permanent

if TYPE_CHECKING:  # pragma: no cover
    from langsmith import Client

BOOLEAN: dict[str, Any] = {"type": "continuous", "min": 0.0, "max": 1.0}
"""A yes/no key: 1 yes, 0 no (the catalog's booleans and the yes/no labels alike)."""


def catalog_config(name: str) -> dict[str, Any] | None:
    """The feedback config of a score key (a versioned ``x@v`` as ``x``) from the catalog; None outside it."""
    found = entry(name.split("@", 1)[0])
    if found is None:
        return None
    if found.kind == "CATEGORICAL":
        return {"type": "categorical",
                "categories": [{"value": float(i), "label": c} for i, c in enumerate(found.categories)]}
    if found.kind == "BOOLEAN":
        return dict(BOOLEAN)
    config: dict[str, Any] = {"type": "continuous", "min": float(found.low)}
    if math.isfinite(found.high):
        config["max"] = float(found.high)
    return config


def _bound(config: Mapping[str, Any], key: str) -> float | None:
    value = config.get(key)
    return None if value is None else float(value)


def _categories(config: Mapping[str, Any]) -> set[tuple[float, str]]:
    return {(float(c.get("value", 0.0)), str(c.get("label"))) for c in config.get("categories") or []}


def same(have: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    """The same config: type, bounds and categories (numbers compared as numbers)."""
    if have.get("type") != want.get("type"):
        return False
    if want.get("type") == "categorical":
        return _categories(have) == _categories(want)
    return all(_bound(have, k) == _bound(want, k) for k in ("min", "max"))


def fits(have: Mapping[str, Any], want: Mapping[str, Any]) -> bool:
    """``have`` takes every value ``want`` allows: same type, bounds containing ours (or none), our categories."""
    if have.get("type") != want.get("type"):
        return False
    if want.get("type") == "categorical":
        return _categories(want) <= _categories(have)
    low, high = _bound(have, "min"), _bound(have, "max")
    want_low, want_high = _bound(want, "min"), _bound(want, "max")
    low_ok = low is None or (want_low is not None and low <= want_low)
    high_ok = high is None or (want_high is not None and high >= want_high)
    return low_ok and high_ok


def shown(config: Mapping[str, Any]) -> str:
    """A config as compact JSON, for a message."""
    return json.dumps(dict(config), sort_keys=True, separators=(", ", ": "))


class FeedbackConfigs:
    """The feedback configs of one workspace, as far as this process has checked them: each key once."""

    def __init__(self, client: Client, *, strict: bool = False) -> None:
        self.client = client
        self.strict = strict
        self.requests = 0
        self.ids: dict[str, str] = {}
        self.problems: dict[str, str] = {}
        self._done: set[str] = set()

    def _existing(self, keys: list[str]) -> dict[str, dict[str, Any]]:
        self.requests += 1
        found: dict[str, dict[str, Any]] = {}
        for row in self.client.list_feedback_configs(feedback_key=keys):
            found.setdefault(row.feedback_key, {"id": str(row.id or ""), "config": dict(row.feedback_config)})
        return found

    def _check(self, key: str, have: Mapping[str, Any], want: Mapping[str, Any]) -> None:
        ok = same(have, want) if self.strict else fits(have, want)
        if not ok:
            self.problems[key] = (
                f"LangSmith's feedback config of {key!r} is {shown(have)}, tracescore needs {shown(want)}: change or "
                f"delete that config in LangSmith (Settings > Feedback), or write to another workspace"
            )

    def ensure(self, wanted: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
        """Make sure every key of ``wanted`` (key -> config) has a config that fits, creating the missing ones;
        returns the problem of each key that has not (an existing config that does not fit, a refused create).
        Exceptions of the listing itself (the server unreachable after the client's retries) propagate."""
        keys = sorted(k for k in wanted if k not in self._done)
        if not keys:
            return {k: self.problems[k] for k in wanted if k in self.problems}
        existing = self._existing(keys)
        for key in keys:
            if key in existing:
                self.ids[key] = existing[key]["id"]
                self._check(key, existing[key]["config"], wanted[key])
            else:
                self._create(key, wanted[key])
            self._done.add(key)
        return {k: self.problems[k] for k in wanted if k in self.problems}

    def _create(self, key: str, want: Mapping[str, Any]) -> None:
        try:
            self.requests += 1
            row = self.client.create_feedback_config(key, feedback_config=dict(want))  # type: ignore[arg-type]
        except Exception as exc:
            if not permanent(exc):
                raise
            # created meanwhile (another writer, a first feedback): what is there now decides
            again = self._existing([key]).get(key)
            if again is None:
                self.problems[key] = f"LangSmith refused the feedback config of {key!r}: {describe(exc)}"
                return
            self.ids[key] = again["id"]
            self._check(key, again["config"], want)
            return
        self.ids[key] = str(row.id or key)


def wanted_for(keys: Iterable[str]) -> dict[str, dict[str, Any]]:
    """The catalog configs of these score keys (keys outside the catalog get none)."""
    out: dict[str, dict[str, Any]] = {}
    for key in keys:
        config = catalog_config(key)
        if config is not None:
            out[key] = config
    return out
