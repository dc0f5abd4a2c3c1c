"""Issue #10 items 8, 11, 12: what ``score`` says about its input, its progress and a judge that always fails."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import REPO
from tests.fakes.anthropic import FakeAnthropic
from tests.fakes.base import Request, Response
from tracescore.cli import main
from tracescore.cli.progress import Progress
from tracescore.sources.base import Record

SAMPLES = REPO / "cookbook" / "data" / "traces.jsonl"


def _score(tmp_path: Path, *args: str, env: dict[str, str | None] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["score", *args, "--store", str(tmp_path / "s.db")], env=env or {})
    return result.exit_code, result.stdout, result.stderr


def test_a_pretty_printed_json_file_is_one_line_not_one_error_per_line(tmp_path: Path) -> None:
    path = tmp_path / "export.json"
    path.write_text(json.dumps([json.loads(line) for line in SAMPLES.read_text().splitlines()[:3]], indent=2))
    code, out, err = _score(tmp_path, str(path))
    assert code == 1
    assert "is not JSONL: it looks like a pretty-printed JSON document" in err
    assert len(err.strip().splitlines()) == 1 and "line 2" not in err


def test_a_json_array_on_one_line_and_a_binary_file_are_one_line_each(tmp_path: Path) -> None:
    array = tmp_path / "a.json"
    array.write_text(json.dumps([json.loads(SAMPLES.read_text().splitlines()[0])]))
    binary = tmp_path / "b.bin"
    binary.write_bytes(bytes(range(256)) * 40)
    for path, what in ((array, "it is a JSON array"), (binary, "it looks like a binary file")):
        code, _, err = _score(tmp_path, str(path))
        assert code == 1 and what in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(
    ("first", "why"),
    [
        (b'{"id": "nul", "question": "a raw NUL \x00 in a string", "steps": []}', "not JSON"),
        (b"[]", "line 1"),
        (b'[{"id": "in-an-array", "question": "q"}]', "line 1"),
        (b'{"id": "cut", "question": "a line cut off after {', "line 1"),
    ],
)
def test_one_bad_line_at_the_start_of_a_jsonl_file_is_one_error_not_the_whole_file(
    tmp_path: Path, first: bytes, why: str
) -> None:
    """A NUL byte or a broken first line used to refuse the whole file as "binary" or "not JSONL" (all lines lost)."""
    good = SAMPLES.read_bytes().splitlines(keepends=True)[:3]
    path = tmp_path / "t.jsonl"
    path.write_bytes(first + b"\n" + b"".join(good))
    out = tmp_path / "out.jsonl"
    code, _, err = _score(tmp_path, str(path), "--out", str(out), "--no-judge")
    assert code == 1, err
    assert "is not JSONL" not in err and "1 of 4 lines could not be scored" in err, err
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 4 and lines[0]["line"] == 1 and why in lines[0]["errors"][0], lines[0]
    assert [bool(line["scores"]) for line in lines[1:]] == [True] * 3


def test_a_json_array_written_one_object_per_line_is_still_one_line(tmp_path: Path) -> None:
    """Its last object line parses, but it is not JSONL: one clear line, not an error per line."""
    traces = [json.loads(line) for line in SAMPLES.read_text().splitlines()[:5]]
    path = tmp_path / "array.json"
    path.write_text("[\n" + ",\n".join(json.dumps(t) for t in traces) + "\n]\n")
    code, _, err = _score(tmp_path, str(path))
    assert code == 1 and "is not JSONL: it looks like a pretty-printed JSON document" in err, err
    assert len(err.strip().splitlines()) == 1


def test_a_file_with_carriage_return_line_ends_says_so(tmp_path: Path) -> None:
    path = tmp_path / "mac.jsonl"
    path.write_bytes(b"\r".join(SAMPLES.read_bytes().splitlines()[:3]) + b"\r")
    code, _, err = _score(tmp_path, str(path))
    assert code == 1 and "its lines end with a carriage return only" in err, err
    assert len(err.strip().splitlines()) == 1


def test_an_empty_file_is_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\n")
    code, _, err = _score(tmp_path, str(path), "-q")
    assert code == 0
    assert "warning:" in err and "empty" in err


def test_out_dash_writes_the_results_to_stdout(tmp_path: Path) -> None:
    code, out, _ = _score(tmp_path, str(SAMPLES), "--out", "-", "-q")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert len(rows) == 38 and rows[0]["trace_id"]
    assert not (Path.cwd() / "-").exists()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_on_a_terminal_shows_count_rate_and_eta_and_is_quiet_otherwise() -> None:
    now = [0.0]
    shown = _Terminal()
    progress = Progress(str(SAMPLES), stream=shown, clock=lambda: now[0])
    size = SAMPLES.stat().st_size
    records = progress.counted(iter([Record(payload=b"{}", line=1, size=size // 4)]))
    list(records)
    now[0] = 2.0
    progress.update(10)
    assert "scoring: 10 traces, 5.0/s, ETA 0m06s" in shown.getvalue()
    piped = io.StringIO()
    silent = Progress(str(SAMPLES), stream=piped, clock=lambda: now[0])
    now[0] = 4.0
    silent.update(10)
    assert piped.getvalue() == ""


def test_langsmith_without_the_extra_is_one_line_with_the_install_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "langsmith", None)  # as if `pip install tracescore` without [langsmith]
    code, out, err = _score(tmp_path, "--source", "langsmith", "--project", "p", "--from", "2026-11-01")
    assert code == 2
    assert "pip install 'tracescore[langsmith]'" in err and "Traceback" not in out + err


def test_every_judge_call_failing_is_one_line_with_the_cause_and_a_non_zero_exit(tmp_path: Path) -> None:
    lines = SAMPLES.read_text().splitlines()[:2]
    path = tmp_path / "two.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with FakeAnthropic() as fake:
        def refuse(request: Request) -> Response:
            return Response(401, {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}})

        fake.handle = refuse  # type: ignore[method-assign]
        code, _, err = _score(tmp_path, str(path), "-q",
                              env={"ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": fake.url})
    assert code == 4
    # two traces: grounding, the surface oracle and the semantic match each fail (no call succeeds)
    assert re.search(r"judge: (\d+) of \1 calls failed: HTTP 401", err), err


def test_quiet_prints_no_table_but_still_says_which_lines_failed(tmp_path: Path) -> None:
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(SAMPLES.read_bytes() + b'{"id": "broken", "steps": [\n')
    loud = _score(tmp_path, str(path), "--out", str(tmp_path / "a.jsonl"), "--no-judge")
    quiet = _score(tmp_path, str(path), "--out", str(tmp_path / "b.jsonl"), "--no-judge", "-q")
    assert loud[0] == quiet[0] == 1
    assert "Stage contingency" in loud[1] + loud[2] and "Stage contingency" not in quiet[1] + quiet[2]
    assert "1 of 39 lines could not be scored" in quiet[2]
    assert (tmp_path / "a.jsonl").read_bytes() == (tmp_path / "b.jsonl").read_bytes()
