"""A scoring change for the removal tests: the catalog as a release that bumped every deterministic scorer's version
(``retrieval-1`` → ``retrieval-2``), in-process (``bumped``) or for a subprocess CLI (``python -m tests.sinks.releases``
with ``TRACESCORE_TEST_RELEASE=2``), and the release before #43 renamed the trajectory scores (``before_rename``). The
judge is not involved, so no score here needs an Anthropic key."""

from __future__ import annotations

import os
import sys
from dataclasses import replace

import pytest

from tracescore import catalog, config

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


def before_rename(monkeypatch: pytest.MonkeyPatch) -> None:
    """The release before #43: the trajectory scorer writes, and the catalog holds, the old names and versions."""
    from tracescore.scorers import trajectory

    old = {new: name for name, new in OLD_NAMES.items()}
    for constant in _CONSTANTS:
        name = getattr(catalog, constant)
        monkeypatch.setattr(trajectory, constant, old.get(name, name))
    entries = tuple(replace(e, name=old.get(e.name, e.name), version=_OLD_VERSIONS.get(e.version, e.version))
                    for e in catalog.CATALOG)  # fmt: skip
    monkeypatch.setattr(catalog, "CATALOG", entries)
    monkeypatch.setattr(config, "CATALOG", entries)


def bumped(release: str) -> tuple[catalog.Entry, ...]:
    """The catalog with each deterministic version ``x-N`` as ``x-<N + release - 1>`` (release 2: one version on)."""

    def on(version: str) -> str:
        base, number = version.rsplit("-", 1)
        return f"{base}-{int(number) + int(release) - 1}"

    return tuple(replace(e, version=on(e.version)) if not e.judged else e for e in catalog.CATALOG)


def main() -> None:
    release = os.environ.get("TRACESCORE_TEST_RELEASE")
    if release:
        catalog.CATALOG = config.CATALOG = bumped(release)  # the scorers' versions and the backfill fingerprint
    from tracescore.cli import main as cli

    sys.argv[0] = "tracescore"
    cli()


if __name__ == "__main__":
    main()
