"""#46 acceptance 1: a third party's scorer package, built in a temporary folder and installed by pip (``pip install
--target``, never into the test's own environment), runs through every ``tracescore`` command in a child process (the
target folder first on PYTHONPATH, as an installed distribution's ``dist-info`` is found): listed beside every
built-in; its scores in ``score``'s result file, the store, ``report``, ``gate`` (its direction from the declaration),
written back to Langfuse and LangSmith through the real SDKs on the loopback fakes with score and feedback configs
made from its ``ScoreSpec``, a re-run writing nothing, a does-not-apply absence removing its earlier score; a judged
scorer getting the run's judge (the fake Anthropic API, its cache); the registry's refusals; a scorer raising on some
traces."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.langfuse import FakeLangfuse, env_for
from tests.fakes.langsmith import FakeLangSmith
from tests.fakes.langsmith_runs import seed
from tests.plugins import EXAMPLE
from tests.test_both_platforms import _langfuse_trace

pytestmark = pytest.mark.slow

SRC = Path(__file__).resolve().parents[1] / "src"
POLICY = "answer.cites_policy_id"
WINDOW = ["--from", "2026-11-01T00:00:00Z", "--to", "2026-12-01T00:00:00Z"]

JUDGED = '''

from pydantic import BaseModel


class Match(BaseModel):
    match: bool
    reason: str


ON_TOPIC = ts.Rubric("acme-on-topic", "3", "Say whether the answer addresses the question (match) and why.")


@ts.scorer(stage="answer", version="3", scores=[ts.ScoreSpec("answer.on_topic", "boolean", better="higher")])
def on_topic(trace: ts.Trace, *, judge: ts.Judge) -> list[ts.Score]:
    """Asks the run's judge whether the answer addresses the question."""
    request = ts.JudgeRequest(rubric=ON_TOPIC, output=Match,
                              content=f"<question>{trace.question}</question><answer>{trace.answer}</answer>")
    verdict = judge.judge(request).output
    return [ts.score("answer.on_topic", verdict.match, comment=verdict.reason)]


@ts.scorer(stage="answer", version="1", scores=[ts.ScoreSpec("answer.short", "boolean", better="higher")])
def short(trace: ts.Trace) -> list[ts.Score]:
    """Raises on an answer naming a policy it misses (a bug of ours, on purpose)."""
    if "valid" in trace.answer:
        raise ValueError("cannot read this answer\\nsecond line not shown")
    return [ts.score("answer.short", len(trace.answer) < 200)]
'''
ENTRY_POINTS = {"policy": "acme_scorers:cites_policy_id", "on-topic": "acme_scorers:on_topic",
                "short": "acme_scorers:short"}  # fmt: skip


def _package(root: Path, source: str, entry_points: Mapping[str, str], name: str = "acme-scorers") -> Path:
    """A plugin project as its authors write it: one module and a pyproject declaring the entry points."""
    root.mkdir(parents=True)
    (root / "acme_scorers.py").write_text(source, encoding="utf-8")
    eps = "".join(f'{k} = "{v}"\n' for k, v in entry_points.items())
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
        f'[project]\nname = "{name}"\nversion = "0.1.0"\n\n'
        f'[tool.hatch.build.targets.wheel]\nonly-include = ["acme_scorers.py"]\n\n'
        f'[project.entry-points."tracescore.scorers"]\n{eps}',
        encoding="utf-8",
    )
    return root


def pip_install(project: Path, target: Path) -> Path:
    """``pip install --target``: the package and its ``dist-info`` in ``target``, nothing else touched (no index, no
    build isolation: the build backend, hatchling, is a dev dependency)."""
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--no-build-isolation",
         "--target", str(target), str(project)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    return target


def cli(site: Path, *args: str, cwd: Path, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``tracescore ARGS`` in a child process with ``site`` (the plugin) first on PYTHONPATH, then this tree's src."""
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("LANGFUSE_", "LANGSMITH_", "ANTHROPIC_", "RAY_ADDRESS"))}  # fmt: skip
    full = {**base, "PYTHONPATH": os.pathsep.join([str(site), str(SRC)]), "COLUMNS": "200", **(env or {})}
    return subprocess.run([sys.executable, "-m", "tracescore", *args], cwd=cwd, env=full, capture_output=True,
                          text=True, timeout=300)  # fmt: skip


def _samples() -> list[dict[str, Any]]:
    """Four of the cookbook's traces, two asking about a policy id (one answer naming it, one not)."""
    rows = [json.loads(line) for line in (SRC.parent / "cookbook/data/traces.jsonl").read_text().splitlines()][:4]
    rows[0]["question"] = "Under POL-1234, how many days do I have to return an item?"
    rows[0]["answer"] = "POL-1234: " + rows[0]["answer"]
    rows[1]["question"] = "Is POL-5678 still valid for express shipping?"
    rows[1]["answer"] = "It is valid. " + rows[1]["answer"]
    return rows


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("plugin")
    yield pip_install(_package(root / "project", EXAMPLE + JUDGED, ENTRY_POINTS), root / "site")


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in _samples()), encoding="utf-8")
    return path


def _lines(path: Path) -> dict[str, dict[str, Any]]:
    return {r["trace_id"]: r for r in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def test_listed_beside_every_built_in_each_from_its_distribution(site: Path, tmp_path: Path) -> None:
    done = cli(site, "scorers", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    listed = {s["name"]: s for s in json.loads(done.stdout)}
    assert {"policy", "on-topic", "short"} <= set(listed)
    assert listed["policy"]["entry_point"] == "tracescore.scorers: policy = acme_scorers:cites_policy_id"
    assert (listed["policy"]["package"], listed["policy"]["package_version"]) == ("acme-scorers", "0.1.0")
    assert listed["on-topic"]["judged"] is True and listed["on-topic"]["options"] == []
    builtins = {n: s for n, s in listed.items() if n not in ENTRY_POINTS}
    assert set(builtins) == {"answer", "citations", "diagnosis", "grounding", "links", "numbers", "retrieval",
                             "semantic", "session", "stale", "surface", "trajectory"}  # fmt: skip
    for name, s in builtins.items():
        assert s["package"] == "tracescore" and s["entry_point"].startswith(f"tracescore.scorers: {name} = tracescore.")


def test_scores_in_the_result_file_the_store_report_and_gate(site: Path, tmp_path: Path, traces: Path) -> None:
    done = cli(site, "score", str(traces), "--out", "out.jsonl", "--store", "s.db", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = _lines(tmp_path / "out.jsonl")
    assert lines["tr-0000"]["scores"][POLICY] is True and lines["tr-0001"]["scores"][POLICY] is False
    assert lines["tr-0002"]["missing"][POLICY] == "no policy id asked for"
    # the raising scorer: absent there with its error, counted per scorer in the summary; the run went on
    assert lines["tr-0001"]["missing"]["answer.short"] == "scorer error: ValueError: cannot read this answer"
    assert lines["tr-0000"]["scores"]["answer.short"] in (True, False)
    assert json.loads(done.stdout)["scorer_errors"] == {"short": 1}
    # the judged scorer without a key: absent, not computed
    assert lines["tr-0000"]["missing"]["answer.on_topic"] == "no judge configured"
    with sqlite3.connect(tmp_path / "s.db") as db:
        stored = dict(db.execute("SELECT trace_id, value FROM scores WHERE name = ?", (POLICY,)).fetchall())
    assert stored["tr-0000"] == 1.0 and stored["tr-0001"] == 0.0
    report = cli(site, "report", "out.jsonl", "--format", "json", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert POLICY in report.stdout and "answer.short" in report.stdout
    failing = cli(site, "gate", "out.jsonl", "--min", f"{POLICY}=1", "--format", "json", cwd=tmp_path)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    rule = next(r for r in json.loads(failing.stdout)["rules"] if r["subject"] == POLICY)
    assert rule["observed"] == 0.5 and rule["verdict"] == "fail" and "over 2 traces (2 absent)" in rule["message"]
    # against a baseline the direction is the declaration's (better="higher"): down is a regression, up is not
    line = lines["tr-0000"]
    for name, values in {"all.jsonl": [True] * 10, "half.jsonl": [True, False] * 5}.items():
        copies = [line | {"trace_id": f"c{i}", "scores": line["scores"] | {POLICY: v}} for i, v in enumerate(values)]
        (tmp_path / name).write_text("".join(json.dumps(c) + "\n" for c in copies), encoding="utf-8")
    verdicts = {}
    for new, old in (("half.jsonl", "all.jsonl"), ("all.jsonl", "half.jsonl")):
        gated = cli(site, "gate", new, "--baseline", old, "--format", "json", cwd=tmp_path)
        verdicts[new] = next(r["verdict"] for r in json.loads(gated.stdout)["rules"]
                             if r["rule"] == "regression" and r["subject"] == POLICY)  # fmt: skip
    assert verdicts == {"half.jsonl": "fail", "all.jsonl": "pass"}


def test_written_back_to_both_platforms_with_configs_from_the_declaration(
    site: Path, tmp_path: Path
) -> None:
    samples = _samples()
    with FakeLangfuse() as langfuse, FakeLangSmith() as langsmith:
        for sample in samples:
            langfuse.add_trace(*_langfuse_trace(sample))
        seed(langsmith, samples)
        lf_env, ls_env = env_for(langfuse), {"LANGSMITH_API_KEY": "k", "LANGSMITH_ENDPOINT": langsmith.url}
        lf = cli(site, "score", "--source", "langfuse", *WINDOW, "--store", "lf.db", "-q", cwd=tmp_path, env=lf_env)
        ls = cli(site, "score", "--source", "langsmith", "--project", "search-agent", *WINDOW, "--store", "ls.db",
                 "-q", cwd=tmp_path, env=ls_env)  # fmt: skip
        assert lf.returncode == 0 and ls.returncode == 0, lf.stderr + ls.stderr
        on_langfuse = {s["traceId"]: s for s in langfuse.scores.values() if s["name"] == POLICY}
        assert {t: s["value"] for t, s in on_langfuse.items()} == {"tr-0000": 1, "tr-0001": 0}
        assert {s["dataType"] for s in on_langfuse.values()} == {"BOOLEAN"}
        config = next(c for c in langfuse.score_configs if c["name"] == POLICY)
        assert config["dataType"] == "BOOLEAN" and {s["configId"] for s in on_langfuse.values()} == {config["id"]}
        assert not any(s["name"] == "answer.short" and s["traceId"] == "tr-0001" for s in langfuse.scores.values())
        on_langsmith = [f for f in langsmith.feedback.values() if f["key"] == POLICY]
        assert sorted(f["score"] for f in on_langsmith) == [0, 1]
        assert langsmith.feedback_configs[POLICY]["feedback_config"] == {"type": "continuous", "min": 0.0, "max": 1.0}

        # a re-run writes nothing new: the same ids (upserts), no second config; a scheduled `run` over the same
        # window, and `backfill` of it, score nothing again and send nothing
        before = {i: (s["name"], s["value"]) for i, s in langfuse.scores.items()}
        configs = len(langfuse.score_configs)
        again = cli(site, "score", "--source", "langfuse", *WINDOW, "--store", "lf.db", "-q", cwd=tmp_path,
                    env=lf_env)  # fmt: skip
        assert again.returncode == 0, again.stderr
        assert {i: (s["name"], s["value"]) for i, s in langfuse.scores.items()} == before
        assert len(langfuse.score_configs) == configs
        job = tmp_path / "job.toml"
        job.write_text(f'[source]\nkind = "langfuse"\n\n[job]\nstore = "{tmp_path / "job.db"}"\n', encoding="utf-8")
        first = cli(site, "run", "--config", str(job), "--since", "2026-11-01T00:00:00Z", "-q", "--format", "json",
                    cwd=tmp_path, env=lf_env)  # fmt: skip
        assert first.returncode == 0, first.stderr
        assert json.loads(first.stdout)["scored"] == len(samples)
        posts = len(langfuse.requests_to("/api/public/scores", "POST"))
        rerun = cli(site, "run", "--config", str(job), "--since", "2026-11-01T00:00:00Z", "-q", "--format", "json",
                    cwd=tmp_path, env=lf_env)  # fmt: skip
        assert rerun.returncode == 0, rerun.stderr
        assert json.loads(rerun.stdout)["scores_written"] == 0
        assert len(langfuse.requests_to("/api/public/scores", "POST")) == posts
        assert {i: (s["name"], s["value"]) for i, s in langfuse.scores.items()} == before
        # a backfill of the window in a fresh store rebuilds the plugin's scorers from the registry as `run` does:
        # the same scores, under the same ids, so nothing new lands; its summary counts the plugin's scores
        backfill_job = tmp_path / "backfill.toml"
        backfill_job.write_text(f'[source]\nkind = "langfuse"\n\n[job]\nstore = "{tmp_path / "bf.db"}"\n',
                                encoding="utf-8")  # fmt: skip
        backfill = cli(site, "backfill", "--config", str(backfill_job), *WINDOW, "-q", "--format", "json",
                       cwd=tmp_path, env=lf_env)  # fmt: skip
        assert backfill.returncode == 0, backfill.stderr
        assert json.loads(backfill.stdout)["scored"] == len(samples)
        with sqlite3.connect(tmp_path / "bf.db") as db:
            backfilled = dict(db.execute("SELECT trace_id, value FROM scores WHERE name = ?", (POLICY,)).fetchall())
        assert backfilled == {"tr-0000": 1.0, "tr-0001": 0.0, "tr-0002": None, "tr-0003": None}  # 2, 3: absent
        assert {i: (s["name"], s["value"]) for i, s in langfuse.scores.items()} == before
        ls_again = cli(site, "score", "--source", "langsmith", "--project", "search-agent", *WINDOW, "--store",
                       "ls.db", "-q", cwd=tmp_path, env=ls_env)  # fmt: skip
        assert ls_again.returncode == 0, ls_again.stderr
        assert sorted(f["score"] for f in langsmith.feedback.values() if f["key"] == POLICY) == [0, 1]
        assert langsmith.duplicates() == []

        # the option narrowed: tr-0001 now asks for no policy id the pattern knows ("does not apply": its earlier
        # score is removed); the raising scorer's earlier scores stay (not computed)
        (tmp_path / "tracescore.toml").write_text('[scorers.policy]\npattern = "POL-1\\\\d{3}"\n', encoding="utf-8")
        narrowed = cli(site, "score", "--source", "langfuse", *WINDOW, "--store", "lf.db", "-q", cwd=tmp_path,
                       env=lf_env)  # fmt: skip
        assert narrowed.returncode == 0, narrowed.stderr
        kept = {(s["traceId"], s["name"]) for s in langfuse.scores.values()}
        assert ("tr-0000", POLICY) in kept and ("tr-0001", POLICY) not in kept


def test_a_judged_plugin_gets_the_runs_judge_and_its_cache(site: Path, tmp_path: Path, traces: Path) -> None:
    with FakeAnthropic() as fake:
        env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake.url}
        first = cli(site, "score", str(traces), "--out", "a.jsonl", "--store", "j.db", "-q", cwd=tmp_path, env=env)
        asked = [r for r in fake.messages() if "addresses the question" in json.dumps(r.json()["system"])]
        second = cli(site, "score", str(traces), "--out", "b.jsonl", "--store", "j.db", "-q", cwd=tmp_path, env=env)
        asked_again = [r for r in fake.messages() if "addresses the question" in json.dumps(r.json()["system"])]
    assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
    assert len(asked) == 4 and len(asked_again) == 4  # the re-run's verdicts came from the run's cache
    for name in ("a.jsonl", "b.jsonl"):
        line = _lines(tmp_path / name)["tr-0000"]
        assert line["scores"]["answer.on_topic"] is False  # the fake judge's verdict
        assert line["comments"]["answer.on_topic"] == "fake: not the same answer"


BROKEN = {
    "bad option": (EXAMPLE, {"policy": "acme_scorers:cites_policy_id"}, '[scorers.policy]\npattern = 3\n',
                   "bad value for [scorers.policy] pattern: Input should be a valid string, got 3; scorer 'policy'"
                   " (acme-scorers 0.1.0) accepts: pattern (str"),
    "name outside its stage": (EXAMPLE.replace(f'ScoreSpec("{POLICY}"', 'ScoreSpec("retrieval.cites_policy_id"'),
                               {"policy": "acme_scorers:cites_policy_id"}, "",
                               "scorer entry point 'policy' (acme-scorers 0.1.0): score 'retrieval.cites_policy_id'"
                               " is outside its stage 'answer'"),
    "duplicate name": (EXAMPLE.replace(f'ScoreSpec("{POLICY}"', 'ScoreSpec("answer.correct"'),
                       {"policy": "acme_scorers:cites_policy_id"}, "",
                       "score 'answer.correct' is declared twice: by scorer entry point 'answer' (tracescore "),
    "import error": ("import not_a_module_anywhere\n" + EXAMPLE, {"policy": "acme_scorers:cites_policy_id"}, "",
                     "scorer entry point 'policy' = 'acme_scorers:cites_policy_id' (acme-scorers 0.1.0) cannot be"
                     " imported: ModuleNotFoundError: No module named 'not_a_module_anywhere'"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BROKEN))
def test_the_registry_refuses_before_any_work(tmp_path: Path, traces: Path, case: str) -> None:
    source, entry_points, toml, said = BROKEN[case]
    site = pip_install(_package(tmp_path / "project", textwrap.dedent(source), entry_points), tmp_path / "site")
    if toml:
        (tmp_path / "tracescore.toml").write_text(toml, encoding="utf-8")
    done = cli(site, "score", str(traces), "--out", "out.jsonl", "--store", "s.db", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert said in done.stderr and done.stderr.strip().count("\n") == 0, done.stderr
    assert not (tmp_path / "out.jsonl").exists() and not (tmp_path / "s.db").exists()  # before any work


@pytest.mark.ray
def test_scored_under_ray_as_in_one_process(site: Path, tmp_path: Path, traces: Path) -> None:
    """``--engine ray`` on a local cluster the command starts (its workers inherit the command's PYTHONPATH, so the
    plugin is importable there, as it must be installed on a remote cluster's workers): each worker rebuilds the
    scorers from the registry, the plugin's among them, and its scores equal the one-process run's."""
    pytest.importorskip("ray")
    folder = tmp_path / "shards"
    folder.mkdir()
    rows = traces.read_text(encoding="utf-8").splitlines(keepends=True)
    for n in range(2):
        (folder / f"part-{n}.jsonl").write_text("".join(rows[n::2]), encoding="utf-8")
    local = cli(site, "score", str(traces), "--out", "local.jsonl", "--store", "l.db", "-q", cwd=tmp_path)
    assert local.returncode == 0, local.stderr
    on_ray = cli(site, "score", str(folder), "--engine", "ray", "--out", "ray-out", "--store", "r.db", "-q",
                 cwd=tmp_path)  # no RAY_ADDRESS: the command starts its own local cluster
    assert on_ray.returncode == 0, on_ray.stderr
    from tracescore.sinks.parquet import read_parquet_results

    got = {line["trace_id"]: line for line in read_parquet_results(str(tmp_path / "ray-out" / "results"))}
    assert set(got) == {"tr-0000", "tr-0001", "tr-0002", "tr-0003"}
    expected = _lines(tmp_path / "local.jsonl")
    for trace_id, line in got.items():
        for name in (POLICY, "answer.short"):
            assert line["scores"].get(name) == expected[trace_id]["scores"].get(name), (trace_id, name)
            assert line["missing"].get(name) == expected[trace_id]["missing"].get(name), (trace_id, name)

