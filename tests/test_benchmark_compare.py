"""``benchmarks/throughput.py --compare`` (issue #29 acceptance 5): one command compares light and heavy traces with 1
and N workers against another checkout, run for run, and prints CPU, wall clock and store size as ratios."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_compare_prints_light_and_heavy_with_1_and_2_workers_as_ratios() -> None:
    run = subprocess.run(
        [sys.executable, "benchmarks/throughput.py", "--light", "30", "--heavy", "3", "--workers", "2", "--repeat", "1",
         "--compare", str(REPO)],
        cwd=REPO, capture_output=True, text=True, check=True, timeout=600,
    )  # fmt: skip
    ratio = r"\s+\d+\.\d\d\s+\d+\.\d\d\s+(\d+\.\d{3})x"
    lines = {m.group(1): m.groups()[1:] for m in re.finditer(rf"^\s+(\w+ \d+, \d wkr){ratio * 3}", run.stdout, re.M)}
    assert sorted(lines) == ["heavy 3, 1 wkr", "heavy 3, 2 wkr", "light 30, 1 wkr", "light 30, 2 wkr",
                             "planted 30, 1 wkr", "planted 30, 2 wkr"], run.stdout  # fmt: skip
    assert all(store == "1.000" for _, _, store in lines.values())  # the same code on both sides: the same store
