"""The HTML work queue as a table with the agent's first query beside each trace, sortable with no script.

Sorting is done here, server-side: the same rows in three orders (the queue's, by first query A→Z, by query overlap
lowest first), each a table with an id; a column's header links to the table in that order, and CSS ``:target`` shows
only the one linked (the queue's order by default). The sorted tables come first in the page so that a targeted one
can hide the default with the sibling selector (``:target ~``), which every browser has; without CSS all three show.
A trace with no first query ("—": absent, or scored before ``trajectory.query_overlap`` existed) sorts last; when no
queued trace has one, the tables are left out.
"""

from __future__ import annotations

from html import escape as _escape

from tracescore.report.budget import QueueQuery
from tracescore.report.safe import html_link, visible
from tracescore.report.summary import Report, WorkItem

MAX_ROWS = 1_000  # rows per order; the sort is over every row, the first MAX_ROWS shown
QUEUE_CSS = (".wq-sort{display:none}.wq-sort:target{display:table}.wq-sort:target~#queue-table{display:none}"
             "td.query{text-align:left;max-width:420px}th a{color:inherit}\n")  # fmt: skip
_ORDERS = (("queue-by-query", "first query A→Z"), ("queue-by-overlap", "query overlap, lowest first"))
_NONE = QueueQuery(None, None)


def escape(text: str) -> str:
    return _escape(visible(text))


_Row = tuple[int, WorkItem, str, QueueQuery]


def _by_query(row: _Row) -> tuple[bool, str, str]:
    query = row[3].query
    return query is None, (query or "").casefold(), row[2]


def _by_overlap(row: _Row) -> tuple[bool, float, str]:
    overlap = row[3].overlap
    return overlap is None, overlap if overlap is not None else 0.0, row[2]


def _table(report: Report, table_id: str, rows: list[_Row], title: str, css: str) -> list[str]:
    head = [("work-queue item", "queue-table"), ("trace id", None), ("first query", "queue-by-query"),
            ("query overlap", "queue-by-overlap")]  # fmt: skip
    cells = "".join(f'<th><a href="#{target}">{label}</a></th>' if target else f"<th>{label}</th>"
                    for label, target in head)  # fmt: skip
    out = [f'<table id="{table_id}"{css}><caption>work queue, {escape(title)}</caption><tr>{cells}</tr>']
    for _, item, trace_id, found in rows[:MAX_ROWS]:
        tid = html_link(f"<code>{escape(trace_id)}</code>", report.links.get(trace_id))
        query = "—" if found.query is None else escape(found.query)
        overlap = "—" if found.overlap is None else f"{found.overlap:.2f}"
        out.append(f'<tr data-key="{escape(item.key)}"><td>{escape(item.title)}</td><td>{tid}</td>'
                   f'<td class="query">{query}</td><td>{overlap}</td></tr>')  # fmt: skip
    out.append("</table>")
    if len(rows) > MAX_ROWS:
        out.append(f'<p class="muted">first {MAX_ROWS:,} of {len(rows):,} rows.</p>')
    return out


def queue_tables(report: Report, queue: list[WorkItem]) -> list[str]:
    """The work queue's traces with their first query, in the three orders (nothing when the queue is empty or no
    queued trace has a query)."""
    queries = report.budget.queries
    if not queries:  # lines scored before trajectory.query_overlap: the list above is the whole queue, as it was
        return []
    rows: list[_Row] = [(n, item, trace_id, queries.get(trace_id, _NONE))
                        for n, (item, trace_id) in enumerate((i, t) for i in queue for t in i.trace_ids)]  # fmt: skip
    if not rows:
        return []
    out = ['<div id="queue-queries"><p class="muted">Sort by a column: its header links to the rows in that order'
           " (no script).</p>"]  # fmt: skip
    for (table_id, title), key in zip(_ORDERS, (_by_query, _by_overlap), strict=True):
        out += _table(report, table_id, sorted(rows, key=key), title, ' class="wq-sort"')
    out += _table(report, "queue-table", rows, "in queue order", "")
    return [*out, "</div>"]
