"""The import graph of ``src/tracescore``: no cycle between modules or between packages, and no import from a lower
layer to a higher one (cli, api and integrations → report → engine → config → platforms → sinks → store → scorers →
judge/sources/adapters → contract), no module over 400 lines, and imports at module top except the optional SDKs."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "tracescore"

# Each top-level module or package of tracescore, and its layer: a module may import its own layer or lower ones.
LAYERS: dict[str, int] = {
    # 0: the contract and small shared helpers
    "errors": 0, "trace": 0, "scores": 0, "catalog": 0, "urls": 0, "limits": 0, "retry": 0, "result": 0, "secrets": 0,
    "version": 0, "reasons": 0, "jsontext": 0, "registry": 0, "entry_points": 0, "durations": 0, "session": 0,
    # 1: generic sources/adapters, the judge
    "sources": 1, "adapters": 1, "judge": 1, "links": 1,
    # 2: the pure scorers (the judge only through its protocol)
    "scorers": 2,
    # 3: generic sinks, the local store
    "sinks": 3, "store": 3, "calibrate": 3,
    # 4: one folder per platform, and their registry
    "platforms": 4,
    # 5: the config schema (core sections + each registered platform's)
    "config": 5, "sections": 5, "starter": 5,
    # 6: the one engine
    "engine": 6,
    # 7: report, gate, renderers
    "report": 7,
    # 8: the command line, the in-process API, the package root
    "cli": 8, "api": 8, "__init__": 8, "__main__": 8, "integrations": 8,
}

# Upward imports that exist today in files other engineers own, each with its way out; the list only shrinks.
KNOWN_UPWARD: set[tuple[str, str]] = set()


def _modules() -> dict[str, Path]:
    out = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        name = ".".join(p for p in parts if p != "__init__") or "__init__"
        out[name] = path
    return out


def _imports(name: str, path: Path) -> set[str]:
    """tracescore modules imported by ``name`` (anywhere in the file, TYPE_CHECKING blocks included)."""
    found = set()
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("tracescore.")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".") if package else []
                base = base[: len(base) - (node.level - 1)]
                module = ".".join([*base, node.module] if node.module else base)
                found.add("tracescore." + module)
            elif node.module and node.module.startswith("tracescore"):
                found.add(node.module)
                found |= {f"{node.module}.{a.name}" for a in node.names}
    modules = _modules()
    if "tracescore" in found:  # ``from tracescore import __version__`` imports the package root, not a submodule
        root = [n for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(n, ast.ImportFrom)]
        if any(n.module == "tracescore" and a.name not in modules for n in root for a in n.names):
            found.add("tracescore.__init__")
    return {m.removeprefix("tracescore.") for m in found if m.removeprefix("tracescore.") in modules}


def _top(module: str) -> str:
    return module.split(".")[0]


GRAPH = {name: _imports(name, path) - {name} for name, path in _modules().items()}


def test_every_module_has_a_layer() -> None:
    assert sorted({_top(m) for m in GRAPH} - set(LAYERS)) == []


def test_no_import_goes_up_a_layer() -> None:
    upward = sorted(
        (module, target)
        for module, targets in GRAPH.items()
        for target in targets
        if LAYERS[_top(target)] > LAYERS[_top(module)] and (module, target) not in KNOWN_UPWARD
    )
    assert upward == []


def test_the_known_exceptions_still_exist() -> None:
    """An exception that was fixed must leave the list, so the list cannot hide a new one."""
    assert sorted(e for e in KNOWN_UPWARD if e[1] not in GRAPH.get(e[0], set())) == []


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """The first import cycle of ``graph`` (module → modules it imports) as a path back to its start, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, set())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for module in sorted(graph):
        if module not in state and (cycle := visit(module)):
            return cycle
    return None


def test_no_import_cycle() -> None:
    """Module-level cycles (a package's ``__init__`` re-exporting its own modules is not a cycle)."""
    graph = {m: {t for t in ts if not (m.startswith(t + ".") and _is_package(t))} for m, ts in GRAPH.items()}
    assert _cycle(graph) is None


def test_the_cycle_check_finds_a_cycle() -> None:
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def _packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The package graph of a module graph: each top-level subpackage or module is a node, and one imports another
    when any of its modules imports any of the other's."""
    out: dict[str, set[str]] = {_top(m): set() for m in graph}
    for module, targets in graph.items():
        out[_top(module)] |= {_top(t) for t in targets} - {_top(module)}
    return out


def test_no_package_cycle() -> None:
    """Packages import one way: a cycle between two packages (``sinks`` → ``store`` → ``sinks``) is one even when
    no module-level cycle closes it."""
    assert _cycle(_packages(GRAPH)) is None


def test_the_package_check_finds_a_planted_cycle() -> None:
    assert _packages({"a.x": {"b.y"}, "b.y": set(), "b.z": {"a.w"}, "a.w": set()}) == {"a": {"b"}, "b": {"a"}}
    assert _cycle(_packages({"a.x": {"b.y"}, "b.z": {"a.w"}})) == ["a", "b", "a"]
    planted = {**GRAPH, "store.db": GRAPH["store.db"] | {"sinks.records"}}  # the store importing a sink
    cycle = _cycle(_packages(planted))
    assert cycle is not None and sorted(set(cycle)) == ["sinks", "store"]


def _is_package(module: str) -> bool:
    return _modules()[module].name == "__init__.py"


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_no_module_over_400_lines(module: str) -> None:
    lines = len(_modules()[module].read_text(encoding="utf-8").splitlines())
    assert lines <= 400, f"{module}: {lines} lines"


def _private_names(tree: ast.AST) -> set[str]:
    """The ``_names`` a module defines: methods, class attributes and ``self._x`` assignments (a ``Protocol``'s
    declarations are no definition: declaring another class's private fields is how one reaches into them)."""
    found: set[str] = set()

    def walk(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef) and any(ast.unparse(b).endswith("Protocol") for b in child.bases):
                continue
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                found.add(child.name)
            targets = child.targets if isinstance(child, ast.Assign) else [getattr(child, "target", None)]
            for target in targets:
                if isinstance(target, ast.Name) or isinstance(target, ast.Attribute) and _is_self(target.value):
                    found.add(target.id if isinstance(target, ast.Name) else target.attr)
            walk(child)

    walk(tree)
    return {name for name in found if name.startswith("_") and not name.startswith("__")}


def _is_self(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) and node.id in ("self", "cls")


def _foreign_privates(sources: dict[str, str]) -> list[str]:
    """``module: line: expr`` for each read of another object's ``_name`` that only other modules define (a module
    may use the privates of what it defines itself, and of the standard library, such as ``os._exit``)."""
    trees = {module: ast.parse(source) for module, source in sources.items()}
    defined = {module: _private_names(tree) for module, tree in trees.items()}
    everywhere = set().union(*defined.values())
    return sorted(
        f"{module}: {node.lineno}: {ast.unparse(node)}"
        for module, tree in trees.items()
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and not _is_self(node.value)
        and node.attr in everywhere - defined[module]
    )  # fmt: skip


def test_no_module_reads_another_modules_privates() -> None:
    """A module works with another through its public names: the engine's writer gets a narrow public ``Flight``,
    not a Protocol of the engine's private fields."""
    assert _foreign_privates({m: p.read_text(encoding="utf-8") for m, p in _modules().items()}) == []


def test_the_privates_check_finds_a_reach_inside() -> None:
    owner = "class Engine:\n    def __init__(self):\n        self._lock = 1\n    def _tally(self):\n        pass\n"
    reader = (
        "from typing import Protocol\nimport os\nclass E(Protocol):\n    _lock: int\n    def _tally(self): ...\n"
        "def loop(engine):\n    engine._tally()\n    os._exit(0)\n    return engine._lock\n"
    )
    found = _foreign_privates({"core": owner, "writer": reader})
    assert found == ["writer: 7: engine._tally", "writer: 9: engine._lock"]
    assert _foreign_privates({"core": owner + "def f(other):\n    return other._lock\n"}) == []


# Imported where used, so that ``import tracescore`` never pays for (or needs) them.
OPTIONAL = frozenset(
    {"anthropic", "langfuse", "langsmith", "pyarrow", "ray", "s3fs", "fsspec", "pandas", "httpx", "httpx2", "rapidfuzz"}
    | {"tenacity"}  # only the judge retries: deterministic scoring never loads it
    | {"sklearn"}
    | {"boto3", "botocore", "google"}  # the judge on Bedrock / Vertex AI only ([bedrock], [vertex] extras)
    | {"openai"}  # the judge on the Chat Completions API only ([openai] extra)
    | {"azure"}  # azure-identity: an Entra ID token for the judge on Azure OpenAI only ([azure] extra)
    | {"fcntl"}  # POSIX only: the store lock imports it when it locks, so the package still imports elsewhere
)


def _inner_imports(source: str) -> list[str]:
    """``line: import`` of every import inside a function or class body whose package is not in ``OPTIONAL``."""
    found: list[str] = []

    def walk(node: ast.AST, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if nested and isinstance(child, ast.Import | ast.ImportFrom):
                names = [a.name for a in child.names] if isinstance(child, ast.Import) else [child.module or "."]
                if getattr(child, "level", 0) or any(n.split(".")[0] not in OPTIONAL for n in names):
                    found.append(f"{child.lineno}: {ast.unparse(child)}")
            scope = isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda)
            walk(child, nested or scope)

    walk(ast.parse(source), False)
    return found


@pytest.mark.parametrize("module", sorted(GRAPH))
def test_imports_at_module_top(module: str) -> None:
    assert _inner_imports(_modules()[module].read_text(encoding="utf-8")) == []


def test_the_import_check_finds_an_import_in_a_function() -> None:
    source = "import json\nif json:\n    import re\ndef f():\n    import anthropic\n    from tracescore import trace\n"
    assert _inner_imports(source) == ["6: from tracescore import trace"]
    assert _inner_imports("class A:\n    def m(self):\n        import os.path\n") == ["3: import os.path"]
