"""A third party's scorer package, built in a temporary folder and installed into the test's interpreter as pip
installs one: the module beside a ``<dist>-<version>.dist-info`` folder (METADATA, entry_points.txt) on ``sys.path``.
Nothing is downloaded; ``installed`` takes it away again (path, modules, the registry loaded with it)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from tracescore import registry

EXAMPLE = '''
import re
import tracescore as ts

@ts.scorer(
    stage="answer",
    version="1",
    scores=[ts.ScoreSpec("answer.cites_policy_id", "boolean", better="higher",
                         absent={"no policy id asked for": "does not apply"})],
)
def cites_policy_id(trace: ts.Trace, *, pattern: str = r"POL-\\d{4}") -> list[ts.Score]:
    wanted = re.findall(pattern, trace.question or "")
    if not wanted:
        return [ts.absent("answer.cites_policy_id", "no policy id asked for")]
    return [ts.score("answer.cites_policy_id", all(w in (trace.answer or "") for w in wanted),
                     comment=", ".join(wanted))]
'''


def build(
    root: Path,
    modules: Mapping[str, str],
    entry_points: Mapping[str, str],
    dist: str = "acme-scorers",
    group: str = registry.GROUP,
) -> Path:
    """The package ``dist`` 0.1.0 in ``root``: each module's source, and its entry points of ``group`` (default
    ``tracescore.scorers``; name → ``module:function``)."""
    root.mkdir(parents=True, exist_ok=True)
    for module, source in modules.items():
        (root / f"{module}.py").write_text(source, encoding="utf-8")
    info = root / f"{dist.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n", encoding="utf-8")
    lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[{group}]\n{lines}", encoding="utf-8")
    return root


@contextmanager
def installed(root: Path) -> Iterator[None]:
    """``root``'s packages installed for the block (the next ``registry.load`` reads them, as a new command
    would), uninstalled after."""
    modules = {p.stem for p in root.glob("*.py")}
    sys.path.insert(0, str(root))
    importlib.invalidate_caches()
    registry._LOADED = None
    try:
        yield
    finally:
        sys.path.remove(str(root))
        for name in modules:
            sys.modules.pop(name, None)
        importlib.invalidate_caches()
        registry.load(refresh=True)
