"""``[judge] merge_partial``: count the judge's PARTIAL verdicts as another verdict when PARTIAL is not trustworthy.

When a calibration shows the judge's PARTIAL is not above chance (its one-against-the-rest kappa interval includes
0), a team can merge it into ``contradicted`` (or ``unsupported``): every claim the judge called partial, and every
partial verdict of a cited source, is then scored as that verdict, and each judged score says so in its metadata
(``merge_partial``). The claim row keeps the judge's own word in ``judge_verdict``. Off by default.
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping
from typing import Protocol

MERGE_TARGETS = ("contradicted", "unsupported")


class _Verdicted(Protocol):
    verdict: str


def merge_partial_definition(into: str) -> str:
    """The sentence every judged score carries when the merge is on."""
    return f"the judge's PARTIAL verdicts are counted as {into} ([judge] merge_partial = {into!r})"


def merge_partial_verdicts(rows: Iterable[_Verdicted], per_doc: MutableMapping[str, dict[int, str]], into: str) -> int:
    """Rewrite PARTIAL as ``into`` in the claim rows and in the per-document verdicts citations are read from;
    returns how many claims changed. ValueError naming the allowed targets for any other ``into``."""
    if into not in MERGE_TARGETS:
        raise ValueError(f"merge_partial {into!r} is not one of {', '.join(MERGE_TARGETS)}")
    changed = 0
    for row in rows:
        if row.verdict == "partial":
            row.verdict = into
            changed += 1
    for verdicts in per_doc.values():
        for claim, verdict in verdicts.items():
            if verdict == "partial":
                verdicts[claim] = into
    return changed
