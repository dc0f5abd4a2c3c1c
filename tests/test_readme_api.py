"""Issue #35 item 9: the README's Python API example shows how to print or render the Report it returns."""

from __future__ import annotations

import pytest

from tests.docs_pages import page


def test_the_readme_example_renders_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    readme = page("reference/api.md")
    example = readme.split("## Python API", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    namespace: dict[str, object] = {"__name__": "readme_example"}
    exec(compile(example, "README.md", "exec"), namespace)  # noqa: S102 - the documented example, as a user runs it
    shown = capsys.readouterr().out
    assert "1 1.0" in shown  # the Report's figures, printed
    assert "Stage contingency (1 traces scored, 0 unreadable)" in shown and "retrieval_pass/right" in shown
    assert str(namespace["markdown"]).startswith("#")
