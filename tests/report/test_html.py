"""The HTML report opens in headless Chromium with no network and renders its charts (screenshot + rendered DOM)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.docs_pages import page
from tracescore.cli import main
from tracescore.report.render.svg import PALETTE
from tracescore.report.summary import STAGES

SAMPLES = Path(__file__).resolve().parents[2] / "cookbook" / "data" / "traces.jsonl"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SKIP_REASON = (
    "chromium not installed: the headless-browser chart test needs it on PATH; "
    "install it with `apt-get install chromium` (Debian/Ubuntu; CI's .ci/run does)"
)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--proxy-server=http://127.0.0.1:9",  # any network request would fail: the page must need none
    "--proxy-bypass-list=<-loopback>",
    "--window-size=1000,1600",
]


def test_the_browser_skip_names_the_install_command_the_readme_gives() -> None:
    assert "`apt-get install chromium`" in SKIP_REASON
    assert "`apt-get install chromium`" in page("getting-started/index.md")


@pytest.fixture(scope="module")
def chromium() -> str:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing in CI; .ci/run installs Debian's chromium package")
        pytest.skip(SKIP_REASON)
    return CHROMIUM


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:  # type: ignore[type-arg]
    """Score the sample traces, then render their report as HTML and JSON, grouped by search provider."""
    tmp = tmp_path_factory.mktemp("html")
    runner = CliRunner()
    out = tmp / "results.jsonl"
    scored = runner.invoke(main, ["score", str(SAMPLES), "--store", str(tmp / "ts.db"), "--out", str(out), "-q"])
    assert scored.exit_code == 0, scored.output
    page = tmp / "report.html"
    common = [str(out), "--group-by", "metadata.provider"]
    assert runner.invoke(main, ["report", *common, "--format", "html", "--out", str(page)]).exit_code == 0
    data = json.loads(runner.invoke(main, ["report", *common, "--format", "json"]).output)
    return page, data


def _chromium(binary: str, tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    return subprocess.run(
        [binary, *FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_html_is_self_contained(report: tuple[Path, dict]) -> None:  # type: ignore[type-arg]
    page = report[0].read_text()
    assert "<script" not in page and "<link" not in page and "@import" not in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)
    assert not re.search(r"url\(", page)


def test_charts_render_in_headless_chromium(chromium: str, report: tuple[Path, dict], tmp_path: Path) -> None:  # type: ignore[type-arg]
    page, data = report
    groups = list(data["groups"])
    dom = _chromium(chromium, tmp_path, "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    rendered = dom.stdout

    # The bar chart: one bar per (group, stage) that has a rate, its value the group's rate from the JSON report.
    bars = re.findall(r'<rect class="bar" data-group="([^"]+)" data-stage="(\w+)" data-value="([\d.]+)"', rendered)
    expected = {
        (g, s): data["groups"][g]["stages"][s]["rate"]
        for g in groups
        for s in STAGES
        if data["groups"][g]["stages"][s]["rate"] is not None
    }
    assert {(g, s): pytest.approx(float(v), abs=1e-4) for g, s, v in bars} == expected
    assert len(expected) >= 3 * len(groups) >= 12

    # The time chart: a line per stage that has any rate, a point per (stage, hour) with one.
    buckets = data["timeline"]["buckets"]
    points = re.findall(r'<circle class="point(?: few)?" data-stage="(\w+)" data-bucket="([^"]+)"', rendered)
    assert len(points) == sum(1 for b in buckets for s in STAGES if b["stages"][s]["rate"] is not None) >= 10
    assert set(re.findall(r'<polyline class="series" data-stage="(\w+)"', rendered)) == {s for s, _ in points}
    time_chart = rendered.split('id="chart-time"', 1)[1].split("</svg>", 1)[0]
    legend = re.findall(r'<g class="legend-item">.*?<text[^>]*>([^<]+)</text></g>', time_chart)
    assert legend == [s for s in STAGES if s in {p for p, _ in points}]  # no entry for a series without data
    assert len(re.findall(r"data-n=", time_chart)) == len(points)  # every point carries its n (issue #35)

    # The screenshot: every group's colour is painted (its bars), and the line colours too.
    shot = tmp_path / "report.png"
    taken = _chromium(chromium, tmp_path, f"--screenshot={shot}", page.as_uri())
    assert taken.returncode == 0 and shot.is_file(), taken.stderr[-2000:]
    from PIL import Image

    image = Image.open(shot).convert("RGB")
    assert image.size == (1000, 1600)
    counts = Counter({colour: n for n, colour in image.getcolors(maxcolors=1 << 24) or []})
    for i, group in enumerate(groups):
        colour = tuple(int(PALETTE[i][k : k + 2], 16) for k in (1, 3, 5))
        # each bar is ≥ 50 px wide and ≥ 0.5 × 216 px tall for these rates: thousands of pixels per group
        assert counts[colour] > 5_000, (group, colour, counts[colour])
    background = counts.most_common(1)[0][1]
    assert background < 0.95 * image.size[0] * image.size[1]  # not a blank page
