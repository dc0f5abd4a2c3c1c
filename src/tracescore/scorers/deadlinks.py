"""``citation.dead_rate``: cited URLs that no longer resolve (``--check-links``; the checker does the network I/O).

dead / (alive + dead) over the trace's distinct cited URLs: unknown links (401/403/429, 5xx…) are reported in the
metadata but never counted as dead, nor in the denominator. Absent when the answer cites no URL or none could be
decided. Read it beside ``citation.unfetched_rate``: "dead or unfetched".
"""

from __future__ import annotations

from tracescore.links import LinkCheck
from tracescore.reasons import Reasons
from tracescore.registry import ScoreSpec, reasons, scorer
from tracescore.scorers.citations import citation_rows
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scores import absent, score
from tracescore.trace import Trace

CITATION_DEAD_RATE = "citation.dead_rate"
SCORE = CITATION_DEAD_RATE
SPECS = (
    ScoreSpec(CITATION_DEAD_RATE, "numeric", "lower", 0, 1, absent=reasons(Reasons.NO_CITED_URL, Reasons.LINKS_UNKNOWN),
              definition="cited URLs that no longer resolve (404/410/DNS/timeout) / cited URLs decided; --check-links"
              " only"),
)  # fmt: skip


@scorer(stage="citations", version="links-1", scores=SPECS)
def dead_links(*, links: LinkCheck) -> Scorer:
    """The registered form: the run's link checker (the scorer runs only with ``--check-links``)."""
    return dead_link_scorer(checker=links)


def dead_link_scorer(*, checker: LinkCheck) -> Scorer:
    """Scorer factory for ``citation.dead_rate`` over the URLs the answer cites, checked by ``checker``."""

    def score_dead_links(trace: Trace) -> Scored:
        cited = list(dict.fromkeys(r.target for r in citation_rows(trace) if r.kind == "url"))
        if not cited:
            return Scored((absent(SCORE, Reasons.NO_CITED_URL.text),))
        statuses = list(checker(cited).values())
        dead = [s for s in statuses if s.state == "dead"]
        alive = [s for s in statuses if s.state == "alive"]
        unknown = {s.url: s.detail for s in statuses if s.state == "unknown"}
        meta = {"checked": len(statuses), "dead": len(dead), "alive": len(alive), "unknown": unknown}
        if not dead and not alive:
            return Scored((absent(SCORE, Reasons.LINKS_UNKNOWN.format(unknown=len(unknown)), **meta),))
        comment = "no longer resolve: " + "; ".join(f"{s.url} ({s.detail})" for s in dead[:3]) if dead else None
        return Scored((score(SCORE, len(dead) / (len(dead) + len(alive)), comment=comment, **meta),))

    score_dead_links.__name__ = "dead_links"
    return score_dead_links
