"""Each score name is written once, in the catalog (#29 item 4): every other module of ``src/tracescore`` imports
the name (``catalog.GROUNDING_RATE``) or reads an entry, so renaming a score, or asking "where is it computed,
named and written?", takes one file plus the scorer that computes it.

A score-name literal is a string constant of the code (docstrings and help prose aside) that is a catalog name
(``"grounding.rate"``, ``"retrieval.recall_at_5"``, the ``{k}`` template), the start of one built on
(``"retrieval.recall_at_"``, ``"surface."``), a name quoted as an SQL literal inside a query, or an f-string that
builds one (``f"surface.{cell}"``).
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import pytest

from tracescore import catalog

SRC = Path(catalog.__file__).parent
_EXAMPLES = tuple(e.name.replace("{k}", "5") for e in catalog.CATALOG)  # a concrete name per entry
_PREFIXES = frozenset(n[: i + 1] for n in _EXAMPLES for i, ch in enumerate(n) if ch in "._" and i + 1 < len(n))
_QUOTED = re.compile("'(" + "|".join(re.escape(n).replace("_5", r"_\d+") for n in _EXAMPLES) + ")'")


def _docstrings(tree: ast.AST) -> set[int]:
    """The string constants that are statements of their own: docstrings of modules, classes, functions, attributes."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }


_NAMES = frozenset(e.name for e in catalog.CATALOG)
_TEMPLATED = tuple(e for e in catalog.CATALOG if "{k}" in e.name)


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


def _mentions(root: Path, name: str, constant: str) -> set[str]:
    """Files under ``root`` holding ``name`` as a literal or using its catalog constant (``CITATION_DRIFT_RATE``)."""
    out = {f for f, hits in literals(root).items() if any(name in text for _, text in hits)}
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


def test_only_the_catalog_holds_a_score_name_literal() -> None:
    found = literals(SRC)
    outside = {f: hits for f, hits in found.items() if f != "catalog.py"}
    assert outside == {}, f"score names written outside catalog.py (import the catalog constant): {outside}"
    assert len(found["catalog.py"]) >= len(catalog.CATALOG)  # the scan does see the names where they are declared


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
    (tmp_path / "clean.py").write_text("from tracescore.catalog import GROUNDING_RATE\nX = GROUNDING_RATE\n")
    assert literals(tmp_path) == {
        "planted.py": [
            (4, "citation.drift_rate"),
            (5, "retrieval.recall_at_3"),
            (6, "retrieval.recall_at_"),
            (7, "f'surface.{cell}'"),
            (8, "SELECT 1 FROM scores WHERE name = 'grounding.rate'"),
        ]
    }


def test_drift_rate_is_named_in_the_catalog_and_computed_in_citations_only() -> None:
    """The newcomer's question, "where is ``citation.drift_rate`` computed, named and written?": the catalog names
    it, ``scorers/citations.py`` computes it, and the sinks write every score by its catalog entry, naming none."""
    name = "citation.drift_rate"
    assert catalog.entry(name) is not None
    assert _mentions(SRC, name, "CITATION_DRIFT_RATE") == {"catalog.py", "scorers/citations.py"}
    assert [f for f, hits in literals(SRC).items() if any(name in t for _, t in hits)] == ["catalog.py"]
    assert getattr(catalog, "CITATION_DRIFT_RATE", None) == name


def test_versions_live_only_in_the_catalog_and_every_entry_says_why_it_can_be_absent() -> None:
    for path in sorted(SRC.rglob("*.py")):
        names = {n.id for n in ast.walk(_parsed(path)) if isinstance(n, ast.Name)}
        assert "SCORER_VERSION" not in names, f"{path.name}: a score version outside the catalog (catalog.Versions)"
    versions = {v for k, v in vars(catalog.Versions).items() if not k.startswith("_")}
    assert {e.version for e in catalog.CATALOG} == versions  # every version declared is an entry's
    for path in sorted(SRC.rglob("*.py")):
        tree = _parsed(path)
        strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
        where = path.relative_to(SRC).as_posix()
        if where != "catalog.py":
            assert not strings & versions, f"{where} writes a score version: read it from the catalog entry"
    for e in catalog.CATALOG:
        assert e.reasons and set(e.reasons) <= set(catalog.REASONS), e.name
        assert not set(e.reasons) & set(catalog.ANY_SCORE), e.name


def _stage_prefix(stage: str) -> str:
    """How the names of a stage begin: ``<stage>.``; the citations stage's scores are ``citation.*`` (their public
    names since the first release: the stage, a word of every report, is plural)."""
    return "citation." if stage == "citations" else f"{stage}."


def test_every_catalog_name_starts_with_its_stage() -> None:
    """#43 item 5: a dashboard filter on a stage (``trajectory.*``) finds all its scores; ``diagnosis`` is the one
    name without a stage part."""
    for e in catalog.CATALOG:
        if e.name == catalog.DIAGNOSIS:
            assert e.stage == "diagnosis"
            continue
        assert e.name.startswith(_stage_prefix(e.stage)), f"{e.name} is in stage {e.stage}"
    assert {e.stage for e in catalog.CATALOG} == set(catalog.STAGES)
    trajectory = {e.name for e in catalog.CATALOG if e.stage == "trajectory"}
    assert trajectory == {"trajectory.search_calls", "trajectory.fetch_calls", "trajectory.repeated_queries",
                          "trajectory.fetch_chars", "trajectory.query_overlap", "trajectory.unused_fetch_rate",
                          "trajectory.searches_after_found"}  # fmt: skip


def test_the_stage_check_can_fail() -> None:
    from dataclasses import replace

    wrong = replace(catalog.entry(catalog.SEARCH_CALLS) or catalog.CATALOG[0], stage="retrieval")
    assert not wrong.name.startswith(_stage_prefix(wrong.stage))
    assert _stage_prefix("citations") == "citation." and not "citation.coverage".startswith(_stage_prefix("answer"))


def test_an_old_trajectory_name_points_at_its_new_name() -> None:
    from tracescore.errors import ConfigError
    from tracescore.report.gate_config import check_score_name

    with pytest.raises(ConfigError, match=r"did you mean trajectory\.unused_fetch_rate\?"):
        check_score_name("fetch.unused_rate")
    assert not catalog.is_known("search.calls") and catalog.is_known("trajectory.search_calls")
