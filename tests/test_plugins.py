"""#46: a third party's scorer, installed as a package, goes through the one registry the built-ins use: it is listed
beside them, its scores are in ``score``'s results, and the registry refuses what it cannot use (an option it does
not accept or of the wrong type, a name outside its stage, a name another scorer declares, an import error) before
any work, exit 2, in one line naming the entry point and the packages. A scorer that raises on a trace leaves that
trace's scores of it absent (``scorer error: ...``, not computed) and the run goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.plugins import EXAMPLE, build, installed
from tracescore import catalog, registry
from tracescore.cli.main import main

POLICY = {"acme_scorers": EXAMPLE}
ENTRY = {"policy": "acme_scorers:cites_policy_id"}


def _trace(tid: str, question: str, answer: str) -> dict[str, object]:
    return {"schema_version": "1", "id": tid, "question": question, "answer": answer, "steps": []}


TRACES = [
    _trace("t-asked", "What does POL-1234 cover?", "POL-1234 covers returns. FINAL ANSWER: returns"),
    _trace("t-missed", "Is POL-5678 still valid?", "It is valid."),
    _trace("t-none", "How many days do I have?", "30 days."),
]


def _traces(tmp_path: Path) -> Path:
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in TRACES), encoding="utf-8")
    return path


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.output


def test_the_plugin_is_listed_beside_every_built_in(tmp_path: Path) -> None:
    with installed(build(tmp_path / "site", POLICY, ENTRY)):
        code, out = _run("scorers", "--format", "json")
        assert code == 0, out
        listed = {s["name"]: s for s in json.loads(out)}
        text_code, text = _run("scorers")
    assert text_code == 0 and "policy  (acme-scorers 0.1.0; stage answer; version 1)" in text
    assert "option pattern = 'POL-\\\\d{4}' (str)" in text
    policy = listed["policy"]
    assert policy["package"] == "acme-scorers" and policy["version"] == "1" and policy["stage"] == ["answer"]
    assert policy["entry_point"] == "tracescore.scorers: policy = acme_scorers:cites_policy_id"
    assert policy["scores"] == [{
        "name": "answer.cites_policy_id", "kind": "boolean", "better": "higher", "min": None, "max": None,
        "categories": [], "definition": "", "absent": {"no policy id asked for": "does not apply"},
    }]  # fmt: skip
    assert policy["options"] == [{"name": "pattern", "type": "str", "default": r"POL-\d{4}"}]
    builtins = {n: s for n, s in listed.items() if n != "policy"}
    assert set(builtins) == {"answer", "citations", "diagnosis", "grounding", "links", "numbers", "retrieval",
                             "semantic", "session", "stale", "surface", "trajectory"}  # fmt: skip
    for s in builtins.values():
        assert s["package"] == "tracescore" and s["entry_point"].startswith(f"{registry.GROUP}: {s['name']} = ")
    assert {o["name"]: o["default"] for o in listed["retrieval"]["options"]} == {"k": 5}
    assert {o["name"]: o["default"] for o in listed["stale"]["options"]} == {"stale_after": "365d"}
    assert not any(s["name"] == "policy" for s in catalog.describe())  # uninstalled after the block


def test_its_scores_are_in_score_results_and_options_come_from_the_config(tmp_path: Path) -> None:
    traces, out = _traces(tmp_path), tmp_path / "out.jsonl"
    config = tmp_path / "ts.toml"
    config.write_text('[scorers.policy]\npattern = "POL-5\\\\d{3}"\n', encoding="utf-8")
    with installed(build(tmp_path / "site", POLICY, ENTRY)):
        code, text = _run("score", str(traces), "--out", str(out), "-q")
        assert code == 0, text
        lines = {r["trace_id"]: r for r in map(json.loads, out.read_text().splitlines())}
        entry = catalog.entry("answer.cites_policy_id")
        assert entry is not None and entry.direction == 1 and entry.kind == "BOOLEAN" and entry.scorer == "policy"
        assert catalog.absence_kind("no policy id asked for", "answer.cites_policy_id") == catalog.DOES_NOT_APPLY
        code, text = _run("score", str(traces), "--out", str(tmp_path / "five.jsonl"), "-q", "--config", str(config))
        assert code == 0, text
        five = {r["trace_id"]: r for r in map(json.loads, (tmp_path / "five.jsonl").read_text().splitlines())}
    assert lines["t-asked"]["scores"]["answer.cites_policy_id"] is True
    assert lines["t-missed"]["scores"]["answer.cites_policy_id"] is False
    assert lines["t-none"]["missing"]["answer.cites_policy_id"] == "no policy id asked for"
    assert "answer.correct" in lines["t-asked"]["missing"]  # the built-ins ran beside it
    assert "answer.cites_policy_id" in five["t-asked"]["missing"] and five["t-missed"]["scores"][
        "answer.cites_policy_id"] is False  # fmt: skip


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        ('[scorers.policy]\npatern = "x"\n',
         "unknown key 'patern' in [scorers.policy]; scorer 'policy' (acme-scorers 0.1.0) accepts: pattern (str,"
         " default 'POL-\\\\d{4}')"),
        ("[scorers.policy]\npattern = 3\n",
         "bad value for [scorers.policy] pattern: Input should be a valid string, got 3; scorer 'policy'"
         " (acme-scorers 0.1.0) accepts: pattern (str"),
        ('[scorers.retrieval]\nk = "ten"\n', "bad value for [scorers.retrieval] k: Input should be a valid integer"),
        ("[scorers.retrieval]\nk = 0\n", "bad value for [scorers.retrieval] k: Input should be greater than or equal"),
        ('[scoring]\ndisable = ["polcy"]\n', "unknown scorer 'polcy'; installed: "),
        ("[scoring]\nk = 3\n", "scoring.k is now the scorer option [scorers.retrieval] k: move it there"),
    ],
    ids=["unknown key", "wrong type", "built-in wrong type", "built-in out of range", "unknown scorer", "moved key"],
)
def test_a_bad_option_stops_the_command_naming_key_scorer_and_what_it_accepts(
    tmp_path: Path, toml: str, said: str
) -> None:
    config = tmp_path / "ts.toml"
    config.write_text(toml, encoding="utf-8")
    with installed(build(tmp_path / "site", POLICY, ENTRY)):
        code, out = _run("score", str(_traces(tmp_path)), "--config", str(config), "-q")
    assert code == 2 and said in out, out


BAD_STAGE = EXAMPLE.replace('ScoreSpec("answer.cites_policy_id"', 'ScoreSpec("retrieval.cites_policy_id"')
TWICE = EXAMPLE.replace('ScoreSpec("answer.cites_policy_id"', 'ScoreSpec("answer.correct"')


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (BAD_STAGE, "scorer entry point 'policy' (acme-scorers 0.1.0): score 'retrieval.cites_policy_id' is outside"
                    " its stage 'answer'"),
        (TWICE, "score 'answer.correct' is declared twice: by scorer entry point 'answer' (tracescore 0.1.0) and by"
                " 'policy' (acme-scorers 0.1.0)"),
        ("import not_a_module_anywhere\n", "scorer entry point 'policy' = 'acme_scorers:cites_policy_id'"
                                           " (acme-scorers 0.1.0) cannot be imported: ModuleNotFoundError: No module"
                                           " named 'not_a_module_anywhere'"),
        ("def cites_policy_id(trace):\n    return []\n", "is not a @tracescore.scorer function (got function)"),
    ],
    ids=["name outside its stage", "name declared twice", "import error", "not a scorer"],
)
def test_the_registry_refuses_a_plugin_before_any_work(tmp_path: Path, source: str, said: str) -> None:
    out_file = tmp_path / "out.jsonl"
    with installed(build(tmp_path / "site", {"acme_scorers": source}, ENTRY)):
        code, out = _run("score", str(_traces(tmp_path)), "--out", str(out_file), "-q")
        listed, _ = _run("scorers")
    assert code == 2 and said in out and out.count("\n") == 1, out
    assert listed == 2 and not out_file.exists()  # stopped before any work: no result written


RAISES = EXAMPLE + '''

@ts.scorer(stage="answer", version="2", scores=[ts.ScoreSpec("answer.length_ok", "boolean", better="higher")])
def length_ok(trace: ts.Trace) -> list[ts.Score]:
    if "valid" in trace.answer:
        raise ValueError("cannot read this answer\\nsecond line not shown")
    return [ts.score("answer.length_ok", len(trace.answer) < 200)]
'''


def test_a_scorer_raising_on_some_traces_leaves_its_scores_absent_there_and_the_run_goes_on(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with installed(build(tmp_path / "site", {"acme_scorers": RAISES}, ENTRY | {"length": "acme_scorers:length_ok"})):
        code, text = _run("score", str(_traces(tmp_path)), "--out", str(out), "-q", "--format", "json")
        kind = catalog.absence_kind("scorer error: ValueError: cannot read this answer", "answer.length_ok")
        shown_code, shown = _run("score", str(_traces(tmp_path)), "--store", "none", "--format", "terminal")
    lines = {r["trace_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert code == 0, text
    assert lines["t-missed"]["missing"]["answer.length_ok"] == "scorer error: ValueError: cannot read this answer"
    assert kind == catalog.NOT_COMPUTED  # an earlier platform score stays
    assert lines["t-missed"]["scores"]["answer.cites_policy_id"] is False  # its other scorers still ran
    assert lines["t-asked"]["scores"]["answer.length_ok"] is True and lines["t-none"]["scores"]["answer.length_ok"]
    assert lines["t-missed"]["errors"] == ["scorer length failed: ValueError: cannot read this answer"]
    assert json.loads(text)["scorer_errors"] == {"length": 1}  # the summary counts them per scorer
    assert shown_code == 0 and "scorer errors: length on 1 trace (its scores there absent, not computed)" in shown


def test_dashboard_score_adds_a_plugins_score_as_a_widget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with installed(build(tmp_path / "site", POLICY, ENTRY)):
        code, out = _run("dashboard", "--to", "langfuse", "--dry-run", "--score", "answer.cites_policy_id")
        unknown, said = _run("dashboard", "--to", "langfuse", "--dry-run", "--score", "answer.cites_policy")
    assert code == 0, out
    assert "(8 widgets)" in out and (
        "widget 'answer.cites_policy_id: daily mean by trace name' (LINE_TIME_SERIES of scores-boolean: avg of value,"
        " split by traceName; where name = answer.cites_policy_id") in out  # fmt: skip
    assert unknown == 2 and "--score 'answer.cites_policy' is no score of the catalog" in said


COMPLIANCE = EXAMPLE + '''

@ts.scorer(stage="compliance", version="1",
           scores=[ts.ScoreSpec("compliance.answer_chars", "numeric", better=None, min=0)])
def answer_chars(trace: ts.Trace) -> list[ts.Score]:
    return [ts.score("compliance.answer_chars", len(trace.answer or ""))]
'''


def test_the_api_and_both_platforms_evaluators_give_a_plugins_scores_a_stage_of_its_own_too(tmp_path: Path) -> None:
    from tests.fakes.langsmith_runs import load_samples, run_tree
    from tracescore import score_traces
    from tracescore.integrations import langfuse as lf, langsmith as ls

    schemas = pytest.importorskip("langsmith.schemas")
    case = load_samples(1)[0] | {"question": "Under POL-1234, how many days do I have to return an item?"}
    runs, example = run_tree(case, "00000000-0000-4000-8000-0000000000aa", experiment=True)
    run = schemas.Run(**runs[0], child_runs=[schemas.Run(**child) for child in runs[1:]])
    wanted = {"answer.cites_policy_id": False, "compliance.answer_chars": float(len(case["answer"]))}
    entries = ENTRY | {"chars": "acme_scorers:answer_chars"}
    with installed(build(tmp_path / "site", {"acme_scorers": COMPLIANCE}, entries)):
        [api] = score_traces([case])
        results = ls.evaluators()[0](run, schemas.Example(**example))["results"]
        on_langsmith = {r["key"]: r.get("score") for r in results}
        on_langfuse = {e.name: e.value for e in lf.evaluators()[0](input={}, output=case, expected_output=None,
                                                                       metadata=case["labels"])}  # fmt: skip
        only = {r["key"] for r in ls.evaluators(stages=["compliance"])[0](run, None)["results"]}
    assert {n: api.values[n] for n in wanted} == wanted
    assert {n: on_langsmith[n] for n in wanted} == {"answer.cites_policy_id": 0, "compliance.answer_chars": wanted[
        "compliance.answer_chars"]}  # fmt: skip
    assert {n: on_langfuse[n] for n in wanted} == {"answer.cites_policy_id": 0, "compliance.answer_chars": wanted[
        "compliance.answer_chars"]}  # fmt: skip
    assert only == {"compliance.answer_chars"}
