"""``[scoring] judge_sample`` across runs, commands and platforms (#32, acceptance 1): 200 traces recorded both in
Langfuse and in LangSmith, ``judge_sample = 0.25``, ``judge_key = "question"`` (the trace ids differ between the
platforms; the question is what both carry): the traces judged are the hash-chosen ones plus the flagged ones, the
same on a re-run, on a backfill and from the other platform, counted at the loopback judge (each run on a fresh
store or, after a full run, under another judge model, so no cached reply hides a call), with and without
``judge_flagged``; a trace left out keeps its earlier judged scores on the platform. The real ``langfuse``,
``langsmith`` and ``anthropic`` SDKs over loopback HTTP, the real CLI."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.engine.test_judge_sample import _flagged
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import _id, load_samples, seed
from tests.test_both_platforms import _langfuse_trace
from tracescore import catalog
from tracescore.cli import main
from tracescore.engine.sampling import share
from tracescore.store.db import Store

WINDOW = ["--from", "2026-11-01T00:00:00Z", "--to", "2026-12-01T00:00:00Z"]
RATE = 0.25
OTHER_MODEL = "claude-opus-4-6"  # the full run before: its replies are no answer for the sampled runs
JUDGED = {e.name for e in catalog.entries() if e.judged}
_QUESTION = re.compile(r"<question>(.*?)</question>", re.DOTALL)


def _traces(n: int = 200) -> list[dict[str, Any]]:
    """``n`` cookbook samples, each under its own id and question."""
    samples = load_samples()
    out = []
    for i in range(n):
        trace = copy.deepcopy(samples[i % len(samples)])
        trace["id"] = f"{trace['id']}-{i:03d}"
        trace["question"] = f"{trace['question']} (case {i:03d})"
        out.append(trace)
    return out


class _Setup:
    """Both platforms holding the same traces, the judge fake, and a CLI run of either counted at the judge."""

    def __init__(self, tmp_path: Path, traces: list[dict[str, Any]], langfuse: FakeLangfuse,
                 langsmith: FakeLangSmith, judge: FakeAnthropic) -> None:
        self.tmp, self.langfuse, self.langsmith, self.judge = tmp_path, langfuse, langsmith, judge
        for trace in traces:
            langfuse.add_trace(*_langfuse_trace(trace))
        project = seed(langsmith, traces)
        self.sample_of = {t["id"]: t["id"] for t in traces} | {_id(project, t["id"], 0): t["id"] for t in traces}
        self.by_question = {t["question"]: t["id"] for t in traces}
        self.env = env_for(langfuse) | {"LANGSMITH_API_KEY": "k", "LANGSMITH_ENDPOINT": langsmith.url,
                                        "ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": judge.url}
        self.runs = 0

    def run(self, platform: str, scoring: str, *, command: str = "score", store: str | None = None,
            ) -> tuple[list[dict[str, Any]], set[str]]:
        """One CLI run: its result lines (trace ids as the cookbook's) and the traces the judge was asked about."""
        self.runs += 1
        db = self.tmp / (store or f"run{self.runs}.db")
        source = '[source]\nkind = "langfuse"\n' if platform == "langfuse" else (
            '[source]\nkind = "langsmith"\nproject = "search-agent"\n')
        config = self.tmp / f"run{self.runs}.toml"
        config.write_text(f'{source}\n[job]\nstore = "{db}"\njudge_concurrency = 4\nbackfill_chunks = 1\n'
                          f"\n[scoring]\n{scoring}\n", encoding="utf-8")  # fmt: skip
        asked = len(self.judge.messages())
        if command == "score":
            args = ["score", "--source", platform, *WINDOW, "--store", str(db), "-q", "--config", str(config)]
            if platform == "langsmith":
                args[3:3] = ["--project", "search-agent"]
        else:
            args = ["backfill", "--config", str(config), *WINDOW, "-q"]
        result = CliRunner().invoke(main, args, env=self.env)
        assert result.exit_code == 0, result.output
        with Store(db) as opened:
            lines = list(opened.results(opened.runs()[-1]["id"]))
        for line in lines:
            line["trace_id"] = self.sample_of[line["trace_id"]]
        questions = set()
        for request in self.judge.messages()[asked:]:
            text = "".join(b["text"] for b in request.json()["messages"][0]["content"])
            questions.add(self.by_question[_QUESTION.search(text).group(1)])  # type: ignore[union-attr]
        return lines, questions


def _judged(lines: list[dict[str, Any]]) -> set[str]:
    """The traces whose judged stages ran: none of their judged scores absent for sampling."""
    return {r["trace_id"] for r in lines
            if not any(n in JUDGED and why.startswith("not sampled (") for n, why in r["missing"].items())}


def _ours(rows: Any, trace: str, name: str, value: str) -> dict[str, tuple[str, str, Any]]:
    """A platform's judged scores: id → (trace, name, value)."""
    return {r["id"]: (r[trace], r[name], r.get(value)) for r in rows if r[name] in JUDGED}


def _called(lines: list[dict[str, Any]]) -> set[str]:
    return {r["trace_id"] for r in lines if r.get("judge", {}).get("calls")}


@pytest.mark.parametrize("flagged", [True, False], ids=["judge_flagged", "hash_only"])
def test_the_same_traces_are_judged_on_a_rerun_a_backfill_and_the_other_platform(tmp_path: Path, flagged: bool) -> None:
    traces = _traces()
    question = {t["id"]: t["question"] for t in traces}
    scoring = f'judge_sample = {RATE}\njudge_key = "question"\njudge_flagged = {str(flagged).lower()}'
    with FakeLangfuse() as langfuse, FakeLangSmith() as langsmith, FakeAnthropic() as judge:
        setup = _Setup(tmp_path, traces, langfuse, langsmith, judge)
        if flagged:  # a full judged run on each platform first, under another judge model: scores a sample must keep
            setup.run("langfuse", f'judge_model = "{OTHER_MODEL}"', store="langfuse.db")
            setup.run("langsmith", f'judge_model = "{OTHER_MODEL}"', store="langsmith.db")
        earlier_lf = _ours(langfuse.scores.values(), "traceId", "name", "value")
        earlier_ls = _ours(langsmith.feedback.values(), "run_id", "key", "score")
        assert len(earlier_lf) > 500 and len(earlier_ls) == len(earlier_lf) if flagged else not earlier_lf

        runs = {
            "langfuse": setup.run("langfuse", scoring, store="langfuse.db"),  # after the full run: its ledger
            "langfuse backfill": setup.run("langfuse", scoring, command="backfill"),  # a fresh store
            "langsmith": setup.run("langsmith", scoring, store="langsmith.db"),
        }
        if flagged:
            runs["langfuse re-run"] = setup.run("langfuse", scoring)  # a fresh store
        lf_after = _ours(langfuse.scores.values(), "traceId", "name", "value")
        ls_after = _ours(langsmith.feedback.values(), "run_id", "key", "score")
        deletes = {r.path.rstrip("/").rsplit("/", 1)[1] for r in langfuse.requests_to("/api/public/scores/", "DELETE")
                   + langsmith.requests_to("/feedback/", "DELETE")}  # fmt: skip
        if not flagged:  # the platform's own ids as the key: the other platform judges other traces
            default_key = setup.run("langsmith", f"judge_sample = {RATE}\njudge_flagged = false")

    lines = runs["langfuse"][0]
    hashed = {t for t in question if share(question[t]) < RATE}
    expected = hashed | ({r["trace_id"] for r in lines if _flagged(r["scores"])} if flagged else set())
    assert 30 <= len(hashed) <= 70 and (len(expected - hashed) >= 20 if flagged else expected == hashed)
    for name, (got, asked) in runs.items():
        assert _judged(got) == expected, name  # the judged set: hash-chosen plus flagged
        assert asked == _called(got) and expected - asked == expected - _called(got), name  # counted at the judge
        assert asked <= expected and len(asked) >= len(expected) - 25, name  # (some need no call: an empty answer)
    assert len({frozenset(asked) for _, asked in runs.values()}) == 1  # the same calls' traces in every run
    if not flagged:  # the platform's own ids choose other traces on the other platform: the key makes them the same
        assert _judged(default_key[0]) != hashed and abs(len(_judged(default_key[0])) - len(hashed)) < 40
        return
    # left out of the sample: every judged score the full run wrote is still there, with its value
    left = set(question) - expected
    kept_lf = {i: s for i, s in earlier_lf.items() if s[0] in left}
    assert len(kept_lf) > 300 and {i: lf_after.get(i) for i in kept_lf} == kept_lf and not deletes & set(kept_lf)
    kept_ls = {i: s for i, s in earlier_ls.items() if setup.sample_of[s[0]] in left}
    assert len(kept_ls) == len(kept_lf) and {i: ls_after.get(i) for i in kept_ls} == kept_ls
    assert not deletes & set(kept_ls)
