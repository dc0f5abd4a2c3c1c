"""The judge package's public face: ``__all__`` is sorted and names every public module-level name it re-exports."""

from __future__ import annotations

import tracescore.judge as judge


def test_judge_all_is_sorted_and_complete() -> None:
    public = {n for n in vars(judge) if not n.startswith("_") and not isinstance(getattr(judge, n), type(judge))}
    public -= {"annotations"}
    assert judge.__all__ == sorted(judge.__all__)
    assert set(judge.__all__) == public


def test_importing_the_judge_package_does_not_import_the_sdk() -> None:
    import subprocess
    import sys

    code = "import sys, tracescore.judge, tracescore.scorers.grounding; print('anthropic' in sys.modules)"
    assert (
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
        == "False"
    )
