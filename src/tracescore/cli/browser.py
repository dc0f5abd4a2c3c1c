"""``tracescore report --open``: the HTML report written to a file, then opened in the browser where there is one.

The browser is the standard library's choice (``webbrowser``: ``$BROWSER`` first, then the desktop's or a console
browser); where none can be started, one line says so and names the file, which stays: the command never fails for
want of a browser."""

from __future__ import annotations

import os
import tempfile
import webbrowser
from pathlib import Path

import click
from click.core import ParameterSource


def html_to_open(fmt: str, out: str | None) -> tuple[str, str]:
    """The format and file of a report to open: HTML (another ``--format`` given is a bad parameter), written to
    ``out`` or, without one, to a new file in the temp folder (never an existing file)."""
    given = click.get_current_context().get_parameter_source("fmt") is not ParameterSource.DEFAULT
    if given and fmt != "html":
        raise click.BadParameter(f"--open opens the HTML report, not {fmt!r}; use --format html or drop --format")
    if out == "-":
        raise click.BadParameter("--open needs a file to open, not stdout; drop --out - or name a file")
    if out:
        return "html", out
    fd, path = tempfile.mkstemp(prefix="tracescore-report-", suffix=".html")
    os.close(fd)
    return "html", path


def open_in_browser(path: str) -> bool:
    """Open ``path`` in the browser; say so in one line when none could be started (the file stays)."""
    try:
        opened = webbrowser.open(Path(path).resolve().as_uri())
        why = "no browser could be started (set BROWSER to one)"
    except (webbrowser.Error, OSError) as exc:
        opened, why = False, f"the browser could not be started ({exc})"
    if not opened:
        click.echo(f"note: {why}; the report is in {path}", err=True)
    return opened
