"""``grounding.unsupported_numbers`` on WiCE claims (#33 acceptance 2, #44 acceptance 2): how often a claim people
judged supported is flagged (the false-flag rate, goal ≤ 10 %), and how often a tampered copy is caught (goal ≥ 99 %).

Each WiCE claim becomes a trace: the claim is the answer, the cited page's sentences are one fetched page. A tampered
copy changes one number of a claim so that the new one is stated nowhere in the page: one digit of each number, and
for each full date its day, its month, its year, and an impossible day (January 32, February 30); it is caught when
its comment names the new number as unsupported.

Run: ``python benchmarks/numbers_wice.py [path/to/claim_dev.jsonl]`` (default ``../shared/data/wice/claim_dev.jsonl``).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tracescore.scorers.number_reader import read
from tracescore.scorers.numbers import (
    GROUNDING_NUMBERS_CHECKED,
    GROUNDING_UNSUPPORTED_NUMBERS,
    Evidence,
    evidence_parts,
    numbers_scorer,
)
from tracescore.trace import Trace

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "wice" / "claim_dev.jsonl"
_SCORE = numbers_scorer()


@dataclass
class Figures:
    supported: int = 0  # claims labelled supported
    supported_checked: int = 0  # of which state a number (numbers_checked present)
    false_flags: int = 0  # of which grounding.unsupported_numbers > 0
    split_dates: int = 0  # of which flagged only for full dates whose day and month, and year, the page states apart
    tampered: int = 0  # tampered copies
    caught: int = 0  # of which the new number is named unsupported
    missed: list[str] | None = None

    @property
    def false_flag_rate(self) -> float:
        return self.false_flags / self.supported_checked if self.supported_checked else 0.0

    @property
    def other_flag_rate(self) -> float:
        """The false-flag rate without the claims flagged only for a full date the page states in two places."""
        return (self.false_flags - self.split_dates) / self.supported_checked if self.supported_checked else 0.0

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


_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                "November", "December")  # fmt: skip


def tampered_copies(row: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(tampered claim, the new number's text): for each number the claim states, its last digit that can be changed
    so that the new number is stated nowhere on the page, changed; and for each full date, the date with its day,
    its month or its year changed (to one the page does not state) or with an impossible day."""
    page = Evidence(evidence_parts(trace_of(row)))
    claim, cursor = row["claim"], 0
    for number in read(claim, whole=True):
        start = claim.find(number.text, cursor)
        if start < 0:
            continue
        cursor = start + len(number.text)
        texts = [_digit_changed(number.text, page)]
        if isinstance(number.key, tuple) and number.key[0] == "d":
            texts += _dates_changed(number.key, page)
        for text in texts:
            if text is not None:
                yield claim[:start] + text + claim[cursor:], text


def _digit_changed(text: str, page: Evidence) -> str | None:
    for pos in reversed([i for i, ch in enumerate(text) if ch.isdigit()]):
        for step in range(1, 10):
            new = text[:pos] + str((int(text[pos]) + step) % 10) + text[pos + 1:]
            read_new = read(new, whole=True)
            if len(read_new) == 1 and read_new[0].text == new and not page.states(read_new[0].key):
                return new
    return None


def _dates_changed(key: tuple[object, ...], page: Evidence) -> list[str | None]:
    """The date ``key`` with its day, month or year changed (each to one the page does not state), and impossible."""
    year, month, day = (int(str(part)) for part in key[1:])
    copies: list[str | None] = []
    for y, m, d in ((year, month, day % 28 + 1), (year, month % 12 + 1, min(day, 28)), (year + 1, month, day)):
        copies.append(None if page.states(("d", y, m, d)) else f"{_MONTH_NAMES[m - 1]} {d}, {y}")
    copies.append(f"February 30, {year}" if month == 2 else f"{_MONTH_NAMES[month - 1]} 32, {year}")
    return copies


def _only_split_dates(row: dict[str, Any]) -> bool:
    """Whether every number of the claim the page does not state is a full date whose day and month the page states
    in one place and its year in another (a date item 2 of #44 does not count as stated)."""
    page = Evidence(evidence_parts(trace_of(row)))
    missing = [n.key for n in read(row["claim"], whole=True) if not page.states(n.key)]
    return bool(missing) and all(isinstance(k, tuple) and k[0] == "d" and page.states(("md", k[2], k[3]))
                                 and page.states(k[1]) for k in missing)  # fmt: skip


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
                figures.split_dates += bool(unsupported.value) and _only_split_dates(row)
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
          f" (false-flag rate {f.false_flag_rate:.1%}, goal <= 10%); {f.split_dates} of them only for a full date"
          f" stated as day and month in one place and year in another (without them {f.other_flag_rate:.1%})")
    print(f"tampered copies: {f.tampered}, caught: {f.caught} ({f.caught_rate:.1%}, goal >= 99%)")
    for miss in (f.missed or [])[:10]:
        print(f"  missed: {miss}")


if __name__ == "__main__":
    main()
