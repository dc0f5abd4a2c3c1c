"""The stage-split dashboard as data: which widgets ``tracescore dashboard`` puts on a platform, and what it did.

A platform folder turns this plan into its own API's calls (``platforms/langfuse/dashboards.py``) or, where its API
cannot make a widget, into the manual steps that make it (``platforms/langsmith/charts.py``). The widgets:

- one time series per stage's headline score (recall at k, ``grounding.rate``, ``citation.support_rate``,
  ``citation.unfetched_rate``, ``answer.correct``), averaged per day, split by ``--by``;
- the ``diagnosis`` cells counted per day (a bar per cell and day: the contingency table over time);
- the count of ``citation.fabricated_count`` scores above 0 (it must stay 0);
- ``grounding.rate``'s title carries the latest calibration of the judge behind it (kappa and n, from the store),
  or says that it was never measured.

Every widget counts only scores tracescore wrote (each platform says how it tells them apart). A re-run finds the
dashboard by name and each widget by its key, so it changes only what differs; ``Outcome`` lists what was (or, in a
dry run, would be) created, updated or left as it was, and every step a person has to take by hand.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from tracescore.catalog import entry
from tracescore.scorers.answer import ANSWER_CORRECT
from tracescore.scorers.citations import CITATION_FABRICATED_COUNT, CITATION_UNFETCHED_RATE
from tracescore.scorers.diagnosis import DIAGNOSIS
from tracescore.scorers.grounding import CITATION_SUPPORT_RATE, GROUNDING_RATE
from tracescore.scorers.retrieval import recall_name

if TYPE_CHECKING:
    from tracescore.calibrate.labels import Calibration

DEFAULT_NAME = "tracescore: stage split"
BY_CHOICES = ("provider", "model", "environment", "name")
_BY_WORDS = {"provider": "provider", "model": "model", "environment": "environment", "name": "trace name"}

Kind = Literal["series", "cells", "nonzero"]
Verb = Literal["create", "update", "unchanged"]


@dataclass(frozen=True)
class Widget:
    """One widget: a stable ``key`` (how a re-run finds it), what it shows, of which score and its data type."""

    key: str
    kind: Kind
    score: str
    title: str
    description: str
    data_type: str  # NUMERIC | BOOLEAN | CATEGORICAL, as the sinks write the score


@dataclass(frozen=True)
class DashboardSpec:
    """The dashboard to make: its name, the dimension the time series are split by, its widgets."""

    name: str
    by: str
    widgets: tuple[Widget, ...]
    agreement: str  # the calibration of the judge behind grounding.rate, short (a widget title)
    agreement_why: str = ""  # why there is no figure, when there is none (descriptions, manual steps)

    @property
    def agreement_text(self) -> str:
        return self.agreement + (f" ({self.agreement_why})" if self.agreement_why else "")

    @property
    def description(self) -> str:
        return (
            f"Made by tracescore: each stage's headline score per day, split by {_BY_WORDS[self.by]}; the diagnosis"
            f" cells per day; fabricated citations (must stay 0). Judge behind grounding.rate: {self.agreement_text}."
            " Re-run `tracescore dashboard` to update it."
        )


@dataclass(frozen=True)
class Step:
    """One thing done (or planned): ``create``/``update``/``unchanged`` of ``what`` (a dashboard, a widget)."""

    verb: Verb
    what: str
    detail: str = ""

    def line(self) -> str:
        return f"{self.verb} {self.what}" + (f" ({self.detail})" if self.detail else "")


@dataclass
class Outcome:
    """What a sync did (or, with ``dry_run``, would do), the steps to take by hand, and the requests it sent."""

    where: str
    dry_run: bool
    steps: list[Step] = field(default_factory=list)
    manual: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    reads: int = 0
    writes: int = 0
    retried: int = 0

    def count(self, verb: Verb) -> int:
        return sum(1 for s in self.steps if s.verb == verb)


@dataclass
class DashboardContext:
    """What a platform's dashboard factory may use: its config sections, the command's platform options (and
    ``dry_run``), ``[source] project``, and the resources its client closes with."""

    sections: Mapping[str, Any]
    options: Mapping[str, Any]
    resources: ExitStack
    project: str | None = None


class DashboardTarget(Protocol):
    """A platform's dashboard maker (``Platform.dashboard``): ``sync`` creates or updates the dashboard of ``spec``
    (nothing written when ``dry_run``) and says what it did and what is left to do by hand."""

    def sync(self, spec: DashboardSpec, *, dry_run: bool) -> Outcome: ...


def agreement_line(calibration: Calibration | None) -> str:
    """``judge kappa 0.71 (n=120, measured 2026-11-30)``, or ``judge not calibrated`` (never a made-up 0)."""
    if calibration is None:
        return "judge not calibrated"
    day = calibration.measured_at.date().isoformat()
    if calibration.kappa is None:
        reason = calibration.kappa_reason or "kappa undefined"
        return f"judge kappa not measurable ({reason}; n={calibration.n}, measured {day})"
    return f"judge kappa {calibration.kappa:.2f} (n={calibration.n}, measured {day})"


def _data_type(name: str) -> str:
    known = entry(name)
    return known.kind if known is not None else "NUMERIC"


def dashboard_spec(
    name: str, by: str, *, k: int, agreement: str, agreement_why: str = "", scores: Sequence[str] = ()
) -> DashboardSpec:
    """The widgets of the stage-split dashboard ``name``, time series split by ``by`` (one of ``BY_CHOICES``), and
    one more per score of ``scores`` (``--score``: any catalog score, a plugin's alike: a categorical one's values
    counted per day, any other's daily mean)."""
    if by not in BY_CHOICES:
        raise ValueError(f"--by {by!r}; expected one of {', '.join(BY_CHOICES)}")
    if not name.strip():
        raise ValueError("the dashboard name is empty; pass --name 'a name'")
    split = _BY_WORDS[by]
    widgets: list[Widget] = []
    for score in (recall_name(k), GROUNDING_RATE, CITATION_SUPPORT_RATE, CITATION_UNFETCHED_RATE, ANSWER_CORRECT):
        title = f"{score}: daily mean by {split}"
        about = f"Daily mean of the {score} scores tracescore wrote, one line per {split}."
        if score == GROUNDING_RATE:
            title += f" — {agreement}"
            about += f" The judge behind it: {agreement}" + (f" ({agreement_why})." if agreement_why else ".")
        widgets.append(Widget(f"series:{score}", "series", score, title, about, _data_type(score)))
    widgets.append(
        Widget(
            f"nonzero:{CITATION_FABRICATED_COUNT}",
            "nonzero",
            CITATION_FABRICATED_COUNT,
            f"{CITATION_FABRICATED_COUNT} > 0: traces citing a URL never seen (must stay 0)",
            "Count of traces whose answer cites a URL that no search or fetch returned. Anything above 0 is a bug.",
            _data_type(CITATION_FABRICATED_COUNT),
        )
    )
    widgets.append(
        Widget(
            f"cells:{DIAGNOSIS}",
            "cells",
            DIAGNOSIS,
            f"{DIAGNOSIS} cells per day: which stage broke",
            "Traces per diagnosis cell per day (retrieval_fail, ungrounded, grounded, retrieval_pass × right, wrong):"
            " the stage contingency table over time.",
            _data_type(DIAGNOSIS),
        )
    )
    shown = {w.score for w in widgets}
    for score in dict.fromkeys(scores):
        found = entry(score)
        if found is None:
            raise ValueError(f"--score {score!r} is no score of the catalog ('tracescore scorers' lists them)")
        if score in shown:
            continue
        if found.kind == "CATEGORICAL":
            widgets.append(Widget(f"cells:{score}", "cells", score, f"{score} values per day",
                                  f"Traces per value of {score} per day.", found.kind))  # fmt: skip
        else:
            widgets.append(Widget(f"series:{score}", "series", score, f"{score}: daily mean by {split}",
                                  f"Daily mean of the {score} scores tracescore wrote, one line per {split}.",
                                  found.kind))  # fmt: skip
    return DashboardSpec(name.strip(), by, tuple(widgets), agreement, agreement_why)


def plan_lines(outcome: Outcome) -> list[str]:
    """The outcome as lines for the terminal: each step, then each manual step."""
    lines = [("would " if outcome.dry_run else "") + s.line() for s in outcome.steps]
    lines += [f"by hand: {m}" for m in outcome.manual]
    lines += [f"note: {n}" for n in outcome.notes]
    return lines
