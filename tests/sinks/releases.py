"""A scoring change for the removal tests: the catalog as a release that bumped every deterministic scorer's version
(``retrieval-1`` → ``retrieval-2``), in-process (``bumped``) or for a subprocess CLI (``python -m tests.sinks.releases``
with ``TRACESCORE_TEST_RELEASE=2``). The judge is not involved, so no score here needs an Anthropic key."""

from __future__ import annotations

import os
import sys
from dataclasses import replace

from tracescore import catalog, config


def bumped(release: str) -> tuple[catalog.Entry, ...]:
    """The catalog with each deterministic version ``x-1`` as ``x-<release>``."""
    return tuple(
        replace(e, version=e.version.rsplit("-", 1)[0] + f"-{release}") if not e.judged else e
        for e in catalog.CATALOG
    )


def main() -> None:
    release = os.environ.get("TRACESCORE_TEST_RELEASE")
    if release:
        catalog.CATALOG = config.CATALOG = bumped(release)  # the scorers' versions and the backfill fingerprint
    from tracescore.cli import main as cli

    sys.argv[0] = "tracescore"
    cli()


if __name__ == "__main__":
    main()
