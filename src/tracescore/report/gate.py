"""The CI gate: each stage checked on its own, never an average, against thresholds and the baseline runs.

Rules, each reported separately: per-score thresholds (``min``/``max`` on the run's mean); no regression of a
score's mean outside the noise band of the baseline runs (their min–max spread, plus an optional tolerance; a band
of zero width widened by what one case flipping moves the mean by), in the direction the score catalog gives (a
score with none is a diagnostic: shown, gated only by a threshold that names it); no case whose stage passed in
every baseline run may fail it now, become unreadable or be missing from the run; every result line readable; no
cited URL fabricated (always) or unread (configurable: when allowed, unread citations fail no rule). Thresholds come
from ``--min``/``--max`` or the ``[gate]`` table of ``tracescore.toml``; a score name not in the catalog is a
``ConfigError``. A run with no scored trace, or whose every score is absent, cannot be gated: ``NoResultsError``. A
judged score fails only with a calibrated judge (``report.judged``). Every rule can fail: a score the baselines had
and this run lost is a regression, a baseline-passing case whose stage is undecided now is newly failing, and the
citation rules fail when no trace could be checked (and warn when some could not).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from tracescore import catalog
from tracescore.errors import NoResultsError
from tracescore.report.gate_config import (
    DEFAULT_CASE_KEY,
    GateConfig as GateConfig,
    load_gate_config as load_gate_config,
    parse_limit as parse_limit,
)
from tracescore.report.gate_run import FABRICATED, UNREAD, CaseFailure, Run, fold_run
from tracescore.report.judged import review
from tracescore.report.sessions import SESSION, SessionTap, session_summary
from tracescore.report.tally import StageStat, Summary, top_reason
from tracescore.report.verdicts import STAGES, score_stage
from tracescore.scorers.diagnosis import DIAGNOSIS
from tracescore.store.db import Store

_EPS = 1e-9
Rule = Literal["threshold", "regression", "newly_failing", "readable", "fabricated", "unread"]
Status = Literal["pass", "fail", "warn"]


@dataclass(frozen=True)
class Band:
    """The spread of one score's mean over the baseline runs; ``slack``: how far a zero-width band (one baseline, or
    baselines identical on the score) was widened, each way: what one case flipping moves the mean by."""

    low: float
    high: float
    runs: int
    slack: float = 0.0

    @property
    def width(self) -> float:
        return self.high - self.low


@dataclass(frozen=True)
class Diagnostic:
    """A score with no better direction (``catalog`` direction 0: the trajectory scores, counts such as
    ``grounding.numbers_checked``): shown beside the verdict, never gated unless ``[gate]`` names it."""

    name: str
    observed: float | None
    band: Band | None


@dataclass(frozen=True)
class GateCheck:
    """One rule applied to one stage or score: its verdict, what was observed and the limit it was held to."""

    rule: Rule
    subject: str
    status: Status
    message: str
    observed: float | None = None
    limit: str = ""
    band: Band | None = None
    cases: tuple[CaseFailure, ...] = ()

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    @property
    def name(self) -> str:
        """A stable test name, rule and score or stage without numbers (CI keeps per-test history across baselines)."""
        rule = ("min" if self.limit.startswith("≥") else "max") if self.rule == "threshold" else self.rule
        return f"{rule}: {self.subject}"


@dataclass(frozen=True)
class GateResult:
    """All checks of one gate run; ``passed`` when none failed."""

    checks: tuple[GateCheck, ...]
    traces: int
    unreadable: int
    baseline_runs: int
    source: str = ""
    baselines: tuple[str, ...] = ()
    links: dict[str, str] = field(default_factory=dict)  # trace id -> its ``trace_url`` (lines read from a platform)
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def passed(self) -> bool:
        return not any(c.failed for c in self.checks)

    @property
    def failures(self) -> list[GateCheck]:
        return [c for c in self.checks if c.failed]


def _all_absent(run: Run) -> str:
    """What a run whose every score is absent holds, with the commonest reason."""
    reasons: Counter[str] = Counter()
    for stat in run.summary.stats.values():
        reasons.update(stat.absent)
    top = f" (top reason: {top_reason(reasons)})" if reasons else ""
    return f"holds no score value: every score is absent in all {run.summary.traces} trace(s){top}"


def _fmt(value: float) -> str:
    return f"{value:.3f}"


def _no_value(stat: StageStat | None) -> str:
    """Why a score has no mean: never scored, or absent in every trace (with the commonest reason)."""
    why = "never scored" if stat is None else f"absent in all {stat.absent_count} traces"
    if stat and stat.absent:
        why += f" (top reason: {max(stat.absent.items(), key=lambda p: p[1])[0]})"
    return why


def _sampled(name: str, summary: Summary) -> str:
    """For a judged score of a sampled run: the rate beside the figure (the flagged traces are not in it)."""
    known = catalog.entry(name.split("@", 1)[0])
    if summary.sample_rate is None or known is None or not known.judged:
        return ""
    return f" sampled (judge_sample {summary.sample_rate:g}; {summary.flagged} flagged traces apart)"


def _threshold(name: str, limit: float, sign: int, summary: Summary) -> GateCheck:
    op = "≥" if sign > 0 else "≤"
    stat = summary.stats.get(name)
    mean = stat.mean if stat else None
    if mean is None:
        message = f"{name} has no value to check: {_no_value(stat)}"
        return GateCheck("threshold", name, "fail", message, None, f"{op} {limit:g}")
    ok = mean >= limit - _EPS if sign > 0 else mean <= limit + _EPS
    absent = f" ({stat.absent_count} absent)" if stat and stat.absent_count else ""
    over = "sessions" if name.startswith(SESSION) else "traces"
    message = (f"{name} = {_fmt(mean)} over {stat.present if stat else 0} {over}{absent}{_sampled(name, summary)},"
               f" needs {op} {limit:g}")  # fmt: skip
    return GateCheck("threshold", name, "pass" if ok else "fail", message, mean, f"{op} {limit:g}")


def _direction(name: str) -> int:
    known = catalog.entry(name.split("@", 1)[0])
    return known.direction if known else 0


def _one_case(name: str, stat: StageStat | None) -> float:
    """What one case flipping moves a mean over ``stat.present`` cases by: the score's whole range (one unit for a
    count, which has no top) over the cases."""
    known = catalog.entry(name.split("@", 1)[0])
    span = known.high - known.low if known and known.high != float("inf") else 1.0
    return span / stat.present if stat and stat.present else 0.0


def _regressions(
    current: Summary, baselines: Sequence[Summary], tolerance: float, skip: frozenset[str] = frozenset()
) -> list[GateCheck]:
    checks: list[GateCheck] = []
    names = sorted({n for b in baselines for n in b.stats} - skip)  # a score the baselines had and this run lost too
    for name in names:
        sign = _direction(name)
        means = [m for b in baselines if (s := b.stats.get(name)) and (m := s.mean) is not None]
        if not sign or not means:
            continue
        stat = current.stats.get(name)
        low, high = min(means), max(means)
        slack = 0.0 if high - low > _EPS else _one_case(name, stat)  # zero width: one case flipping is not noise
        band = Band(low, high, len(means), slack)
        if sign > 0:
            floor = band.low - tolerance - slack
            limit = f"≥ {_fmt(floor)}"
        else:
            ceiling = band.high + tolerance + slack
            limit = f"≤ {_fmt(ceiling)}"
        where = f"band {_fmt(band.low)}–{_fmt(band.high)} over {band.runs} baseline run(s), {band.width * 100:.1f} pts"
        if slack:
            where += f" (zero width: widened by one case flipping, {slack * 100:.1f} pts)"
        mean = stat.mean if stat else None
        if mean is None:
            message = f"{name} has no value in this run ({_no_value(stat)}); the baselines had the {where}"
            checks.append(GateCheck("regression", name, "fail", message, None, limit, band))
            continue
        ok = mean >= floor - _EPS if sign > 0 else mean <= ceiling + _EPS
        verb = "inside or better than" if ok else "outside"
        n = f" over {stat.present} traces{_sampled(name, current)}" if stat and current.sample_rate is not None else ""
        message = f"{name} = {_fmt(mean)}{n}, {verb} the {where}; needs {limit}"
        checks.append(GateCheck("regression", name, "pass" if ok else "fail", message, mean, limit, band))
    return checks


def _diagnostics(current: Summary, baselines: Sequence[Summary], named: Iterable[str]) -> tuple[Diagnostic, ...]:
    """The scores with no better direction in this run or the baselines, those ``[gate]`` does not name."""
    names = {n for run in (current, *baselines) for n in run.stats if catalog.entry(n.split("@", 1)[0])}
    out = []
    for name in sorted(names - set(named)):
        known = catalog.entry(name.split("@", 1)[0])
        if known is None or known.direction or known.kind == "CATEGORICAL":
            continue
        means = [m for b in baselines if (s := b.stats.get(name)) and (m := s.mean) is not None]
        stat = current.stats.get(name)
        out.append(Diagnostic(name, stat.mean if stat else None, Band(min(means), max(means), len(means)) if means
                              else None))
    return tuple(out)


def _stable_passes(baselines: Sequence[Run]) -> dict[tuple[str, str], int]:
    """(case, stage) pairs that passed in every baseline run that decided them, with how many runs saw them pass (a
    run where the case is undecided, unreadable or absent decides nothing; one where the stage failed rules it out)."""
    seen: dict[tuple[str, str], int] = {}
    broken: set[tuple[str, str]] = set()
    for run in baselines:
        for case, (_, verdicts) in run.cases.items():
            for stage, verdict in verdicts.items():
                if verdict is None:
                    continue
                if verdict:
                    seen[(case, stage)] = seen.get((case, stage), 0) + 1
                else:
                    broken.add((case, stage))
    return {k: n for k, n in seen.items() if k not in broken}


def _newly_failing(current: Run, baselines: Sequence[Run], case_key: str) -> GateCheck:
    stable = _stable_passes(baselines)
    stable_stages: dict[str, list[str]] = {}
    for case, stage in sorted(stable, key=lambda p: (p[0], STAGES.index(p[1]) if p[1] in STAGES else len(STAGES))):
        stable_stages.setdefault(case, []).append(stage)
    cases: list[CaseFailure] = []
    undecided = 0
    for case, (tid, verdicts) in current.cases.items():
        for stage, verdict in verdicts.items():
            if not verdict and (case, stage) in stable:
                detail = f"passed in {stable[(case, stage)]} baseline run(s)"
                if verdict is None:  # a stage that can no longer be decided is not a pass
                    undecided += 1
                    detail = f"undecided now ({_undecided(current.missing.get(case, {}), stage)}); {detail}"
                cases.append(CaseFailure(case, tid, stage, detail))
    for case, (tid, reason) in current.unreadable.items():
        if case in stable_stages:
            cases.append(CaseFailure(case, tid, "unreadable", reason))
    seen = set(current.cases) | set(current.unreadable)
    known = {case for run in baselines for case in (*run.cases, *run.unreadable)}
    # per stage, as for "undecided now": a missing case fails each of its stages that passed in every baseline run
    # that decided it (a stage flaky in the baselines is not counted; the case's other stages still are)
    missing = [case for case in stable_stages if case not in seen]
    if missing and case_key == DEFAULT_CASE_KEY and not seen & known:
        message = (
            f"no case of this run is in the baselines by {case_key} (new trace ids each run?); set --case-key"
            " (e.g. metadata.case_id) to follow cases across runs"
        )
        return GateCheck("newly_failing", "cases", "warn", message, None, "= 0")
    for case in missing:
        runs = max(stable[(case, stage)] for stage in stable_stages[case])
        passed = ", ".join(stable_stages[case])
        cases.append(
            CaseFailure(case, "", "missing", f"missing from this run; passed {passed} in {runs} baseline run(s)")
        )
    n = len({c.case for c in cases})
    if cases:
        gone = f", {len(missing)} missing from this run" if missing else ""
        gone += f", {undecided} stage(s) undecided now" if undecided else ""
        message = f"{n} case(s) that passed in the baseline fail now{gone} ({len(cases)} failure(s))"
    else:
        message = f"no case that passed in the baseline fails now ({len(stable_stages)} baseline-passing case(s))"
    status: Status = "fail" if cases else "pass"
    return GateCheck("newly_failing", "cases", status, message, float(n), "= 0", None, tuple(cases))


def _undecided(missing: Mapping[str, Any], stage: str) -> str:
    """Why a line's ``stage`` has no verdict: the absent reason of one of its scores (the diagnosis says it first)."""
    for name, reason in missing.items():
        if name != DIAGNOSIS and score_stage(name) == stage:
            return f"{name}: {reason}"
    return "its scores are absent"


def _citation_rule(rule: Rule, name: str, run: Run, failing: tuple[CaseFailure, ...], allowed: bool) -> GateCheck:
    """The fabricated or unread rule: fails on a failing trace (unread: warns when allowed); with none, it passes only
    on traces it could check: it fails when no trace could be checked, and warns naming those it could not."""
    traces = len(run.cases)
    skipped = run.unchecked[name]
    unchecked = sum(skipped.values())
    why = f" (top reason: {skipped.most_common(1)[0][0]})" if skipped else ""
    limit = "allowed" if allowed else "= 0"
    if failing:
        what = "never seen in any search hit or fetch" if rule == "fabricated" else "the agent never fetched"
        message = f"{len(failing)} trace(s) cite URLs {what}" + (" (allowed)" if allowed else "")
        return GateCheck(rule, name, "warn" if allowed else "fail", message, float(len(failing)), limit, None, failing)
    if traces and unchecked == traces:
        message = f"{name} could not be checked in any of the {traces} trace(s){why}"
        return GateCheck(rule, name, "warn" if allowed else "fail", message, None, limit)
    done = "no fabricated cited URL" if rule == "fabricated" else "every cited URL was fetched"
    if unchecked:
        message = f"{done} in {traces - unchecked} checked trace(s); {unchecked} could not be checked{why}"
        return GateCheck(rule, name, "warn", message, 0.0, limit)
    return GateCheck(rule, name, "pass", done, 0.0, limit)


def _readable(run: Run) -> GateCheck:
    broken = tuple(run.broken)
    if not broken:
        return GateCheck("readable", "results", "pass", "every result line was read", 0.0, "= 0")
    message = f"{len(broken)} of {len(broken) + run.summary.traces} result line(s) could not be read or scored"
    return GateCheck("readable", "results", "fail", message, float(len(broken)), "= 0", None, broken)


def _judged(check: GateCheck, run: Run, store: Store | None, min_kappa: float) -> GateCheck:
    """A failing rule with a value on a judged score: kept with a trusted judge, else demoted to the review list."""
    if not check.failed or check.observed is None:  # no value to check is a data problem: it keeps failing
        return check
    found = review(check.subject, run.judges, run.cases, store, min_kappa)
    if found is None:
        return check
    trusted, words, stage, failing = found
    if trusted:
        return replace(check, message=check.message + words)
    cases = tuple(CaseFailure(case, tid, stage, f"{check.subject} failed here: review it") for case, tid in failing)
    return replace(check, status="warn", message=check.message + words, cases=cases or check.cases)


def run_gate(
    current: Iterable[Mapping[str, Any]],
    baselines: Sequence[Iterable[Mapping[str, Any]]] = (),
    config: GateConfig | None = None,
    *,
    source: str = "",
    baseline_names: Sequence[str] = (),
    store: Store | None = None,
) -> GateResult:
    """Check the current run against the config and baseline runs; ``store`` holds the judge calibrations."""
    config = config or GateConfig()
    sessions = SessionTap() if any(n.startswith(SESSION) for n in (*config.minimums, *config.maximums)) else None
    now = fold_run(sessions.tap(current) if sessions is not None else current, config.case_key, config.allow_unread)
    if sessions is not None:  # a session.* limit: its stat is over the sessions' scores, computed from the turns
        now.summary.stats.update(session_summary(sessions).stats)
    before: list[Run] = []
    for lines in baselines:
        try:
            before.append(fold_run(lines, config.case_key, config.allow_unread))
        except NoResultsError as exc:
            raise NoResultsError(f"baseline {exc}") from exc
    if not now.summary.traces:
        raise NoResultsError(f"{source or 'the run'} holds no scored trace: nothing to gate")
    if not now.valued:
        raise NoResultsError(f"{source or 'the run'} {_all_absent(now)}: nothing to gate")
    for i, run in enumerate(before):
        name = baseline_names[i] if i < len(baseline_names) else f"#{i + 1}"
        if not run.summary.traces:
            raise NoResultsError(f"baseline {name} holds no scored result; check the file or the run id")
        if not run.valued:
            raise NoResultsError(f"baseline {name} {_all_absent(run)}; check the file or the run id")
    checks: list[GateCheck] = []
    checks += [_threshold(n, v, +1, now.summary) for n, v in sorted(config.minimums.items())]
    checks += [_threshold(n, v, -1, now.summary) for n, v in sorted(config.maximums.items())]
    if before:
        skip = frozenset({UNREAD} if config.allow_unread else ())
        checks += _regressions(now.summary, [b.summary for b in before], config.tolerance, skip)
    checks = [_judged(c, now, store, config.min_judge_kappa) for c in checks]
    if before:
        checks.append(_newly_failing(now, before, config.case_key))
    checks.append(_readable(now))
    checks.append(_citation_rule("fabricated", FABRICATED, now, tuple(now.fabricated), False))
    checks.append(_citation_rule("unread", UNREAD, now, tuple(now.unread), config.allow_unread))
    return GateResult(
        tuple(checks),
        traces=now.summary.traces,
        unreadable=now.summary.failed,
        baseline_runs=len(before),
        source=source,
        baselines=tuple(baseline_names),
        links=now.links,
        diagnostics=_diagnostics(now.summary, [b.summary for b in before], {*config.minimums, *config.maximums}),
    )
