"""The judge registry (#47, item 1 and acceptance 3): tracescore's own judges are entry points of
``tracescore.judges`` like a plugin's; ``tracescore judges`` lists them with what each needs; ``[judge] provider``
picks one (an unknown one, or a key it does not read: exit 2); a third-party judge package, built here and installed
with ``pip install --target`` into a folder put first on a child process's PYTHONPATH, is listed and judges a score
run (the sample traces give the same judged scores as the Anthropic fake answering the same verdicts)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.openai_chat import FakeOpenAI
from tests.judge.test_openai_judge import SAMPLES, _judged, _score
from tests.plugins import build, installed
from tracescore.cli import main
from tracescore.judge import registry
from tracescore.judge.make import make_judge
from tracescore.judge.providers import ProviderSettings

REPO = Path(__file__).resolve().parents[2]
BUILT_IN = ["anthropic", "azure-openai", "bedrock", "openai", "vertex"]  # tracescore's, by name


def test_the_built_in_judges_are_entry_points_of_tracescore_like_a_plugins() -> None:
    found = registry.installed(refresh=True)
    assert list(found)[:5] == BUILT_IN
    assert {found[n].dist for n in BUILT_IN} == {"tracescore"}
    assert found["openai"].value == "tracescore.judge.openai:openai_judge"
    assert found["azure-openai"].value == "tracescore.judge.azure:azure_openai_judge"


def test_tracescore_judges_lists_each_with_what_it_needs_as_text_and_json() -> None:
    text = CliRunner().invoke(main, ["judges"])
    assert text.exit_code == 0, text.output
    for name in BUILT_IN:
        assert f"\n{name}  (tracescore " in f"\n{text.output}"
    assert "install: pip install 'tracescore[azure]'" in text.output
    assert "environment: AZURE_OPENAI_API_KEY, AZURE_OPENAI_ENDPOINT, OPENAI_API_VERSION" in text.output
    ran = CliRunner().invoke(main, ["judges", "--format", "json"])
    listed = {j["name"]: j for j in json.loads(ran.output)}
    assert list(listed)[:5] == BUILT_IN
    openai = listed["openai"]
    assert openai["default_model"] == "gpt-5.4" and openai["install"] == "pip install 'tracescore[openai]'"
    assert openai["env"] == ["OPENAI_API_KEY", "OPENAI_BASE_URL"] and "OPENAI_API_KEY" in openai["needs"]
    assert openai["config_keys"] == ["[judge] model", "[judge] base_url", "[judge] api_key_env", "[judge] structured"]
    azure = listed["azure-openai"]
    assert azure["default_model"] is None  # its deployment is its model
    assert azure["config_keys"] == ["[judge] endpoint", "[judge] deployment", "[judge] api_version",
                                    "[judge] structured"]  # fmt: skip
    assert listed["bedrock"]["config_keys"] == ["[judge] model", "[judge] region"]
    assert (
        listed["anthropic"]["entry_point"]
        == "tracescore.judges: anthropic = tracescore.judge.anthropic:anthropic_judge"
    )


@pytest.mark.parametrize(
    ("judge", "said"),
    [
        (
            'provider = "llama-local"',
            "provider 'llama-local' is not an installed judge; installed: anthropic,"
            " azure-openai, bedrock, openai, vertex",
        ),
        (
            'provider = "openai"\nregion = "us-east-1"',
            "region: not read by provider 'openai', which reads: model, base_url, api_key_env, structured",
        ),
        (
            'provider = "azure-openai"\ndeployment = "d"\nmodel = "gpt-5.4"',
            "model: not read by provider 'azure-openai'",
        ),
        ('provider = "azure-openai"', "needs [judge] deployment"),
    ],
)
def test_an_unknown_provider_or_a_key_it_does_not_read_stops_the_run_with_exit_2(
    tmp_path: Path, judge: str, said: str
) -> None:
    config = tmp_path / "tracescore.toml"
    config.write_text(f"[judge]\n{judge}\n", encoding="utf-8")
    ran = CliRunner().invoke(main, ["score", str(SAMPLES), "--config", str(config), "--store", "none", "-q"],
                             env={"ANTHROPIC_API_KEY": "k"})  # fmt: skip
    assert ran.exit_code == 2, ran.output
    assert said in " ".join(ran.output.split()), ran.output


def test_make_judge_builds_through_the_registered_factory_of_each_provider(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("OPENAI_API_KEY", "sk")
    monkeypatch.setenv("AZURE_OPENAI_API_KEY", "az")
    made = {
        "anthropic": make_judge(ProviderSettings("anthropic")),
        "openai": make_judge(ProviderSettings("openai"), "gpt-5.4-mini"),
        "vllm": make_judge(ProviderSettings("openai", base_url="http://gpu-box:8000/v1"), "qwen3-32b"),
        "azure": make_judge(
            ProviderSettings("azure-openai", endpoint="https://acme.openai.azure.com", deployment="judge-gpt")
        ),  # fmt: skip
    }
    assert {k: j.model for k, j in made.items()} == {
        "anthropic": "claude-sonnet-4-6",
        "openai": "openai:gpt-5.4-mini",
        "vllm": "openai:gpu-box:qwen3-32b",
        "azure": "azure-openai:judge-gpt",
    }
    for judge in made.values():
        judge.close()  # type: ignore[attr-defined]


# -- a third party's judge package ------------------------------------------------------------------------------
PLUGIN = '''
"""acme-judge: Acme's LLM gateway as tracescore's judge (a third party's package)."""

import json
import urllib.request

from tracescore.errors import JudgeError
from tracescore.judge.protocol import JudgeReply, JudgeUsage
from tracescore.judge.registry import judge_provider


class GatewayJudge:
    def __init__(self, url, model, team):
        self.url, self.model_id, self.team = url, model, team
        self.model = f"acme-gateway:{model}"
        self.usage = JudgeUsage(priced=False)

    def judge(self, request):
        schema = json.dumps(request.output.model_json_schema())
        system = f"{request.rubric.system}\\n\\nReply with one JSON object valid against this JSON schema:\\n{schema}"
        user = f"{request.prefix}\\n\\n{request.content}" if request.prefix else request.content
        body = {"model": self.model_id, "messages": [{"role": "system", "content": system},
                                                     {"role": "user", "content": user}]}
        sent = urllib.request.Request(f"{self.url}/chat/completions", json.dumps(body).encode(),
                                      {"Content-Type": "application/json", "X-Acme-Team": self.team})
        self.usage.attempts += 1
        try:
            with urllib.request.urlopen(sent, timeout=30) as answer:
                data = json.load(answer)
        except OSError as exc:
            self.usage.failures += 1
            raise JudgeError(f"acme gateway: {exc}") from exc
        reply = JudgeReply(output=None, model=self.model, key=request.key(self.model),
                           input_tokens=data["usage"]["prompt_tokens"],
                           output_tokens=data["usage"]["completion_tokens"])
        self.usage.bill(reply)
        reply.output = request.output.model_validate_json(data["choices"][0]["message"]["content"])
        return reply


@judge_provider(default_model="acme-large", needs="nothing: the gateway trusts the network",
                keys=("model", "url", "team"))
def gateway(settings, model, **options):
    """Acme's LLM gateway (an OpenAI-like endpoint behind the company's network)."""
    given = dict(settings.options)
    return GatewayJudge(given["url"], model, given.get("team", "evals"))
'''
ENTRY_POINTS = "[tracescore.judges]\nacme-gateway = acme_judge:gateway\n"


def _wheel(folder: Path) -> Path:
    """The package as a wheel (PEP 427: the module, its ``.dist-info`` with METADATA, WHEEL, entry_points.txt and
    RECORD), written by hand so that building it needs no build backend and nothing downloaded."""
    files = {
        "acme_judge.py": textwrap.dedent(PLUGIN),
        "acme_judge-0.3.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: acme-judge\nVersion: 0.3.0\n",
        "acme_judge-0.3.0.dist-info/WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        "acme_judge-0.3.0.dist-info/entry_points.txt": ENTRY_POINTS,
    }
    record = "".join(f"{name},sha256={_digest(text)},{len(text.encode())}\n" for name, text in files.items())
    wheel = folder / "acme_judge-0.3.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
        archive.writestr("acme_judge-0.3.0.dist-info/RECORD", record + "acme_judge-0.3.0.dist-info/RECORD,,\n")
    return wheel


def _digest(text: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()


@pytest.fixture(scope="module")
def plugin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package installed with ``pip install --target`` into a folder of its own (nothing downloaded, no shared
    environment touched); that folder goes first on the child processes' PYTHONPATH."""
    target = tmp_path_factory.mktemp("site")
    wheel = _wheel(tmp_path_factory.mktemp("dist"))
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--target", str(target),
                    str(wheel)], check=True, capture_output=True)  # fmt: skip
    assert list(target.glob("acme_judge-0.3.0.dist-info"))
    return target


def _cli(site: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join([str(site), str(REPO / "src"), os.environ.get("PYTHONPATH", "")])
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    command = [sys.executable, "-m", "tracescore.cli", *args]
    return subprocess.run(command, env=clean | {"PYTHONPATH": path} | (env or {}), capture_output=True, text=True,
                          timeout=300)  # fmt: skip


def test_a_third_party_judge_is_listed_with_the_built_ins(plugin: Path) -> None:
    text = _cli(plugin, "judges")
    assert text.returncode == 0, text.stderr
    assert "acme-gateway  (acme-judge 0.3.0): Acme's LLM gateway (an OpenAI-like endpoint" in text.stdout
    listed = json.loads(_cli(plugin, "judges", "--format", "json").stdout)
    assert [j["name"] for j in listed] == [*BUILT_IN, "acme-gateway"]
    assert listed[-1]["entry_point"] == "tracescore.judges: acme-gateway = acme_judge:gateway"
    assert listed[-1]["config_keys"] == ["[judge] model", "[judge.options] url", "[judge.options] team"]


def test_a_third_party_judge_judges_a_score_run_as_the_built_ins_do(plugin: Path, tmp_path: Path) -> None:
    with FakeAnthropic() as fake:
        anthropic = _score(tmp_path, "anthropic", "", {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url})
    out, config = tmp_path / "acme.jsonl", tmp_path / "acme.toml"
    with FakeOpenAI(key=None, response_format=False) as gateway:
        config.write_text(f'[job]\njudge_concurrency = 1\n\n[judge]\nprovider = "acme-gateway"\n\n[judge.options]\n'
                          f'url = "{gateway.url}/v1"\nteam = "search"\n', encoding="utf-8")  # fmt: skip
        ran = _cli(plugin, "score", str(SAMPLES), "--config", str(config), "--store", str(tmp_path / "acme.db"),
                   "--out", str(out), "-q")  # fmt: skip
        requests = gateway.completions()
    assert ran.returncode in (0, 1), ran.stderr
    assert requests and all(r.headers.get("X-Acme-Team") == "search" for r in requests)
    rows: dict[str, dict[str, Any]] = {r["trace_id"]: r for r in map(json.loads, out.read_text().splitlines())}
    assert {r["judge"]["model"] for r in rows.values() if r.get("judge")} == {"acme-gateway:acme-large"}
    assert _judged(rows) == _judged(anthropic)


def test_an_unknown_key_in_judge_options_is_refused_naming_what_the_plugin_reads(plugin: Path, tmp_path: Path) -> None:
    config = tmp_path / "t.toml"
    config.write_text('[judge]\nprovider = "acme-gateway"\n\n[judge.options]\nurl = "http://x"\ntemperature = 0\n')
    ran = _cli(plugin, "score", str(SAMPLES), "--config", str(config), "--store", "none", "-q")
    assert ran.returncode == 2
    assert "options.temperature: not read by provider 'acme-gateway', which reads: model, url, team" in " ".join(
        ran.stderr.split()
    )


@pytest.mark.parametrize(
    ("source", "entry", "said"),
    [
        ("import not_a_module_anywhere\n", "acme-gateway", "judge entry point 'acme-gateway' = 'acme_judge:gateway'"
         " (acme-judge 0.1.0) cannot be imported: ModuleNotFoundError: No module named 'not_a_module_anywhere'"),
        ("def gateway(settings, model):\n    return None\n", "acme-gateway", "judge entry point 'acme-gateway' ="
         " 'acme_judge:gateway' (acme-judge 0.1.0) is not a @tracescore.judge.registry.judge_provider factory (got"
         " function)"),
        (textwrap.dedent(PLUGIN), "openai", "judge entry point 'openai' is registered twice (by tracescore,"
         " acme-judge)"),
    ],
    ids=["import error", "not a provider", "name registered twice"],
)  # fmt: skip
def test_the_registry_refuses_a_judge_package_it_cannot_use_in_one_line(source: str, entry: str, said: str,
                                                                         tmp_path: Path) -> None:  # fmt: skip
    """The same refusals as the scorer registry's (one loader reads both groups), with the judge's words."""
    site = build(tmp_path / "site", {"acme_judge": source}, {entry: "acme_judge:gateway"}, "acme-judge", registry.GROUP)
    with installed(site):
        registry._LOADED = None  # a new command: the judge registry read again
        try:
            listed = CliRunner().invoke(main, ["judges"])
        finally:
            registry._LOADED = None
    assert listed.exit_code == 2 and said in listed.output and listed.output.count("\n") == 1, listed.output
    assert list(registry.installed())[:5] == BUILT_IN and "acme-gateway" not in registry.installed()
