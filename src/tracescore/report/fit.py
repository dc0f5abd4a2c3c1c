"""A table shown whole when the console has room for it, else one record per line: a value is never cut.

rich fits a table that is too wide by folding or cropping its cells ("retrieva", "grounding.hallucination_rat"),
which is worse than no table. Below the width a table needs (its columns' narrowest layout: each name and number on
one line, text wrapped at words), the headers are printed once and each row as one line of its values instead,
wrapped at words like any text.
"""

from __future__ import annotations

from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

_SEP = " · "
_UNBOUNDED = 10_000  # measure as if the console had any width: rich clamps a measurement to the width it is given


def needed_width(console: Console, table: Table) -> int:
    """The fewest columns ``table`` can be drawn in without cutting a value."""
    return Measurement.get(console, console.options.update_width(_UNBOUNDED), table).minimum


def _plain(cell: RenderableType) -> str:
    text = cell.plain if isinstance(cell, Text) else str(cell)
    return " ".join(text.split())  # a header written on two lines ("mean /\nshare true") reads as one


def print_table(console: Console, table: Table) -> None:
    """``table`` as a table when it fits ``console``, else its title, its headers once, one line per row (the
    values in the headers' order) and its caption."""
    if needed_width(console, table) <= console.width:
        console.print(table)
        return
    if table.title:
        console.print(Text(_plain(table.title), style="bold"), highlight=False)
    console.print(Text(_SEP.join(_plain(column.header) for column in table.columns), style="dim"), highlight=False)
    for row in zip(*(list(column.cells) for column in table.columns), strict=True):
        console.print(Text(_SEP.join(_plain(cell) or "—" for cell in row)), highlight=False)
    if table.caption:
        console.print(Text(_plain(table.caption)), highlight=False)
