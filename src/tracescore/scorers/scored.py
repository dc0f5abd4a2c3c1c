"""What a scorer returns: its scores and the rows and notes behind them, as one immutable value.

A scorer is a plain function of the trace (``Scorer``): everything it found about that trace comes back in its
``Scored``, nothing is left behind for someone to pick up later. The scores are the result line's; the rows go to the
local store (per-claim, per-citation, per-URL) and the notes to the result line's ``notes``. A ``Scored`` is also the
sequence of its scores, so ``for s in scorer(trace)`` reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import overload

import msgspec

from tracescore.result import CitationRow, ClaimRow, UrlRow
from tracescore.scores import Score
from tracescore.trace import Trace


class Scored(msgspec.Struct, frozen=True, gc=False):
    """One scorer's outcome on one trace: ``scores`` (present or absent with a reason) and what they rest on.

    ``claims``: the judged claims (grounding); ``citations``: every cited source of every sentence (citations);
    ``urls``: every URL the agent saw, labelled (surface); ``notes``: what the reader of the result line should know
    (a marker with no reference, ...). Each scorer fills what it computes and leaves the rest empty.
    """

    scores: tuple[Score, ...]
    claims: tuple[ClaimRow, ...] = ()
    citations: tuple[CitationRow, ...] = ()
    urls: tuple[UrlRow, ...] = ()
    notes: tuple[str, ...] = ()

    def __iter__(self) -> Iterator[Score]:
        return iter(self.scores)

    def __len__(self) -> int:
        return len(self.scores)

    @overload
    def __getitem__(self, index: int) -> Score: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Score]: ...

    def __getitem__(self, index: int | slice) -> Score | Sequence[Score]:
        return self.scores[index]


Sequence.register(Scored)  # a Sequence of its scores (a Struct, built in C: three a trace, on the hot path)

Scorer = Callable[[Trace], Scored]
"""A scorer: a pure function of the trace (built by a factory from its options, plus the judge if judged)."""
