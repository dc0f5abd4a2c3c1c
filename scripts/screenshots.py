"""The docs' screenshots of the terminal report and the HTML report, made from the sample traces so they cannot go
stale: ``python scripts/screenshots.py`` rewrites them in ``docs/images/``; ``--check`` only says whether they are
current (exit 1 when not, naming the command that refreshes them).

1. ``tracescore score cookbook/data/traces.jsonl --out results.jsonl`` in a temporary folder (no judge, no store).
2. The terminal report: ``tracescore report results.jsonl`` run in a pseudo-terminal of ``COLUMNS`` x ``ROWS``
   (so it draws as on a terminal: colours, box lines), its ANSI output drawn by rich as SVG
   (``report-terminal.svg``), then photographed by headless Chromium (``report-terminal.png``).
3. The HTML report: ``tracescore report results.jsonl --format html``, photographed by headless Chromium
   (``report-html.png``).

``screenshots.json`` records the SHA-256 of each picture's source (the SVG, the HTML page): the test suite makes the
sources again and compares, so a report that changes makes the test fail until the pictures are made again. The
PNG files themselves depend on the machine's Chromium and fonts; the sources do not.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import termios
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "docs" / "images"
COLUMNS, ROWS = 110, 60
HTML_WINDOW = (1280, 1700)
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
         "--force-device-scale-factor=1", "--disable-extensions")  # fmt: skip


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "LANGFUSE", "LANGSMITH", "OPENAI"))}
    code = str(REPO / "src")
    return env | {"PYTHONPATH": os.pathsep.join([code, env.get("PYTHONPATH", "")]), "TERM": "xterm-256color",
                  "COLUMNS": str(COLUMNS), "LINES": str(ROWS), "NO_COLOR": "", "TZ": "UTC"}  # fmt: skip


def _tracescore(*args: str, cwd: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "tracescore.cli", *args], cwd=cwd, env=_env(), capture_output=True,
                          text=True, timeout=600, check=False)  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"tracescore {' '.join(args)}: exit {done.returncode}\n{done.stderr[-2000:]}")


def _in_a_terminal(*args: str, cwd: Path) -> str:
    """What ``tracescore ARGS`` writes on a terminal of ``COLUMNS`` x ``ROWS`` (ANSI codes included)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "tracescore.cli", *args], cwd=cwd, env=_env(), stdin=follower,
                            stdout=follower, stderr=follower, close_fds=True)  # fmt: skip
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the command is done
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    if proc.wait(timeout=600) != 0:
        raise SystemExit(f"tracescore {' '.join(args)} in a terminal: exit {proc.returncode}")
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def _svg(ansi: str) -> str:
    from rich.console import Console
    from rich.text import Text

    ansi = re.sub(r"\x1b]8;[^\x1b]*\x1b\\", "", ansi)  # OSC 8 links: the picture shows their text
    with open(os.devnull, "w") as nowhere:
        console = Console(record=True, width=COLUMNS, force_terminal=True, color_system="truecolor", file=nowhere)
        console.print(Text.from_ansi(ansi), end="")
    return console.export_svg(title="tracescore report results.jsonl")


def sources(work: Path) -> dict[str, str]:
    """The picture sources made from the sample traces in ``work``: ``{"report-terminal.svg": svg, "report.html":
    html}``."""
    shutil.copytree(REPO / "cookbook" / "data", work / "cookbook" / "data", dirs_exist_ok=True)
    _tracescore("score", "cookbook/data/traces.jsonl", "--out", "results.jsonl", "--store", "none", "-q", cwd=work)
    _tracescore("report", "results.jsonl", "--format", "html", "--out", "report.html", "--store", "none", cwd=work)
    terminal = _in_a_terminal("report", "results.jsonl", "--store", "none", cwd=work)
    return {"report-terminal.svg": _svg(terminal), "report.html": (work / "report.html").read_text(encoding="utf-8")}


def digests(made: dict[str, str]) -> dict[str, str]:
    return {name: hashlib.sha256(text.encode("utf-8")).hexdigest() for name, text in sorted(made.items())}


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        raise SystemExit("chromium not found: apt-get install chromium (Debian/Ubuntu)")
    return found


def _photograph(page: Path, png: Path, size: tuple[int, int], work: Path) -> None:
    profile = work / f"profile-{png.stem}"
    done = subprocess.run([_chromium(), *FLAGS, f"--user-data-dir={profile}", f"--window-size={size[0]},{size[1]}",
                           f"--screenshot={png}", page.as_uri()], capture_output=True, text=True, timeout=180,
                          check=False)  # fmt: skip
    if done.returncode != 0 or not png.is_file():
        raise SystemExit(f"chromium could not photograph {page.name}: {done.stderr[-2000:]}")


def make(out: Path) -> dict[str, str]:
    """Write the pictures, their SVG source and ``screenshots.json`` into ``out``; return the digests."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="tracescore-shots-") as tmp:
        work = Path(tmp)
        made = sources(work)
        svg = out / "report-terminal.svg"
        svg.write_text(made["report-terminal.svg"], encoding="utf-8")
        width, height = (round(float(v)) for v in re.findall(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', made[svg.name])[0])
        _photograph(svg, out / "report-terminal.png", (width, height), work)
        _photograph(work / "report.html", out / "report-html.png", HTML_WINDOW, work)
    sums = digests(made)
    (out / "screenshots.json").write_text(json.dumps(sums, indent=2) + "\n", encoding="utf-8")
    return sums


def check(out: Path) -> list[str]:
    """The pictures in ``out`` that are stale (their source, made again, differs) or missing."""
    recorded = json.loads((out / "screenshots.json").read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="tracescore-shots-") as tmp:
        now = digests(sources(Path(tmp)))
    stale = [name for name, digest in now.items() if recorded.get(name) != digest]
    missing = [p for p in ("report-terminal.png", "report-html.png", "report-terminal.svg") if not (out / p).is_file()]
    return stale + missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--out", type=Path, default=OUT, help="folder of the pictures (default: docs/images)")
    parser.add_argument("--check", action="store_true", help="only check that the pictures are current")
    args = parser.parse_args()
    if args.check:
        stale = check(args.out)
        if stale:
            raise SystemExit(f"stale screenshots ({', '.join(stale)}): run python scripts/screenshots.py")
        print("screenshots are current")
        return
    for name, digest in make(args.out).items():
        print(f"{name}: {digest[:12]}")


if __name__ == "__main__":
    main()
