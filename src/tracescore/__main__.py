"""``python -m tracescore``: the ``tracescore`` command."""

from tracescore.cli.main import entry

entry()
