from __future__ import annotations

import os
import subprocess
import sys

import tracescore.engine


def test_job_all_is_complete_and_sorted() -> None:
    public = {n for n in dir(tracescore.engine) if not n.startswith("_") and n != "annotations"}
    modules = {n for n in public if type(getattr(tracescore.engine, n)).__name__ == "module"}
    assert set(tracescore.engine.__all__) == public - modules
    assert list(tracescore.engine.__all__) == sorted(tracescore.engine.__all__)


def test_the_job_on_a_jsonl_source_imports_no_platform_or_judge_sdk() -> None:
    code = (
        "import sys; from tracescore.cli import main; from tracescore.engine import build_setup;"
        "from tracescore.config import Config, parse_sections;"
        "build_setup(Config(parse_sections({'source': {'kind': 'jsonl', 'path': 'x.jsonl'}})));"
        "print(sorted(m for m in ('anthropic', 'langfuse', 'langsmith', 'httpx') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": os.environ.get("PYTHONPATH", "")},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
