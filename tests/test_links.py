"""``--check-links``: the link checker against a loopback site answering each case, and ``citation.dead_rate``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.links import FakeSite, FrozenClock
from tracescore.links import HostGate, LinkChecker, LinkStatus, classify_status
from tracescore.urls import normalize_url


@pytest.fixture
def site() -> Iterator[FakeSite]:
    with FakeSite() as s:
        yield s


def _checker(**kw: object) -> LinkChecker:
    clock = FrozenClock()
    options: dict[str, object] = {"per_host_interval": 0.0, "clock": clock, "sleep": clock.sleep, "timeout": 0.5}
    return LinkChecker(**(options | kw))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("path", "state", "detail"),
    [
        ("/ok", "alive", "HTTP 200"),
        ("/moved", "alive", "HTTP 200 after 1 redirect(s)"),
        ("/chain", "alive", "HTTP 200 after 2 redirect(s)"),
        ("/moved-dead", "dead", "HTTP 404 after 1 redirect(s)"),
        ("/missing", "dead", "HTTP 404"),
        ("/gone", "dead", "HTTP 410"),
        ("/auth", "unknown", "HTTP 401"),
        ("/forbidden", "unknown", "HTTP 403"),
        ("/limited", "unknown", "HTTP 429"),
        ("/broken", "unknown", "HTTP 500"),
        ("/no-head", "alive", "HTTP 200"),
    ],
)
def test_each_case_against_the_loopback_site(site: FakeSite, path: str, state: str, detail: str) -> None:
    with _checker() as checker:
        (status,) = checker.check([site.url + path]).values()
    assert (status.state, status.detail) == (state, detail)


def test_head_first_get_only_when_head_fails(site: FakeSite) -> None:
    with _checker() as checker:
        result = checker.check([site.url + "/ok", site.url + "/no-head", site.url + "/gone"])
    assert site.hits[("HEAD", "/ok")] == 1 and site.hits[("GET", "/ok")] == 0
    assert site.hits[("HEAD", "/no-head")] == 1 and site.hits[("GET", "/no-head")] == 1
    assert result[normalize_url(site.url + "/no-head")].method == "GET"
    assert site.hits[("GET", "/gone")] == 1  # a 410 to HEAD is confirmed with GET before calling it dead


def test_timeout_dns_failure_and_refused_connection_are_dead(site: FakeSite) -> None:
    with _checker(timeout=0.2) as checker:
        result = checker.check([site.url + "/slow", "http://no-such-host.invalid/page", "http://127.0.0.1:9/x"])
    slow, dns, refused = (result[normalize_url(u)] for u in (site.url + "/slow", "http://no-such-host.invalid/page",
                                                              "http://127.0.0.1:9/x"))  # fmt: skip
    assert slow.state == "dead" and slow.detail.startswith("timeout")
    assert dns.state == "dead" and dns.detail.startswith("DNS failure")
    assert refused.state == "dead" and refused.detail.startswith("connection failed")
    assert site.hits[("GET", "/slow")] == 0  # a timed-out HEAD is not tried again with GET


def test_not_http_is_unknown_without_a_request() -> None:
    with _checker() as checker:
        (status,) = checker.check(["ftp://example.com/file"]).values()
        assert status.state == "unknown" and checker.requests == 0


def test_one_check_per_url_per_run_and_the_cache_hook(site: FakeSite) -> None:
    cache: dict[str, str] = {}
    urls = [site.url + "/ok", site.url + "/ok/", site.url + "/ok?utm_source=x", site.url + "/limited"]
    with _checker(cache=cache) as checker:
        first = checker.check(urls)
        again = checker.check(urls)
        assert checker.requests == 1 + 1  # /ok once (three spellings of one URL); /limited: HEAD only, no GET
    assert site.hits[("GET", "/limited")] == 0
    assert first == again and len(first) == 2
    assert set(cache) == {normalize_url(site.url + "/ok")}  # unknown (429) is not cached: re-checked next run
    with _checker(cache=cache) as next_run:
        result = next_run.check([site.url + "/ok", site.url + "/limited"])
        assert next_run.requests == 1 and result[normalize_url(site.url + "/ok")].state == "alive"
    assert LinkStatus.from_json(cache[normalize_url(site.url + "/ok")]).detail == "HTTP 200"


def test_per_host_politeness_on_an_injected_clock(site: FakeSite) -> None:
    clock = FrozenClock()
    with LinkChecker(per_host_interval=1.5, clock=clock, sleep=clock.sleep, max_concurrency=3) as checker:
        checker.check([site.url + "/ok", site.url + "/moved", site.url + "/hold1"])
    assert sorted(clock.slept) == [1.5, 3.0]  # three requests to one host: slots at 0, 1.5 and 3.0 s


def test_host_gate_spaces_each_host_on_its_own() -> None:
    clock = FrozenClock()
    gate = HostGate(2.0, clock=clock, sleep=clock.sleep)
    waits = [gate.reserve(h) for h in ("a", "b", "a", "a", "b")]
    assert waits == [0.0, 0.0, 2.0, 4.0, 2.0]


@pytest.mark.parametrize("limit", [1, 2])
def test_concurrency_is_bounded(limit: int) -> None:
    with FakeSite(hold_seconds=0.1) as site, _checker(max_concurrency=limit) as checker:
        checker.check([f"{site.url}/hold{i}" for i in range(6)])
        assert 1 <= site.max_inflight <= limit


def test_classify_status() -> None:
    assert [classify_status(s) for s in (200, 204, 304, 404, 410, 401, 403, 429, 500)] == [
        "alive", "alive", "alive", "dead", "dead", "unknown", "unknown", "unknown", "unknown",
    ]  # fmt: skip
