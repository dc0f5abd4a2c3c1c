"""A failure is not a verdict (#27, part 1): a version-changing ``tracescore backfill`` in which the judge could not
judge some traces — it answered 529, ANTHROPIC_API_KEY is unset, the ``max_cost`` budget ran out — leaves every
earlier judged score of those traces on the platform (no DELETE for any of them at the fake), counted ``kept_stale``
in the run summary and still current, marked stale, in the store's ``current_scores``; only ``judge = false`` in the
config removes them. Both platforms, the real ``langfuse``, ``langsmith`` and ``anthropic`` SDKs over loopback HTTP
to the fakes, the real CLI."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.base import Request, Response
from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import load_samples, seed
from tests.sinks.releases import bumped
from tests.test_both_platforms import _langfuse_trace
from tracescore import catalog, registry
from tracescore.catalog import NOT_COMPUTED, absence_kind
from tracescore.cli import main
from tracescore.store.db import Store

WINDOW = ["--from", "2026-11-01T00:00:00Z", "--to", "2026-12-01T00:00:00Z"]
FAIL_ON = ("Who discovered penicillin?", "How long is the Great Wall of China?")  # the judge answers 529 for these
SAMPLES = 20
OTHER_MODEL = "claude-opus-4-6"  # the second backfill's judge: no reply of the first is in the cache


class FlakyJudge(FakeAnthropic):
    """The Anthropic fake, overloaded (529, ``retry-after-ms: 1``) for requests about ``FAIL_ON`` once ``failing``."""

    failing = False

    def handle(self, request: Request) -> Response:
        asked = (f"<question>{q}</question>".encode() for q in FAIL_ON)
        if self.failing and request.path == "/v1/messages" and any(q in request.body for q in asked):
            body = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
            return Response(529, body, {"retry-after-ms": "1"})
        return super().handle(request)


@dataclass
class Platform:
    """One platform's fake, its config and env, and how to read our scores and the DELETEs off it."""

    name: str
    fake: Any
    section: str
    env: dict[str, str]
    scores: Callable[[], dict[str, tuple[str, str, Any]]]  # score id → (store trace id, name, value)
    deletes: Callable[[], list[str]]  # ids of the DELETE requests


def _langfuse(samples: list[dict[str, Any]]) -> Iterator[Platform]:
    with FakeLangfuse() as fake:
        for sample in samples:
            fake.add_trace(*_langfuse_trace(sample))
        yield Platform(
            "langfuse", fake, '[source]\nkind = "langfuse"\n', env_for(fake),
            lambda: {s["id"]: (s["traceId"], s["name"], s["value"]) for s in fake.scores.values()},
            lambda: [r.path.rsplit("/", 1)[1] for r in fake.requests_to("/api/public/scores/", "DELETE")],
        )  # fmt: skip


def _langsmith(samples: list[dict[str, Any]]) -> Iterator[Platform]:
    with FakeLangSmith() as fake:
        seed(fake, samples)

        def scores() -> dict[str, tuple[str, str, Any]]:
            return {f["id"]: (f["run_id"], f["key"], f["value"] if f.get("value") is not None else f["score"])
                    for f in fake.feedback.values()}  # fmt: skip

        yield Platform(
            "langsmith", fake, '[source]\nkind = "langsmith"\nproject = "search-agent"\n',
            {"LANGSMITH_API_KEY": "lsv2_absence_test_key", "LANGSMITH_ENDPOINT": fake.url}, scores,
            lambda: [r.path.rstrip("/").rsplit("/", 1)[1] for r in fake.requests_to("/feedback/", "DELETE")],
        )  # fmt: skip


@pytest.fixture(params=["langfuse", "langsmith"])
def platform(request: pytest.FixtureRequest) -> Iterator[Platform]:
    build = {"langfuse": _langfuse, "langsmith": _langsmith}[request.param]
    yield from build(load_samples(SAMPLES))


def _backfill(tmp_path: Path, platform: Platform, env: dict[str, str], extra: str = "") -> dict[str, Any]:
    path = tmp_path / "tracescore.toml"
    path.write_text(f'{platform.section}\n[job]\nstore = "{tmp_path / "ts.db"}"\nbackfill_chunks = 2\n'
                    f"write_batch = 8\n{extra}")  # fmt: skip
    result = CliRunner().invoke(main, ["backfill", "--config", str(path), *WINDOW, "-q"], env=env)
    assert result.exit_code == 0, result.output
    return json.loads(result.output.splitlines()[-1])  # type: ignore[no-any-return]


def _judged(scores: dict[str, tuple[str, str, Any]]) -> dict[str, tuple[str, str, Any]]:
    return {i: s for i, s in scores.items() if (e := catalog.entry(s[1])) is not None and e.judged}


def _last_run(db: Path) -> tuple[str, dict[tuple[str, str], str]]:
    """The latest run's id and its absent scores: (trace, name) → reason."""
    with Store(db) as store:
        run_id = store.runs()[-1]["id"]
        rows = store.query("SELECT trace_id, name, reason FROM scores WHERE run_id = ? AND reason IS NOT NULL",
                           (run_id,))  # fmt: skip
    return run_id, {(t, n): r for t, n, r in rows}


def _current(db: Path) -> dict[tuple[str, str], tuple[Any, str | None, str | None]]:
    """current_scores: (trace, name) → (value or label, reason, stale_since)."""
    with Store(db) as store:
        rows = store.query("SELECT trace_id, name, coalesce(value, label), reason, stale_since FROM current_scores")
    return {(t, n): (v, r, s) for t, n, v, r, s in rows}


SCENARIOS = {  # the second backfill: (extra config, with the key?, the judge failing?)
    "judge_529": (f'\n[scoring]\njudge_model = "{OTHER_MODEL}"\n', True, True),
    "no_api_key": ("", False, False),
    "max_cost": (f'\n[scoring]\njudge_model = "{OTHER_MODEL}"\nmax_cost = 0.0001\n', True, False),
    "judge_false": ("\n[scoring]\njudge = false\n", True, False),
}


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_a_judge_that_could_not_judge_removes_no_earlier_judged_score(
    scenario: str, platform: Platform, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    extra, with_key, failing = SCENARIOS[scenario]
    with FlakyJudge() as judge:
        keyed = platform.env | {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": judge.url}
        first = _backfill(tmp_path, platform, keyed)
        before = platform.scores()
        judged = _judged(before)
        assert first["scores_removed"] == 0 and len({t for t, _, _ in judged.values()}) >= 15

        monkeypatch.setattr(registry, "_LOADED", bumped("2"))  # a release that changed every deterministic scorer
        judge.failing = failing
        env = keyed if with_key else {**platform.env, "ANTHROPIC_API_KEY": ""}
        second = _backfill(tmp_path, platform, env, extra)
        assert second["backfill_id"] != first["backfill_id"] and second["failed"] == 0

    after, deleted = platform.scores(), set(platform.deletes())
    run_id, missing = _last_run(tmp_path / "ts.db")
    # the judged scores of ours this run did not compute: the ones it must leave where they are
    kept = {i: s for i, s in judged.items() if absence_kind(missing.get((s[0], s[1]))) == NOT_COMPUTED
            and (s[0], s[1]) in missing}  # fmt: skip
    if scenario == "judge_false":  # the config turns the judge off: every judged score of ours goes
        assert not kept and not _judged(after) and set(judged) <= deleted
        assert second["kept_stale"] == 0 and second["scores_removed"] >= len(judged)
        current = _current(tmp_path / "ts.db")
        assert all(current.get((t, n), (None, "", None))[0] is None for t, n, _ in judged.values())
        return

    if scenario == "judge_529":  # exactly the traces the judge failed on; the others were judged again
        reasons = {missing[(t, n)] for t, n, _ in kept.values()}
        assert reasons == {"judge_error"}
        assert {t for t, _, _ in kept.values()} == {t for t, _, _ in judged.values()
                                                    if _about(platform, t, FAIL_ON)}  # fmt: skip
        assert len(kept) < len(judged)
    elif scenario == "no_api_key":
        assert set(kept) == set(judged) and {missing[(t, n)] for t, n, _ in kept.values()} == {"no judge configured"}
    else:
        assert kept and all(missing[(t, n)].startswith("judge budget spent (") for t, n, _ in kept.values())
    assert not set(kept) & deleted  # not one DELETE for them
    assert {i: after.get(i) for i in kept} == kept  # still on the platform, with their earlier values
    assert second["kept_stale"] == len(kept) and second["kept_stale"] > 0
    current = _current(tmp_path / "ts.db")
    for trace, name, value in kept.values():  # and still current in the store, marked stale with why and since when
        now, reason, since = current[(trace, name)]
        assert now == pytest.approx(value, abs=1e-4) and reason == missing[(trace, name)] and since, (trace, name)
    with Store(tmp_path / "ts.db") as store:
        started = {r["id"]: r["started_at"] for r in store.runs()}[run_id]
    assert {current[(t, n)][2] for t, n, _ in kept.values()} == {started}
    if scenario == "judge_529":  # the judge is back: a one-shot score of the window judges them again, fresh
        _rescore(tmp_path, platform, platform.env)
        fresh = _current(tmp_path / "ts.db")
        assert all(fresh[(t, n)][2] is None for t, n, _ in kept.values())


def _rescore(tmp_path: Path, platform: Platform, env: dict[str, str]) -> None:
    with FakeAnthropic() as judge:
        env = env | {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": judge.url}
        where = ["--project", "search-agent"] if platform.name == "langsmith" else []
        args = ["score", "--source", platform.name, *where, *WINDOW, "--store", str(tmp_path / "ts.db"),
                "--config", str(tmp_path / "tracescore.toml"), "-q"]  # fmt: skip
        result = CliRunner().invoke(main, args, env=env)
    assert result.exit_code == 0, result.output


def _about(platform: Platform, trace: str, words: tuple[str, ...]) -> bool:
    """Whether the sample behind a platform trace id asks about one of ``words``."""
    samples = {s["id"]: s["question"] for s in load_samples(SAMPLES)}
    if platform.name == "langsmith":
        roots = [r for r in platform.fake.runs if r["parent_run_id"] is None]
        trace = {r["id"]: r["extra"]["metadata"]["source_trace"] for r in roots}[trace]
    return samples[trace] in words
