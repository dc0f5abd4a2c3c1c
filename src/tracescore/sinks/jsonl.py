"""Result lines to a JSONL file or stdout (``--out``, ``-``), one JSON object per trace in the result format."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from tracescore.errors import SinkError
from tracescore.result import TraceResult
from tracescore.sinks.base import Sink
from tracescore.sinks.records import WriteReport


class JsonlSink(Sink):
    """Writes ``TraceResult.to_json()`` lines to ``PATH.partial``; the file is replaced as a whole, once complete, so a
    re-run never duplicates and an unfinished run never truncates it. A ``Sink`` without a ledger: nothing to attach,
    nothing it writes is ever removed (the defaults)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._tmp: Path | None = None
        self._fh: IO[str] = sys.stdout  # "-": streamed as it comes
        if str(path) == "-":
            return
        self._tmp = self.path.with_name(self.path.name + ".partial")
        try:
            self._fh = open(self._tmp, "w", encoding="utf-8")  # noqa: SIM115 - closed in close()
        except OSError as exc:
            raise SinkError(f"cannot write results to {str(self.path)!r}: {exc.strerror}") from exc

    def write(self, results: Sequence[TraceResult]) -> WriteReport:
        """One line per result, every score in it (present or absent with its reason): each present one accepted."""
        self.write_lines([result.encoded()[1] for result in results])
        present = sum(1 for result in results for score in result.scores.values() if score.value is not None)
        return WriteReport(accepted=present, batches=1)

    def write_line(self, line: str) -> None:
        """One result line already serialised (``TraceResult.encoded()``)."""
        self._fh.write(line + "\n")

    def write_lines(self, lines: list[str]) -> None:
        """Many result lines already serialised, in one write."""
        if lines:
            self._fh.write("\n".join(lines))  # the batch's text once: a "+ newline" would copy it again
            self._fh.write("\n")

    @property
    def partial(self) -> Path | None:
        """Where the lines go until the output is complete (``r.jsonl.partial``); None for stdout."""
        return self._tmp

    def close(self, complete: bool = True) -> None:
        """Close the file; only a ``complete`` output replaces the previous one. An unfinished one (an interrupted
        run) stays as ``.partial`` beside it, and the previous file is left as it was."""
        if self._tmp is None:
            self._fh.flush()
            return
        self._fh.close()
        if complete:
            self._tmp.replace(self.path)
