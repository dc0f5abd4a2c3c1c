"""Scorers are pure and the engine uses only their public face (read from the source, so a new module is covered):

- ``engine/`` imports from ``tracescore.scorers`` only public names (no ``_``; a package's: its ``__all__``), and uses
  only public attributes of a scorer module it imports;
- the pipeline, which runs the scorers, knows them only by the package's public protocol (``tracescore.scorers``);
- no scorer module keeps mutable state at module level (a list, dict or set, or something built from one) or
  rebinds a global: whatever a scorer computes for one trace goes back in its ``Scored``, never into a slot that
  another scoring thread reads. (``functools.lru_cache`` of a pure function is allowed: thread-safe, and its
  answer depends only on its arguments.)
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src" / "tracescore"
ENGINE = sorted((SRC / "engine").rglob("*.py"))
SCORERS = sorted((SRC / "scorers").glob("*.py"))

_MUTABLE_DISPLAYS = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
_MUTABLE_CALLS = {"list", "dict", "set", "bytearray", "defaultdict", "deque", "OrderedDict", "Counter",
                  "WeakValueDictionary", "WeakKeyDictionary", "WeakSet"}  # fmt: skip
_READ_ONLY_CALLS = {"MappingProxyType", "frozenset", "tuple"}


def _public(module: str) -> set[str]:
    """The public names of ``module``: its ``__all__`` when it declares one (a package), else every name without a
    leading ``_`` (internal modules declare no ``__all__``: issue #49)."""
    found = importlib.import_module(module)
    return set(getattr(found, "__all__", None) or (n for n in vars(found) if not n.startswith("_")))


def _scorer_imports(path: Path) -> list[tuple[str, str, int]]:
    """(module, name, line) of every ``from tracescore.scorers... import name`` in ``path``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tracescore.scorers"):
            out += [(node.module, a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, "", node.lineno) for a in node.names if a.name.startswith("tracescore.scorers")]
    return out


def _private_uses(path: Path) -> list[str]:
    """Private names the engine file imports or reads from a scorer module."""
    bad = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules: dict[str, str] = {}  # local name -> scorer module, for ``from tracescore.scorers import surface``
    for module, name, line in _scorer_imports(path):
        if not name:
            bad.append(f"{path.name}:{line}: import {module} (import the public names instead)")
        elif module == "tracescore.scorers" and importlib.util.find_spec(f"{module}.{name}") is not None:
            modules[name] = f"{module}.{name}"
        elif name.startswith("_") or name not in _public(module):
            bad.append(f"{path.name}:{line}: {name} is not public in {module}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
            module = modules[node.value.id]
            if node.attr.startswith("_") or node.attr not in _public(module):
                bad.append(f"{path.name}:{node.lineno}: {node.value.id}.{node.attr} is not public in {module}")
    return bad


def _mutable(value: ast.expr) -> bool:
    """A module-level value that is, or is built around, a mutable container."""
    if isinstance(value, _MUTABLE_DISPLAYS):
        return True
    if isinstance(value, ast.BinOp):  # {...} | {...}
        return _mutable(value.left) or _mutable(value.right)
    if isinstance(value, ast.Call):
        called = value.func.id if isinstance(value.func, ast.Name) else getattr(value.func, "attr", "")
        if called in _READ_ONLY_CALLS:
            return False
        return called in _MUTABLE_CALLS or any(_mutable(a) for a in [*value.args, *(k.value for k in value.keywords)])
    return False


def _module_state(path: Path) -> list[str]:
    bad = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if value is not None and names != ["__all__"] and _mutable(value):
            bad.append(f"{path.name}:{node.lineno}: {', '.join(names)} is mutable module state")
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            bad.append(f"{path.name}:{node.lineno}: global {', '.join(node.names)}")
    return bad


@pytest.mark.parametrize("path", ENGINE, ids=lambda p: str(p.relative_to(SRC)))
def test_the_engine_uses_only_public_names_of_the_scorers(path: Path) -> None:
    assert _private_uses(path) == []


def test_the_pipeline_knows_scorers_only_by_the_package_protocol() -> None:
    """The pipeline knows a scorer by its protocol (``Scored``, ``Scorer``) and derives the diagnosis: no scorer's
    internals, no fixed list (the registry chooses them: engine/plan.py)."""
    imports = _scorer_imports(SRC / "engine" / "pipeline.py")
    modules = {module for module, _, _ in imports}
    assert imports and modules == {"tracescore.scorers.scored", "tracescore.scorers.diagnosis"}, imports


@pytest.mark.parametrize("path", SCORERS, ids=lambda p: p.name)
def test_no_scorer_module_keeps_mutable_state(path: Path) -> None:
    assert _module_state(path) == []


def test_the_checks_catch_what_they_are_for(tmp_path: Path) -> None:
    """Each check fails on the code it forbids (a memo slot, a rebound global, a private import, a module import)."""
    scorer = tmp_path / "memo.py"
    scorer.write_text(
        "_LAST: list[int] = [0]\n_SEEN = {'a': 1} | {'b': 2}\n_BOX = Holder([], {})\nOK = frozenset({1})\n"
        "ROOM = MappingProxyType({'a': 1})\n__all__ = ['x']\n"
        "def f():\n    global _N\n    _N = 1\n",
        encoding="utf-8",
    )
    assert [b.split(": ", 1)[1] for b in _module_state(scorer)] == [
        "_LAST is mutable module state",
        "_SEEN is mutable module state",
        "_BOX is mutable module state",
        "global _N",
    ]
    engine = tmp_path / "pipeline.py"
    engine.write_text(
        "from tracescore.scorers.citations import _rows_of, citation_rows\n"
        "from tracescore.scorers.grounding import grounding_scorer\n"
        "from tracescore.scorers import surface\nimport tracescore.scorers.answer\n"
        "surface._verified_labels\nsurface.surface_scorer\n",
        encoding="utf-8",
    )
    assert [b.split(": ", 1)[1] for b in _private_uses(engine)] == [
        "_rows_of is not public in tracescore.scorers.citations",
        "import tracescore.scorers.answer (import the public names instead)",
        "surface._verified_labels is not public in tracescore.scorers.surface",
    ]
    imports = {module for module, _, _ in _scorer_imports(engine)}
    assert imports != {"tracescore.scorers"}  # what the pipeline check rejects
