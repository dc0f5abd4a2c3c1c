"""The package version, in the bottom layer so that a platform client can send it without importing the package root.

The one place it is written: the build reads it from here for the package metadata ([tool.hatch.version]), and the
release workflow publishes a tag only when it names this version.
"""

from __future__ import annotations

__version__ = "0.1.0"
