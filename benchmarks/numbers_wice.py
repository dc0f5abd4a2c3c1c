"""``grounding.unsupported_numbers`` on WiCE claims (#33 acceptance 2): how often a claim people judged supported is
flagged (the false-flag rate, goal ≤ 10 %), and how often a tampered copy is caught (goal ≥ 99 %).

Each WiCE claim becomes a trace: the claim is the answer, the cited page's sentences are one fetched page. A tampered
copy changes one digit of one number of a claim (each number of each claim, one copy each) so that the new number
is stated nowhere in the page; it is caught when its comment names the new number as unsupported.

Run: ``python benchmarks/numbers_wice.py [path/to/claim_dev.jsonl]`` (default ``../shared/data/wice/claim_dev.jsonl``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracescore.scorers.numbers import (
    GROUNDING_NUMBERS_CHECKED,
    GROUNDING_UNSUPPORTED_NUMBERS,
    Evidence,
    numbers_scorer,
)
from tracescore.scorers.numerals import numerals
from tracescore.trace import Trace

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "wice" / "claim_dev.jsonl"
_SCORE = numbers_scorer()


@dataclass
class Figures:
    supported: int = 0  # claims labelled supported
    supported_checked: int = 0  # of which state a number (numbers_checked present)
    false_flags: int = 0  # of which grounding.unsupported_numbers > 0
    tampered: int = 0  # tampered copies
    caught: int = 0  # of which the new number is named unsupported
    missed: list[str] | None = None

    @property
    def false_flag_rate(self) -> float:
        return self.false_flags / self.supported_checked if self.supported_checked else 0.0

    @property
    def caught_rate(self) -> float:
        return self.caught / self.tampered if self.tampered else 0.0


def trace_of(row: dict[str, Any], claim: str | None = None, n: int = 0) -> Trace:
    """The claim as the answer, the cited page's sentences as one fetched page."""
    fetch = {"kind": "fetch", "url": "https://wice.invalid/page", "text": "\n".join(row["evidence"])}
    answer = row["claim"] if claim is None else claim
    return Trace.model_validate({"id": f"wice-{n}", "answer": answer, "steps": [fetch]})


def _scores(trace: Trace) -> dict[str, Any]:
    return {s.name: s for s in _SCORE(trace)}


def tampered_copies(row: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(tampered claim, the new number's text): for each number the claim states, its last digit that can be changed
    so that the new number is stated nowhere on the page (as the scorer reads the page: a date is stated when the
    page states it whole, or its day and month and its year), changed."""
    page = Evidence(trace_of(row))
    claim, cursor = row["claim"], 0
    for numeral in numerals(claim, whole=True):
        start = claim.find(numeral.text, cursor)
        if start < 0:
            continue
        cursor = start + len(numeral.text)
        for pos in reversed([i for i, ch in enumerate(numeral.text) if ch.isdigit()]):
            for step in range(1, 10):
                digit = str((int(numeral.text[pos]) + step) % 10)
                text = numeral.text[:pos] + digit + numeral.text[pos + 1:]
                new = numerals(text, whole=True)
                if len(new) == 1 and new[0].text == text and not page.states(new[0].key):
                    yield claim[:start] + text + claim[cursor:], text
                    break
            else:
                continue
            break


def measure(path: Path) -> Figures:
    figures = Figures(missed=[])
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    n = 0
    for row in rows:
        if row["label"] == "supported":
            figures.supported += 1
            got = _scores(trace_of(row))
            unsupported = got[GROUNDING_UNSUPPORTED_NUMBERS]
            if got[GROUNDING_NUMBERS_CHECKED].present:
                figures.supported_checked += 1
                figures.false_flags += bool(unsupported.value)
        for claim, text in tampered_copies(row):
            n += 1
            figures.tampered += 1
            comment = _scores(trace_of(row, claim, n))[GROUNDING_UNSUPPORTED_NUMBERS].comment or ""
            if f'"{text}" not in any evidence' in comment:
                figures.caught += 1
            else:
                figures.missed.append(f"{text!r} in {claim!r}")  # type: ignore[union-attr]
    return figures


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    f = measure(path)
    print(f"supported claims: {f.supported}, stating a number: {f.supported_checked}, flagged: {f.false_flags}"
          f" (false-flag rate {f.false_flag_rate:.1%}, goal <= 10%)")  # fmt: skip
    print(f"tampered copies: {f.tampered}, caught: {f.caught} ({f.caught_rate:.1%}, goal >= 99%)")
    for miss in (f.missed or [])[:10]:
        print(f"  missed: {miss}")


if __name__ == "__main__":
    main()
