"""A platform is one folder: outside ``platforms/``, the command line, the engine, calibration and the config schema
name no platform, import none of a platform's modules and build no client; they ask the registry."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tracescore.platforms import registry

SRC = Path(__file__).resolve().parents[1] / "src" / "tracescore"
CHECKED = [SRC / "cli", SRC / "engine", SRC / "calibrate", SRC / "config.py"]
_SHARED = {"base", "registry", "inspect"}  # platforms/ modules every caller may import: the contract, the registry


def _files(roots: list[Path]) -> list[Path]:
    return sorted(p for root in roots for p in ([root] if root.is_file() else root.rglob("*.py")))


def offenders(path: Path) -> list[str]:
    """Where ``path`` names a platform: its name in any text (the default JSONL aside, whose name is also the file
    format's), any platform name as a whole string literal (``kind == "jsonl"``), an import of a platform's own
    modules."""
    text = path.read_text(encoding="utf-8")
    names = registry.names()
    found = []
    words = re.compile("|".join(re.escape(n) for n in names if n != names[0]), re.IGNORECASE)  # names[0]: the default
    for n, line in enumerate(text.splitlines(), 1):
        for match in words.finditer(line):
            found.append(f"{path.name}:{n}: names {match.group(0)!r}")
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names:
            found.append(f"{path.name}:{node.lineno}: the literal {node.value!r}")
        modules = (
            [a.name for a in node.names] if isinstance(node, ast.Import)
            else [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        )
        for module in modules:
            parts = module.split(".")
            if parts[:2] == ["tracescore", "platforms"] and len(parts) > 2 and parts[2] not in _SHARED:
                found.append(f"{path.name}:{node.lineno}: imports {module}")
    return found


def test_no_platform_is_named_outside_platforms() -> None:
    found = [line for path in _files(CHECKED) for line in offenders(path)]
    assert found == []


def test_the_checker_catches_a_planted_name(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(
        "from tracescore.platforms.jsonl.platform import adapter\n"
        'TARGETS = ("push", "calibrate")  # LangSmith only\n'
        'if kind == "jsonl":\n'
        "    pass\n",
        encoding="utf-8",
    )
    found = offenders(planted)
    assert any("names 'LangSmith'" in f for f in found), found
    assert any("the literal 'jsonl'" in f for f in found), found
    assert any("imports tracescore.platforms.jsonl.platform" in f for f in found), found
    clean = tmp_path / "clean.py"
    clean.write_text("from tracescore.platforms import registry\nTARGETS = registry.push_targets()\n")
    assert offenders(clean) == []


def test_the_choices_come_from_what_each_platform_declares() -> None:
    platforms = registry.platforms()
    assert registry.push_targets() == [n for n in registry.names() if platforms[n].push] != []
    assert registry.queue_targets() == [n for n in registry.names() if platforms[n].queue is not None] != []
    for option, owners in registry.options("score"):
        assert all(option in platforms[o].options for o in owners)
