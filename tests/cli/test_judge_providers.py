"""``[judge] provider``: ``tracescore score`` / ``backfill`` judging through Bedrock and Vertex AI end to end (the SDK's
own clients, pointed at the loopback fakes by the SDK's base-URL variables, credentials from the environment), no
Anthropic key needed; the provider in the judge's identity (run summary, cache) and its price; batches refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.cli.test_job import T0
from tests.engine.helpers import write_traces
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.bedrock import FakeBedrock
from tests.fakes.vertex import FakeVertex
from tests.judge.test_providers import ACCESS_KEY, SECRET_KEY, _service_account, provider_env
from tracescore.cli import main
from tracescore.config import fingerprint, load_config
from tracescore.store.db import Store

SAMPLES = Path(__file__).resolve().parents[2] / "cookbook" / "data" / "traces.jsonl"
BEDROCK = '[judge]\nprovider = "bedrock"\nregion = "us-east-1"\n'
VERTEX = '[judge]\nprovider = "vertex"\nregion = "global"\nproject = "acme-evals"\n'


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    provider_env(monkeypatch, tmp_path)


def _score(tmp_path: Path, config: str, env: dict[str, str | None]) -> tuple[int, str, list[dict]]:
    (tmp_path / "tracescore.toml").write_text(config)
    out = tmp_path / "results.jsonl"
    args = ["score", str(SAMPLES), "--config", str(tmp_path / "tracescore.toml"), "--store", str(tmp_path / "t.db")]
    result = CliRunner().invoke(main, [*args, "--out", str(out)], env={"ANTHROPIC_API_KEY": None} | env)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    lines = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return result.exit_code, result.output, lines


def _summary_judge(tmp_path: Path) -> dict:
    with Store(tmp_path / "t.db") as store:
        return store.runs()[-1]["summary"]["judge"]  # type: ignore[no-any-return]


def _priced(usage: dict, per_in: float, per_out: float) -> float:
    """USD of a run's token totals at (input, output) USD per million tokens: writes 1.25x input, reads 0.1x."""
    return (usage["input_tokens"] * per_in + usage["cache_write_tokens"] * per_in * 1.25
            + usage["cache_read_tokens"] * per_in * 0.1 + usage["output_tokens"] * per_out) / 1e6  # fmt: skip


def test_score_judges_through_bedrock_without_an_anthropic_key(tmp_path: Path) -> None:
    with FakeBedrock(access_key=ACCESS_KEY, secret_key=SECRET_KEY) as fake:
        code, output, lines = _score(tmp_path, BEDROCK, {"ANTHROPIC_BEDROCK_BASE_URL": fake.url})
        assert code == 0, output
        assert len([r for r in lines if "grounding.rate" in r["scores"]]) == 36  # all but the two empty answers
        assert {i["model_id"] for i in fake.invoked} == {"global.anthropic.claude-sonnet-4-6"}  # Bedrock's default
        assert {i["access_key"] for i in fake.invoked} == {ACCESS_KEY}
        judge = _summary_judge(tmp_path)
        assert judge["model"] == "bedrock:global.anthropic.claude-sonnet-4-6"
        assert judge["calls"] == len(fake.invoked) and judge["cost_usd"] > 0 and judge["priced"]
        assert judge["cost_usd"] == pytest.approx(_priced(judge, 3.0, 15.0), abs=1e-5)  # a global profile: list price
        assert {r["judge"]["model"] for r in lines if "judge" in r} == {judge["model"]}  # what calibration samples
        assert "~$" in output and SECRET_KEY not in output
        calls = len(fake.invocations())
        again, _, _ = _score(tmp_path, BEDROCK, {"ANTHROPIC_BEDROCK_BASE_URL": fake.url})
        assert again == 0 and len(fake.invocations()) == calls  # the store's cache answers every call
    with Store(tmp_path / "t.db") as store:
        models = {r[0] for r in store.query("SELECT DISTINCT model FROM judge_cache")}
    assert models == {"bedrock:global.anthropic.claude-sonnet-4-6"}


def test_the_same_traces_on_anthropic_after_bedrock_are_judged_again_not_read_from_its_cache(tmp_path: Path) -> None:
    with FakeBedrock(access_key=ACCESS_KEY, secret_key=SECRET_KEY) as fake:
        _score(tmp_path, BEDROCK + 'model = "anthropic.claude-sonnet-4-6"\n', {"ANTHROPIC_BEDROCK_BASE_URL": fake.url})
        bedrock_calls = len(fake.invoked)
    with FakeAnthropic() as direct:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": direct.url}
        code, _, _ = _score(tmp_path, '[judge]\nmodel = "claude-sonnet-4-6"\n', env)
        assert code == 0 and len(direct.messages()) == bedrock_calls > 0  # another judge: another cache key
    assert _summary_judge(tmp_path)["model"] == "claude-sonnet-4-6"


def test_score_judges_through_vertex_with_application_default_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("google.auth", reason="the [vertex] extra (google-auth) is not installed")
    with FakeVertex(tokens=()) as fake:
        _service_account(tmp_path / "sa.json", fake.token_uri)
        monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(tmp_path / "sa.json"))
        code, output, lines = _score(tmp_path, VERTEX, {"ANTHROPIC_VERTEX_BASE_URL": f"{fake.url}/v1"})
        assert code == 0, output
        assert len([r for r in lines if "grounding.rate" in r["scores"]]) == 36
        assert {(i["project"], i["region"], i["model"]) for i in fake.invoked} == {
            ("acme-evals", "global", "claude-sonnet-4-6")
        }
        assert len(fake.token_grants) >= 1 and all(i["token"].startswith("ya29.minted-") for i in fake.invoked)
    judge = _summary_judge(tmp_path)
    assert judge["model"] == "vertex:global:claude-sonnet-4-6" and judge["cost_usd"] > 0
    assert judge["cost_usd"] == pytest.approx(_priced(judge, 3.0, 15.0), abs=1e-5)


def test_a_missing_credential_or_a_wrong_model_id_stops_the_run_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    code, output, _ = _score(tmp_path, BEDROCK, {})
    assert code == 2 and "no AWS credentials for Bedrock" in output and "Traceback" not in output
    code, output, _ = _score(tmp_path, BEDROCK + 'model = "claude-sonnet-4-6"\n', {})
    assert code == 2 and "is an Anthropic API id; Bedrock names models like" in output


def test_the_provider_is_part_of_the_backfill_fingerprint(tmp_path: Path) -> None:
    def of(text: str) -> str:
        (tmp_path / "c.toml").write_text(text)
        return fingerprint(load_config(tmp_path / "c.toml"))

    anthropic = of('[judge]\nmodel = "claude-sonnet-4-6"\n')
    assert of("") == anthropic  # the default judge: the fingerprint every existing store has
    vertex = of('[judge]\nprovider = "vertex"\nregion = "global"\nmodel = "claude-sonnet-4-6"\n')
    assert len({anthropic, vertex, of(BEDROCK)}) == 3


def _backfill_config(tmp_path: Path) -> Path:
    write_traces(tmp_path / "t.jsonl", T0, 3)
    path = tmp_path / "tracescore.toml"
    path.write_text(f'[source]\nkind = "jsonl"\npath = "t.jsonl"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\n\n{BEDROCK}')
    return path


@pytest.mark.parametrize("dry_run", [False, True])
def test_judge_batch_on_bedrock_is_refused_with_the_reason_and_the_fix(tmp_path: Path, dry_run: bool) -> None:
    config = _backfill_config(tmp_path)
    args = ["backfill", "--config", str(config), "--from", "2026-11-01", "--to", "2026-11-02", "--judge-batch"]
    with FakeBedrock(access_key=ACCESS_KEY, secret_key=SECRET_KEY) as fake:
        env = {"ANTHROPIC_API_KEY": None, "ANTHROPIC_BEDROCK_BASE_URL": fake.url}
        result = CliRunner().invoke(main, [*args, *(["--dry-run"] if dry_run else [])], env=env)
        assert fake.requests == []
    assert result.exit_code == 2, result.output
    assert "Message Batches API, which [judge] provider = 'bedrock' does not offer" in result.output
    assert "run the backfill without --judge-batch" in result.output


def test_the_dry_run_prices_the_estimate_from_the_providers_table(tmp_path: Path) -> None:
    config = _backfill_config(tmp_path)
    args = ["backfill", "--config", str(config), "--from", "2026-11-01", "--to", "2026-11-02", "--dry-run"]

    def estimate(judge: str) -> dict:
        config.write_text(config.read_text().split("[judge]")[0] + judge)
        result = CliRunner().invoke(main, args, env={"ANTHROPIC_API_KEY": None})
        assert result.exit_code == 0, result.output
        return json.loads([line for line in result.output.splitlines() if line.startswith("{")][-1])  # type: ignore[no-any-return]

    direct = estimate("")
    on_global = estimate(BEDROCK)
    regional = estimate(BEDROCK + 'model = "us.anthropic.claude-sonnet-4-6"\n')
    assert direct["judge_cost_usd"] > 0 and on_global["judge_input_tokens"] == direct["judge_input_tokens"]
    assert on_global["judge_cost_usd"] == direct["judge_cost_usd"]  # a global profile: the list price
    assert regional["judge_cost_usd"] == pytest.approx(direct["judge_cost_usd"] * 1.1, rel=0.01)  # printed to 4 places
    assert regional["judge_model"] == "bedrock:us.anthropic.claude-sonnet-4-6"


def test_a_bedrock_judges_calibration_is_recorded_under_its_identity_and_not_carried_to_anthropic(
    tmp_path: Path,
) -> None:
    from datetime import UTC, datetime, timedelta

    from tracescore.calibrate.carry import grounding_agreement
    from tracescore.calibrate.labels import VERDICT_LABEL, Label, add_labels, latest_calibration
    from tracescore.calibrate.sampling import candidates, record_sample, sample
    from tracescore.judge.rubrics import load_rubric

    identity, rubric = "bedrock:global.anthropic.claude-sonnet-4-6", load_rubric("grounding").version
    with FakeBedrock(access_key=ACCESS_KEY, secret_key=SECRET_KEY) as fake:
        assert _score(tmp_path, BEDROCK, {"ANTHROPIC_BEDROCK_BASE_URL": fake.url})[0] == 0
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    with Store(tmp_path / "t.db") as store:
        drawn = sample(candidates(store, store.runs()[-1]["id"]), n=30, seed=1)
        assert {p.candidate.judge_model for p in drawn.picked} == {identity}
        record_sample(store, drawn, now=now)
        add_labels(store, [Label(p.candidate.item.item_id, VERDICT_LABEL, p.candidate.verdict, "ann",
                                 now + timedelta(minutes=n)) for n, p in enumerate(drawn.picked)], now=now)  # fmt: skip
    measured = CliRunner().invoke(main, ["calibrate", "measure", "--store", str(tmp_path / "t.db")])
    assert measured.exit_code == 0, measured.output
    assert f"{identity} · rubric {rubric}" in measured.output
    with Store(tmp_path / "t.db") as store:
        assert latest_calibration(store, identity, rubric) is not None
        assert latest_calibration(store, "claude-sonnet-4-6", rubric) is None
        assert grounding_agreement(store, identity, rubric) is not None  # carried to this judge's scores
        assert grounding_agreement(store, "claude-sonnet-4-6", rubric) is None  # never to Anthropic's


def test_judge_batch_on_azure_openai_is_refused_naming_the_providers_that_have_one(tmp_path: Path) -> None:
    write_traces(tmp_path / "t.jsonl", T0, 3)
    config = tmp_path / "tracescore.toml"
    config.write_text(
        f'[source]\nkind = "jsonl"\npath = "t.jsonl"\n\n[job]\nstore = "{tmp_path / "ts.db"}"\n\n'
        '[judge]\nprovider = "azure-openai"\nendpoint = "https://example.openai.azure.com"\ndeployment = "judge"\n'
    )
    args = ["backfill", "--config", str(config), "--from", "2026-11-01", "--to", "2026-11-02", "--judge-batch"]
    result = CliRunner().invoke(main, args, env={"AZURE_OPENAI_API_KEY": "k"})
    assert result.exit_code == 2, result.output
    assert "[judge] provider = 'azure-openai' has none here" in result.output
    assert "'openai' (OpenAI's Batch API)" in result.output
