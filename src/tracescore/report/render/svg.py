"""Inline SVG charts (no script, no network): grouped bars of stage rates per group, lines of stage rates over time."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22")
_W, _H, _LEFT, _TOP, _BOTTOM = 720, 300, 48, 36, 48
FEW = 5  # a time point resting on fewer traces is drawn hollow: a rate of 3 traces says little


def _axis(parts: list[str], plot_w: int, plot_h: int) -> None:
    for tick in range(0, 101, 25):
        y = _TOP + plot_h - plot_h * tick / 100
        parts.append(
            f'<line class="grid" x1="{_LEFT}" x2="{_LEFT + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
            f'<text x="{_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{tick}%</text>'
        )


def _legend(parts: list[str], names: Sequence[str], colors: Mapping[str, str]) -> None:
    x = _LEFT
    for name in names:
        parts.append(
            f'<g class="legend-item"><rect x="{x}" y="8" width="12" height="12" fill="{colors[name]}"/>'
            f'<text x="{x + 16}" y="18" font-size="12">{escape(name)}</text></g>'
        )
        x += 28 + 7 * len(name)


def _open_chart(chart_id: str, series: Sequence[str], slots: int) -> tuple[list[str], dict[str, str], float, float]:
    """The opening ``<svg>`` with its axes, a color per series, the width of one of ``slots`` x slots and the height."""
    plot_w, plot_h = _W - _LEFT - 12, _H - _TOP - _BOTTOM
    parts = [
        f'<svg class="chart" id="{chart_id}" xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}"'
        f' viewBox="0 0 {_W} {_H}" role="img">'
    ]
    _axis(parts, plot_w, plot_h)
    colors = {s: PALETTE[i % len(PALETTE)] for i, s in enumerate(series)}
    return parts, colors, plot_w / max(slots, 1), plot_h


def _x_label(slot: float, index: int, text: str, size: int) -> str:
    """The label under x slot ``index``."""
    return (
        f'<text x="{_LEFT + (index + 0.5) * slot:.1f}" y="{_H - _BOTTOM + 18}" text-anchor="middle"'
        f' font-size="{size}">{escape(text)}</text>'
    )


def _close_chart(parts: list[str], series: Sequence[str], colors: dict[str, str]) -> str:
    """The legend (only the series drawn: one without any value has no entry) and the closing tag: the SVG text."""
    _legend(parts, series, colors)
    parts.append("</svg>")
    return "".join(parts)


def bar_chart(
    chart_id: str, categories: Sequence[str], series: Sequence[str], values: Mapping[tuple[str, str], float | None]
) -> str:
    """Grouped bars: one cluster per category (stage), one bar per series (group); ``values[(series, category)]``."""
    parts, colors, cluster, plot_h = _open_chart(chart_id, series, len(categories))
    drawn = [s for s in series if any(values.get((s, c)) is not None for c in categories)]
    bar = min(48.0, (cluster - 16) / max(len(series), 1))
    for ci, category in enumerate(categories):
        x0 = _LEFT + ci * cluster + (cluster - bar * len(series)) / 2
        parts.append(_x_label(cluster, ci, category, 12))
        for si, name in enumerate(series):
            value = values.get((name, category))
            x = x0 + si * bar
            if value is None:
                parts.append(
                    f'<text class="na" x="{x + bar / 2:.1f}" y="{_TOP + plot_h - 4}" text-anchor="middle"'
                    f' font-size="9" fill="#888">n/a</text>'
                )
                continue
            h = plot_h * value
            parts.append(
                f'<rect class="bar" data-group="{escape(name)}" data-stage="{escape(category)}"'
                f' data-value="{value:.4f}" x="{x:.1f}" y="{_TOP + plot_h - h:.1f}" width="{bar - 2:.1f}"'
                f' height="{max(h, 0.0):.1f}" fill="{colors[name]}">'
                f"<title>{escape(name)} · {escape(category)}: {value:.1%}</title></rect>"
            )
    return _close_chart(parts, drawn, colors)


def line_chart(
    chart_id: str,
    buckets: Sequence[str],
    series: Sequence[str],
    values: Mapping[tuple[str, str], float | None],
    counts: Mapping[tuple[str, str], int] | None = None,
) -> str:
    """One line per series (stage) over the buckets (time); ``values[(series, bucket)]``; gaps break the line.

    ``counts[(series, bucket)]`` is the n a point rests on: in its tooltip, and a point on fewer than ``FEW`` traces
    is hollow."""
    parts, colors, step, plot_h = _open_chart(chart_id, series, len(buckets))
    drawn = [s for s in series if any(values.get((s, b)) is not None for b in buckets)]
    label_every = max(1, len(buckets) // 8)
    for bi, bucket in enumerate(buckets):
        if bi % label_every == 0:
            parts.append(_x_label(step, bi, bucket, 10))
    dots: list[str] = []  # drawn after every line, so a hollow point is not crossed by its own line
    for name in series:
        segment: list[str] = []
        segments: list[list[str]] = []
        for bi, bucket in enumerate(buckets):
            value = values.get((name, bucket))
            if value is None:
                if segment:
                    segments.append(segment)
                segment = []
                continue
            x, y = _LEFT + (bi + 0.5) * step, _TOP + plot_h - plot_h * value
            segment.append(f"{x:.1f},{y:.1f}")
            n = counts.get((name, bucket)) if counts is not None else None
            few = n is not None and n < FEW
            paint = f'fill="#fff" stroke="{colors[name]}" stroke-width="2"' if few else f'fill="{colors[name]}"'
            dots.append(
                f'<circle class="point{" few" if few else ""}" data-stage="{escape(name)}"'
                f' data-bucket="{escape(bucket)}" data-value="{value:.4f}"'
                + (f' data-n="{n}"' if n is not None else "")
                + f' cx="{x:.1f}" cy="{y:.1f}" r="4" {paint}>'
                f"<title>{escape(name)} · {escape(bucket)}: {value:.1%}"
                + (f" (n = {n}{', few traces' if few else ''})" if n is not None else "")
                + "</title></circle>"
            )
        if segment:
            segments.append(segment)
        for points in segments:
            parts.append(
                f'<polyline class="series" data-stage="{escape(name)}" points="{" ".join(points)}" fill="none"'
                f' stroke="{colors[name]}" stroke-width="2.5"/>'
            )
    parts += dots
    return _close_chart(parts, drawn, colors)
