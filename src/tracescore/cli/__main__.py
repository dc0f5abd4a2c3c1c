"""``python -m tracescore.cli``."""

from tracescore.cli.main import main

main()
