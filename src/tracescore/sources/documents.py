"""A file downloaded from a platform's UI or API: one JSON document, a JSON list of them, or one per line (JSONL),
also gzip. Read whole (a download holds a few traces; the export sources stream the large volumes).

The platform says which traces a document holds (``Platform.download``): a function that takes one parsed
document and returns what it is and the payloads its adapter reads, or raises ``InputError`` saying what it
expected. The file's first document decides whether the file is the platform's at all (refused whole, with that
line, before anything is scored); a later document that is not is reported by its line and the rest is scored.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from tracescore.errors import InputError, MissingInputError
from tracescore.sources.base import Record

Download = Callable[[Any], tuple[str, list[Any]]]
"""A platform's reader of one downloaded document: (what it is, e.g. "a Langfuse trace download", its payloads)."""


def read_documents(path: str | Path) -> list[tuple[int, Any]]:
    """The JSON documents of a file, each with the line it starts on: the whole file as one document (a list is one
    document), else one per non-blank line, a line that is not JSON kept as its text (its adapter reports it).
    MissingInputError when the file cannot be opened; InputError when its first part is not JSON."""
    try:
        data = Path(path).read_bytes()
        if str(path).endswith(".gz"):
            data = gzip.decompress(data)
    except FileNotFoundError as exc:
        raise MissingInputError(f"no traces file {str(path)!r}; give a file downloaded from the platform") from exc
    except (OSError, EOFError) as exc:
        raise InputError(f"cannot read {str(path)!r}: {exc}") from exc
    try:
        return [(1, json.loads(data))]
    except (ValueError, RecursionError) as exc:
        whole = exc
    documents: list[tuple[int, Any]] = []
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            documents.append((number, json.loads(line)))
        except (ValueError, RecursionError):
            if not documents:
                raise InputError(f"{path} is not JSON: {whole}") from None
            documents.append((number, line.decode("utf-8", "replace")))
    return documents


class DownloadSource:
    """A downloaded file as a ``Source``: every trace its documents hold (the window is not applied: a download is
    what the user picked). ``what`` says what the first document was ("a Langfuse trace download")."""

    def __init__(self, path: str | Path, download: Download) -> None:
        self.name = str(path)
        documents = read_documents(path)
        self._records: list[Record] = []
        self.what = ""
        for index, (line, document) in enumerate(documents):
            try:
                what, payloads = download(document)
            except InputError as exc:
                if index == 0:
                    raise InputError(f"{self.name} is {exc}") from None
                self._records.append(Record(payload={"error": f"line {line}: {exc}"}, line=line))
                continue
            self.what = self.what or what
            self._records += [Record(payload=p, line=line) for p in payloads]

    def records(self, since: datetime, until: datetime | None = None) -> Iterator[Record]:
        return iter(self._records)
