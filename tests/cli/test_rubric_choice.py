"""``[judge] rubric``, ``surface_rubric`` and ``semantic_rubric``: a team's own rubric file is what the judge receives
(the real anthropic SDK against the loopback fake), its name and version are on every judged score, in the store and
in the calibration key; an invalid rubric file stops the run with exit 2, naming the file and the key."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.judge import QueueJudge
from tracescore.calibrate.labels import VERDICT_LABEL
from tracescore.catalog import entries
from tracescore.cli import main
from tracescore.config import load_config
from tracescore.engine.batch import judge_requests
from tracescore.engine.recipe import ScorerPlan
from tracescore.engine.setup import build_setup
from tracescore.store.db import Store
from tracescore.trace import Trace

SAMPLES = Path(__file__).resolve().parents[2] / "cookbook" / "data" / "traces.jsonl"
BUNDLED = Path(__file__).resolve().parents[2] / "scorers"
LABELS = {
    "grounding": ["supported", "partial", "contradicted", "unsupported"],
    "surface": ["supports", "contradicts", "neither"],
    "semantic": ["match", "no match"],
}
KEYS = {"grounding": "rubric", "surface": "surface_rubric", "semantic": "semantic_rubric"}
MARKER = {stage: f"TEAM-{stage.upper()}-RUBRIC-7Q: judge as our team does." for stage in LABELS}
STAGE_OF_SCHEMA = {"claims": "grounding", "labels": "surface", "match": "semantic"}


@pytest.fixture
def fake() -> Iterator[FakeAnthropic]:
    with FakeAnthropic() as server:
        yield server


def _rubric(path: Path, stage: str, **override: object) -> Path:
    data: dict[str, object] = {
        "name": f"{stage}-team",
        "version": f"{stage}-2",
        "labels": LABELS[stage],
        "system": MARKER[stage] + "\n" + (BUNDLED / f"{stage}.toml").read_text().split('system = """', 1)[1],
    }
    data.update(override)
    lines = []
    for key, value in data.items():
        if value is None:
            continue
        if key == "system":
            lines.append(f'system = """\n{str(value).removesuffix(chr(10)).removesuffix(chr(34) * 3)}"""')
        else:
            lines.append(f"{key} = {json.dumps(value)}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _config(tmp_path: Path, **rubrics: str) -> Path:
    config = tmp_path / "tracescore.toml"
    body = "".join(f"{key} = {json.dumps(value)}\n" for key, value in rubrics.items())
    config.write_text(f'[job]\nstore = "{tmp_path / "t.db"}"\n\n[judge]\n{body}', encoding="utf-8")
    return config


def _score(tmp_path: Path, config: Path, fake: FakeAnthropic | None, out: str = "results.jsonl") -> Result:
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url} if fake is not None else {}
    args = ["score", str(SAMPLES), "--config", str(config), "--store", str(tmp_path / "t.db")]
    return CliRunner().invoke(main, [*args, "--out", str(tmp_path / out)], env=env)


def _team_config(tmp_path: Path) -> Path:
    files = {KEYS[stage]: _rubric(tmp_path / f"{stage}-team.toml", stage).name for stage in LABELS}
    return _config(tmp_path, **files)  # relative paths: read beside the config file


def _judged_metadata(store: Store, run_id: str) -> dict[str, list[dict[str, object]]]:
    """Per judged stage, the stored metadata of each of its judged scores (values and absences alike)."""
    stage_of = {e.name: e.scorer for e in entries() if e.judged}
    out: dict[str, list[dict[str, object]]] = {}
    for name, metadata in store.query("SELECT name, metadata FROM scores WHERE run_id = ?", (run_id,)):
        if name in stage_of and metadata:
            meta = json.loads(metadata)
            if "judge_model" in meta:
                out.setdefault(stage_of[name], []).append(meta)
    return out


def test_each_judged_stage_sends_and_records_the_configured_rubric(fake: FakeAnthropic, tmp_path: Path) -> None:
    result = _score(tmp_path, _team_config(tmp_path), fake)
    assert result.exit_code == 0, result.output

    # what the judge received: every request of every stage carries that stage's team text, none the bundled one
    sent: dict[str, set[str]] = {}
    for request in fake.messages():
        body = request.json()
        schema = set(body["output_config"]["format"]["schema"].get("properties") or {})
        stage = STAGE_OF_SCHEMA[next(iter(schema & set(STAGE_OF_SCHEMA)))]
        sent.setdefault(stage, set()).add("".join(block["text"] for block in body["system"]))
    assert set(sent) == set(LABELS)
    for stage, systems in sent.items():
        assert all(s.startswith(MARKER[stage]) for s in systems), stage

    # every judged score of every stage records the rubric's name and version, in the store too
    with Store(tmp_path / "t.db") as store:
        (run,) = store.runs()
        judged = _judged_metadata(store, run["id"])
        assert set(judged) == set(LABELS)
        for stage, metas in judged.items():
            assert {(m["rubric"], m["rubric_version"]) for m in metas} == {(f"{stage}-team", f"{stage}-2")}
        lines = list(store.results(run["id"]))
    on_lines = {line["judge"]["rubric_version"] for line in lines if "model" in line.get("judge", {})}
    assert "grounding-2" in on_lines and on_lines <= {"grounding-2", "surface-2", "semantic-2"}

    # the calibration key: sampled items, the measured calibration and the agreement the next run carries
    sheet = tmp_path / "labels.csv"
    db = str(tmp_path / "t.db")
    sampled = CliRunner().invoke(main, ["calibrate", "sample", "--to", str(sheet), "--n", "20", "--store", db])
    assert sampled.exit_code == 0, sampled.output
    with Store(db) as store:
        assert {r[0] for r in store.query("SELECT DISTINCT rubric_version FROM calibration_items")} == {"grounding-2"}
        judge_values = {
            item: json.loads(judge)["values"][VERDICT_LABEL]
            for item, judge in store.query("SELECT item_id, judge FROM calibration_items")
        }
    with sheet.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:  # a reviewer who agrees with the judge
        row[VERDICT_LABEL], row["reviewer"] = judge_values[row["item_id"]], "ana"
    with sheet.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert CliRunner().invoke(main, ["calibrate", "pull", "--from", str(sheet), "--store", db]).exit_code == 0
    measured = CliRunner().invoke(main, ["calibrate", "measure", "--store", db])
    assert measured.exit_code == 0, measured.output
    with Store(db) as store:
        assert {r[0] for r in store.query("SELECT DISTINCT rubric_version FROM calibrations")} == {"grounding-2"}

    again = _score(tmp_path, _team_config(tmp_path), fake, out="again.jsonl")
    assert again.exit_code == 0, again.output
    carried = [json.loads(x)["judge"] for x in (tmp_path / "again.jsonl").read_text().splitlines()]
    assert any("agreement" in j for j in carried if "model" in j)  # the grounding-2 calibration is found

    bundled = _score(tmp_path, _config(tmp_path), fake, out="bundled.jsonl")  # the bundled rubric: not calibrated
    assert bundled.exit_code == 0, bundled.output
    plain = [json.loads(x).get("judge", {}) for x in (tmp_path / "bundled.jsonl").read_text().splitlines()]
    assert "grounding-1" in {j["rubric_version"] for j in plain if "model" in j}
    assert not any("agreement" in j for j in plain)


@pytest.mark.parametrize("stage", sorted(LABELS))
@pytest.mark.parametrize(
    ("override", "key", "says"),
    [
        ({"labels": None}, "labels", "missing key 'labels'"),
        ({"prompt": "be nice"}, "prompt", "unknown key 'prompt'"),
        ({"labels_extra": True}, "labels_extra", "unknown key 'labels_extra'"),
        ({"version": None}, "version", "missing key 'version'"),
        ({"labels": ["yes", "no"]}, "labels", "cannot map"),
    ],
)
def test_an_invalid_rubric_file_is_a_config_error_naming_file_and_key(
    tmp_path: Path, stage: str, override: dict[str, object], key: str, says: str
) -> None:
    bad = _rubric(tmp_path / "bad.toml", stage, **override)
    result = _score(tmp_path, _config(tmp_path, **{KEYS[stage]: "bad.toml"}), None)
    assert result.exit_code == 2, result.output
    assert str(bad) in result.output and f"'{key}'" in result.output and says in result.output
    assert f"[judge] {KEYS[stage]}" in result.output
    assert not (tmp_path / "results.jsonl").exists()


def test_a_rubric_missing_one_of_the_scorers_labels_is_refused(tmp_path: Path) -> None:
    _rubric(tmp_path / "bad.toml", "grounding", labels=["supported", "contradicted", "unsupported"])
    result = _score(tmp_path, _config(tmp_path, rubric="bad.toml"), None)
    assert result.exit_code == 2 and "key 'labels' has no label(s) 'partial'" in result.output


def test_a_missing_rubric_file_and_an_unknown_bundled_name_are_config_errors(tmp_path: Path) -> None:
    missing = _score(tmp_path, _config(tmp_path, semantic_rubric="nowhere/semantic.toml"), None)
    assert missing.exit_code == 2 and "nowhere/semantic.toml" in missing.output and "not found" in missing.output
    unknown = _score(tmp_path, _config(tmp_path, rubric="groundng"), None)
    assert unknown.exit_code == 2 and "unknown rubric 'groundng'" in unknown.output


def test_a_team_rubric_may_not_reuse_a_bundled_version_with_other_text(tmp_path: Path) -> None:
    _rubric(tmp_path / "copy.toml", "surface", name="surface", version="surface-1")
    result = _score(tmp_path, _config(tmp_path, surface_rubric="copy.toml"), None)
    assert result.exit_code == 2 and "'version'" in result.output and "its own version" in result.output


def test_two_stages_may_not_share_one_rubric_version(tmp_path: Path) -> None:
    _rubric(tmp_path / "s.toml", "surface", version="grounding-1")
    result = _score(tmp_path, _config(tmp_path, surface_rubric="s.toml"), None)
    assert result.exit_code == 2 and "[judge] surface_rubric" in result.output and "grounding-1" in result.output


def test_a_run_and_a_batch_backfill_build_the_configured_rubrics(tmp_path: Path) -> None:
    """``run``/``backfill`` take their scorers from ``build_setup``: the batch prefill and the dry-run estimate build
    the same requests as the scorers (same content keys), with the team's text."""
    setup = build_setup(load_config(_team_config(tmp_path)), kind="jsonl", path=str(SAMPLES), write_back=False)
    try:
        assert {stage: getattr(setup.rubrics, stage).version for stage in LABELS} == {
            stage: f"{stage}-2" for stage in LABELS
        }
        traces = [Trace.model_validate_json(line) for line in SAMPLES.read_text().splitlines()]
        requests = [r for t in traces for r in judge_requests(t, setup.rubrics)]
        assert {r.rubric.version for r in requests} == {f"{stage}-2" for stage in LABELS}
        assert all(r.rubric.system.startswith(MARKER[r.rubric.name.removesuffix("-team")]) for r in requests)
    finally:
        setup.close()


def test_the_ray_engine_scorers_send_the_configured_rubrics(tmp_path: Path) -> None:
    """``--engine ray`` builds its scorers from the recipe's ``ScorerPlan`` in each task: the rubrics travel with it."""
    rubrics = load_config(_team_config(tmp_path)).rubrics
    judge = QueueJudge().enqueue({"claims": []}, {"match": False, "reason": "no"}, {"labels": []})  # registry order
    trace = next(t for t in (Trace.model_validate_json(x) for x in SAMPLES.read_text().splitlines())
                 if t.labels.gold_answer and t.answer.strip())  # fmt: skip
    for scorer in ScorerPlan(rubrics=rubrics).scorers(judge):
        scorer(trace)
    sent = [(r.rubric.name, r.rubric.version, r.rubric.system.split(":")[0]) for r in judge.requests]
    stages = ("grounding", "semantic", "surface")
    assert sent == [(f"{s}-team", f"{s}-2", f"TEAM-{s.upper()}-RUBRIC-7Q") for s in stages]
