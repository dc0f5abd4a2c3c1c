"""A judged criterion declared in ``tracescore.toml`` (``[[criteria]]``, #46): a real ``tracescore score`` with the
real ``anthropic`` SDK against the loopback fake. Its rubric text is what the judge is asked; a quote not found in
the evidence is not support; a re-run answers from the store's cache (0 requests); a budget stops it between
traces; its verdicts are sampled into the calibration queue and measured, and its score then carries its own kappa.
A bad criterion is exit 2 naming the key."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.anthropic import FakeAnthropic
from tracescore import registry
from tracescore.calibrate.labels import Label, add_labels, latest_calibration, measure_and_record
from tracescore.calibrate.sampling import record_sample, sample, verdict_candidates
from tracescore.catalog import entry
from tracescore.cli import main
from tracescore.config import fingerprint, load_config
from tracescore.engine.estimate import estimate_trace
from tracescore.engine.plan import ScorerPlan
from tracescore.engine.requests import criteria_requests, judge_requests
from tracescore.judge.anthropic import DEFAULT_MODEL
from tracescore.scorers.criteria import QUOTE_NOT_FOUND, Criterion
from tracescore.store.db import Store
from tracescore.trace import Trace

SAMPLES = Path(__file__).resolve().parents[2] / "cookbook" / "data" / "traces.jsonl"
NAME = "answer.policy_compliant"
RUBRIC = (
    "The answer follows Acme's support policy: it states the return window the policy gives, in days, and promises"
    " nothing (refunds, exceptions) that the policy does not."
)
NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
BODY = re.compile(r'<document id="(D\d+)"[^>]*>\n(.*?)\n</document>', re.S)
ANSWER = re.compile(r"<answer>(.*?)</answer>", re.S)


def _traces() -> list[dict[str, Any]]:
    return [json.loads(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines()][:12]


def _criterion(body: dict[str, Any]) -> bool:
    return f'<criterion name="{NAME}">' in "".join(b["text"] for b in body["system"])


def _judged(quote: Callable[[str, str, dict[str, str]], tuple[str, str]] | None = None) -> Any:
    """The fake's reply to a criterion request: compliant when the answer names a number of days; the quote is the
    first line of the first document, else the answer's first 40 characters (``quote`` may change it)."""

    def tamper(output: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        if not _criterion(body):
            return output
        content = body["messages"][0]["content"][-1]["text"]
        answer = ANSWER.search(content).group(1)  # type: ignore[union-attr]
        docs = {d: text.splitlines()[0] for d, text in BODY.findall(content)}
        source, text = next(iter(docs.items())) if docs else ("answer", answer[:40])
        if quote is not None:
            source, text = quote(source, text, docs)
        verdict = re.search(r"\d+\s+days", answer) is not None
        return {"verdict": verdict, "source": source, "quote": text, "reason": "fake: the window in days"}

    return tamper


@pytest.fixture(autouse=True)
def _no_criteria_after() -> Iterator[None]:
    """Loading a config puts its criteria into this process's registry: later tests get it without them."""
    yield
    registry.load(made=())


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic(tamper=_judged()) as server:
        yield server


def _project(tmp_path: Path, criteria: str | None = None) -> Path:
    (tmp_path / "criteria").mkdir(exist_ok=True)
    (tmp_path / "criteria" / "policy.md").write_text(RUBRIC + "\n", encoding="utf-8")
    (tmp_path / "traces.jsonl").write_text("".join(json.dumps(t) + "\n" for t in _traces()), encoding="utf-8")
    criteria = criteria if criteria is not None else (
        f'[[criteria]]\nname = "{NAME}"\nrubric = "criteria/policy.md"\nscale = "boolean"\nquote = true\n'
    )
    config = tmp_path / "tracescore.toml"
    config.write_text(
        '[scoring]\ndisable = ["grounding", "semantic", "surface"]\n\n[job]\njudge_concurrency = 1\n\n' + criteria,
        encoding="utf-8",
    )
    return config


def _score(fake: FakeAnthropic, config: Path, store: Path, *extra: str) -> Any:
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
    args = ["score", str(config.parent / "traces.jsonl"), "--store", str(store), "-q", "--config", str(config), *extra]
    return CliRunner().invoke(main, args, env=env)


def _rows(store_path: Path) -> dict[str, tuple[Any, ...]]:
    """The criterion's stored scores of the latest run: trace → (value, reason, comment, metadata)."""
    with Store(store_path) as store:
        run_id = store.runs()[-1]["id"]
        rows = store.query("SELECT trace_id, value, reason, comment, metadata FROM scores WHERE run_id = ? AND"
                           " name = ?", (run_id, NAME))  # fmt: skip
    return {tid: (value, reason, comment, json.loads(meta or "{}")) for tid, value, reason, comment, meta in rows}


def _answered() -> list[str]:
    return [t["id"] for t in _traces() if (t.get("answer") or "").strip()]


def test_a_criterion_is_judged_with_its_rubric_its_quote_verified_and_a_rerun_is_cached(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    config = _project(tmp_path)
    result = _score(fake, config, tmp_path / "ts.db")
    assert result.exit_code == 0, result.output
    asked = [r.json() for r in fake.messages()]
    assert len(asked) == len(_answered()) and all(_criterion(b) for b in asked)  # one call per answered trace
    assert all(RUBRIC in "".join(b["system"][0]["text"].split("\n")) for b in asked)  # the team's words, as given
    version = load_config(config).criteria[0].version
    rows = _rows(tmp_path / "ts.db")
    assert set(rows) == {t["id"] for t in _traces()}
    judged = {tid: row for tid, row in rows.items() if row[1] is None}
    assert set(judged) == set(_answered())
    assert {row[0] for row in judged.values()} == {0.0, 1.0}  # both verdicts occur in the sample
    for _, _, _, meta in judged.values():
        assert meta["quote_check"] == "verified" and meta["rubric_version"] == version
        assert meta["verdict"] in ("true", "false") and meta["judge_usage"]["calls"] == 1
    assert any(meta["source"] == "policy-returns-v4" for *_, meta in judged.values())  # a document, by its name
    e = entry(NAME)
    assert e is not None and (e.kind, e.direction, e.judged, e.version) == ("BOOLEAN", 1, True, version)
    share = sum(row[0] for row in judged.values()) / len(judged)
    for limit, verdict in ((share - 0.05, "pass"), (share + 0.05, "warn")):  # the gate reads the declaration
        gated = CliRunner().invoke(main, ["gate", "run:latest", "--store", str(tmp_path / "ts.db"), "--config",
                                          str(config), "--min", f"{NAME}={limit:.3f}", "--format", "json"])  # fmt: skip
        rule = next(r for r in json.loads(gated.output)["rules"] if r["subject"] == NAME)
        assert (rule["verdict"], rule["observed"]) == (verdict, pytest.approx(share)), gated.output
        if verdict != "pass":  # a judged score: an uncalibrated judge may not fail the gate, its cases go to review
            assert "judge never calibrated" in rule["message"] and rule["cases"], rule

    before = len(fake.messages())
    again = _score(fake, config, tmp_path / "ts.db")
    assert again.exit_code == 0, again.output
    assert len(fake.messages()) == before  # 0 requests: every verdict from the store's cache
    cached = _rows(tmp_path / "ts.db")
    assert {t: r[0] for t, r in cached.items()} == {t: r[0] for t, r in rows.items()}
    assert all(r[3]["judge_usage"]["calls"] == 0 for r in cached.values() if r[1] is None)


def test_a_quote_not_verbatim_in_the_evidence_is_not_support(tmp_path: Path) -> None:
    made_up = "Refunds are always issued within 24 hours, no questions asked."

    def fabricate(source: str, text: str, docs: dict[str, str]) -> tuple[str, str]:
        return (source, made_up) if source != "answer" else (source, text)

    with FakeAnthropic(tamper=_judged(fabricate)) as fake:
        result = _score(fake, _project(tmp_path), tmp_path / "ts.db")
    assert result.exit_code == 0, result.output
    rows = _rows(tmp_path / "ts.db")
    unverified = {t: r for t, r in rows.items() if r[1] == QUOTE_NOT_FOUND}
    assert unverified, rows
    for value, _, comment, meta in unverified.values():
        assert value is None and made_up in comment and meta["quote_check"] == "not found"
    assert entry(NAME) is not None and QUOTE_NOT_FOUND in {r.text for r in entry(NAME).reasons}  # type: ignore[union-attr]
    # a verdict resting on a verbatim quote still counts: the check is per verdict
    verified = [r for r in rows.values() if r[1] is None]
    assert all(r[3]["quote_check"] == "verified" for r in verified)
    assert len(unverified) + len(verified) == len(_answered())


def test_a_quote_from_another_document_than_the_one_named_is_not_support(tmp_path: Path) -> None:
    def elsewhere(source: str, text: str, docs: dict[str, str]) -> tuple[str, str]:
        others = [d for d in docs if d != source and docs[d] not in docs[source]]
        return (source, docs[others[0]]) if others else (source, text)

    with FakeAnthropic(tamper=_judged(elsewhere)) as fake:
        result = _score(fake, _project(tmp_path), tmp_path / "ts.db")
    assert result.exit_code == 0, result.output
    assert any(r[1] == QUOTE_NOT_FOUND for r in _rows(tmp_path / "ts.db").values())


def test_the_budget_stops_the_criterion_between_traces(fake: FakeAnthropic, tmp_path: Path) -> None:
    config = _project(tmp_path)
    assert _score(fake, config, tmp_path / "free.db").exit_code == 0
    free = _rows(tmp_path / "free.db")
    costs = [free[t][3]["judge_usage"]["cost_usd"] for t in _answered()]
    limit = costs[0] + costs[1] + costs[2] / 2  # room for three calls: the third starts under the limit
    before = len(fake.messages())
    result = _score(fake, config, tmp_path / "budget.db", "--max-cost", f"{limit:.8f}")
    assert result.exit_code == 0, result.output
    assert len(fake.messages()) - before == 3  # the store is new: no cache, three calls made
    rows = _rows(tmp_path / "budget.db")
    assert [t for t in _answered() if rows[t][1] is None] == _answered()[:3]
    assert all(rows[t][1].startswith("judge budget spent") for t in _answered()[3:])


def test_criterion_verdicts_are_sampled_for_calibration_and_carry_their_own_kappa(
    fake: FakeAnthropic, tmp_path: Path
) -> None:
    config = _project(tmp_path)
    db = tmp_path / "ts.db"
    assert _score(fake, config, db).exit_code == 0
    criterion = load_config(config).criteria[0]
    with Store(db) as store:
        run_id = store.runs()[-1]["id"]
        pool = verdict_candidates(store, run_id, NAME, criterion.rubric)
        assert len(pool) == len(_answered())
        drawn = sample(pool, n=len(pool), seed=3)
        assert record_sample(store, drawn, now=NOW) == len(pool)
        queued = store.query("SELECT item_id, judge_model, rubric_version, judge, item FROM calibration_items")
        assert {json.loads(item)["claim"] for *_, item in queued} == {criterion.rubric}  # the reviewer's question
        assert all(rv == criterion.version for _, _, rv, _, _ in queued)
        values = {item_id: json.loads(judge)["values"][NAME] for item_id, _, _, judge, _ in queued}
        assert set(values.values()) == {"true", "false"}
        # a reviewer who agrees on every item but one
        flipped = sorted(values)[0]
        labels = [Label(i, NAME, ("false" if v == "true" else "true") if i == flipped else v, "ann",
                        NOW + timedelta(minutes=n)) for n, (i, v) in enumerate(sorted(values.items()))]  # fmt: skip
        assert add_labels(store, labels, now=NOW) == len(values)
        model = queued[0][1]
        calibration = measure_and_record(store, judge_model=model, rubric_version=criterion.version, label=NAME,
                                         now=NOW)  # fmt: skip
        assert calibration.n == len(values) and calibration.kappa is not None and 0 < calibration.kappa < 1
        assert latest_calibration(store, model, criterion.version, NAME) == calibration
    before = len(fake.messages())
    assert _score(fake, config, db).exit_code == 0
    assert len(fake.messages()) == before
    carried = [r[3]["agreement"] for r in _rows(db).values() if r[1] is None]
    assert carried and all(a["kappa"] == calibration.kappa and a["calibration_id"] == calibration.calibration_id
                           for a in carried)  # fmt: skip
    # another rubric is another criterion version: the calibration of the first is not carried over
    (tmp_path / "criteria" / "policy.md").write_text(RUBRIC + " Be strict.\n", encoding="utf-8")
    assert _score(fake, config, db).exit_code == 0
    assert all("agreement" not in r[3] for r in _rows(db).values())


def test_the_version_follows_the_rubric_text_and_the_scale(tmp_path: Path) -> None:
    base = Criterion(NAME, RUBRIC, "boolean")
    assert base.version == Criterion(NAME, RUBRIC, "boolean", rubric_path="elsewhere.md").version
    versions = {base.version, Criterion(NAME, RUBRIC + " Be strict.", "boolean").version,
                Criterion(NAME, RUBRIC, "1-5").version, Criterion(NAME, RUBRIC, ("ok", "not ok")).version,
                Criterion(NAME, RUBRIC, "boolean", quote=False).version}  # fmt: skip
    assert len(versions) == 5
    config = _project(tmp_path)
    first = fingerprint(load_config(config))
    (tmp_path / "criteria" / "policy.md").write_text(RUBRIC + " Be strict.\n", encoding="utf-8")
    assert fingerprint(load_config(config)) != first


@pytest.mark.parametrize(
    ("scale", "kind", "low", "high", "categories", "direction"),
    [('"1-5"', "NUMERIC", 1.0, 5.0, (), 1), ('["compliant", "partly", "violates"]', "CATEGORICAL", None, None,
                                             ("compliant", "partly", "violates"), 0)],
)  # fmt: skip
def test_each_scale_declares_its_score(
    tmp_path: Path, scale: str, kind: str, low: float | None, high: float | None, categories: tuple[str, ...],
    direction: int,
) -> None:
    crit = f'[[criteria]]\nname = "{NAME}"\nrubric = "criteria/policy.md"\nscale = {scale}\n'
    load_config(_project(tmp_path, crit))
    e = entry(NAME)
    assert e is not None and (e.kind, e.categories, e.direction) == (kind, categories, direction)
    if low is not None:
        assert (e.low, e.high) == (low, high)


def test_a_graded_criterion_is_judged_on_its_scale(tmp_path: Path) -> None:
    def graded(output: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
        if not _criterion(body):
            return output
        answer = ANSWER.search(body["messages"][0]["content"][-1]["text"]).group(1)  # type: ignore[union-attr]
        return {"verdict": 4, "reason": "fake: mostly"} | ({"source": "answer", "quote": answer[:40]})

    crit = f'[[criteria]]\nname = "{NAME}"\nrubric = "criteria/policy.md"\nscale = "1-5"\n'
    with FakeAnthropic(tamper=graded) as fake:
        result = _score(fake, _project(tmp_path, crit), tmp_path / "ts.db")
        schema = fake.messages()[0].json()["output_config"]["format"]["schema"]
    assert result.exit_code == 0, result.output
    assert schema["properties"]["verdict"]["enum"] == [1, 2, 3, 4, 5]
    assert {r[0] for r in _rows(tmp_path / "ts.db").values() if r[1] is None} == {4.0}


@pytest.mark.parametrize(
    ("table", "said"),
    [
        ('name = "policy_compliant"\nrubric = "criteria/policy.md"\nscale = "boolean"',
         "key 'name' = 'policy_compliant' is not '<stage>.<criterion>'"),
        ('name = "Answer.Policy"\nrubric = "criteria/policy.md"\nscale = "boolean"', "key 'name' = 'Answer.Policy'"),
        ('name = "anwser.policy"\nrubric = "criteria/policy.md"\nscale = "boolean"', "unknown stage 'anwser'"),
        ('name = "answer.policy"\nrubric = "criteria/missing.md"\nscale = "boolean"',
         "key 'rubric' = 'criteria/missing.md': cannot read"),
        ('name = "answer.policy"\nscale = "boolean"', "missing key 'rubric'"),
        ('name = "answer.policy"\nrubric = "criteria/policy.md"\nscale = "1-10"', "key 'scale' = '1-10'"),
        ('name = "answer.policy"\nrubric = "criteria/policy.md"\nscale = ["only"]', "key 'scale' = ['only']"),
        ('name = "answer.policy"\nrubric = "criteria/policy.md"\nscale = "boolean"\nquote = "yes"', "key 'quote'"),
        ('name = "answer.policy"\nrubric = "criteria/policy.md"\nscale = "boolean"\nrubrik = "x"',
         "unknown key 'rubrik'"),
        ('name = "answer.correct"\nrubric = "criteria/policy.md"\nscale = "boolean"',
         "score 'answer.correct' is declared twice"),
    ],
)  # fmt: skip
def test_a_bad_criterion_is_exit_2_naming_the_key(fake: FakeAnthropic, tmp_path: Path, table: str, said: str) -> None:
    config = _project(tmp_path, f"[[criteria]]\n{table}\n")
    result = _score(fake, config, tmp_path / "ts.db")
    assert result.exit_code == 2, result.output
    assert said in result.output, result.output
    assert str(config) in result.output or "declared twice" in said  # the registry's line names both owners
    assert "tracescore.toml [[criteria]]" in result.output or "declared twice" not in said
    assert fake.messages() == []  # stopped before any work


def test_the_batch_prefill_builds_the_requests_the_scorer_sends_redacted(fake: FakeAnthropic, tmp_path: Path) -> None:
    """``backfill --judge-batch`` submits ``judge_requests``: the criterion's are among them, built from the trace as
    ``[judge] redact`` leaves it, under the very keys the direct judge cached (a batch reply lands where it looks)."""
    email = "jane.doe@example.com"
    config = _project(tmp_path)
    config.write_text(config.read_text(encoding="utf-8") + '\n[judge]\nredact = ["email"]\n', encoding="utf-8")
    traces = _traces()
    for t in traces:
        t["answer"] = f"{t['answer']} Questions? Write to {email}." if (t.get("answer") or "").strip() else t["answer"]
    (tmp_path / "traces.jsonl").write_text("".join(json.dumps(t) + "\n" for t in traces), encoding="utf-8")
    result = _score(fake, config, tmp_path / "ts.db")
    assert result.exit_code == 0, result.output
    sent = [json.dumps(r.json()) for r in fake.messages()]
    assert len(sent) == len(_answered()) and not any(email in body for body in sent)
    assert all("<email-1>" in body for body in sent)
    loaded = load_config(config)
    plan = ScorerPlan(loaded.scorers(), criteria=(str(config), loaded.criteria))
    redact = loaded.redactor
    assert redact is not None
    models = [Trace.model_validate(t) for t in traces]
    ours = {r.key(DEFAULT_MODEL) for t in models for r in criteria_requests(redact.trace(t), plan)}
    with Store(tmp_path / "ts.db") as store:
        cached = {key for (key,) in store.query("SELECT key FROM judge_cache")}
    assert ours == cached and len(cached) == len(_answered())
    batched = {r.key(DEFAULT_MODEL) for t in models for r in judge_requests(t, redact=redact, plan=plan)}
    assert cached <= batched
    unplanned = {r.key(DEFAULT_MODEL) for t in models for r in judge_requests(t, redact=redact)}
    assert not cached & unplanned  # the criteria are the plan's: a plan without them batches none
    answered = [t for t in models if t.answer.strip()]
    assert all(estimate_trace(t, DEFAULT_MODEL, plan=plan).stages[NAME] == 1 for t in answered)  # the dry run


def test_the_calibration_loop_from_the_command_line(fake: FakeAnthropic, tmp_path: Path) -> None:
    """``calibrate sample --criterion`` writes a blind sheet with the criterion's own label column, ``pull`` reads the
    filled sheet, ``measure --config`` records the criterion's calibration, and the next run's scores carry it."""
    import csv

    config, db, sheet = _project(tmp_path), tmp_path / "ts.db", tmp_path / "labels.csv"
    assert _score(fake, config, db).exit_code == 0
    runner = CliRunner()
    common = ["--store", str(db), "--config", str(config)]
    refused = runner.invoke(main, ["calibrate", "sample", "--to", str(sheet), "--criterion", "answer.nope", *common])
    assert refused.exit_code == 2 and "declared: answer.policy_compliant" in refused.output, refused.output
    drawn = runner.invoke(main, ["calibrate", "sample", "--to", str(sheet), "--criterion", NAME, "--n", "20",
                                 "--seed", "2", *common])  # fmt: skip
    assert drawn.exit_code == 0, drawn.output
    with sheet.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(_answered()) and all(r[NAME] == "" for r in rows)  # blind: no verdict on the sheet
    assert {r["claim"] for r in rows} == {RUBRIC + "\n"}
    with Store(db) as store:
        judged = {i: json.loads(j)["values"][NAME] for i, j in store.query("SELECT item_id, judge FROM"
                                                                          " calibration_items")}  # fmt: skip
    flipped = sorted(judged)[0]
    for r in rows:
        says_yes = (judged[r["item_id"]] == "true") != (r["item_id"] == flipped)  # agrees on all items but one
        r[NAME], r["reviewer"] = "yes" if says_yes else "no", "ann"
    with sheet.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    pulled = runner.invoke(main, ["calibrate", "pull", "--from", str(sheet), "--store", str(db)])
    assert pulled.exit_code == 0 and f"{len(rows)} new" in pulled.output, pulled.output
    measured = runner.invoke(main, ["calibrate", "measure", *common, "--format", "json"])
    assert measured.exit_code == 0, measured.output
    found = [c for c in json.loads(measured.output)["calibrations"] if c["figures"]["label"] == NAME]
    version = load_config(config).criteria[0].version
    assert len(found) == 1 and found[0]["rubric_version"] == version
    kappa = found[0]["agreement"]["kappa"]
    assert 0 < kappa < 1
    assert _score(fake, config, db).exit_code == 0
    assert {r[3]["agreement"]["kappa"] for r in _rows(db).values() if r[1] is None} == {kappa}
    # the gate weighs the criterion's judge by this calibration (too few items yet to let it fail a gate)
    gated = runner.invoke(main, ["gate", "run:latest", *common, "--min", f"{NAME}=0.99", "--format", "json"])
    rule = next(r for r in json.loads(gated.output)["rules"] if r["subject"] == NAME)
    assert rule["verdict"] == "warn" and f"rubric {version}: kappa {kappa:.2f}" in rule["message"], rule
    assert "fewer than 30 labelled items" in rule["message"]


def test_a_process_that_loaded_no_config_makes_the_criteria_from_the_plan(tmp_path: Path) -> None:
    """A Ray task or a spawned worker gets the pickled plan, not the config: it makes the criteria from the plan's
    values, and its registry and catalog hold them."""
    import pickle
    import subprocess
    import sys

    config = _project(tmp_path)
    loaded = load_config(config)
    plan = ScorerPlan(loaded.scorers(), criteria=(str(config), loaded.criteria))
    child = (
        "import pickle, sys\n"
        "from tracescore import catalog\n"
        "plan = pickle.loads(sys.stdin.buffer.read())\n"
        f"assert catalog.entry({NAME!r}) is None\n"
        "names = [getattr(s, '__name__', '') for s in plan.scorers(None)]\n"
        f"e = catalog.entry({NAME!r})\n"
        "print(names.count(e.scorer), e.kind, e.version)\n"
    )
    src = str(Path(__file__).resolve().parents[2] / "src")
    out = subprocess.run([sys.executable, "-c", child], input=pickle.dumps(plan), capture_output=True, check=True,
                         env={"PYTHONPATH": src, "PATH": "/usr/bin:/bin"}, timeout=120)  # fmt: skip
    assert out.stdout.decode().split() == ["1", "BOOLEAN", loaded.criteria[0].version]


def test_a_criterion_is_reported_under_its_stage_by_a_process_that_loaded_no_config(
    fake: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``report`` reads no config: a criterion's score read back from a results file or the store is reported under
    the stage its name starts with (as every scorer's names do), in json and on the terminal, not under "other"."""
    config, store, out = _project(tmp_path), tmp_path / "ts.db", tmp_path / "results.jsonl"
    scored = _score(fake, config, store, "--out", str(out))
    assert scored.exit_code == 0, scored.output
    registry.load(made=())  # a later command in a new process: no [[criteria]] in its registry
    assert entry(NAME) is None
    monkeypatch.chdir(tmp_path / "criteria")  # no tracescore.toml here
    for spec in (str(out), "run:latest"):
        made = CliRunner().invoke(main, ["report", spec, "--store", str(store), "--format", "json"])
        assert made.exit_code == 0, made.output
        stat = json.loads(made.output)["overall"]["scores"][NAME]
        assert stat["stage"] == "answer" and stat["present"] == len(_answered()), stat
        shown = CliRunner().invoke(main, ["report", spec, "--store", str(store)], env={"COLUMNS": "200"})
        assert shown.exit_code == 0, shown.output
        table = [row[:2] for row in (line.strip("│ ").split("│") for line in shown.output.splitlines())
                 if len(row) == 5 and "." in row[1]]  # fmt: skip
        rows = [[cell.strip() for cell in row] for row in table]
        assert ["answer", NAME] in rows, shown.output
        answers = [name for stage, name in rows if stage == "answer"]
        assert answers == sorted(answers) and rows[-1][0] == "answer", shown.output  # its place: in the stage's rows


def test_dashboard_score_takes_a_criterion_of_the_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``dashboard`` loads the config (--config, else ./tracescore.toml) as ``score`` does: its criteria are scores
    of the catalog, so ``--score`` adds one as a widget of its kind."""
    config = _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    for given in (["--config", str(config)], []):
        registry.load(made=())
        made = CliRunner().invoke(main, ["dashboard", "--to", "langfuse", "--dry-run", "--score", NAME, *given])
        assert made.exit_code == 0, made.output
        assert f"widget '{NAME}: daily mean by trace name' (LINE_TIME_SERIES of scores-boolean" in made.output
    monkeypatch.chdir(tmp_path / "criteria")  # no config: no criterion
    registry.load(made=())
    refused = CliRunner().invoke(main, ["dashboard", "--to", "langfuse", "--dry-run", "--score", NAME])
    assert refused.exit_code == 2 and f"--score {NAME!r} is no score of the catalog" in refused.output
