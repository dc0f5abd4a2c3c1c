"""JSON documents with values nested too deeply to read, read anyway: the too-deep values are cut out, not the file.

``json.loads`` refuses a document nested deeper than the recursion limit as a whole (``RecursionError``), so one
attribute of one span nested 20,000 levels would make every trace of a span file unreadable. ``loads_capped`` first
finds, with a flat scan of the text (no recursion), each value that opens deeper than the cap, puts the ``TOO_DEEP``
marker string in its place and decodes the rest; ``too_deep`` then tells the record that held one (or that nests
deeper than a cap of its own) from the others, without recursion either.
"""

from __future__ import annotations

import json
import re
from typing import Any

# What a value nested too deeply becomes: a string no real record holds (it starts with a NUL character).
TOO_DEEP = "\x00tracescore: nested too deeply"
_TOO_DEEP_JSON = json.dumps(TOO_DEEP)
# JSON strings (skipped whole, brackets inside them are text) and the brackets that open and close values.
_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


def loads_capped(text: str, max_depth: int) -> Any:
    """``json.loads(text)`` with every value that opens deeper than ``max_depth`` replaced by ``TOO_DEEP``, so the
    decoder never nests deeper than ``max_depth``; ValueError when the text is not JSON."""
    return json.loads(cap_depth(text, max_depth))


def cap_depth(text: str, max_depth: int) -> str:
    """JSON text (one document or several) with every value that opens deeper than ``max_depth`` replaced by the
    ``TOO_DEEP`` string: one pass over the text, no recursion; text that is not JSON stays not JSON."""
    pieces: list[str] = []
    last, depth, cut = 0, 0, -1
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token == "[" or token == "{":
            depth += 1
            if depth == max_depth + 1:
                cut = match.start()
        elif token == "]" or token == "}":
            if depth == max_depth + 1 and cut >= 0:
                pieces += [text[last:cut], _TOO_DEEP_JSON]
                last, cut = match.end(), -1
            depth = max(depth - 1, 0)
    if cut >= 0:  # never closed: the rest is cut off, so the decoder says the end is missing
        pieces.append(text[last:cut])
        last = len(text)
    pieces.append(text[last:])
    return "".join(pieces)


def too_deep(value: Any, max_depth: int) -> bool:
    """Whether a decoded value nests lists/objects deeper than ``max_depth`` or holds the ``TOO_DEEP`` marker."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            if item == TOO_DEEP:
                return True
            continue
        if depth > max_depth:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False
