"""``SlicedScan``: a backfill's slices, asked for newest first, cut from one listing of the source."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from tracescore.engine.slices import SlicedScan
from tracescore.sources.base import Record

T0 = datetime(2026, 11, 1, tzinfo=UTC)
HOUR = timedelta(hours=1)


class _Listing:
    """A source listing newest first; records every ``records`` call."""

    def __init__(self, hours: list[float], stamped: bool = True) -> None:
        self.at = sorted((T0 + timedelta(hours=h) for h in hours), reverse=True)
        self.stamped = stamped
        self.calls: list[tuple[datetime, datetime | None]] = []

    def records(self, since: datetime, until: datetime | None = None) -> Iterator[Record]:
        self.calls.append((since, until))
        for at in self.at:
            if at >= since and (until is None or at < until):
                yield Record(payload=at.isoformat(), timestamp=at if self.stamped else None)


def _slices(n: int) -> list[tuple[datetime, datetime]]:
    return [(T0 + HOUR * i, T0 + HOUR * (i + 1)) for i in reversed(range(n))]


def _read(scan: SlicedScan, slices: list[tuple[datetime, datetime]]) -> list[list[float]]:
    return [[(datetime.fromisoformat(str(r.payload)) - T0) / HOUR for r in scan.records(a, b)] for a, b in slices]


def test_the_slices_come_from_one_listing_each_record_in_its_own_slice() -> None:
    source = _Listing([0.5, 1.2, 1.7, 3.0, 3.9])
    scan = SlicedScan(source, T0)
    assert _read(scan, _slices(4)) == [[3.9, 3.0], [], [1.7, 1.2], [0.5]]
    assert source.calls == [(T0, T0 + 4 * HOUR)] and scan.listings == 1


def test_a_slice_asked_for_out_of_turn_starts_a_listing_of_its_own() -> None:
    source = _Listing([0.5, 1.5, 2.5])
    scan = SlicedScan(source, T0)
    assert _read(scan, [(T0 + 2 * HOUR, T0 + 3 * HOUR), (T0, T0 + HOUR)]) == [[2.5], [0.5]]
    assert source.calls == [(T0, T0 + 3 * HOUR), (T0, T0 + HOUR)]


def test_records_without_a_timestamp_are_read_slice_by_slice() -> None:
    source = _Listing([0.5, 1.5, 2.5], stamped=False)
    scan = SlicedScan(source, T0)
    assert _read(scan, _slices(3)) == [[2.5], [1.5], [0.5]]
    assert source.calls == [(T0, T0 + 3 * HOUR), *_slices(3)]  # the first listing was given up at its first record
