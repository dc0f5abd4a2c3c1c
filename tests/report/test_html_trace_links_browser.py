"""#31 acceptance 2: the HTML report of a Langfuse run, opened in headless Chromium (driven by Playwright, the
system's chromium binary): the work queue's trace ids are links of the form the Langfuse UI uses
(``<base>/project/<projectId>/traces/<traceId>``, as the real SDK's ``Langfuse.get_trace_url`` builds them), and the
page has no script and no external resource — checked in the rendered DOM and by counting the requests the page
makes beyond its own file (0). The run is read from the loopback Langfuse fake through the real SDK
(``tracescore score --source langfuse``); the report reads its results file and the stored run (``run:latest``)."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.fakes.langfuse import FakeLangfuse, env_for, sdk_client
from tests.fakes.langfuse_data import make_trace
from tracescore.cli import main

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SKIP_REASON = (
    "chromium not installed: the headless-browser test of the HTML report's trace links needs it on PATH; "
    "install it with `apt-get install chromium` (Debian/Ubuntu; CI's .ci/run does)"
)
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
N = 12
WINDOW = ["--from", "2026-11-20T00:00:00Z", "--to", "2026-11-21T00:00:00Z"]

# Every resource reference in the rendered DOM: an attribute that loads something (src, srcset, an object's data,
# a poster, a form's action), any href except a link's (<a>, in HTML or SVG), a style attribute or a style sheet
# rule with url() or @import, and <link>, <iframe>, <base>, <meta http-equiv> elements.
RESOURCES_JS = """() => {
  const found = [];
  const XLINK = 'http://www.w3.org/1999/xlink';
  for (const el of document.querySelectorAll('*')) {
    const tag = el.localName;
    for (const a of ['src', 'srcset', 'data', 'poster', 'background', 'action', 'formaction']) {
      if (el.hasAttribute(a)) found.push(`${tag} ${a}=${el.getAttribute(a)}`);
    }
    if (tag !== 'a' && (el.hasAttribute('href') || el.hasAttributeNS(XLINK, 'href'))) {
      found.push(`${tag} href=${el.getAttribute('href') || el.getAttributeNS(XLINK, 'href')}`);
    }
    if (/url\\(|@import/i.test(el.getAttribute('style') || '')) found.push(`${tag} style=${el.getAttribute('style')}`);
    if (['link', 'iframe', 'frame', 'base', 'embed', 'object', 'portal'].includes(tag)) found.push(tag);
    if (tag === 'meta' && el.hasAttribute('http-equiv')) found.push(`meta http-equiv=${el.getAttribute('http-equiv')}`);
  }
  for (const sheet of document.styleSheets) {
    let rules;
    try { rules = Array.from(sheet.cssRules); } catch (e) { found.push(`stylesheet ${sheet.href}`); continue; }
    for (const rule of rules) if (/url\\(|@import/i.test(rule.cssText)) found.push(rule.cssText);
  }
  return found;
}"""
QUEUE_JS = """() => Array.from(document.querySelectorAll('#queue li[data-key]')).map(li => ({
  codes: li.querySelectorAll('code').length,
  links: Array.from(li.querySelectorAll('a')).map(a => ({
    href: a.getAttribute('href'), resolved: a.href, text: a.textContent, wraps: a.firstElementChild?.localName,
  })),
}))"""


@pytest.fixture(scope="module")
def chromium() -> str:
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing in CI; .ci/run installs Debian's chromium package")
        pytest.skip(SKIP_REASON)
    return CHROMIUM




@pytest.fixture(scope="module")
def langfuse_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, dict[str, str | None]]]:
    """N traces scored from the Langfuse fake: the results file, the store, and the SDK's URL of each trace."""
    tmp = tmp_path_factory.mktemp("html-links")
    out, store, config = tmp / "results.jsonl", tmp / "ts.db", tmp / "tracescore.toml"
    config.write_text("")
    with FakeLangfuse() as fake:
        for i in range(N):
            fake.add_trace(*make_trace(i, T0 + timedelta(minutes=i)))
        args = ["score", "--source", "langfuse", *WINDOW, "--store", str(store), "--out", str(out)]
        scored = CliRunner().invoke(main, [*args, "--config", str(config), "--no-write-back", "-q"], env=env_for(fake))
        assert scored.exit_code == 0, scored.output
        with sdk_client(fake, tracing_enabled=False) as client:
            ids = [json.loads(line)["trace_id"] for line in out.read_text().splitlines()]
            sdk = {t: client.get_trace_url(trace_id=t) for t in ids}
        assert len(sdk) == N and all(u == f"{fake.url}/project/proj-test/traces/{t}" for t, u in sdk.items())
        yield out, store, sdk


@pytest.fixture(scope="module")
def browser(chromium: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One headless Chromium with a fresh profile; every request that would leave the file system is aborted."""
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            str(profile), executable_path=chromium, headless=True, args=ARGS
        )
        context.route(
            "**/*", lambda route: route.abort() if not route.request.url.startswith("file:") else route.fallback()
        )
        try:
            yield context
        finally:
            context.close()


def _open(browser: Any, page_file: Path) -> dict[str, Any]:
    """Load ``page_file`` and read what it did and holds: the requests beyond the file itself, the scripts, the
    resource references and the work queue's links."""
    page = browser.new_page()
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    try:
        page.goto(page_file.as_uri(), wait_until="load")
        page.wait_for_load_state("networkidle")
        return {
            "requests": [url for url in requests if url != page_file.as_uri()],
            "loaded": page_file.as_uri() in requests,
            "scripts": page.evaluate("() => document.scripts.length"),
            "resources": page.evaluate(RESOURCES_JS),
            "queue": page.evaluate(QUEUE_JS),
        }
    finally:
        page.close()


@pytest.mark.parametrize("spec", ["results-file", "run:latest"])
def test_the_work_queue_links_to_langfuse_and_the_page_loads_nothing(
    langfuse_run: tuple[Path, Path, dict[str, str | None]], browser: Any, tmp_path: Path, spec: str
) -> None:
    results, store, sdk = langfuse_run
    page_file = tmp_path / "report.html"
    source = str(results) if spec == "results-file" else spec
    args = ["report", source, "--store", str(store), "--format", "html", "--out", str(page_file)]
    written = CliRunner().invoke(main, args)
    assert written.exit_code == 0, written.output
    seen = _open(browser, page_file)
    assert seen["loaded"] and seen["requests"] == [] and seen["scripts"] == 0 and seen["resources"] == []
    queue = seen["queue"]
    assert queue, "the Langfuse run has failing cells: its work queue is not empty"
    for item in queue:  # every id in the queue is a link, and each link is the trace's Langfuse UI URL
        assert item["codes"] == len(item["links"]) > 0
        for link in item["links"]:
            assert link["wraps"] == "code" and link["href"] == link["resolved"] == sdk[link["text"]]
    assert {link["text"] for item in queue for link in item["links"]} <= set(sdk)


def test_the_browser_check_sees_a_script_a_resource_and_a_request(browser: Any, tmp_path: Path) -> None:
    """The checks above can fail: a page with a script, an image, a style sheet and a CSS url() is caught by each."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        '<!DOCTYPE html><html><head><link rel="stylesheet" href="https://cdn.example/x.css">'
        "<style>body { background: url(http://127.0.0.1:9/bg.png) }</style></head><body>"
        '<ul id="queue"><li data-key="k"><a href="https://x.example/t/1"><code>t-1</code></a>, <code>t-2</code></li>'
        '</ul><img src="http://127.0.0.1:9/pixel.gif"><script>1</script></body></html>'
    )
    seen = _open(browser, bad)
    assert seen["scripts"] == 1
    assert {r.split(" ", 1)[0] for r in seen["resources"]} >= {"link", "img", "body"}
    assert len(seen["requests"]) >= 2 and all(u.startswith(("http://127.0.0.1:9/", "https://cdn.example/"))
                                              for u in seen["requests"])  # fmt: skip
    assert seen["queue"] == [
        {
            "codes": 2,
            "links": [
                {"href": "https://x.example/t/1", "resolved": "https://x.example/t/1", "text": "t-1", "wraps": "code"}
            ],
        }  # fmt: skip
    ]
