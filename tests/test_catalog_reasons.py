"""Every absence reason, with its class (#27): **does not apply** removes an earlier score of ours from the platform,
**not computed** keeps it, stale. The table below is the whole list; then every absence the scorers produce over the
cookbook samples and variants of them, under every way the judge can be missing or fail, is a declared reason — a
new reason written without a class would be read as "not computed" (kept) and fails here first."""

from __future__ import annotations

import copy
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic import FakeAnthropic, overloaded
from tests.fakes.langsmith_runs import load_samples
from tracescore.catalog import (
    ANY_SCORE,
    DOES_NOT_APPLY,
    NOT_COMPUTED,
    REASONS,
    Reason,
    absence_kind,
    declared_reason,
    entries,
    entry,
)
from tracescore.config import Config, parse_sections
from tracescore.engine.daily import DailyBudget, DayLimits
from tracescore.engine.judging import JudgePool
from tracescore.engine.pipeline import score_trace
from tracescore.engine.recipe import ScorerPlan, build_recipe, options
from tracescore.engine.sampling import Sampling
from tracescore.judge.anthropic import AnthropicJudge
from tracescore.links import LinkStatus
from tracescore.result import TraceResult
from tracescore.scorers.citations import CITATION_FABRICATED_COUNT
from tracescore.scorers.deadlinks import dead_link_scorer
from tracescore.scorers.diagnosis import cell_of
from tracescore.scorers.scored import Scored, Scorer
from tracescore.scorers.session import PASSING, session_scores
from tracescore.trace import Trace

D, N = DOES_NOT_APPLY, NOT_COMPUTED
CLASSES = {
    "no search step in trace": D,
    "no required_doc_ids label": D,
    "refusal case: required_doc_ids is empty, scored on the answer": D,
    "no required doc came back in any search call": D,
    "required_doc_ids holds an empty id ({required!r}); fix the label": D,
    "stale label: {pairs}; update the label": D,
    "no expected_answer_contains or expect_refusal label": D,
    "no gold_answer label": D,
    "expected_answer_contains entry {entry!r} has no word after normalisation (SQuAD: case, punctuation, articles);"
    " fix the label": D,
    "gold_answer label {gold!r} has no word after normalisation (SQuAD: case, punctuation, articles); fix the label": D,
    "empty answer": D,
    "answer has no sentences": D,
    "answer cites no URL or doc id": D,
    "answer makes no factual claim": D,
    "no claim cites a source": D,
    "refusal case: no gold answer for the surface to support": D,
    "no gold_answer or expected_answer_contains label": D,
    "no search step": D,
    "no search result's surface supports the gold answer": D,
    "no page fetched": D,
    "no cited URL": D,
    "answer undecided: no answer label": D,
    "hops holds an empty id ({hops!r}); fix the label": D,
    "hop order undecided: hop(s) {hops} never came back": D,
    "judge turned off ([scoring] judge = false)": D,
    "no longer produced by the scoring setup": D,
    "judge_error": N,
    "judge budget spent (${spent:.4f} of max ${limit:.4f})": N,
    "no judge configured": N,
    "judge turned off (--no-judge)": N,
    "judge unavailable: anthropic SDK not installed (pip install 'tracescore[judge]')": N,
    "{kind} step(s) could not be read ({steps}); {consequence}": N,
    "a {kind} step could not be read: {why}": N,
    "trace over the scoring guard: {notes}": N,
    "no cited URL could be checked ({unknown} unknown)": N,
    "retrieval was not scored": N,
    "not computed": N,
    "retrieval undecided: {reason}": None,  # the class of the retrieval reason it wraps
    "no search result or fetched page text seen": D,  # #33
    "answer states no number": D,  # #33
    "no search or fetch step in trace": D,  # #33
    "trace has no question": D,  # #33 (signals)
    "question has no content word (only stop words)": D,  # #33 (signals)
    "the first search call recorded no query": D,  # #33 (signals)
    "required doc(s) never came back in any search call: {missing}": D,  # #33 (signals)
    "trace has no timestamp to date its sources against": D,  # #33 (signals)
    "no cited source was fetched": D,  # #33 (signals)
    "no cited source the agent fetched has a findable date ({sources})": D,  # #33 (signals)
    "not sampled (judge_sample {rate:g})": N,
    "daily judge budget spent ({spent} of max {limit} on {day} UTC)": N,
    "not re-scored (backfill --judge-only)": N,
    "unchanged since written": N,  # #43.7
    "scorer error: {error}": N,  # #46: the scorer raised on this trace
    "turn {turn} of the session: {reason}": None,  # #48: a session score, of the turn's reason's class
    "no turn of the session failed": D,
    "no turn of the session makes a judged claim": D,
    "no turn of the session has an answer to check": D,
    "its claim verdicts were not recorded": N,
    "not scored": N,
}
NOT_ON_A_LINE = {
    "no longer produced by the scoring setup",  # the mirror's reason for a score a clean result does not have
    "not computed",  # the result line's word for an absent score that carries no reason
    "not re-scored (backfill --judge-only)",  # what the platform sink gets instead of a deterministic score
    "unchanged since written",  # what it gets instead of an unchanged score of a trace run judges again (#43.7)
    "its claim verdicts were not recorded",  # a turn's reason inside a session score's (#48): never alone
    "not scored",  # likewise
}


def test_every_absence_reason_is_listed_with_its_class() -> None:
    assert {r.text: r.kind for r in REASONS} == CLASSES
    assert len({r.text for r in REASONS}) == len(REASONS)


def test_classes_of_filled_and_wrapped_reasons_and_the_safe_default() -> None:
    assert absence_kind("judge budget spent ($0.0100 of max $0.0100)") == N
    assert absence_kind("stale label: required a-v2 but retrieved a-v3; update the label") == D
    assert absence_kind("retrieval undecided: no required_doc_ids label") == D
    assert absence_kind("retrieval undecided: a search step could not be read: x") == N
    assert absence_kind("a reason nobody declared") == N and declared_reason("a reason nobody declared") is None
    assert absence_kind(None) == N


def _variants(sample: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The sample and its edge cases: each label, answer and step shape a scorer reads absent."""
    def edit(**changes: Any) -> dict[str, Any]:
        out = copy.deepcopy(sample) | {"id": f"{sample['id']}-{len(changes)}-{sorted(changes)[0]}"}
        for key, value in changes.items():
            if key in ("required_doc_ids", "expected_answer_contains", "gold_answer", "expect_refusal", "hops"):
                out["labels"] = dict(out.get("labels") or {}, **{key: value})
            else:
                out[key] = value
        return out

    yield edit(answer="")
    yield edit(answer="[1]")
    yield edit(answer="Plain text with no citation at all.")
    yield edit(steps=[])
    yield edit(labels={})
    yield edit(required_doc_ids=[], expect_refusal=True)
    yield edit(required_doc_ids=[""])
    yield edit(hops=[["never-returned-a"], "never-returned-b"])  # a multi-hop label: hops never found, order undecided
    yield edit(hops=[["", "x"]])
    yield edit(steps=[], hops=["x"])
    yield edit(gold_answer="the", expected_answer_contains=["!!!"])
    yield edit(steps=[s for s in sample["steps"] if s["kind"] == "search"])
    spots = [{"kind": "search", "tool": "web_search", "reason": "output is str"},
             {"kind": "fetch", "tool": "fetch_url", "reason": "no output recorded"}]  # fmt: skip
    yield edit(blind_spots=spots)
    # #50: an unread search that is the only search (nothing came back that can be read), an unread call of a kind
    # that has no step (a declared built-in search whose calls the output does not show)
    yield edit(steps=[{"kind": "search", "tool": "web_search", "query": "q"}], blind_spots=spots)
    yield edit(steps=[s for s in sample["steps"] if s["kind"] == "fetch"], blind_spots=spots[:1])
    yield edit(answer="word. " * 100_001 + "[1]\n\n[1] https://x.example/")  # over the scoring guard
    yield edit(question="")  # #33: no question for the first query to overlap
    yield edit(question="What is it?", expect_refusal=None)  # #33: a question of stop words only
    dated = [s | {"text": "Published: 2020-01-01\n" + s.get("text", "")} if s["kind"] == "fetch" else s
             for s in sample["steps"]]  # fmt: skip
    yield edit(steps=[{"kind": "search", "query": ""}, *dated], timestamp=None)  # #33: no first query; dated pages


def _traces() -> list[Trace]:
    """Every cookbook sample (its scenarios: stale labels, refusals, unread pages…) and the variants of two."""
    samples = load_samples()
    with_gold = [s for s in samples if s["labels"].get("gold_answer")][:1]
    varied = [v for s in [samples[0], *with_gold] for v in _variants(s)]
    return [Trace.model_validate(v) for v in samples + varied]


def _reasons(traces: Sequence[Trace], scorers: Sequence[Scorer], pairs: set[tuple[str, str]]) -> set[str]:
    """The absence reasons written over ``traces``; (score name, reason) added to ``pairs``."""
    results = [score_trace(t, scorers) for t in traces]
    these = {(s.name, s.reason or "not computed") for r in results for s in r.scores.values() if not s.present}
    pairs |= these
    return {reason for _, reason in these}


def _no_judge(scoring: dict[str, Any], tmp_path: Path, *, no_judge: bool = False) -> str:
    recipe = build_recipe(options(Config(parse_sections({"scoring": scoring})), no_judge=no_judge), tmp_path / "s.db")
    assert recipe.judge is None
    return recipe.no_judge_reason


def test_every_absence_the_scorers_produce_under_every_failure_mode_is_declared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    traces = _traces()
    seen: dict[str, set[str]] = {}
    pairs: set[tuple[str, str]] = set()
    # no judge: the config turns it off, no key, no SDK, --no-judge
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    offs = [_no_judge({"judge": False}, tmp_path), _no_judge({}, tmp_path)]
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "anthropic", None)  # type: ignore[arg-type]  # the SDK not installed
        offs.append(_no_judge({}, tmp_path))
    offs.append(_no_judge({}, tmp_path, no_judge=True))
    assert offs == ["judge turned off ([scoring] judge = false)", "no judge configured",
                    "judge unavailable: anthropic SDK not installed (pip install 'tracescore[judge]')",
                    "judge turned off (--no-judge)"]  # fmt: skip
    for off in offs:
        seen[f"no judge: {off}"] = _reasons(traces, ScorerPlan(no_judge_reason=off).scorers(None), pairs)

    # a judge (the real SDK against the fake): it answers, answers no claim, fails every call, runs out of budget
    def no_claims(output: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        return {"claims": []} if "claims" in output else output

    for mode in ("judged", "no claims", "529", "budget", "sampled", "daily budget"):
        with FakeAnthropic(tamper=no_claims if mode == "no claims" else None) as fake:
            if mode == "529":
                fake.faults.add("/v1/messages", *[overloaded()] * 10_000)
            judge = AnthropicJudge(base_url=fake.url, max_attempts=1)
            budget = 1e-9 if mode == "budget" else None
            sampling = Sampling(0.5, flagged=False) if mode == "sampled" else Sampling()  # [scoring] judge_sample
            pool = JudgePool(lambda j=judge: j, judge.model)  # [job] max_calls_per_day = 0: the day is spent at once
            pool.allowance = DailyBudget(tmp_path / "d.db", DayLimits(max_calls=0)) if mode == "daily budget" else None
            scorers = ScorerPlan(no_judge_reason="", max_cost=budget, sampling=sampling).scorers(pool)
            seen[mode] = _reasons(traces, scorers, pairs)
            judge.close()

    # the link checker: nothing cited, every link unknown; a scorer that raised (retrieval not scored)
    def unknown(urls: Sequence[str]) -> dict[str, LinkStatus]:
        return {u: LinkStatus(u, "unknown", "timeout") for u in urls}

    seen["links"] = _reasons(traces, [dead_link_scorer(checker=unknown)], pairs)

    def broken(trace: Trace) -> Scored:
        raise RuntimeError("a scorer bug")

    broken.score_names = ("answer.correct",)  # type: ignore[attr-defined]  # as the plan labels a scorer it builds

    seen["scorer raised"] = _reasons(traces[:3], [broken], pairs)

    # the session scores (#48), over sessions of those turns: a judge missing, every turn passing, the judge off in
    # the config (no turn's claim judged), only empty answers (nothing to check)
    def session_leg(turns: Sequence[TraceResult]) -> set[str]:
        assert turns
        these = {(s.name, s.reason or "not computed") for s in session_scores(turns=turns) if not s.present}
        pairs.update(these)
        return {reason for _, reason in these}

    off, missing = ([score_trace(t, ScorerPlan(no_judge_reason=why).scorers(None)) for t in traces] for why in offs[:2])
    passing = [r for r in off if cell_of(r) in PASSING][:3]
    undecided = [r for r in off if cell_of(r) is None][:2]
    empty = [r for r in off if r.scores[CITATION_FABRICATED_COUNT].reason == "empty answer"]
    seen["sessions"] = set().union(*map(session_leg, (missing[:5], passing, undecided, off, empty)))

    everything = set().union(*seen.values())
    undeclared = sorted(r for r in everything if declared_reason(r) is None)
    assert not undeclared, f"absence reasons with no class in catalog.Reasons: {undeclared}"
    produced = {declared_reason(r).text for r in everything}  # type: ignore[union-attr]
    assert produced == set(CLASSES) - NOT_ON_A_LINE  # every declared reason is one the scorers really write
    assert "judge_error" in seen["529"] and any(r.startswith("judge budget spent (") for r in seen["budget"])
    # each score is absent only for the reasons its catalog entry declares, and for every one of them
    written: dict[str, set[Reason]] = {e.name: set() for e in entries()}
    for name, reason in pairs:
        found = entry(name)
        assert found is not None and declared_reason(reason) in (*found.reasons, *ANY_SCORE), (name, reason)
        if declared_reason(reason) not in ANY_SCORE:
            written[found.name].add(declared_reason(reason))  # type: ignore[arg-type]
    assert written == {e.name: set(e.reasons) for e in entries()}
