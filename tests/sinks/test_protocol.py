"""One sink protocol: every sink is a ``Sink`` (write a batch, attach the store, preview removals), its optional
abilities are typed methods with documented defaults, and nothing in ``src`` asks an object whether it has one."""

from __future__ import annotations

import ast
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_type_hints

from tracescore.platforms.base import Parts, SourceStats
from tracescore.platforms.langfuse.platform import LangfuseJobSink
from tracescore.platforms.langsmith.platform import LangSmithJobSink
from tracescore.result import TraceResult
from tracescore.scores import absent, score
from tracescore.sinks.base import BatchWriter, Sink
from tracescore.sinks.jsonl import JsonlSink
from tracescore.sinks.records import WriteReport
from tracescore.store.db import Store

SRC = Path(__file__).resolve().parents[2] / "src" / "tracescore"
# what a sink, a source or its stats may or may not have: asked with getattr/hasattr, each was an implicit contract
ABILITIES = {"attach", "preview", "shards", "as_dict", "stats", "write", "flush", "records", "read", "keep_versions"}


def _trees() -> dict[Path, ast.Module]:
    return {p: ast.parse(p.read_text(encoding="utf-8")) for p in sorted(SRC.rglob("*.py"))}


def _base_names(node: ast.ClassDef) -> set[str]:
    names = set()
    for base in node.bases:
        base = base.value if isinstance(base, ast.Subscript) else base
        if isinstance(base, ast.Name):
            names.add(base.id)
        elif isinstance(base, ast.Attribute):
            names.add(base.attr)
    return names


def test_every_class_that_writes_batches_of_results_is_a_sink() -> None:
    classes = [n for tree in _trees().values() for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    sinks = {"Sink"}
    while True:  # subclasses of subclasses, by name across the package
        more = {c.name for c in classes if _base_names(c) & sinks} - sinks
        if not more:
            break
        sinks |= more
    writers = {
        c.name
        for c in classes
        for f in c.body
        if isinstance(f, ast.FunctionDef) and f.name == "write" and [a.arg for a in f.args.args] == ["self", "results"]
    }
    assert writers and writers <= sinks, writers - sinks
    for cls in (LangfuseJobSink, LangSmithJobSink, JsonlSink, BatchWriter):
        assert Sink in cls.__mro__, cls  # declared, so mypy checks each method against the protocol


def test_the_optional_abilities_have_documented_defaults(tmp_path: Path) -> None:
    for name in ("write", "attach", "preview"):
        assert (getattr(Sink, name).__doc__ or "").strip(), name
    out = JsonlSink(tmp_path / "r.jsonl")
    result = TraceResult(trace_id="t-1", timestamp=datetime(2026, 11, 20, tzinfo=UTC))
    for s in (score("answer.correct", True), absent("answer.token_f1", "no gold_answer label")):
        result.scores[s.name] = s
    with Store(tmp_path / "s.db") as store:
        assert out.attach(store, "run-1") is None
        assert out.preview(store, ["t-1"]) is None  # nothing a results file holds is ever removed
    report = out.write([result])
    out.close()
    assert isinstance(report, WriteReport) and report.accepted == 1 and report.batches == 1
    line = json.loads((tmp_path / "r.jsonl").read_text(encoding="utf-8"))
    assert line["trace_id"] == "t-1" and line["missing"] == {"answer.token_f1": "no gold_answer label"}


def test_parts_are_typed() -> None:
    hints = get_type_hints(Parts)
    assert hints["stats"] == SourceStats | None and hints["sink"] == Sink | None
    assert Any not in (hints["stats"], hints["sink"], hints["sharded"])


def test_no_ability_is_probed_with_getattr_or_hasattr() -> None:
    probes = []
    for path, tree in _trees().items():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("getattr", "hasattr")
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in ABILITIES
            ):
                probes.append(f"{path.relative_to(SRC)}:{node.lineno}: {node.func.id}(…, {node.args[1].value!r})")
    assert probes == []
