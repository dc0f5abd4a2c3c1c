"""A scoring change for the removal tests: the registry as a release that bumped every deterministic scorer's version
(``retrieval-1`` → ``retrieval-2``), in-process (``bumped``) or for a subprocess CLI (``python -m tests.sinks.releases``
with ``TRACESCORE_TEST_RELEASE=2``). The judge is not involved, so no score here needs an Anthropic key."""

from __future__ import annotations

import copy
import os
import sys
from dataclasses import replace

from tracescore import registry


def bumped(release: str) -> registry.Registry:
    """The installed scorers with each deterministic version ``x-1`` as ``x-<release>`` (set it as
    ``registry._LOADED``: the catalog, the sinks and the backfill fingerprint read it)."""
    out = []
    for inst in registry.load().installed.values():
        decl = inst.scorer
        if not decl.judged:
            decl = copy.copy(decl)
            decl.version = decl.version.rsplit("-", 1)[0] + f"-{release}"
        out.append(replace(inst, scorer=decl))
    return registry.Registry(out)


def main() -> None:
    release = os.environ.get("TRACESCORE_TEST_RELEASE")
    if release:
        registry._LOADED = bumped(release)  # the scorers' versions and the backfill fingerprint
    from tracescore.cli import main as cli

    sys.argv[0] = "tracescore"
    cli()


if __name__ == "__main__":
    main()
