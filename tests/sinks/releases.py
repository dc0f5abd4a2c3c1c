"""A scoring change for the removal tests: the registry as a release that bumped every deterministic scorer's version
(``retrieval-1`` → ``retrieval-2``), in-process (``bumped``) or for a subprocess CLI (``python -m tests.sinks.releases``
with ``TRACESCORE_TEST_RELEASE=2``), and the release before #43 renamed the trajectory scores (``before_rename``). The
judge is not involved, so no score here needs an Anthropic key."""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Callable
from dataclasses import replace

import pytest

from tracescore import registry

OLD_NAMES = {
    "search.calls": "trajectory.search_calls",
    "fetch.calls": "trajectory.fetch_calls",
    "search.repeated_queries": "trajectory.repeated_queries",
    "fetch.chars": "trajectory.fetch_chars",
    "search.query_overlap": "trajectory.query_overlap",
    "fetch.unused_rate": "trajectory.unused_fetch_rate",
    "search.after_found": "trajectory.searches_after_found",
}
"""The trajectory scores' names before #43 -> their names since (the issue's list, written out here on purpose)."""
_CONSTANTS = ("SEARCH_CALLS", "FETCH_CALLS", "SEARCH_REPEATED_QUERIES", "FETCH_CHARS", "SEARCH_QUERY_OVERLAP",
              "FETCH_UNUSED_RATE", "SEARCH_AFTER_FOUND")  # fmt: skip


_OLD_VERSIONS = {"trajectory-2": "trajectory-1", "stale-2": "stale-1"}  # what #43 changed the meaning of


def _release(version: Callable[[str], str], names: dict[str, str] | None = None) -> registry.Registry:
    """The installed scorers as another release declared them: each deterministic scorer's version through
    ``version``, its score names through ``names`` (set it as ``registry._LOADED``: the catalog, the sinks and the
    backfill fingerprint read it)."""
    out = []
    for inst in registry.load().installed.values():
        decl = copy.copy(inst.scorer)
        if not decl.judged:
            decl.version = version(decl.version)
        if names and any(s.name in names for s in decl.specs):
            decl.specs = tuple(replace(s, name=names.get(s.name, s.name)) for s in decl.specs)
            decl.stages = (*decl.stages, *{n.split(".")[0] for n in names.values()})
        out.append(replace(inst, scorer=decl))
    return registry.Registry(out)


def before_rename(monkeypatch: pytest.MonkeyPatch) -> None:
    """The release before #43: the trajectory scorer writes, and the registry declares, the old names and versions."""
    from tracescore.scorers import trajectory

    old = {new: name for name, new in OLD_NAMES.items()}
    for constant in _CONSTANTS:
        name = getattr(trajectory, constant)
        monkeypatch.setattr(trajectory, constant, old.get(name, name))
    monkeypatch.setattr(registry, "_LOADED", _release(lambda v: _OLD_VERSIONS.get(v, v), old))


def bumped(release: str) -> registry.Registry:
    """The registry with each deterministic version ``x-N`` as ``x-<N + release - 1>`` (release 2: one version on)."""

    def on(version: str) -> str:
        base, number = version.rsplit("-", 1)
        return f"{base}-{int(number) + int(release) - 1}"

    return _release(on)


def main() -> None:
    release = os.environ.get("TRACESCORE_TEST_RELEASE")
    if release:
        registry._LOADED = bumped(release)  # the scorers' versions and the backfill fingerprint
    from tracescore.cli import main as cli

    sys.argv[0] = "tracescore"
    cli()


if __name__ == "__main__":
    main()
