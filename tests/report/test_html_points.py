"""Issue #35 item 10: the HTML report shows the n of each time point (tooltip; hollow under 5 traces), has no legend
entry for a series without data, left-aligns names, and lists trace ids per group in a grouped view."""

from __future__ import annotations

import re

from tracescore.report.render.html import render_html
from tracescore.report.summary import build_report


def _line(i: int, hour: int, provider: str, right: bool) -> dict[str, object]:
    return {
        "trace_id": f"t{i}",
        "timestamp": f"2026-11-20T{hour:02d}:{i % 60:02d}:00Z",
        "metadata": {"provider": provider},
        "scores": {
            "retrieval.recall_at_5": 1.0,
            "answer.correct": right,
            "diagnosis": f"retrieval_pass/{'right' if right else 'wrong'}",
            "citation.fabricated_count": 0,
            "citation.unfetched_rate": 0.0,
        },
        "missing": {"grounding.rate": "no judge configured"},
    }


def _page() -> str:
    lines = [_line(i, 13, "brave", True) for i in range(3)]  # 13:00 rests on 3 traces
    lines += [_line(i, 14, "exa" if i % 2 else "brave", i % 3 != 0) for i in range(3, 11)]  # 14:00 on 8
    return render_html(build_report(lines, group_by="metadata.provider"))


def _chart(page: str, chart_id: str) -> str:
    return page.split(f'id="{chart_id}"', 1)[1].split("</svg>", 1)[0]


def test_a_time_point_shows_its_n_and_is_hollow_when_it_rests_on_few_traces() -> None:
    chart = _chart(_page(), "chart-time")
    points = re.findall(r'<circle class="point( few)?" data-stage="(\w+)" data-bucket="([^"]+)"[^>]*data-n="(\d+)"'
                        r'[^>]*?(fill="[^"]+")[^>]*><title>([^<]*)</title>', chart)  # fmt: skip
    by_point = {(stage, bucket): (few, n, fill, title) for few, stage, bucket, n, fill, title in points}
    few, n, fill, title = by_point[("answer", "2026-11-20T13:00")]
    assert few and n == "3" and fill == 'fill="#fff"' and "100.0% (n = 3, few traces)" in title
    few, n, fill, title = by_point[("answer", "2026-11-20T14:00")]
    assert not few and n == "8" and fill != 'fill="#fff"' and title.endswith("(n = 8)")


def test_no_legend_entry_for_a_series_without_data() -> None:
    page = _page()
    legend = re.findall(r'<g class="legend-item">.*?<text[^>]*>([^<]+)</text></g>', _chart(page, "chart-time"))
    assert legend == ["retrieval", "citations", "answer"]  # grounding: no judge, no value, no entry
    assert "grounding" not in re.findall(r'data-stage="(\w+)"', _chart(page, "chart-time"))
    groups = re.findall(r'<g class="legend-item">.*?<text[^>]*>([^<]+)</text></g>', _chart(page, "chart-groups"))
    assert groups == ["brave", "exa"]


def test_names_are_left_aligned() -> None:
    page = _page()
    css = page.split("<style>", 1)[1].split("</style>", 1)[0]
    assert "td:first-child,th,td.name{text-align:left}" in css
    assert '<td class="name">retrieval.recall_at_5</td>' in page


def test_a_grouped_view_lists_the_trace_ids_per_group() -> None:
    page = _page()
    row = page.split('<tr data-cell="retrieval_pass/wrong">', 1)[1].split("</tr>", 1)[0]
    ids = dict(re.findall(r'<div data-group="(\w+)"><b>\w+</b>: ([^<]*)</div>', row))
    assert ids == {"brave": "t6", "exa": "t3, t9"}
