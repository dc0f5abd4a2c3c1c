"""``citation.stale_rate`` (#33 item 2) on hand-built traces: pages with and without a findable date, each value
worked out by hand; the date forms read and the ones refused; ``[scoring] stale_after`` and the fingerprint."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tracescore.catalog import Reasons
from tracescore.cli import main
from tracescore.config import Config, fingerprint, parse_sections
from tracescore.engine.plan import deterministic_scorers
from tracescore.errors import ConfigError
from tracescore.scorers.stale import CITATION_STALE_RATE, page_date, stale_scorer, value_date
from tracescore.scores import Score
from tracescore.trace import Trace

NOW = "2026-05-17T12:00:00+00:00"  # 365 days before: 2025-05-17T12:00Z


def _fetch(url: str, text: str = "", status: int = 200, **metadata: Any) -> dict[str, Any]:
    return {"kind": "fetch", "url": url, "text": text, "status": status, "metadata": metadata}


def _trace(answer: str, steps: list[dict[str, Any]], timestamp: str | None = NOW) -> dict[str, Any]:
    return {"id": "t", "timestamp": timestamp, "question": "q", "answer": answer, "steps": steps}


def _stale(trace: dict[str, Any], after: timedelta = timedelta(days=365)) -> Score:
    (got,) = stale_scorer(stale_after=after)(Trace.model_validate(trace))
    return got


SIX = ("A [1]. B [2]. C [3]. D [4]. E [5]. F [6]. G [7]. H [8].\n\n[1] https://a.example/old\n"
       "[2] https://b.example/new\n[3] https://c.example/undated\n[4] https://d.example/hit\n"
       "[5] https://e.example/unfetched\n[6] https://f.example/updated\n[7] https://g.example/gone\n"
       "[8] https://h.example/edge")  # fmt: skip
STEPS = [
    {"kind": "search", "query": "q", "hits": [
        {"url": "https://d.example/hit", "metadata": {"publishedDate": "Sat, 17 May 2025 08:00:00 GMT"}},
        {"url": "https://h.example/edge", "metadata": {"published_date": "2025-05-18"}},
        {"url": "https://c.example/undated", "metadata": {"score_date": "2001-01-01", "year": 2001}},
    ]},
    _fetch("https://a.example/old", "Acme news\nPublished: March 3, 2024\nThe store opened in 1998."),
    _fetch("https://b.example/new", "Founded in 1990, renamed in 2019.", published_date="2026-01-10"),
    _fetch("https://c.example/undated", "In 2019 the company grew; by 2023 it had 41 branches. Posted 05/17/2026."),
    _fetch("https://d.example/hit", "no date on the page itself"),
    _fetch("https://f.example/updated", "Published: 2020-01-01\n…\nLast updated on 1 April 2026"),
    _fetch("https://g.example/gone", "Published: 2001-01-01", status=404),
    _fetch("https://h.example/edge", "no date here either"),
]  # fmt: skip


def test_stale_rate_over_the_dated_cited_fetched_sources_counted_by_hand() -> None:
    got = _stale(_trace(SIX, STEPS))
    # dated: a (2024-03-03, text: stale), b (2026-01-10, fetch metadata: fresh), d (2025-05-17, search metadata:
    # 00:00 is before 2025-05-17T12:00, stale), f (latest of its two labels, 2026-04-01: fresh), h (2025-05-18: fresh);
    # c has only bare years and an ambiguous 05/17/2026 (undated); e was never fetched, g's fetch failed: not sources
    assert got.value == pytest.approx(2 / 5)
    assert got.comment == ("stale (older than 365 days): https://a.example/old (2024-03-03, page text);"
                           " https://d.example/hit (2025-05-17, search metadata);"
                           " 1 cited source(s) with no findable date not counted")  # fmt: skip
    assert got.metadata["dated"] == 5 and got.metadata["undated"] == 1
    assert got.metadata["stale"] == ["https://a.example/old", "https://d.example/hit"]


def test_stale_after_moves_the_line() -> None:
    # 100 days: b (127 days old) and h (364) stale too, f (46) still fresh
    assert _stale(_trace(SIX, STEPS), timedelta(days=100)).value == pytest.approx(4 / 5)
    assert _stale(_trace(SIX, STEPS), timedelta(days=30)).value == 1.0  # f too
    assert _stale(_trace(SIX, STEPS), timedelta(days=3650)).value == 0.0  # nothing is ten years old


def test_absent_when_no_cited_source_has_a_date_and_for_each_other_reason() -> None:
    undated = _trace("C [1].\n\n[1] https://c.example/undated", STEPS)
    assert _stale(undated).reason == Reasons.NO_SOURCE_DATE.format(sources="https://c.example/undated")
    assert _stale(_trace("E [1].\n\n[1] https://e.example/unfetched", STEPS)).reason == Reasons.NO_CITED_FETCH.text
    assert _stale(_trace("G [1].\n\n[1] https://g.example/gone", STEPS)).reason == Reasons.NO_CITED_FETCH.text
    assert _stale(_trace("Nothing cited here.", STEPS)).reason == Reasons.NOTHING_CITED.text
    assert _stale(_trace(SIX, STEPS, timestamp=None)).reason == Reasons.NO_TIMESTAMP.text
    assert _stale(_trace("", STEPS)).reason == Reasons.EMPTY_ANSWER.text
    assert not any(_stale(t).present for t in (undated, _trace(SIX, STEPS, timestamp=None)))


@pytest.mark.parametrize(("text", "day"), [
    ("Published: March 3, 2024", "2024-03-03"),
    ("Updated on 2023-01-05T10:00:00Z", "2023-01-05"),
    ("Last modified: 1 Sept 2023", "2023-09-01"),
    ("Date published — Sep. 3, 2024", "2024-09-03"),
    ("This page was last edited on 5 May 2024, at 10:12 (UTC).", "2024-05-05"),
    ("Posted 2024/02/29 by admin", "2024-02-29"),
    ("intro\nBy Jane Doe | May 17, 2026\nbody", "2026-05-17"),
    ("By Jane Doe, 2nd June 2022", "2022-06-02"),
    ('<time datetime="2022-11-30">Nov 30</time>', "2022-11-30"),
    ('{"datePublished": "2021-07-04T08:00:00+02:00"}', "2021-07-04"),
    ('<meta property="article:modified_time" content="2020-02-29T00:00:00Z">', "2020-02-29"),
    ("Published: 2019-01-01. Updated: 2021-06-30.", "2021-06-30"),  # the latest labelled date
])  # fmt: skip
def test_the_page_text_forms_read(text: str, day: str) -> None:
    assert page_date(text) == datetime.fromisoformat(day).replace(tzinfo=UTC)


@pytest.mark.parametrize("text", [
    "In 2019 the company grew.",  # a year alone is never a date
    "Founded March 2024.",  # no label
    "Published: March 2024",  # no day
    "Posted 05/17/2026",  # day and month ambiguous
    "Published: 2024-02-30",  # no such day
    "copyright 2024, updated yearly",
    "the March 3, 2024 meeting",  # a date, but no label: no guess
])  # fmt: skip
def test_the_page_text_forms_refused(text: str) -> None:
    assert page_date(text) is None


def test_metadata_values() -> None:
    assert value_date("Sun, 17 May 2026 10:00:00 GMT") == datetime(2026, 5, 17, tzinfo=UTC)
    assert value_date("2026-05-17T10:00:00Z") == datetime(2026, 5, 17, 10, tzinfo=UTC)
    assert value_date("May 17, 2026") == datetime(2026, 5, 17, tzinfo=UTC)
    assert value_date("2026") is None and value_date(1_779_000_000) is None and value_date("soon") is None


def test_in_the_default_scorers_and_gated_by_the_config(tmp_path: Path) -> None:
    names = {s.name for scorer in deterministic_scorers() for s in scorer(Trace.model_validate(_trace(SIX, STEPS)))}
    assert CITATION_STALE_RATE in names
    traces = tmp_path / "t.jsonl"
    traces.write_text(json.dumps(_trace(SIX, STEPS)) + "\n")
    rates = {}
    for after in ("365d", "100d"):
        config = tmp_path / f"{after}.toml"
        config.write_text(f'[scorers.stale]\nstale_after = "{after}"\n')
        out = tmp_path / f"{after}.jsonl"
        run = CliRunner().invoke(main, ["score", str(traces), "--config", str(config), "--out", str(out), "-q",
                                        "--store", str(tmp_path / f"{after}.db")])  # fmt: skip
        assert run.exit_code == 0, run.output
        rates[after] = json.loads(out.read_text())["scores"][CITATION_STALE_RATE]
    assert rates == {"365d": pytest.approx(0.4), "100d": pytest.approx(0.8)}


def test_stale_after_is_in_the_fingerprint_as_a_span() -> None:
    def fp(stale: dict[str, Any]) -> str:
        return fingerprint(Config(parse_sections({"scorers": {"stale": stale}})))

    assert fp({}) == fp({"stale_after": "365d"}) == fp({"stale_after": "8760h"})  # the same span: the same scoring
    assert fp({"stale_after": "90d"}) != fp({})
    with pytest.raises(ConfigError, match=r"\[scorers.stale\] stale_after: .*such as '90s', '15m', '2h' or '7d',"
                                          r" got '90 days'.*accepts: stale_after \(duration"):
        Config(parse_sections({"scorers": {"stale": {"stale_after": "90 days"}}})).scorers()
    with pytest.raises(ConfigError, match=r"scoring.stale_after is now the scorer option \[scorers.stale\]"):
        parse_sections({"scoring": {"stale_after": "90d"}})


# -- #43 item 2: every date found for the page, from every place, and the latest one wins -------------------------

OLD, MID, NEW = "2023-11-18", "2024-06-01", "2025-05-20"


def _source(steps: list[dict[str, Any]]) -> Score:
    return _stale(_trace("A [1].\n\n[1] https://a.example/p", steps))


def _where(steps: list[dict[str, Any]]) -> tuple[str, str]:
    """(date, where it was found) of the one cited source, read from the comment (stale_after 1 day: it is stale)."""
    got = _stale(_trace("A [1].\n\n[1] https://a.example/p", steps), timedelta(days=1))
    assert got.comment is not None, got
    day, where = got.comment.split("https://a.example/p (", 1)[1].rstrip(")").split(", ", 1)
    return day, where


def _hit(**metadata: Any) -> dict[str, Any]:
    return {"url": "https://a.example/p", "metadata": metadata}


@pytest.mark.parametrize(("text", "day"), [
    ("Last modified: Tue, 20 May 2025 10:00:00 GMT", "2025-05-20"),  # an HTTP date after a label
    ("Updated on Monday, 3 March 2025", "2025-03-03"),
    ("intro\nBy Jane Smith on November 18, 2023\nbody", "2023-11-18"),  # a byline with "on"
    ("By Jane Smith · Updated on May 2, 2024", "2024-05-02"),
])  # fmt: skip
def test_the_page_text_forms_43_read(text: str, day: str) -> None:
    assert page_date(text) == datetime.fromisoformat(day).replace(tzinfo=UTC)


@pytest.mark.parametrize("header", ["Last-Modified", "last-modified", "LAST-MODIFIED", "last_modified"])
def test_the_last_modified_header_in_fetch_metadata_any_case(header: str) -> None:
    fetch = _fetch(
        "https://a.example/p",
        "no date",
        headers={header: "Tue, 20 May 2025 10:00:00 GMT", "Date": "Sun, 17 May 2026 11:59:00 GMT"},
    )
    assert _where([fetch]) == (NEW, "fetch metadata")  # the Date header (when it was sent) is no date of the page


@pytest.mark.parametrize("key", ["modified_date", "last_updated", "lastModified", "dateModified", "updated_at",
                                 "published_date", "publishedTime", "modifiedTime", "date"])  # fmt: skip
def test_the_metadata_keys_a_fetch_tool_returns(key: str) -> None:
    assert _where([_fetch("https://a.example/p", "no date", **{key: NEW})]) == (NEW, "fetch metadata")
    search = {"kind": "search", "query": "q", "hits": [_hit(**{key: NEW})]}
    assert _where([search, _fetch("https://a.example/p", "no date")]) == (NEW, "search metadata")


def test_a_firecrawl_metadata_object_is_read() -> None:
    fetch = _fetch("https://a.example/p", "no date", metadata={"title": "T", "publishedTime": f"{NEW}T08:00:00Z"})
    assert _where([fetch]) == (NEW, "fetch metadata")


def test_the_latest_of_several_hits_for_the_same_page() -> None:
    for order in ([OLD, NEW, MID], [NEW, OLD, MID], [MID, OLD, NEW]):
        search = {"kind": "search", "query": "q", "hits": [_hit(published_date=d) for d in order]}
        assert _where([search, _fetch("https://a.example/p", "no date")]) == (NEW, "search metadata")


@pytest.mark.parametrize(("fetch_date", "hit_date", "text_date", "winner"), [
    (OLD, MID, NEW, (NEW, "page text")),
    (NEW, OLD, MID, (NEW, "fetch metadata")),
    (OLD, NEW, MID, (NEW, "search metadata")),
    (MID, OLD, None, (MID, "fetch metadata")),
    (None, OLD, MID, (MID, "page text")),
])  # fmt: skip
def test_the_latest_date_from_every_place_wins(fetch_date: str | None, hit_date: str, text_date: str | None,
                                               winner: tuple[str, str]) -> None:  # fmt: skip
    text = f"Published: {text_date}" if text_date else "no date"
    metadata = {"published_date": fetch_date} if fetch_date else {}
    search = {"kind": "search", "query": "q", "hits": [_hit(date=hit_date)]}
    assert _where([search, _fetch("https://a.example/p", text, **metadata)]) == winner


def test_every_fetch_of_the_page_that_did_not_fail_is_read() -> None:
    steps = [
        _fetch("https://a.example/p", f"Published: {OLD}"),
        _fetch("https://a.example/p", f"Updated: {NEW}"),
        _fetch("https://a.example/p", "Updated: 2026-05-01", status=404),
    ]  # a failed fetch was never read
    assert _where(steps) == (NEW, "page text")
    assert _source(steps).value == 0.0  # 2025-05-20 is within 365 days; the first fetch's 2023-11-18 alone was stale
    assert _source(steps[:1]).value == 1.0
