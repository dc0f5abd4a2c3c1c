"""Which traces the judged stages run on: ``[scoring] judge_sample``, ``judge_flagged``, ``judge_salt``, ``judge_key``.

A trace is judged when the hash of its key (salted) read as a number in [0, 1) is below the rate, so the choice
depends on nothing but the key, the salt and the rate: every run, backfill, Ray task and ``score_traces`` call chooses
the same traces, and a smaller rate chooses a subset of a larger one's. The key is the trace id by default
(``judge_key = "trace_id"``); each platform's ids are its own (one platform's run id is not another's trace id of the
same request), so to choose the same traces on two platforms the key is what both carry: ``"question"`` (the
question's text) or ``"metadata.<path>"`` (a field of the trace's metadata, e.g. the team's request id; a trace
without it is keyed by its id). With ``judge_flagged`` a trace that a deterministic stage flags is judged too
(recall@k below 1, a fabricated or unfetched citation, a wrong answer): the
engine hands the judged stages the scores computed before them (``engine/pipeline.py``). A trace left out has its
judged scores as a run without a judge has them, absent with ``Reasons.NOT_SAMPLED`` — *not computed*, so an earlier
judged score of that trace stays on the platform.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from msgspec.structs import replace

from tracescore.catalog import Reasons
from tracescore.errors import ConfigError
from tracescore.scorers.answer import ANSWER_CORRECT
from tracescore.scorers.citations import CITATION_FABRICATED_COUNT, CITATION_UNFETCHED_RATE
from tracescore.scorers.retrieval import RECALL_PREFIX
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scores import Score
from tracescore.sections import JUDGE_KEY, JUDGE_SALT, check_judge_key
from tracescore.session import Earlier
from tracescore.trace import Trace


def share(key: str, salt: str = JUDGE_SALT) -> float:
    """The trace's draw: the first 8 bytes of sha256(salt, key) as a number uniform in [0, 1) (key: by default its
    id)."""
    digest = hashlib.sha256(f"{salt}\x00{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def flagged(scores: Mapping[str, Score]) -> bool:
    """Whether a deterministic stage flags the trace: recall@k present and < 1, a fabricated citation, an unfetched
    one, or ``answer.correct`` false (an absent score flags nothing)."""
    for name, s in scores.items():
        value = s.value
        if value is None:
            continue
        if name.startswith(RECALL_PREFIX) and isinstance(value, float) and value < 1:
            return True
        if name in (CITATION_FABRICATED_COUNT, CITATION_UNFETCHED_RATE) and isinstance(value, float) and value > 0:
            return True
        if name == ANSWER_CORRECT and value is False:
            return True
    return False


@dataclass(frozen=True)
class Sampling:
    """The share of traces judged (``rate``, 1: all), whether flagged traces are judged too, the hash's salt and
    what of a trace it hashes (``key``: ``trace_id``, ``question`` or ``metadata.<path>``)."""

    rate: float = 1.0
    flagged: bool = True
    salt: str = JUDGE_SALT
    key: str = JUDGE_KEY

    def __post_init__(self) -> None:
        if not 0 <= self.rate <= 1 or not self.salt:
            raise ConfigError(
                f"judge_sample must be a share from 0 to 1 and judge_salt a non-empty text, got"
                f" {self.rate!r} and {self.salt!r}; e.g. judge_sample = 0.1"
            )
        try:
            check_judge_key(self.key)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None

    def key_of(self, trace: Trace) -> str:
        """What the hash reads of ``trace``: its id, its question, or a metadata field (the id when it has none)."""
        if self.key == "question":
            return trace.question.strip()
        if self.key.startswith("metadata."):
            node: object = trace.metadata
            for part in self.key.split(".")[1:]:
                node = node.get(part) if isinstance(node, Mapping) else None
            if node is not None and not isinstance(node, Mapping | list):
                return str(node)
        return trace.id

    @property
    def everything(self) -> bool:
        return self.rate >= 1.0

    @property
    def reason(self) -> str:
        """Why a trace left out has no judged score: ``not sampled (judge_sample 0.1)``."""
        return Reasons.NOT_SAMPLED.format(rate=self.rate)

    def chosen(self, key: str) -> bool:
        """Whether the hash alone chooses the trace of ``key`` (``key_of``: the sampled share, flagged ones apart)."""
        return self.everything or share(key, self.salt) < self.rate

    def judges(self, key: str, scores: Mapping[str, Score]) -> bool:
        """Whether the judged stages run on the trace, given the deterministic scores computed before them."""
        return self.chosen(key) or (self.flagged and flagged(scores))


class Sampled:
    """A judged stage run only on the traces ``sampling`` judges; on the others ``unjudged`` (the same stage without
    a judge, its judged scores absent with the not-sampled reason) answers, a value it gives without a call (an exact
    semantic match) absent too."""

    __slots__ = ("__name__", "judged", "sampling", "unjudged")

    def __init__(self, judged: Scorer, unjudged: Scorer, sampling: Sampling) -> None:
        self.judged, self.unjudged, self.sampling = judged, unjudged, sampling
        self.__name__ = getattr(judged, "__name__", "judged")

    def given(self, trace: Trace, scores: Mapping[str, Score], earlier: Earlier | None = None) -> Scored:
        """Score ``trace`` knowing the scores of the stages before this one (what ``judge_flagged`` reads). A judged
        score says why its trace was judged (metadata ``judge_sample``: the rate, ``by`` hash or flagged), so a
        report can keep the flagged traces apart from the sample."""
        sampling = self.sampling
        chosen = sampling.chosen(sampling.key_of(trace))
        by = "hash" if chosen else "flagged" if sampling.flagged and flagged(scores) else None
        if by is None:  # a value given without a call (an exact semantic match) too: the shares stay the sample's
            scored = self.unjudged(trace)
            if all(s.value is None for s in scored.scores):
                return scored
            left = tuple(s if s.value is None else Score(s.name, reason=sampling.reason) for s in scored.scores)
            return replace(scored, scores=left)
        if earlier is not None and getattr(self.judged, "carries", False):
            carrying: Callable[..., Scored] = self.judged  # it declares ``earlier``: the session's earlier turns
            scored = carrying(trace, earlier=earlier)
        else:
            scored = self.judged(trace)
        tag = {"rate": sampling.rate, "by": by}
        tagged = tuple(s.with_metadata(s.metadata | {"judge_sample": tag}) for s in scored.scores)
        return replace(scored, scores=tagged)

    @property
    def score_names(self) -> tuple[str, ...]:
        """The names the judged scorer declares (a scorer error leaves them absent)."""
        return tuple(getattr(self.judged, "score_names", ()))

    @property
    def carries(self) -> bool:
        """Whether the judged scorer takes the session's earlier turns (``earlier``)."""
        return bool(getattr(self.judged, "carries", False))

    def __call__(self, trace: Trace, earlier: Earlier | None = None) -> Scored:
        """Score ``trace`` without the earlier scores: the hash alone decides (the engine calls ``given``)."""
        return self.given(trace, {}, earlier)
