"""``sources.exports.in_window``: the window of an export source is half-open on the root's start time."""

from __future__ import annotations

from datetime import UTC, datetime

from tracescore.sources.exports import in_window

SINCE = datetime(2026, 11, 20, tzinfo=UTC)
UNTIL = datetime(2026, 11, 21, tzinfo=UTC)


def test_half_open_window() -> None:
    assert in_window("2026-11-20T00:00:00Z", SINCE, UNTIL)
    assert in_window("2026-11-20T23:59:59.999+00:00", SINCE, UNTIL)
    assert not in_window("2026-11-21T00:00:00Z", SINCE, UNTIL)  # until is excluded
    assert not in_window("2026-11-19T23:59:59Z", SINCE, UNTIL)
    assert in_window("2030-01-01T00:00:00Z", SINCE, None)  # no until: everything from since


def test_naive_times_are_utc_and_offsets_count() -> None:
    assert in_window("2026-11-20T00:30:00", SINCE, UNTIL)
    assert not in_window("2026-11-20T00:30:00+01:00", SINCE, UNTIL)  # 23:30 UTC the day before


def test_missing_or_unreadable_start_is_kept_for_the_adapter_to_report() -> None:
    assert in_window(None, SINCE, UNTIL)
    assert in_window("", SINCE, UNTIL)
    assert in_window("last tuesday", SINCE, UNTIL)
