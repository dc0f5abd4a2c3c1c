"""The surface oracle for the fake Messages API: a ``tamper`` for ``FakeAnthropic`` that answers surface requests.

For every ``<item>`` of the request, a part (``surface`` / ``page``) ``supports`` when one of its lines holds every
word and number of the gold answer (quoting that line), and ``contradicts`` when a line holds the gold answer's
words but another number. ``fabricate`` wraps it to rewrite the quote of chosen items (a quote no text contains).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tests.fakes.anthropic import _numbers, _words

_GOLD = re.compile(r"<gold_answer>(.*?)</gold_answer>", re.S)
_ITEM = re.compile(r'<item id="(U\d+)"[^>]*>\n(.*?)\n</item>', re.S)
_PART = re.compile(r"<(surface|page)>\n(.*?)\n</\1>", re.S)


def surface_labels(content: str) -> dict[str, Any]:
    """The fake oracle's labels for one surface request's text (prefix and content joined)."""
    match = _GOLD.search(content)
    gold = match.group(1) if match else ""
    words, numbers = {w for w in _words(gold) if not w[0].isdigit()}, _numbers(gold)
    labels = []
    for item, body in _ITEM.findall(content):
        for part, text in _PART.findall(body):
            for line in (x.strip() for x in text.splitlines()):
                quote = line.split(": ", 1)[1] if re.match(r"^(title|snippet): ", line) else line
                if not words <= _words(quote) or (numbers and not _numbers(quote)):
                    continue
                label = "supports" if numbers <= _numbers(quote) else "contradicts"
                labels.append({"id": item, "part": part, "label": label, "quote": quote})
                break
    return {"labels": labels}


def surface_oracle(output: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    """``FakeAnthropic.tamper``: replace the grounding oracle's output with surface labels."""
    content = "".join(block["text"] for block in body["messages"][0]["content"])
    return surface_labels(content)


def fabricate(*items: str) -> Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]]:
    """The surface oracle, with the quotes of ``items`` replaced by a sentence that no surface or page contains."""

    def tamper(output: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        out = surface_oracle(output, body)
        for label in out["labels"]:
            if label["id"] in items:
                label["quote"] = "The summit was officially remeasured at exactly this height in 1999."
        return out

    return tamper
