"""``citation.dead_rate`` over the cited URLs of a trace, checked against a loopback site."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.links import FakeSite, FrozenClock
from tracescore.links import LinkChecker
from tracescore.scorers.deadlinks import SCORE, dead_link_scorer
from tracescore.trace import Trace


@pytest.fixture
def site() -> Iterator[FakeSite]:
    with FakeSite() as s:
        yield s


def _checker() -> LinkChecker:
    clock = FrozenClock()
    return LinkChecker(per_host_interval=0.0, clock=clock, sleep=clock.sleep, timeout=0.5)


def _cites(*urls: str) -> Trace:
    refs = "\n".join(f"[{i}] {u}" for i, u in enumerate(urls, start=1))
    markers = "".join(f"[{i}]" for i in range(1, len(urls) + 1))
    return Trace(id="t", answer=f"The answer {markers}.\n\nSources:\n{refs}")


def test_dead_rate_counts_dead_over_decided_links(site: FakeSite) -> None:
    with _checker() as checker:
        scorer = dead_link_scorer(checker=checker)
        (result,) = scorer(_cites(site.url + "/ok", site.url + "/gone", site.url + "/forbidden", site.url + "/missing"))
    assert result.value == pytest.approx(2 / 3)
    assert result.metadata["unknown"] == {site.url + "/forbidden": "HTTP 403"}
    assert result.comment is not None and "/gone (HTTP 410)" in result.comment


def test_dead_rate_absent_without_cited_urls_or_when_none_can_be_decided(site: FakeSite) -> None:
    with _checker() as checker:
        scorer = dead_link_scorer(checker=checker)
        (none,) = scorer(Trace(id="t", answer="No sources."))
        (undecided,) = scorer(_cites(site.url + "/auth", site.url + "/limited"))
        (alive,) = scorer(_cites(site.url + "/ok"))
    assert (none.value, none.reason) == (None, "no cited URL")
    assert undecided.value is None and undecided.reason == "no cited URL could be checked (2 unknown)"
    assert alive.value == 0.0 and alive.name == SCORE
