"""``encoder``: ``json.dumps`` with the C encoder built once, for the hot paths that write JSON text per trace (the
result line, the store's score rows)."""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any


def encoder(*, ensure_ascii: bool, separators: tuple[str, str] = (", ", ": ")) -> Callable[[Any], str]:
    """``json.dumps(value, ensure_ascii=..., separators=..., default=str, allow_nan=False)`` with the C encoder built
    once, not per call (json.dumps sets one up each time: most of the cost of a small value).

    It skips the circular-reference check: a cycle raises RecursionError (callers fall back to json.dumps, which
    names it) instead of ValueError.
    """
    slow = json.JSONEncoder(ensure_ascii=ensure_ascii, default=str, allow_nan=False, separators=separators).encode
    c_make_encoder = getattr(json.encoder, "c_make_encoder", None)
    strings = encode_basestring_ascii if ensure_ascii else encode_basestring
    item, key = separators
    try:  # CPython's private constructor (json.encoder builds it with these nine arguments since 3.x)
        encode = c_make_encoder(None, str, strings, None, key, item, False, False, False)  # type: ignore[misc]
    except TypeError:  # pragma: no cover - another interpreter, or a changed signature: the public encoder
        return slow

    def dumps(value: Any) -> str:
        if type(value) is str:
            return strings(value)
        return "".join(encode(value, 0))

    return dumps
