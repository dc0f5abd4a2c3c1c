"""Each score name is written once, by the scorer that declares it (#29 item 4, #46): the name is a literal in exactly
one module of ``src/tracescore``, the one holding its ``ScoreSpec``; every other module imports the name from there
or reads the catalog (the registry's view), so renaming a score, or asking "where is it computed, named and
written?", takes one file: its scorer's. And each scorer option has one default: the scorer's signature.

A score-name literal is a string constant of the code (docstrings and help prose aside) that is a catalog name
(``"grounding.rate"``, ``"retrieval.recall_at_5"``, the ``{k}`` template), the start of one built on
(``"retrieval.recall_at_"``, ``"surface."``), a name quoted as an SQL literal inside a query, or an f-string that
builds one (``f"surface.{cell}"``).
"""

from __future__ import annotations

import ast
import inspect
import re
from functools import lru_cache
from pathlib import Path

import pytest

import tracescore
from tracescore import catalog, registry
from tracescore.scorers.diagnosis import DIAGNOSIS
from tracescore.scorers.trajectory import SEARCH_CALLS

SRC = Path(tracescore.__file__).parent
_BUILTIN = [e for e in catalog.entries() if e.package.startswith("tracescore ")]
_EXAMPLES = tuple(re.sub(r"\{\w+\}", "5", e.name) for e in _BUILTIN)  # a concrete name per entry
_PREFIXES = frozenset(n[: i + 1] for n in _EXAMPLES for i, ch in enumerate(n) if ch in "._" and i + 1 < len(n))
_QUOTED = re.compile("'(" + "|".join(re.escape(n).replace("_5", r"_\d+") for n in _EXAMPLES) + ")'")


def _docstrings(tree: ast.AST) -> set[int]:
    """The string constants that are statements of their own (docstrings of modules, classes, functions, attributes),
    and the stage names of a ``STAGES`` tuple (the diagnosis stage shares its one score's name)."""
    docs = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }
    for node in ast.walk(tree):
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and target.id == "STAGES" and isinstance(node.value, ast.Tuple):
            docs.update(id(e) for e in node.value.elts)
    return docs


_NAMES = frozenset(e.name for e in _BUILTIN)
_TEMPLATED = tuple(e for e in _BUILTIN if "{" in e.name)


def _is_literal(text: str) -> bool:
    if text in _NAMES or text in _PREFIXES or any(e.matches(text) for e in _TEMPLATED):
        return True
    return "'" in text and _QUOTED.search(text) is not None


def _fstring_builds_a_name(node: ast.JoinedStr) -> bool:
    parts = [p.value if isinstance(p, ast.Constant) else None for p in node.values]
    fixed = "".join(p for p in parts if isinstance(p, str))
    if not re.search("[a-z]", fixed):
        return False
    shape = re.compile("".join(".+" if p is None else re.escape(str(p)) for p in parts))
    return any(shape.fullmatch(n) for n in _EXAMPLES)


@lru_cache(maxsize=1024)
def _parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=8)
def literals(root: Path) -> dict[str, list[tuple[int, str]]]:
    """Relative path → (line, text) of every score-name literal under ``root``."""
    found: dict[str, list[tuple[int, str]]] = {}
    for path in sorted(root.rglob("*.py")):
        tree = _parsed(path)
        docs = _docstrings(tree)
        inside_fstrings = set()
        hits = []
        for node in ast.walk(tree):
            if isinstance(node, ast.JoinedStr):
                inside_fstrings.update(id(v) for v in node.values)
                if _fstring_builds_a_name(node):
                    hits.append((node.lineno, ast.unparse(node)))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                if id(node) not in inside_fstrings and _is_literal(node.value):
                    hits.append((node.lineno, node.value))
        if hits:
            found[path.relative_to(root).as_posix()] = sorted(hits)
    return found


def _declaring_module(name: str) -> str:
    """The module (relative to src/tracescore) whose ``ScoreSpec`` declares ``name``: the file holding the spec's
    call (a family module beside its scorer, e.g. hops.py for the retrieval scorer's hop scores)."""
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(_parsed(path)):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "ScoreSpec" and node.args:
                first = node.args[0]
                value = first.value if isinstance(first, ast.Constant) else None
                if value is None and isinstance(first, ast.Name):  # ScoreSpec(GROUNDING_RATE, ...): its assignment
                    value = _assigned(_parsed(path), first.id)
                if value == name:
                    return path.relative_to(SRC).as_posix()
    raise AssertionError(f"no ScoreSpec declares {name!r}")


def _assigned(tree: ast.Module, constant: str) -> object:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == constant for t in node.targets):
            return node.value.value if isinstance(node.value, ast.Constant) else None
    return None


def test_each_score_name_is_a_literal_only_in_the_module_declaring_it() -> None:
    found = literals(SRC)
    for e in _BUILTIN:
        where = [f for f, hits in found.items() if any(text == e.name for _, text in hits)]
        assert where == [_declaring_module(e.name)], f"{e.name}: written in {where}, declared in one module only"
    declaring = {_declaring_module(e.name) for e in _BUILTIN}
    outside = {f: hits for f, hits in found.items() if f not in declaring}
    assert outside == {}, f"score names written outside their scorer (import its constant): {outside}"
    assert "catalog.py" not in found  # the catalog is a view: it writes no name


def test_the_scan_catches_every_form_of_a_planted_literal(tmp_path: Path) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(
        '"""A docstring may say grounding.rate and "surface.smart" freely."""\n'
        'def f(scores, cell, store):\n'
        '    """So may ``citation.drift_rate`` here."""\n'
        '    a = scores.get("citation.drift_rate")\n'
        '    b = scores["retrieval.recall_at_3"]\n'
        '    c = [n for n in scores if n.startswith("retrieval.recall_at_")]\n'
        '    d = scores.get(f"surface.{cell}")\n'
        "    e = store.query(\"SELECT 1 FROM scores WHERE name = 'grounding.rate'\")\n"
        '    g = f"{cell}: {a}"  # not a name\n'
        '    h = "grounding"  # a stage, not a score\n'
        "    return a, b, c, d, e, g, h\n",
        encoding="utf-8",
    )
    (tmp_path / "clean.py").write_text("from tracescore.scorers.grounding import GROUNDING_RATE\nX = GROUNDING_RATE\n")
    assert literals(tmp_path) == {
        "planted.py": [
            (4, "citation.drift_rate"),
            (5, "retrieval.recall_at_3"),
            (6, "retrieval.recall_at_"),
            (7, "f'surface.{cell}'"),
            (8, "SELECT 1 FROM scores WHERE name = 'grounding.rate'"),
        ]
    }


def _uses(root: Path, constant: str) -> set[str]:
    out = set()
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(_parsed(path)):
            used = (
                (isinstance(node, ast.Name) and node.id == constant)
                or (isinstance(node, ast.Attribute) and node.attr == constant)
                or (isinstance(node, ast.ImportFrom) and any(a.name == constant for a in node.names))
            )
            if used:
                out.add(path.relative_to(root).as_posix())
    return out


def test_drift_rate_is_named_declared_and_computed_in_its_scorer_only() -> None:
    """The newcomer's question, "where is ``citation.drift_rate`` computed, named and written?": its scorer's module
    names, declares and computes it; the sinks write every score by its catalog entry, naming none."""
    name = "citation.drift_rate"
    found = catalog.entry(name)
    assert found is not None and found.scorer == "grounding" and found.stage == "citations"
    assert _declaring_module(name) == "scorers/grounding.py"
    assert _uses(SRC, "CITATION_DRIFT_RATE") == {"scorers/grounding.py"}
    assert [f for f, hits in literals(SRC).items() if any(name in t for _, t in hits)] == ["scorers/grounding.py"]


def test_versions_live_only_in_the_scorers_declarations_and_every_entry_says_why_it_can_be_absent() -> None:
    loaded = registry.load()
    builtin = [i for i in loaded.installed.values() if i.builtin]
    assert {i.name for i in builtin} >= {"retrieval", "citations", "answer", "grounding", "surface", "diagnosis"}
    for inst in builtin:
        version = inst.scorer.version
        where = [p.relative_to(SRC).as_posix() for p in sorted(SRC.rglob("*.py"))
                 if any(isinstance(n, ast.Constant) and n.value == version for n in ast.walk(_parsed(p)))]  # fmt: skip
        assert where == [inspect.getsourcefile(inst.scorer.func).split("src/tracescore/", 1)[1]], (version, where)  # type: ignore[union-attr]
    for path in sorted(SRC.rglob("*.py")):
        names = {n.id for n in ast.walk(_parsed(path)) if isinstance(n, ast.Name)}
        assert "SCORER_VERSION" not in names and "Versions" not in names, f"{path.name}: a version outside @scorer"
    for e in _BUILTIN:
        assert e.reasons or e.name == "session.turns", e.name  # a session's turns are always counted
        assert not set(e.reasons) & set(catalog.ANY_SCORE), e.name


# -- one default per option ------------------------------------------------------------------------------------------
def _options() -> dict[str, tuple[str, object]]:
    """Every built-in scorer's option → (the scorer's module, its default)."""
    out: dict[str, tuple[str, object]] = {}
    for inst in registry.load().installed.values():
        if inst.builtin:
            module = inspect.getsourcefile(inst.scorer.func).split("src/tracescore/", 1)[1]  # type: ignore[union-attr]
            for name, default in inst.scorer.defaults.items():
                out[name] = (module, default)
    return out


def _none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _literal(node: ast.expr | None) -> bool:
    """A value written in the code (``5``, ``"FINAL ANSWER:"``, ``timedelta(days=365)``), not a name read from
    elsewhere; ``None`` is no value ("not given": the scorer's own)."""
    if isinstance(node, ast.Constant):
        return node.value is not None
    if isinstance(node, ast.UnaryOp):
        return _literal(node.operand)
    return isinstance(node, ast.Call) and all(_literal(a) for a in [*node.args, *(k.value for k in node.keywords)])


def defaults_declared(root: Path, option: str) -> list[tuple[str, int]]:
    """(file, line) of every default given to ``option`` under ``root``: a parameter with a default, a class field
    with a value (a dataclass's, a pydantic model's), and a literal value for it elsewhere: a dict entry
    (``{"k": 5}``), a lookup's fallback (``.get("k", 5)``, ``getattr(o, "k", 5)``) or a call's keyword (``f(k=5)``).
    ``None`` declares no value ("not given": the scorer's own); ``uses={"k": "retrieval"}`` names a scorer."""
    found = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        tree = _parsed(path)
        uses = {id(k.value) for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords if k.arg == "uses"}
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = node.args
                positional = args.posonlyargs + args.args
                with_default = list(zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True))
                keyword = zip(args.kwonlyargs, args.kw_defaults, strict=True)
                with_default += [(a, d) for a, d in keyword if d is not None]
                found += [(rel, a.lineno) for a, d in with_default if a.arg == option and not _none(d)]
            elif isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, ast.AnnAssign) and item.value is not None and not _none(item.value):
                        if getattr(item.target, "id", None) == option:
                            found.append((rel, item.lineno))
            elif isinstance(node, ast.Dict) and id(node) not in uses:
                found += [(rel, node.lineno) for k, v in zip(node.keys, node.values, strict=True)
                          if isinstance(k, ast.Constant) and k.value == option and _literal(v)]  # fmt: skip
            elif isinstance(node, ast.Call):
                name = getattr(node.func, "attr", getattr(node.func, "id", None))
                if name in ("get", "getattr", "setdefault", "pop") and len(node.args) >= 2:
                    key, value = node.args[-2], node.args[-1]
                    if isinstance(key, ast.Constant) and key.value == option and _literal(value):
                        found.append((rel, node.lineno))
                found += [(rel, node.lineno) for k in node.keywords if k.arg == option and _literal(k.value)]
    return found


def test_each_option_has_one_default_the_scorers_signature() -> None:
    options = _options()
    assert {"k", "final_answer_prefix", "stale_after"} <= set(options)
    for option, (module, default) in options.items():
        declared = defaults_declared(SRC, option)
        assert [f for f, _ in declared] == [module], f"option {option!r} has a default outside {module}: {declared}"
        if isinstance(default, str) and len(default) > 3:  # "FINAL ANSWER:" written once, in its signature
            where = {p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py")
                     if any(isinstance(n, ast.Constant) and n.value == default
                            for n in ast.walk(_parsed(p)))}  # fmt: skip
            assert where == {module}, f"{option}'s default {default!r} is written in {sorted(where)}"


def test_the_option_scan_sees_a_second_default(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def scorer(*, k: int = 5):\n    pass\n")
    (tmp_path / "b.py").write_text(
        "from dataclasses import dataclass\n@dataclass\nclass Options:\n    k: int = 5\n"
        "def api(traces, k=5):\n    pass\n"
        "def fine(k, *, given: int | None = None):\n    pass\n"
        "def also_fine(k: int | None = None):\n    pass\n"
    )
    (tmp_path / "c.py").write_text(
        'DEFAULTS = {"k": 5, "other": 1}\n'
        'def read(options, o):\n    return options.get("k", 5), getattr(o, "k", -1), options.get("k")\n'
        "def call(f, k):\n    return f(k=5), f(k=k), f(k=None)\n"
        'SPAN = {"stale_after": timedelta(days=365)}\n'
        'scorer(stage="semantic", uses={"k": "retrieval"})\n'
    )
    assert defaults_declared(tmp_path, "k") == [
        ("a.py", 1), ("b.py", 4), ("b.py", 5), ("c.py", 1), ("c.py", 3), ("c.py", 3), ("c.py", 5)
    ]
    assert defaults_declared(tmp_path, "stale_after") == [("c.py", 6)]


def _stage_prefix(stage: str) -> str:
    """How the names of a stage begin: ``<stage>.``; the citations stage's scores are ``citation.*`` (their public
    names since the first release: the stage, a word of every report, is plural)."""
    return "citation." if stage == "citations" else f"{stage}."


def test_every_catalog_name_starts_with_its_stage() -> None:
    """#43 item 5: a dashboard filter on a stage (``trajectory.*``) finds all its scores; ``diagnosis`` is the one
    name without a stage part. (#46: the registry refuses a name outside its scorer's stage when it loads.)"""
    for e in catalog.entries():
        if e.name == DIAGNOSIS:
            assert e.stage == "diagnosis"
            continue
        assert e.name.startswith(_stage_prefix(e.stage)), f"{e.name} is in stage {e.stage}"
    assert {e.stage for e in _BUILTIN} == set(catalog.STAGES)
    trajectory = {e.name for e in catalog.entries() if e.stage == "trajectory"}
    assert trajectory == {"trajectory.search_calls", "trajectory.fetch_calls", "trajectory.repeated_queries",
                          "trajectory.fetch_chars", "trajectory.query_overlap", "trajectory.unused_fetch_rate",
                          "trajectory.searches_after_found"}  # fmt: skip


def test_the_stage_check_can_fail() -> None:
    from dataclasses import replace

    wrong = replace(catalog.entry(SEARCH_CALLS) or catalog.entries()[0], stage="retrieval")
    assert not wrong.name.startswith(_stage_prefix(wrong.stage))
    assert _stage_prefix("citations") == "citation." and not "citation.coverage".startswith(_stage_prefix("answer"))


def test_an_old_trajectory_name_points_at_its_new_name() -> None:
    from tracescore.errors import ConfigError
    from tracescore.report.gate_config import check_score_name

    with pytest.raises(ConfigError, match=r"did you mean trajectory\.unused_fetch_rate\?"):
        check_score_name("fetch.unused_rate")
    assert not catalog.is_known("search.calls") and catalog.is_known("trajectory.search_calls")
