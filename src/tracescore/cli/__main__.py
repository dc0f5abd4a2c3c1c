"""``python -m tracescore.cli``: the same program as the ``tracescore`` command."""

from tracescore.cli.main import entry

entry()
