"""Issue #49 acceptance 5: the docs' pictures of the terminal report and the HTML report are made by
``scripts/screenshots.py`` from the sample traces (headless Chromium), so they cannot go stale: their sources, made
again, are the ones the pictures were taken of."""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO

IMAGES = REPO / "docs" / "images"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("screenshots", REPO / "scripts" / "screenshots.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_pictures_show_what_this_version_prints() -> None:
    assert _script().check(IMAGES) == [], "stale screenshots: run python scripts/screenshots.py"


def test_the_check_finds_a_stale_picture(tmp_path: Path) -> None:
    for name in ("report-terminal.png", "report-html.png", "report-terminal.svg"):
        shutil.copy(IMAGES / name, tmp_path / name)
    recorded = json.loads((IMAGES / "screenshots.json").read_text())
    (tmp_path / "screenshots.json").write_text(json.dumps(recorded | {"report.html": "0" * 64}))
    assert _script().check(tmp_path) == ["report.html"]


def test_the_readme_and_the_docs_show_the_pictures() -> None:
    assert "docs/images/report-terminal.png" in (REPO / "README.md").read_text()
    assert "docs/images/report-html.png" in (REPO / "README.md").read_text()
    assert "../images/report-html.png" in (REPO / "docs" / "getting-started" / "index.md").read_text()


@pytest.mark.slow
def test_the_script_makes_both_pictures_in_headless_chromium(tmp_path: Path) -> None:
    if shutil.which("chromium") is None and shutil.which("chromium-browser") is None:
        pytest.skip("chromium not installed: apt-get install chromium (Debian/Ubuntu; CI's .ci/run does)")
    from PIL import Image

    sums = _script().make(tmp_path)
    assert sums == json.loads((IMAGES / "screenshots.json").read_text())
    for name, least in (("report-terminal.png", (800, 800)), ("report-html.png", (1280, 1700))):
        with Image.open(tmp_path / name) as shot:
            assert shot.size[0] >= least[0] and shot.size[1] >= least[1], (name, shot.size)
            colours = shot.convert("RGB").getcolors(maxcolors=1 << 20)
            assert colours is not None and len(colours) > 50, f"{name} is (nearly) blank"
