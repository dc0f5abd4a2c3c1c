"""``FolderSource``: one shard per JSONL file, keyed by its path under the folder (stable across runs)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tracescore.errors import InputError
from tracescore.sources.folder import FolderSource


def test_every_jsonl_file_is_a_shard_keyed_by_its_relative_path(tmp_path: Path) -> None:
    for name in ["day=02/b.jsonl", "day=01/a.jsonl", "top.jsonl", ".hidden/x.jsonl", "day=01/.tmp.jsonl",
                 "notes.txt"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text('{"id": "t"}\n\n{"id": "u"}\n')
    source = FolderSource(tmp_path)
    shards = source.shards()
    assert [s.key for s in shards] == ["day=01/a.jsonl", "day=02/b.jsonl", "top.jsonl"]
    assert shards == FolderSource(tmp_path).shards()  # stable across runs
    assert [(r.line, r.payload) for r in source.read(shards[0])] == [(1, b'{"id": "t"}\n'), (3, b'{"id": "u"}\n')]


def test_a_missing_or_empty_folder_is_an_input_error_naming_it(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no traces folder"):
        FolderSource(tmp_path / "nope").shards()
    (tmp_path / "a.txt").write_text("x")
    with pytest.raises(InputError, match="holds no .jsonl file"):
        FolderSource(tmp_path).shards()
