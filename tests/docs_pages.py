"""The docs pages as the tests read them: a page's Markdown as written (``page``) or as built, its
``<!-- generated: NAME -->`` markers filled from the code (``built``), and the generator module itself."""

from __future__ import annotations

import importlib.util
from functools import cache
from types import ModuleType

from tests.conftest import REPO

DOCS = REPO / "docs"


@cache
def generator() -> ModuleType:
    """``scripts/docs_reference.py``, the MkDocs hook that generates the reference tables."""
    spec = importlib.util.spec_from_file_location("docs_reference", REPO / "scripts" / "docs_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def page(path: str) -> str:
    """The Markdown of ``docs/<path>`` as written."""
    return (DOCS / path).read_text(encoding="utf-8")


def built(path: str) -> str:
    """The Markdown of ``docs/<path>`` as the site shows it: the generated tables filled in."""
    return generator().fill(page(path))  # type: ignore[no-any-return]
