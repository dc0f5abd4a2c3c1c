"""The sessions section in the terminal (rich), in Markdown and in HTML: one row per session with its session scores,
then its turns in order, each with its diagnosis cell (or why it has none)."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from rich.console import Console
from rich.table import Table

from tracescore.report.safe import html_link, md_link
from tracescore.report.sessions import SessionView
from tracescore.scorers.session import PREFIX, SPECS

TITLE = "Sessions"
_NAMES = tuple(spec.name for spec in SPECS)
_SHORT = {name: name.removeprefix(PREFIX).replace("_", " ") for name in _NAMES}


def _value(view: SessionView, name: str) -> str:
    """A session score as shown: its value, or ``—`` with why it is absent."""
    scores, missing = view.line.get("scores") or {}, view.line.get("missing") or {}
    if name in scores:
        value = scores[name]
        return f"{value:.2f}" if isinstance(value, float) and not value.is_integer() else (
            f"{value:g}" if isinstance(value, float) else str(value))  # fmt: skip
    return f"— ({missing[name]})" if name in missing else "—"


def _turns(view: SessionView) -> list[str]:
    return [f"{i}. {t.trace_id}: {t.cell or f'no cell ({t.why})'}" for i, t in enumerate(view.turns, 1)]


def render_sessions_terminal(views: Sequence[SessionView], console: Console) -> None:
    if not views:
        return
    table = Table(title=f"{TITLE} ({len(views)})", show_lines=True)
    table.add_column("session")
    for name in _NAMES:
        table.add_column(_SHORT[name])
    table.add_column("turns, in order")
    for view in views:
        table.add_row(view.session_id, *(_value(view, n) for n in _NAMES), "\n".join(_turns(view)))
    console.print(table)


def sessions_markdown(views: Sequence[SessionView]) -> list[str]:
    if not views:
        return []
    lines = [f"## {TITLE}", "", "| session | " + " | ".join(_SHORT[n] for n in _NAMES) + " |",
             "|---" * (len(_NAMES) + 1) + "|"]  # fmt: skip
    for view in views:
        lines.append(f"| `{view.session_id}` | " + " | ".join(_value(view, n) for n in _NAMES) + " |")
    for view in views:
        lines += ["", f"**{view.session_id}**", ""]
        lines += [f"{i}. {md_link(t.trace_id, t.url)}: {t.cell or f'no cell ({t.why})'}"
                  for i, t in enumerate(view.turns, 1)]  # fmt: skip
    return [*lines, ""]


def sessions_html(views: Sequence[SessionView]) -> list[str]:
    if not views:
        return []
    out = [f'<h2>{TITLE}</h2><table id="sessions"><tr><th>session</th>']
    out += [f"<th>{escape(_SHORT[n])}</th>" for n in _NAMES] + ["<th>turns, in order</th></tr>"]
    for view in views:
        cells = "".join(f"<td>{escape(_value(view, n))}</td>" for n in _NAMES)
        turns = "".join(
            f"<li>{html_link(f'<code>{escape(t.trace_id)}</code>', t.url)}: {escape(t.cell or f'no cell ({t.why})')}"
            "</li>" for t in view.turns
        )
        out.append(f'<tr data-session="{escape(view.session_id)}"><td><code>{escape(view.session_id)}</code></td>'
                   f"{cells}<td><ol>{turns}</ol></td></tr>")  # fmt: skip
    out.append("</table>")
    return out
