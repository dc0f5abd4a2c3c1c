"""#47 acceptance 4: the README's section "The judge on OpenAI, Azure OpenAI or your own server" shows a vLLM and an
Ollama config; each loads (parsed and validated as tracescore.toml) to the judge it promises, and each judges the
sample traces against the vLLM-like fake (its base_url pointed at the fake, nothing else changed)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import REPO
from tests.fakes.openai_chat import FakeOpenAI
from tests.judge.test_openai_judge import SAMPLES
from tracescore.cli import main
from tracescore.config import load_config

TITLE = "## The judge on OpenAI, Azure OpenAI or your own server"


def _examples() -> list[str]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split(TITLE, 1)[1].split("\n## ", 1)[0]
    assert len(section.strip().splitlines()) <= 29  # with its title, at most 30 lines
    return re.findall(r"```toml\n(.*?)```", section, flags=re.S)


@pytest.mark.parametrize(("n", "host", "identity", "structured"), [
    (0, "localhost:8000", "openai:localhost:Qwen/Qwen3-32B", True),
    (1, "localhost:11434", "openai:localhost:qwen3:32b", False),
])  # fmt: skip
def test_the_readme_configs_load_and_judge_against_a_vllm_like_server(
    tmp_path: Path, n: int, host: str, identity: str, structured: bool
) -> None:
    example = _examples()[n]
    config = tmp_path / "tracescore.toml"
    config.write_text(example, encoding="utf-8")
    loaded = load_config(config)
    where = loaded.judge_provider
    assert (where.provider, f"{host}" in (where.base_url or ""), where.structured) == ("openai", True, structured)
    assert where.identity(loaded.judge_model) == identity

    traces = tmp_path / "t.jsonl"
    traces.write_bytes(b"".join(SAMPLES.read_bytes().splitlines(keepends=True)[:4]))
    out = tmp_path / "out.jsonl"
    args = ["score", str(traces), "--config", str(config), "--store", "none", "--out", str(out), "-q"]
    with FakeOpenAI(key=None, response_format=False) as fake:
        config.write_text(example.replace(f"http://{host}/v1", f"{fake.url}/v1"), encoding="utf-8")
        budget = CliRunner().invoke(main, [*args, "--max-cost", "1"], env={})
        if n == 1:  # no [judge.price]: the cost is unknown, so a budget is refused before any call
            assert budget.exit_code == 2 and "needs a price for judge model" in budget.output
            assert not fake.completions()
            budget = CliRunner().invoke(main, args, env={})
        asked = fake.completions()
    assert budget.exit_code in (0, 1), budget.output  # the vLLM example's price of 0 lets a budget be set
    assert asked
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert any(row["scores"].get("grounding.rate") is not None for row in rows)
