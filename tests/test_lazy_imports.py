"""Heavy SDKs are imported where used: scoring a JSONL file never imports the langfuse SDK (nor httpx)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_score_jsonl_does_not_import_langfuse(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from tracescore.cli import main\n"
        f"r = CliRunner().invoke(main, ['score', {str(ROOT / 'cookbook/data/traces.jsonl')!r}, '-q', "
        f"'--store', {str(tmp_path / 'ts.db')!r}])\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('langfuse', 'httpx', 'opentelemetry'))\n"
        "print(r.exit_code, heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
    exit_code, heavy = out.stdout.strip().split(" ", 1)
    assert exit_code == "0"
    assert heavy == "[]"
