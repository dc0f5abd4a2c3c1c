"""A backfill's slices cut from one scan of its window: requests follow the pages read, not the slices.

A backfill is checkpointed slice by slice, newest slice first (platforms list newest first). Reading each slice
with its own listing costs at least one request per slice, most of them for an empty page. ``SlicedScan`` opens one
listing, ``[start, until of the first slice)``, read lazily page by page, and cuts it at the slice edges as the
engine asks for the slices in turn: the records of ``records(since, until)`` are those of the scan down to the
first one older than ``since``, which is held back for the next, older slice.

No I/O of its own: it only splits what the source yields. Records must come newest first by ``Record.timestamp``
(the platform sources yield them so). A source whose records carry no timestamp (a file: its lines
come in file order) is read slice by slice, as ``records(since, until)`` each, from its first record on; a record
without a timestamp further on belongs to the slice being read, so it is written before that slice is checkpointed.
A slice asked for out of turn (its ``until`` is not the ``since`` of the slice before) starts a listing of its own.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from datetime import datetime

from tracescore.sources.base import Record, Source


class SlicedScan:
    """The slices ``[since, until)`` of ``[start, …)``, asked for newest first, from one listing of ``source``."""

    def __init__(self, source: Source, start: datetime) -> None:
        self.source = source
        self.start = start
        self.listings = 0  # how many listings were opened (one, when the slices are asked for in turn)
        self._scan: Iterator[Record] | None = None
        self._held: Record | None = None  # the first record older than the slice last read
        self._edge: datetime | None = None  # the ``since`` of the slice last read: the next slice must end there
        self._fresh = False  # the listing has yielded nothing yet
        self._per_slice = False  # its records carry no timestamp: each slice is a listing of its own

    def records(self, since: datetime, until: datetime | None = None) -> Iterator[Record]:
        if self._per_slice:
            self.listings += 1
            return iter(self.source.records(since, until))
        if self._scan is None or until is None or until != self._edge:
            self._scan, self._held, self._fresh = iter(self.source.records(self.start, until)), None, True
            self.listings += 1
        self._edge = since
        return self._slice(self._scan, since, until)

    def _slice(self, scan: Iterator[Record], since: datetime, until: datetime | None) -> Iterator[Record]:
        if self._held is not None:
            record, self._held = self._held, None
            if _older(record, since):
                self._held = record
                return
            yield record
        for record in scan:
            if self._fresh and record.timestamp is None:  # not sliceable: read this slice and the next on their own
                self._per_slice, self._scan = True, None
                _close(scan)
                self.listings += 1
                yield from self.source.records(since, until)
                return
            self._fresh = False
            if _older(record, since):
                self._held = record
                return
            yield record


def _older(record: Record, since: datetime) -> bool:
    return record.timestamp is not None and record.timestamp < since


def _close(scan: Iterator[Record]) -> None:
    if isinstance(scan, Generator):  # a listing is a generator: closing it ends its paging (and its client)
        scan.close()
