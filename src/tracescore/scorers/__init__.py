"""Scorers: pure functions of a Trace that return a ``Scored``: named Scores (present, or absent with a reason) and the
rows and notes behind them. Each module declares its scores and options beside its code (``@scorer``); which of them
a run uses comes from the registry (``tracescore.registry``: entry points of group ``tracescore.scorers``), never
from a list here."""
