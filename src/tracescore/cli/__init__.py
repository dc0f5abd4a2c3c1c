"""The ``tracescore`` command line: thin click commands, one module per command group."""

from __future__ import annotations

from tracescore.cli.main import main

__all__ = ["main"]
