"""Issue #49 acceptance 3: every code block of the README and the docs that can run does, in the test suite (sybil,
through the root conftest.py), and one that cannot is marked so with its reason. Here: that no runnable block escapes
the runner, and that the runner's checks can fail."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sybil.document import Document

from tests.conftest import REPO
from tests.docs_examples import LANGUAGES, PARSERS, run_bash, setup, shell_lines, teardown

PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
_FENCE = re.compile(r"^[ \t]*```(\w+)[ \t]*$|^<!-- invisible-code-block: (\w+)$", re.M)


@pytest.mark.parametrize("path", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_python_and_bash_block_is_run_or_skipped_with_a_reason(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    fenced = [m.start() for m in _FENCE.finditer(text) if (m.group(1) or m.group(2)) in LANGUAGES]
    runners = ("run_python", "run_bash")
    found = [e for e in Document.parse(str(path), *PARSERS) if getattr(e.region.evaluator, "__name__", "") in runners]
    assert len(found) == len(fenced), f"{path}: {len(fenced)} python/bash blocks, {len(found)} seen by the runner"
    assert not re.search(r"<!-- skip: next -->", text), f"{path}: a skip without its reason"
    assert not re.search(r"<!-- skip: (start|end)", text), f"{path}: skip one block at a time, with its reason"


def test_the_sample_first_hour_and_the_python_examples_are_not_skipped() -> None:
    skipped = {}
    for path in PAGES:
        lines = path.read_text(encoding="utf-8").splitlines()
        skipped[path.name] = [lines[i + 2] for i, line in enumerate(lines[:-2]) if line.startswith("<!-- skip: next")]
    assert not any("tracescore score cookbook/data/traces.jsonl" in s for v in skipped.values() for s in v)
    assert sum(1 for p in PAGES for e in Document.parse(str(p), *PARSERS)
               if getattr(e.region.evaluator, "__name__", "") == "run_python") >= 3  # fmt: skip


def test_shell_lines_reads_exit_codes_and_continuations() -> None:
    block = "# a comment\ntracescore gate a.jsonl  # exit 1: red\ntracescore score x \\\n  --out y  # note\n\n"
    assert shell_lines(block) == [
        ("tracescore gate a.jsonl  # exit 1: red", 1), ("tracescore score x    --out y  # note", 0)]


class _Example:
    def __init__(self, parsed: str, namespace: dict[str, object]) -> None:
        self.parsed, self.namespace = parsed, namespace


def test_the_bash_runner_fails_on_a_wrong_exit_code_and_passes_on_the_right_one() -> None:
    namespace: dict[str, object] = {}
    setup(namespace)
    try:
        assert run_bash(_Example("tracescore score cookbook/data/traces.jsonl -q --store none", namespace)) is None  # type: ignore[arg-type]
        failed = run_bash(_Example("tracescore score missing.jsonl", namespace))  # type: ignore[arg-type]
        assert failed is not None and "exit 2, expected 0" in failed
        assert run_bash(_Example("tracescore score missing.jsonl  # exit 2: no such file", namespace)) is None  # type: ignore[arg-type]
    finally:
        teardown(namespace)
