"""What the mirror removes after a batch, and what it leaves: planned from a real store's ledger."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from tracescore.result import TraceResult
from tracescore.scores import absent, score
from tracescore.sinks.records import WriteReport, records_from_result, score_id, versioned_score_id
from tracescore.sinks.removals import Mirror, preview_removals
from tracescore.store.db import Store
from tracescore.store.written import Written

T = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def _result(*scores: object, errors: list[str] | None = None) -> TraceResult:
    r = TraceResult(trace_id="t-1", timestamp=T, errors=list(errors or []))
    for s in scores:
        r.scores[s.name] = s  # type: ignore[attr-defined]
    return r


def _old(name: str, version: str = "citations-1") -> Written:
    return Written(versioned_score_id("t-1", name, version), "t-1", name, name.split("@")[0], version)


def test_superseded_goes_only_once_its_replacement_is_accepted(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        mirror = Mirror(store, "langfuse", run_id="r1")
        old = _old("citation.coverage")
        mirror.ledger.wrote([old], "r0")
        result = _result(score("citation.coverage", 0.5))
        records, _ = records_from_result(result)
        assert mirror.plan([("t-1", result, records)], accepted=set()) == []  # rejected: the old value stays
        (removal,) = mirror.plan([("t-1", result, records)], accepted={records[0].id})
        assert removal.written == old and removal.reason.startswith("superseded by citation.coverage")


def test_absent_goes_with_its_reason_a_failed_scorer_keeps_its_old_score(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        mirror = Mirror(store, "langfuse", run_id="r1")
        gone = Written(score_id("t-1", "answer.correct"), "t-1", "answer.correct", "answer.correct", "answer-1")
        kept = Written(score_id("t-1", "citation.coverage"), "t-1", "citation.coverage", "citation.coverage", "c-1")
        mirror.ledger.wrote([gone, kept], "r0")
        result = _result(absent("answer.correct", "no gold_answer label"), score("diagnosis", "grounded/right"),
                         errors=["scorer citations failed: boom"])
        records, _ = records_from_result(result)
        (removal,) = mirror.plan([("t-1", result, records)], accepted={r.id for r in records})
        assert removal.written == gone and removal.reason == "absent: no gold_answer label"
        report = WriteReport()
        assert mirror.finish(records, [removal], lambda w: None, report) == []
        assert report.removed == 1 and [w.score_id for w in mirror.ledger.live(["t-1"])] == [
            kept.score_id, records[0].id]
        events = [(e["name"], e["event"], e["reason"]) for e in mirror.ledger.history("t-1")]
        assert ("answer.correct", "removed", "absent: no gold_answer label") in events
        # without the scorer failure, a score the setup no longer produces goes too
        clean = _result(score("diagnosis", "grounded/right"))
        (again,) = mirror.plan([("t-1", clean, records)], accepted={r.id for r in records})
        assert again.written == kept and again.reason == "no longer produced by the scoring setup"


def test_a_score_not_computed_this_time_stays_and_is_counted_kept_stale(tmp_path: Path) -> None:
    names = ("grounding.rate", "surface.smart", "answer.semantic_match", "citation.dead_rate", "answer.correct")
    with Store(tmp_path / "s.db") as store:
        mirror = Mirror(store, "langfuse", run_id="r1")
        ours = [Written(score_id("t-1", n), "t-1", n, n, "v-1") for n in names]
        mirror.ledger.wrote(ours, "r0")
        result = _result(
            absent("grounding.rate", "judge_error"),
            absent("surface.smart", "judge budget spent ($0.0100 of max $0.0100)"),
            absent("answer.semantic_match", "no judge configured"),
            absent("citation.dead_rate", "a reason no scorer declared"),  # unknown: the safe side, kept
            absent("answer.correct", "no expected_answer_contains or expect_refusal label"),  # a fact: removed
        )
        (removal,) = mirror.plan([("t-1", result, [])], accepted=set())
        assert removal.written.score == "answer.correct" and mirror.stale == 4
        report = WriteReport()
        assert mirror.finish([], [removal], lambda w: None, report) == []
        assert (report.removed, report.kept_stale, mirror.stale) == (1, 4, 0)
        assert report.as_dict()["kept_stale"] == 4
        assert {w.score for w in mirror.ledger.live(["t-1"])} == set(names) - {"answer.correct"}
        # a scorer that raised leaves its scores out of the result: kept; a clean result without them: removed
        failed = _result(errors=["scorer surface failed: RuntimeError: boom"])
        assert mirror.plan([("t-1", failed, [])], accepted=set()) == [] and mirror.stale == 4
        mirror.stale = 0
        off = _result(*(absent(n, "judge turned off ([scoring] judge = false)") for n in names[:3]))
        gone = {r.written.score: r.reason for r in mirror.plan([("t-1", off, [])], accepted=set())}
        off_reason = "absent: judge turned off ([scoring] judge = false)"
        assert mirror.stale == 0 and gone == {n: off_reason for n in names[:3]} | {
            "citation.dead_rate": "no longer produced by the scoring setup"}


def test_keep_versions_keeps_other_versions_and_removes_a_vanished_current_one(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        mirror = Mirror(store, "langfuse", run_id="r1", keep_versions=True)
        v1 = _old("citation.coverage@citations-1")
        v2 = Written(score_id("t-1", "citation.coverage@citations-2"), "t-1", "citation.coverage@citations-2",
                     "citation.coverage", "citations-2")
        mirror.ledger.wrote([v1, v2], "r0")
        now = _result(score("citation.coverage", 0.4, scorer_version="citations-2"))
        records, _ = records_from_result(now, keep_versions=True)
        assert mirror.plan([("t-1", now, records)], accepted={r.id for r in records}) == []
        vanished = _result(absent("citation.coverage", "answer has no sentences", scorer_version="citations-2"))
        (removal,) = mirror.plan([("t-1", vanished, [])], accepted=set())
        assert removal.written == v2
        assert preview_removals(store, "langfuse", ["t-1"], keep_versions=True)["superseded"] == 0
        assert preview_removals(store, "langfuse", ["t-1"], keep_versions=False)["superseded"] == 2


def test_a_failed_removal_stays_live_to_be_retried(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        mirror = Mirror(store, "langfuse", run_id="r1")
        old = _old("citation.coverage")
        mirror.ledger.wrote([old], "r0")
        result = _result(score("citation.coverage", 0.5))
        records, _ = records_from_result(result)
        removals = mirror.plan([("t-1", result, records)], accepted={records[0].id})
        report = WriteReport()
        failed = mirror.finish(records, removals, lambda w: "HTTP 503", report)
        assert [f[1] for f in failed] == ["HTTP 503"] and report.removed == 0
        assert old in mirror.ledger.live(["t-1"])


def test_sinks_section_is_validated_and_keep_versions_is_a_new_backfill() -> None:
    import pytest

    from tracescore.config import Config, fingerprint, parse_sections
    from tracescore.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown key 'sinks.keep_version'"):
        parse_sections({"sinks": {"keep_version": True}})
    plain = fingerprint(Config(parse_sections({})))
    assert fingerprint(Config(parse_sections({"sinks": {"keep_versions": False}}))) == plain
    assert fingerprint(Config(parse_sections({"sinks": {"keep_versions": True}}))) != plain
