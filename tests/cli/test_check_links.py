"""``tracescore score --check-links``: citation.dead_rate against a loopback site, cached in the store across runs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.fakes.links import FakeSite
from tracescore.cli import main
from tracescore.links import LinkStatus
from tracescore.store.db import Store
from tracescore.store.linkcache import StoreLinkCache


@pytest.fixture
def site() -> Iterator[FakeSite]:
    with FakeSite() as s:
        yield s


def _traces(tmp_path: Path, site: FakeSite) -> Path:
    def trace(tid: str, *paths: str) -> dict[str, object]:
        refs = "\n".join(f"[{i}] {site.url}{p}" for i, p in enumerate(paths, start=1))
        hits = [{"rank": i, "url": f"{site.url}{p}", "snippet": "x"} for i, p in enumerate(paths, start=1)]
        markers = "".join(f"[{i}]" for i in range(1, len(paths) + 1))
        return {
            "id": tid,
            "question": "q?",
            "steps": [{"kind": "search", "query": "q", "hits": hits}],
            "answer": f"The answer {markers}.\n\nSources:\n{refs}",
        }

    path = tmp_path / "traces.jsonl"
    rows = [trace("t1", "/ok", "/gone"), trace("t2", "/ok"), trace("t3")]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _score(tmp_path: Path, traces: Path, *args: str) -> dict[str, dict[str, object]]:
    out = tmp_path / "out.jsonl"
    db = str(tmp_path / "t.db")
    result = CliRunner().invoke(
        main, ["score", str(traces), "--store", db, "--out", str(out), "--no-judge", *args], env={}
    )
    assert result.exit_code == 0, result.output
    return {r["trace_id"]: r for r in map(json.loads, out.read_text().splitlines())}


def test_check_links_scores_dead_rate_and_the_store_answers_the_rescore(tmp_path: Path, site: FakeSite) -> None:
    traces = _traces(tmp_path, site)
    first = _score(tmp_path, traces, "--check-links")
    assert first["t1"]["scores"]["citation.dead_rate"] == 0.5  # /gone is 410
    assert first["t2"]["scores"]["citation.dead_rate"] == 0.0
    assert first["t3"]["missing"]["citation.dead_rate"] == "no cited URL"
    assert site.hits[("HEAD", "/ok")] == 1  # one check per URL per run, though two traces cite it
    with Store(tmp_path / "t.db") as store:
        (run,) = store.runs()
        assert run["summary"]["links"] == {"requests": 3, "cache_hits": 0}  # HEAD /ok, HEAD + GET /gone
        assert "0008_link_cache" in store.applied_migrations()
    sent = sum(site.hits.values())
    again = _score(tmp_path, traces, "--check-links")
    assert sum(site.hits.values()) == sent  # the store's cache answered every link
    assert [r["scores"] for r in again.values()] == [r["scores"] for r in first.values()]


def test_without_the_flag_no_request_and_no_dead_rate(tmp_path: Path, site: FakeSite) -> None:
    lines = _score(tmp_path, _traces(tmp_path, site))
    assert sum(site.hits.values()) == 0
    assert all(
        "citation.dead_rate" not in r["scores"] and "citation.dead_rate" not in r["missing"] for r in lines.values()
    )
    assert lines["t1"]["scores"]["citation.unfetched_rate"] == 1.0  # everything else as before


def test_the_store_cache_forgets_rows_older_than_its_max_age(tmp_path: Path) -> None:
    now = datetime(2026, 11, 20, tzinfo=UTC)
    status = LinkStatus("https://a.example/x", "dead", "HTTP 404", 404, "HEAD").to_json()
    with Store(tmp_path / "t.db") as store:
        StoreLinkCache(store, now=lambda: now)["a"] = status
        store.commit()
        fresh = StoreLinkCache(store, now=lambda: now + timedelta(days=6))
        stale = StoreLinkCache(store, now=lambda: now + timedelta(days=8))
        assert fresh.get("a") == status and fresh.hits == 1
        assert stale.get("a") is None and stale.hits == 0
        assert list(fresh) == ["a"] and len(fresh) == 1
        del fresh["a"]
        assert fresh.get("a") is None


def test_the_report_shows_dead_rate_beside_unfetched_rate(tmp_path: Path, site: FakeSite) -> None:
    _score(tmp_path, _traces(tmp_path, site), "--check-links")
    for fmt in ("markdown", "html", "terminal"):
        result = CliRunner().invoke(main, ["report", str(tmp_path / "out.jsonl"), "--format", fmt])
        assert result.exit_code == 0
        assert "dead rate 0.250 (n=2, 1 absent) beside unfetched rate 1.000 (n=2)" in result.output
    plain = CliRunner().invoke(main, ["report", str(tmp_path / "out.jsonl")], catch_exceptions=False)
    assert "dead or unfetched" in " ".join(plain.output.split())  # the terminal's prose wraps at its width
