"""Exit codes live on the error classes (``exit_code``, click's way) and are applied in one place, ``cli/main.py``;
a command that did its work ends with an outcome code of ``cli/exits.py``; the README's table lists exactly these."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import tracescore.cli.exits as exits
import tracescore.cli.job as job
from tests.conftest import REPO
from tests.docs_pages import built
from tracescore import errors
from tracescore.cli import main
from tracescore.cli.exits import OUTCOMES, end
from tracescore.engine.interrupt import SIGNALS
from tracescore.errors import Interrupted, LockError, TracescoreError
from tracescore.store.lock import StoreLock

SRC = REPO / "src" / "tracescore"
_TREE = [c for c in vars(errors).values() if isinstance(c, type) and issubclass(c, TracescoreError)]
_EXPECTED = {
    "TracescoreError": 4, "ConfigError": 2, "MissingInputError": 2, "InputError": 1, "AdapterError": 1,
    "InputShapeError": 2, "NoResultsError": 6, "NothingToDoError": 6, "OutputError": 4, "SourceError": 4,
    "SinkError": 4, "StoreError": 4, "JudgeError": 4, "LockError": 3,
}  # fmt: skip


def test_every_error_class_carries_its_own_exit_code() -> None:
    assert sorted(kind.__name__ for kind in _TREE) == sorted(_EXPECTED)
    for kind in _TREE:
        assert isinstance(vars(kind).get("exit_code"), int), f"{kind.__name__} declares no exit_code of its own"
        assert kind.exit_code == _EXPECTED[kind.__name__], kind.__name__


def _planted(error: BaseException) -> click.Command:
    @click.command("boom")
    def boom() -> None:
        raise error

    return boom


@pytest.mark.parametrize("kind", _TREE, ids=lambda kind: kind.__name__)
def test_each_error_exits_through_main_with_its_code_and_one_line(
    kind: type[TracescoreError], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(main.commands, "boom", _planted(kind(f"{kind.__name__} happened; fix it")))
    result = CliRunner().invoke(main, ["boom"])
    assert result.exit_code == kind.exit_code, result.output
    assert result.stderr == f"tracescore: {kind.__name__} happened; fix it\n"
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_the_one_exit_redacts_what_a_message_gained_later(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-SECRET-5d8f")
    error = errors.SinkError("plain")
    error.args = ("backfill stopped: the server echoed sk-ant-SECRET-5d8f",)  # as job's ``_stopped`` prefixes one
    monkeypatch.setitem(main.commands, "boom", _planted(error))
    result = CliRunner().invoke(main, ["boom"])
    assert result.exit_code == 4
    assert result.stderr == "tracescore: backfill stopped: the server echoed ***\n"


def test_an_error_not_ours_is_a_bug_and_keeps_its_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(main.commands, "boom", _planted(KeyError("a bug")))
    result = CliRunner().invoke(main, ["boom"])
    assert isinstance(result.exception, KeyError)


def _config(tmp_path: Path) -> Path:
    (tmp_path / "t.jsonl").write_text("")
    path = tmp_path / "tracescore.toml"
    traces, store = tmp_path / "t.jsonl", tmp_path / "s.db"
    path.write_text(f'[source]\nkind = "jsonl"\npath = "{traces}"\n\n[job]\nstore = "{store}"\n')
    return path


def test_a_held_lock_gives_the_same_code_under_every_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``run`` takes the store's lock itself; under ``score`` and ``calibrate`` the real lock's error is raised where
    they open their config and store (they take no lock today): each exits 3, as ``LockError.exit_code`` says."""
    store = tmp_path / "s.db"

    def locked(*_: object, **__: object) -> None:
        StoreLock(store, "tracescore score").acquire()  # held below: the real LockError, naming the holder

    config = str(_config(tmp_path))
    with StoreLock(store, "tracescore backfill"):
        ran = CliRunner().invoke(main, ["run", "--config", config])
        monkeypatch.setattr("tracescore.cli.score.load_config", locked)
        scored = CliRunner().invoke(main, ["score", str(tmp_path / "t.jsonl"), "--store", str(store), "-q"])
        monkeypatch.setattr("tracescore.cli.calibrate.Store", locked)
        sampled = CliRunner().invoke(main, ["calibrate", "sample", "--to", str(tmp_path / "x.csv")])
    assert [r.exit_code for r in (ran, scored, sampled)] == [3, 3, 3], [r.output for r in (ran, scored, sampled)]
    assert LockError.exit_code == 3
    for result in (ran, scored, sampled):
        (line,) = result.stderr.splitlines()
        assert line.startswith("tracescore: another run holds the lock") and "tracescore backfill" in line


_EXITS = {"exit", "fail", "_fail"}
_TABLES = {SRC / "cli" / "exits.py", SRC / "cli" / "main.py", SRC / "errors.py"}


def _called(func: ast.expr) -> str:
    """``fail``, ``sys.exit``, ``SystemExit``, ``end``: the name of what is called (methods such as click's
    ``ParamType.fail``, ``counts.fail`` or ``match.end`` are not exits; nor is a worker's ``os._exit``)."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "sys":
        return func.attr
    return ""


def hand_mapped(source: str) -> list[str]:
    """Exits a module makes by hand: ``fail(…)``/``sys.exit(…)``/``SystemExit(…)`` calls, an ``end(…)`` whose code is
    not a named outcome of ``cli/exits.py``, and module-level aliases of exit codes or of an exit function."""
    found: list[str] = []
    outcomes = {name for name in vars(exits) if name.startswith("EXIT_")}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = _called(node.func)
            if name in _EXITS | {"SystemExit"}:
                found.append(f"line {node.lineno}: {ast.unparse(node)[:60]}")
            elif name == "end" and not (node.args and isinstance(arg := node.args[0], ast.Name) and arg.id in outcomes):
                found.append(f"line {node.lineno}: {ast.unparse(node)[:60]} (not a named outcome)")
        elif isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
            value = node.value.id if isinstance(node.value, ast.Name) else ""
            if any(n.startswith("EXIT_") for n in names) or value in _EXITS | {"end"}:
                found.append(f"line {node.lineno}: {ast.unparse(node)[:60]} (an alias)")
    return sorted(found, key=lambda hit: int(hit.split(":")[0].removeprefix("line ")))


def test_no_exit_is_mapped_by_hand_outside_the_tables() -> None:
    planted = (
        "fail(EXIT_USAGE, 'x')\nsys.exit(EXIT_INPUT)\nraise SystemExit(2)\nend(2, 'x')\n"
        "EXIT_BAD_CONFIG = EXIT_USAGE\n_fail = fail\nself.fail('a bad value', param, ctx)\nend(EXIT_GAPS, 'gaps')\n"
        "counts.fail('a trace')\nmatch.end()\nos._exit(1)\n"
    )
    assert [line.split(":")[0] for line in hand_mapped(planted)] == [f"line {n}" for n in range(1, 7)]
    found = {
        str(path.relative_to(SRC)): hits
        for path in sorted(SRC.rglob("*.py"))
        if path not in _TABLES and (hits := hand_mapped(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_the_dead_aliases_are_gone() -> None:
    for name in ("EXIT_TRACE_FAILURES", "EXIT_BAD_CONFIG", "_fail", "_exits"):
        assert not hasattr(job, name), name
    for name in ("ERROR_CODES", "exit_on_error", "fail", "EXIT_USAGE", "EXIT_ABORTED", "EXIT_LOCKED"):
        assert not hasattr(exits, name), name


def test_end_takes_only_an_outcome() -> None:
    with pytest.raises(SystemExit) as ended:
        end(exits.EXIT_GAPS)
    assert ended.value.code == 5
    with pytest.raises(ValueError, match="raise the error class instead"):
        end(errors.ConfigError.exit_code)


def _readme_codes(heading: str, path: str = "reference/exit-codes.md") -> set[int]:
    section = built(path).split(heading, 1)[1].split("\n#", 1)[0]
    return {int(m) for m in re.findall(r"^\| `?(\d+)`? \|", section, re.M)}


def test_the_readme_table_holds_every_exit_code_and_only_those() -> None:
    produced = (
        {kind.exit_code for kind in _TREE}
        | set(OUTCOMES)
        | {Interrupted(sig).exit_code for sig in SIGNALS}
        | {click.UsageError.exit_code}  # click's own: a bad option (2, as ConfigError)
    )
    assert _readme_codes("### What each code means, command by command") == produced  # the hand-written table
    generated = built("reference/exit-codes.md").split("## Exit codes (every command)", 1)[1].split("\n#", 1)[0]
    classes = {int(m) for m in re.findall(r"^\| [^|\n]*`\w+`[^|\n]* \| (\d+) \|", generated, re.M)}
    assert classes | _readme_codes("## Exit codes (every command)") == produced  # the generated tables
    assert _readme_codes("Exit status of `tracescore gate` and `tracescore report`:", "guides/ci-gate.md") <= produced
