"""The surface oracle through the real ``anthropic`` SDK against the fake Messages API on loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.anthropic_surface import fabricate, surface_oracle
from tracescore.judge.anthropic import AnthropicJudge
from tracescore.judge.cache import CachingJudge, MemoryJudgeCache
from tracescore.scorers.surface import SURFACE_SCORES, surface_scorer
from tracescore.scores import Score
from tracescore.trace import FetchStep, Hit, Labels, SearchStep, Trace

SUPPORT = "Everest is 8,849 metres high according to the 2020 survey."
CONTRA = "Everest was long listed at 8,848 metres by the survey of India."
OFF = "Trekking permits for the Everest region cost about 50 dollars."
# rank: (snippet, fetched page or None)
HITS = {
    1: (SUPPORT, "Heights. " + SUPPORT),  # SMART
    2: (SUPPORT, None),  # MISSED
    3: (CONTRA, None),  # NO-OP, contradicting surface
    4: (OFF, "Trekking.\n\nNew survey: " + SUPPORT),  # BLIND, discovered on the page
    5: (OFF, "Permits. " + OFF),  # BLIND, page yields nothing
    6: (OFF, None),
    7: (CONTRA, None),
    8: (OFF, None),
    9: (OFF, None),
    10: (SUPPORT, None),  # MISSED
}


def _trace() -> Trace:
    hits = [
        Hit(rank=r, url=f"https://site{r}.example.org/everest", title=f"Result {r}", snippet=s, metadata={"age": "1y"})
        for r, (s, _) in HITS.items()
    ]
    fetches = [
        FetchStep(url=f"https://site{r}.example.org/everest", text=p, status=200) for r, (_, p) in HITS.items() if p
    ]
    return Trace(
        id="everest-10",
        question="How high is Mount Everest?",
        steps=[SearchStep(query="everest height", hits=hits), *fetches],
        answer="8,849 metres.",
        labels=Labels(gold_answer="8,849 metres"),
        metadata={"provider": "brave"},
    )


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(tamper=surface_oracle) as server:
        yield server


def _values(scores: list[Score]) -> dict[str, object]:
    return {s.name: s.value for s in scores if s.value is not None}


EXPECTED = {
    "surface.support_any": True, "surface.first_support_rank": 1.0, "surface.smart": 1.0, "surface.missed": 2.0,
    "surface.blind": 2.0, "surface.noop": 5.0, "surface.contradiction_ratio": 2 / 3, "surface.fetch_yield": 2 / 3,
    "surface.discovered_support": 1.0,
}  # fmt: skip


def test_one_structured_request_per_trace_and_a_cache_hit_on_rescore(fake: FakeAnthropic) -> None:
    cache = MemoryJudgeCache()
    with AnthropicJudge(api_key="test-key", base_url=fake.url, wait_initial=0.001) as inner:
        judge = CachingJudge(inner, cache)
        first = surface_scorer(judge=judge)(_trace())
        assert len(fake.messages()) == 1
        body = fake.messages()[0].json()
        fmt = body["output_config"]["format"]
        assert fmt["type"] == "json_schema" and "labels" in fmt["schema"]["properties"]
        assert body["messages"][0]["content"][0]["cache_control"] == {"type": "ephemeral"}  # question + gold prefix
        assert _values(first) == pytest.approx(EXPECTED)
        again = surface_scorer(judge=judge)(_trace())
        assert len(fake.messages()) == 1  # rescore: 0 requests
        assert inner.usage.cache_hits == 1 and inner.usage.calls == 1
    assert _values(again) == _values(first)
    smart = next(s for s in first if s.name == "surface.smart")
    assert smart.metadata["oracle_calls"] == 1 and smart.metadata["rubric_version"] == "surface-1"
    assert next(s for s in again if s.name == "surface.smart").metadata["oracle_calls"] == 0
    usage = smart.metadata["judge_usage"]  # the result line's judge object sums this with the other stages
    assert usage["calls"] == 1 and usage["input_tokens"] > 0 and usage["cost_usd"] > 0
    assert next(s for s in again if s.name == "surface.smart").metadata["judge_usage"]["calls"] == 0


def test_a_fabricated_quote_downgrades_the_label_and_is_counted(fake: FakeAnthropic) -> None:
    fake.tamper = fabricate("U1", "U10")  # the SMART item's surface and page quotes, and a MISSED one
    with AnthropicJudge(api_key="test-key", base_url=fake.url, wait_initial=0.001) as judge:
        scored = surface_scorer(judge=judge)(_trace())
    scores = {s.name: s for s in scored}
    values = {n: s.value for n, s in scores.items() if s.value is not None}
    assert (values["surface.smart"], values["surface.missed"], values["surface.blind"]) == (0.0, 1.0, 3.0)
    assert values["surface.first_support_rank"] == 2.0 and values["surface.fetch_yield"] == pytest.approx(1 / 3)
    assert scores["surface.smart"].metadata["unverified_quotes"] == 3
    rows = {r.rank: r for r in scored.urls}
    assert (rows[1].surface, rows[1].page, rows[1].cell) == ("neither", "neither", "blind")
    assert len(rows[1].unverified) == 2 and "1999" in rows[1].unverified[0]
    assert {n for n in SURFACE_SCORES} == set(scores)
