"""Release-ready: the version written once, the release workflow's checks run for real, and the built wheel installed
in a fresh venv running the README's first command."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import tracescore
from tests.conftest import REPO, SAMPLES
from tracescore.cli import main

VERSION_FILE = REPO / "src" / "tracescore" / "version.py"
RELEASE = REPO / ".github" / "workflows" / "release.yml"
RECIPE = REPO / "cookbook" / "github-actions" / "agent-eval.yml"


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


def _version() -> str:
    version = runpy.run_path(str(VERSION_FILE))["__version__"]
    assert isinstance(version, str)
    return version


def test_the_version_is_written_in_version_py_only() -> None:
    project = _pyproject()
    assert "version" not in project["project"], "pyproject states a version: hatch reads it from version.py"
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["hatch"]["version"] == {"path": "src/tracescore/version.py"}
    version = _version()
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?", version), version
    written = re.compile(rf"(?<![\w.]){re.escape(version)}(?![\w.])")
    texts = ("src/**/*.py", "cookbook/**/*.py", "cookbook/**/*.yml", "cookbook/**/*.sh", "docs/**/*.md", ".github/**/*")
    places = [REPO / "pyproject.toml", REPO / "README.md", *(p for t in texts for p in REPO.glob(t) if p.is_file())]
    again = [str(p.relative_to(REPO)) for p in places if p != VERSION_FILE and written.search(p.read_text("utf-8"))]
    assert again == [], f"the version {version} is written again in {again}: read tracescore.__version__"
    assert tracescore.__version__ == version
    installed = importlib.metadata.version("tracescore")
    assert installed == version, f"installed metadata says {installed}: reinstall (pip install -e .)"


def test_the_sdist_names_every_tracked_part_but_cis_own_files() -> None:
    """The sdist is an explicit list (a folder .gitignore misses, such as a second venv in the checkout, stays out):
    every top-level part git tracks is on it, but the CI and repository files, and nothing else is."""
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    parts = {"/" + line.split("/")[0] for line in tracked.splitlines()}
    released = set(_pyproject()["tool"]["hatch"]["build"]["targets"]["sdist"]["include"])
    assert released == parts - {"/.ci", "/.github", "/.gitignore", "/pyproject.toml"}  # pyproject always goes in


def test_the_changelog_keeps_an_unreleased_section_of_the_six_kinds() -> None:
    text = (REPO / "CHANGELOG.md").read_text()
    releases = re.findall(r"^## (.+)$", text, flags=re.M)
    assert releases and releases[0] == "[Unreleased]", releases
    for release in releases[1:]:  # released: [X.Y.Z] - YYYY-MM-DD
        assert re.fullmatch(r"\[\d+\.\d+\.\d+\S*\] - \d{4}-\d{2}-\d{2}", release), release
    kinds = set(re.findall(r"^### (.+)$", text, flags=re.M))
    assert kinds and kinds <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}, kinds
    license_text = (REPO / "LICENSE").read_text()
    assert license_text.startswith("MIT License") and "Copyright (c) 2026 the tracescore authors" in license_text


def test_every_repository_address_is_the_one_in_pyproject() -> None:
    urls = _pyproject()["project"]["urls"]
    repository = urls["Repository"]
    assert re.fullmatch(r"https://github\.com/[\w.-]+/tracescore", repository), repository
    assert all(url.startswith(repository) for url in urls.values()), urls
    named = re.compile(r"https://github\.com/[\w.-]+/tracescore\b")
    for path in (REPO / "README.md", REPO / "CHANGELOG.md", RECIPE, RELEASE):
        assert set(named.findall(path.read_text())) <= {repository}, path


# --- the release workflow ------------------------------------------------------------------------------------------


def _workflow() -> dict[Any, Any]:
    loaded = yaml.safe_load(RELEASE.read_text())
    assert isinstance(loaded, dict)
    return loaded


def _step(job: str, name: str) -> dict[str, Any]:
    steps: list[dict[str, Any]] = _workflow()["jobs"][job]["steps"]
    return next(s for s in steps if s.get("name") == name)


def _run_step(job: str, name: str, **env: str) -> subprocess.CompletedProcess[str]:
    """A step's shell script run as the runner runs it (bash -e), from a checkout of this repository."""
    script = _step(job, name)["run"]
    return subprocess.run(
        ["bash", "-e", "-c", script],
        cwd=REPO,
        env=dict(os.environ, **env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_release_runs_on_a_version_tag_tests_first_then_builds_clean_then_publishes_by_trusted_publishing() -> None:
    workflow = _workflow()
    assert workflow.get("on", workflow.get(True)) == {"push": {"tags": ["v*"]}}  # YAML 1.1 reads `on` as true
    assert workflow["permissions"] == {"contents": "read"}
    jobs = workflow["jobs"]
    assert set(jobs) == {"test", "build", "publish"}
    assert "needs" not in jobs["test"] and jobs["build"]["needs"] == "test" and jobs["publish"]["needs"] == "build"
    assert any(s.get("run", "").strip().endswith("\nbash .ci/run") for s in jobs["test"]["steps"]), "the tests as CI"
    build = [s.get("uses", s.get("run", "")) for s in jobs["build"]["steps"]]
    assert build[0].startswith("actions/checkout@"), "the build job builds from its own fresh checkout"
    assert any("python -m build" in s and "twine check --strict dist/*" in s for s in build), build
    publish = jobs["publish"]
    assert publish["permissions"] == {"id-token": "write"}  # only the job that uploads may ask for a PyPI token
    assert publish["environment"]["name"] == "pypi"
    uses = [s.get("uses", "") for s in publish["steps"]]
    assert any(u.startswith("pypa/gh-action-pypi-publish@") for u in uses)
    assert not any(u.startswith("actions/checkout@") for u in uses), "publish uploads the build job's files only"


def test_release_refuses_a_tag_that_is_not_the_package_version() -> None:
    name = "The tag names the package's version"
    ok = _run_step("test", name, GITHUB_REF_NAME=f"v{_version()}")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    wrong = _run_step("test", name, GITHUB_REF_NAME="v9.9.9")
    assert wrong.returncode == 1
    assert f"the tag v9.9.9 is not v{_version()}, the version in src/tracescore/version.py" in wrong.stdout
    bare = _run_step("test", name, GITHUB_REF_NAME=_version())  # a tag without the v matches no release tag
    assert bare.returncode == 1


def test_release_refuses_project_urls_that_name_another_repository() -> None:
    name = "The project URLs name this repository"
    here = _pyproject()["project"]["urls"]["Repository"].removeprefix("https://github.com/")
    ok = _run_step("test", name, GITHUB_REPOSITORY=here.upper())  # GitHub's names ignore case
    assert ok.returncode == 0, ok.stdout + ok.stderr
    other = _run_step("test", name, GITHUB_REPOSITORY="someone/tracescore")
    assert other.returncode == 1
    assert "https://github.com/someone/tracescore" in other.stdout and here in other.stdout


# --- the recipe ------------------------------------------------------------------------------------------------------


def test_the_github_actions_recipe_installs_the_released_package_and_the_readme_says_how_before_a_release() -> None:
    steps = yaml.safe_load(RECIPE.read_text())["jobs"]["eval"]["steps"]
    install = next(s["run"] for s in steps if s.get("name") == "Install")
    assert install.startswith("pip install 'tracescore[judge]'"), install  # from the package index, with its judge
    readme = (REPO / "README.md").read_text()
    repository = _pyproject()["project"]["urls"]["Repository"]
    assert f"pip install 'tracescore[judge] @ git+{repository}@" in readme


# --- the wheel, as a user gets it ----------------------------------------------------------------------------------


def _readme_command_1() -> str:
    """README command 1's ``tracescore score …`` (its set-up's last step)."""
    block = re.search(r"```bash\n([^`]*?tracescore score [^`]*?)\n```", (REPO / "README.md").read_text(), flags=re.S)
    assert block, "README command 1 (a bash block running tracescore score) not found"
    return "tracescore score " + block.group(1).split("tracescore score ", 1)[1].split(" && ")[0]


def _sh(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    run = subprocess.run(
        [str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert run.returncode == 0, f"{args} exited {run.returncode}:\n{run.stdout[-3000:]}\n{run.stderr[-3000:]}"
    return run.stdout


def _scores_by_trace(path: Path) -> dict[str, tuple[object, object]]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return {line["trace_id"]: (line["scores"], line["missing"]) for line in lines}


@pytest.mark.slow
def test_the_built_wheel_installs_in_a_fresh_venv_and_runs_readme_command_1(tmp_path: Path) -> None:
    """python -m build; twine check --strict; the wheel (rubrics, py.typed, LICENSE inside) into a fresh venv, its
    dependencies from the package index; then README command 1 from a folder holding only the sample traces."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV"}}
    dist = tmp_path / "dist"
    _sh(sys.executable, "-m", "build", "--outdir", dist, REPO, env=env)  # the sdist, then the wheel from the sdist
    version = _version()
    built = sorted(p.name for p in dist.iterdir())
    assert built == [f"tracescore-{version}-py3-none-any.whl", f"tracescore-{version}.tar.gz"], built
    assert "PASSED" in _sh(sys.executable, "-m", "twine", "check", "--strict", *sorted(dist.iterdir()), env=env)

    wheel = dist / built[0]
    names = set(zipfile.ZipFile(wheel).namelist())
    rubrics = {f"tracescore/_rubrics/{p.name}" for p in (REPO / "scorers").glob("*.toml")}
    assert rubrics and rubrics <= names, rubrics - names
    assert {"tracescore/py.typed", f"tracescore-{version}.dist-info/licenses/LICENSE"} <= names

    venv = tmp_path / "venv"
    _sh(sys.executable, "-m", "venv", venv, env=env)
    python, bin_dir = venv / "bin" / "python", venv / "bin"
    _sh(python, "-m", "pip", "install", "-q", wheel, env=env)
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    work = tmp_path / "work"
    (work / "cookbook" / "data").mkdir(parents=True)
    shutil.copy(SAMPLES, work / "cookbook" / "data" / "traces.jsonl")

    probe = "import importlib.metadata as m, tracescore; from tracescore.judge.rubrics import load_rubric as r; "
    probe += "print(m.version('tracescore'), tracescore.__version__, tracescore.__file__, r('grounding').origin)"
    meta, code_version, module, rubric = _sh(python, "-c", probe, cwd=work, env=env).split()
    assert meta == code_version == version
    site = str(venv / "lib")
    assert module.startswith(site) and rubric.startswith(site) and "/tracescore/_rubrics/" in rubric, (module, rubric)
    assert _sh("tracescore", "--version", cwd=work, env=env).strip() == f"tracescore, version {version}"

    command = _readme_command_1()
    out = _sh("bash", "-c", command, cwd=work, env=env)
    traces = len(SAMPLES.read_text().splitlines())
    assert f"Stage contingency ({traces} traces scored, 0 unreadable)" in out, out
    assert "retrieval_fail" in out and "Per-stage summary" in out, out
    results = work / "results.jsonl"
    assert results.is_file(), f"{command!r} wrote no results.jsonl"

    here = tmp_path / "here.jsonl"  # the same command on this checkout's code, in this process
    args = command.split()[1:]  # score cookbook/data/traces.jsonl --out results.jsonl
    args[args.index("--out") + 1] = str(here)
    args[1] = str(SAMPLES)
    ran = CliRunner().invoke(main, [*args, "--store", str(tmp_path / "here.db"), "-q"])
    assert ran.exit_code == 0, ran.output
    installed, source = _scores_by_trace(results), _scores_by_trace(here)
    assert len(installed) == traces and installed == source
