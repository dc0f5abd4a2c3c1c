"""``Summary``: many result lines counted by contingency cell, stage, score and judge usage, folded in one at a time."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache, reduce
from operator import add
from typing import Any

from tracescore.catalog import Reasons, declared_reason, entry
from tracescore.report.verdicts import STAGES, decided_verdicts
from tracescore.scorers.citations import CITATION_FABRICATED_COUNT
from tracescore.scorers.diagnosis import CELLS, DIAGNOSIS

# a reason's template read without the parts each trace fills in: a parenthesis holding a field, a field after a
# colon, a field alone ("stale label: {pairs}; update the label" → "stale label; update the label")
_FIELD_PARTS = (
    re.compile(r"\s*\([^()]*\{[^{}]*\}[^()]*\)"),
    re.compile(r":\s*\{[^{}]*\}"),
    re.compile(r"\s*\{[^{}]*\}"),
)


def _counts() -> defaultdict[str, int]:  # module functions, not lambdas: a Summary is sent between processes
    return defaultdict(int)


def _count_table() -> dict[str, dict[str, int]]:
    return defaultdict(_counts)


def _stat_table() -> defaultdict[str, StageStat]:
    return defaultdict(StageStat)


@dataclass
class StageStat:
    """One score name across traces: how many present, absent (by reason) and their mean / share true."""

    present: int = 0
    total: float = 0.0
    absent: dict[str, int] = field(default_factory=_counts)

    @property
    def mean(self) -> float | None:
        return self.total / self.present if self.present else None

    @property
    def absent_count(self) -> int:
        return sum(self.absent.values())

    @property
    def top_reason(self) -> str:
        return top_reason(self.absent)


def top_reason(absent: Mapping[str, int]) -> str:
    """The commonest absence reason ("" when none). Reasons written from one declared template that names the trace
    ("no cited source … has a findable date ({sources})") are counted together, shown as that template without the
    parts each trace fills in, "… has a findable date" (the one text itself when only one was written): per text,
    a reason naming each trace's own URL would never be the top one, however many traces it covers."""
    groups: dict[str, dict[str, int]] = {}
    for reason, n in absent.items():
        declared = declared_reason(reason)
        key = declared.text if declared is not None and "{" in declared.text else reason
        groups.setdefault(key, {})[reason] = n
    if not groups:
        return ""
    key, members = max(groups.items(), key=lambda item: sum(item[1].values()))  # the first of equals, as written
    return next(iter(members)) if len(members) == 1 else _general(key)


def _general(template: str) -> str:
    """What the texts one template wrote have in common: the template without its fields."""
    for part in _FIELD_PARTS:
        template = part.sub("", template)
    return " ".join(template.split()).strip(" ;:,")


@dataclass
class StageCount:
    """Passes among decided traces of one stage, and the trace ids that failed it."""

    passed: int = 0
    decided: int = 0
    failed_ids: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float | None:
        return self.passed / self.decided if self.decided else None

    def add(self, verdict: bool | None, trace_id: str | None = None) -> None:
        """Count one trace's verdict; a failure keeps its id when one is given."""
        if verdict is None:
            return
        self.decided += 1
        if verdict:
            self.passed += 1
        elif trace_id is not None:
            self.failed_ids.append(trace_id)


@dataclass
class JudgeUsage:
    """Judge tokens and estimated cost, summed from the optional ``judge`` object of result lines or run summaries."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def add(self, usage: object) -> None:
        if not isinstance(usage, Mapping):
            return
        self.calls += int(usage.get("calls") or 0)
        self.input_tokens += int(usage.get("input_tokens") or 0)
        self.output_tokens += int(usage.get("output_tokens") or 0)
        self.cost_usd += float(usage.get("cost_usd") or 0.0)

    @property
    def any(self) -> bool:
        return bool(self.calls or self.input_tokens or self.output_tokens or self.cost_usd)

    def merge(self, other: JudgeUsage) -> None:
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.cost_usd += other.cost_usd


_PENDING = 512
_PENDING_ROWS = 4096
_PLAIN = frozenset((float, int, bool, str))
"""The value types of lines that may wait to be summed (a line with any other is counted at once, as it always was)."""


@lru_cache(maxsize=1024)
def _judged(name: str) -> bool:
    found = entry(name)
    return found is not None and found.judged


@dataclass
class Summary:
    """Counts per contingency cell (with trace ids), per-stage pass counts, per-score statistics, judge usage."""

    traces: int = 0
    failed: int = 0
    cells: dict[str, list[str]] = field(default_factory=lambda: {c: [] for c in CELLS})
    _undiagnosed: dict[str, int] = field(default_factory=_counts, init=False, repr=False)
    _stats: dict[str, StageStat] = field(default_factory=_stat_table, init=False, repr=False)
    categorical: dict[str, dict[str, int]] = field(default_factory=_count_table)
    stages: dict[str, StageCount] = field(default_factory=lambda: {s: StageCount() for s in STAGES})
    fabricated: dict[str, float] = field(default_factory=dict)
    judge: JudgeUsage = field(default_factory=JudgeUsage)
    errors: list[str] = field(default_factory=list)
    # [scoring] judge_sample (the lines' ``judge.sample``): the rate, and the judged scores of the traces judged only
    # because a deterministic stage flagged them, kept apart so the judged shares are the sample's, unbiased
    sample_rate: float | None = None
    flagged: int = 0
    flagged_stats: dict[str, StageStat] = field(default_factory=_stat_table)
    # each distinct ``missing`` mapping (its names, its reasons) and how many lines had it: counted in C, folded into
    # the stats when read (two tuples of text: no pair tuple per name to build and hash, as keying by items() had)
    _absent: Counter[tuple[tuple[str, ...], tuple[str, ...]]] = field(
        default_factory=Counter, init=False, repr=False
    )
    # the values of consecutive lines whose scores have one shape (the same names, each value of the same plain type):
    # their numeric columns are summed once the shape changes or the stats are read, in line order (the same float
    # sums and the same order of names as adding them line by line, which cost ~5 us a line in Python)
    _shape: tuple[tuple[str, ...], tuple[type, ...]] | None = field(default=None, init=False, repr=False, compare=False)
    _rows: list[tuple[Any, ...]] = field(default_factory=list, init=False, repr=False, compare=False)
    _texts: tuple[int, ...] = field(default=(), init=False, repr=False, compare=False)

    @property
    def stats(self) -> dict[str, StageStat]:
        """Per score name: present count, total and absent reasons."""
        self._fold()
        return self._stats

    @property
    def undiagnosed(self) -> dict[str, int]:
        """Traces with no contingency cell, by reason."""
        self._fold()
        return self._undiagnosed

    def _fold(self) -> None:
        self._sum()  # the names of the pending lines first: the stats keep the order names came in
        pending, self._absent = self._absent, Counter()
        stats, undiagnosed = self._stats, self._undiagnosed
        counts: dict[tuple[str, ...], list[dict[str, int]]] = {}  # per names: where each name's reasons are counted
        for (names, reasons), n in pending.items():
            into = counts.get(names)
            if into is None:  # a name's stats are made where the first mapping naming it is folded, as one by one
                into = counts[names] = [undiagnosed if name == DIAGNOSIS else stats[name].absent for name in names]
            for count, reason in zip(into, reasons, strict=True):
                count[reason] += n

    def _sum(self) -> None:
        """Fold the pending lines of one shape into the stats: per numeric name, its values summed in line order."""
        rows = self._rows
        if not rows or self._shape is None:
            return
        self._rows = []
        names, texts, stats = self._shape[0], self._texts, self._stats
        for i, (name, column) in enumerate(zip(names, zip(*rows, strict=True), strict=True)):
            if i not in texts:
                stat = stats[name]
                stat.present += len(column)
                stat.total = reduce(add, map(float, column), stat.total)  # total += float(value), line by line

    def _values(self, scores: Mapping[str, Any], apart: bool) -> None:
        """Count one line's present scores: numeric ones into the stats (or pending), text ones as categories."""
        names, types = tuple(scores), tuple(map(type, scores.values()))
        if apart or self._shape != (names, types):
            self._sum()
            if apart or not _PLAIN.issuperset(types):  # flagged, or a value of another type: counted now, one by one
                self._shape = None
                self._one(scores, apart)
                return
            self._shape, self._texts = (names, types), tuple(i for i, t in enumerate(types) if t is str)
        row = tuple(scores.values())
        rows = self._rows
        rows.append(row)
        if len(rows) >= _PENDING_ROWS:  # memory stays flat over a long run of one shape
            self._sum()
        categorical = self.categorical
        for i in self._texts:  # the categories at once: they are a public field
            categorical[names[i]][row[i]] += 1

    def _one(self, scores: Mapping[str, Any], apart: bool) -> None:
        stats = self._stats
        for name, value in scores.items():
            if isinstance(value, str):
                self.categorical[name][value] += 1
                continue
            stat = self.flagged_stats[name] if apart and _judged(name) else stats[name]
            stat.present += 1
            stat.total += float(value)

    def add(self, result: Mapping[str, Any], verdicts: Mapping[str, bool | None] | None = None) -> None:
        """Fold one result line (and its ``stage_verdicts``, when already computed) into the summary."""
        get = result.get
        judge = get("judge")
        apart = False
        if judge is not None:
            self.judge.add(judge)
            sample = judge.get("sample") if isinstance(judge, Mapping) else None
            if isinstance(sample, Mapping):
                self.sample_rate = sample.get("rate")
                apart = sample.get("by") == "flagged"
        scores: Mapping[str, Any] = get("scores") or {}
        missing: Mapping[str, str] = get("missing") or {}
        errors = get("errors")
        if errors and not scores and not missing:
            self.failed += 1
            self.errors += list(errors)
            return
        self.traces += 1
        if errors:
            self.errors += list(errors)
        tid = str(get("trace_id"))
        self.flagged += apart
        self._values(scores, apart)
        if missing:
            self._absent[tuple(missing), tuple(missing.values())] += 1
            if len(self._absent) > _PENDING:  # reasons that name the trace: keep memory flat
                self._fold()
        cell = scores.get(DIAGNOSIS)
        if isinstance(cell, str):
            self.cells.setdefault(cell, []).append(tid)
        stages = self.stages
        given = verdicts.items() if verdicts is not None else None
        decided = decided_verdicts(scores) if given is None else [(s, v) for s, v in given if v is not None]
        for stage, verdict in decided:
            if not (apart and stage == "grounding"):  # StageCount.add, inlined: every line
                count = stages[stage]
                count.decided += 1
                if verdict:
                    count.passed += 1
                else:
                    count.failed_ids.append(tid)
        fabricated = scores.get(CITATION_FABRICATED_COUNT)
        if fabricated and isinstance(fabricated, bool | int | float):
            self.fabricated[tid] = float(fabricated)

    def merge(self, other: Summary) -> None:
        """Fold in the summary of the lines that follow this one's (a worker process's chunk): the same counts, ids
        and order as adding those lines here (means may differ in the last bit: totals are summed per chunk)."""
        self._sum()
        other._sum()
        self.traces += other.traces
        self.failed += other.failed
        for cell, ids in other.cells.items():
            self.cells.setdefault(cell, []).extend(ids)
        for reason, n in other._undiagnosed.items():
            self._undiagnosed[reason] += n
        for name, stat in other._stats.items():
            mine = self._stats[name]
            mine.present += stat.present
            mine.total += stat.total
            for reason, n in stat.absent.items():
                mine.absent[reason] += n
        for name, values in other.categorical.items():
            counts = self.categorical[name]
            for value, n in values.items():
                counts[value] += n
        for stage, count in other.stages.items():
            into = self.stages.setdefault(stage, StageCount())
            into.passed += count.passed
            into.decided += count.decided
            into.failed_ids += count.failed_ids
        self.fabricated.update(other.fabricated)
        self.sample_rate = other.sample_rate if other.sample_rate is not None else self.sample_rate
        self.flagged += other.flagged
        for name, stat in other.flagged_stats.items():
            into_stat = self.flagged_stats[name]
            into_stat.present += stat.present
            into_stat.total += stat.total
        self.judge.merge(other.judge)
        self.errors += other.errors
        self._absent.update(other._absent)
        if len(self._absent) > _PENDING:
            self._fold()

    @property
    def scorer_errors(self) -> dict[str, int]:
        """Per scorer (entry-point name, from the catalog), the traces it raised on: its scores there are absent with
        ``scorer error: ...`` (all of them, so its score counting the most such absences counts its traces)."""
        out: dict[str, int] = {}
        raised = Reasons.SCORER_ERROR.pattern
        for name, stat in self.stats.items():
            n = sum(count for reason, count in stat.absent.items() if raised.fullmatch(reason))
            if n:
                found = entry(name)
                scorer = found.scorer if found is not None else name
                out[scorer] = max(out.get(scorer, 0), n)
        return out

    @property
    def diagnosed(self) -> int:
        return sum(len(ids) for ids in self.cells.values())


def summarize(results: Iterable[Mapping[str, Any]]) -> Summary:
    """A Summary of many result lines."""
    summary = Summary()
    for result in results:
        summary.add(result)
    return summary
