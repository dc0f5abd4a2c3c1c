"""#46 acceptance 5: the README's "Your own scorers" runs as shown. Its Python block is the plugin's module, its TOML
block the plugin's entry point (the project table around it, as any package has), its shell block is run line by line
by bash, with ``pip install`` installing into a temporary ``--target`` (never this environment) and ``tracescore``
the command of this tree with that folder first on PYTHONPATH; the option its text sets changes the score."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.plugins import EXAMPLE

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
TITLE = "## Your own scorers"


def section() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index(f"\n{TITLE}\n")
    end = readme.find("\n## ", start + 1)
    return readme[start : end if end != -1 else len(readme)]


def blocks(text: str) -> dict[str, str]:
    """The section's fenced blocks by language (one each)."""
    found = re.findall(r"^```(\w+)\n(.*?)^```$", text, flags=re.S | re.M)
    languages = [lang for lang, _ in found]
    assert sorted(languages) == ["bash", "python", "toml"], languages
    return dict(found)


SHIMS = """
tracescore() { "$PY" -m tracescore "$@"; }
pip() {
  if [ "$1" = install ]; then shift
    "$PY" -m pip install --quiet --no-deps --no-index --no-build-isolation --target "$SITE" "$@"
  else "$PY" -m pip "$@"; fi
}
set -e
"""


def test_the_section_is_short_and_shows_the_issues_example() -> None:
    text = section()
    assert text.strip().count("\n") + 1 <= 31  # 30 lines and the docs runner's skip marker
    code = blocks(text)
    assert code["python"].strip() == EXAMPLE.strip()
    assert code["toml"] == (
        '# the plugin\'s pyproject.toml\n[project.entry-points."tracescore.scorers"]\n'
        'policy = "acme_scorers:cites_policy_id"\n'
    )
    assert "tracescore scorers" in text and "[scorers.policy]" in text


def test_it_runs_as_shown(tmp_path: Path) -> None:
    text = section()
    code = blocks(text)
    package = tmp_path / "acme-scorers"
    package.mkdir()
    (package / "acme_scorers.py").write_text(code["python"], encoding="utf-8")
    (package / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
        '[project]\nname = "acme-scorers"\nversion = "0.1.0"\n\n' + code["toml"],
        encoding="utf-8",
    )
    site = tmp_path / "site"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("LANGFUSE_", "LANGSMITH_", "ANTHROPIC_"))}
    env = {**base, "PY": sys.executable, "SITE": str(site), "COLUMNS": "200",
           "PYTHONPATH": os.pathsep.join([str(site), str(REPO / "src")])}  # fmt: skip
    done = subprocess.run(["bash", "-c", SHIMS + code["bash"]], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "policy  (acme-scorers 0.1.0; stage answer; version 1)" in done.stdout  # tracescore scorers
    (line,) = map(json.loads, (tmp_path / "results.jsonl").read_text(encoding="utf-8").splitlines())
    assert line["scores"]["answer.cites_policy_id"] is True and line["comments"]["answer.cites_policy_id"] == "POL-1234"
    assert "answer.cites_policy_id" in done.stdout  # in the stage table too

    # the option as the text sets it: POL-1234 is no five-digit id, so the score does not apply
    table, option = re.search(r"`(\[scorers\.policy\])` `([^`]+)` in `tracescore.toml`", text).groups()  # type: ignore[union-attr]
    (tmp_path / "tracescore.toml").write_text(f"{table}\n{option}\n", encoding="utf-8")
    again = subprocess.run(["bash", "-c", SHIMS + "tracescore score t.jsonl --out five.jsonl -q"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert again.returncode == 0, again.stderr
    (five,) = map(json.loads, (tmp_path / "five.jsonl").read_text(encoding="utf-8").splitlines())
    assert five["missing"]["answer.cites_policy_id"] == "no policy id asked for"
