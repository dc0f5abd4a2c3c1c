"""The package version, in the bottom layer so that a platform client can send it without importing the package root."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
