"""A test session's checks: one recipe per judge for the whole session, the result lines of every checked trace,
and what the judge spent (no pytest here: ``pytest_plugin.py`` is the pytest side).

Each process (the one pytest process, or each xdist worker) writes its result lines to its own part file beside
``--tracescore-out`` (``<out>.<session token>.<worker>.part``), each line keyed by the test's place in the collection
and the check's number in the test; at the end the controlling process merges the parts in that order into
``<out>``, numbering the lines as ``tracescore score --out`` numbers a file's (``line``), so the file is the one
``score --out`` would write for those traces in that order. An interrupted session writes ``<out>.partial`` instead
and leaves an earlier ``<out>`` as it was, as ``score`` does.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tracescore.config import Config
from tracescore.errors import ConfigError
from tracescore.integrations.checks import ABSENT_POLICIES, Absent, Verdict, limits, verdict
from tracescore.integrations.records import any_adapter, payload
from tracescore.integrations.scoring import Scoring, spent
from tracescore.judge.protocol import Judge

_AFTER_LINE = ("timestamp", "metadata", "judge", "trace_url")  # the result line's keys that follow "line"


def part_path(out: Path, token: str, worker: str) -> Path:
    return out.with_name(f"{out.name}.{token}.{worker}.part")


class CheckSession:
    """The checks of one process: ``config``'s recipe (its ``[scoring]``, ``[judge]``, ``[mapping]``), the judge
    cache in ``store``, ``max_cost`` (USD; None: the config's) as this process's judge budget, the result lines
    to ``part`` (None: kept nowhere)."""

    def __init__(
        self, config: Config, *, store: Path | None, max_cost: float | None, part: Path | None
    ) -> None:
        self.config, self.store, self.max_cost, self.part = config, store, max_cost, part
        self.checked = 0
        self._scorings: dict[int, tuple[Judge | None, Scoring]] = {}
        self._lock = threading.Lock()

    def scoring(self, judge: Judge | None) -> Scoring:
        """The session's scoring with ``judge`` (None: the configured one, as ``score`` builds it), made once."""
        with self._lock:
            found = self._scorings.get(id(judge))
            if found is None:
                made = Scoring(any_adapter(self.config), judge=judge, k=None, stages=None, config=self.config,
                               store=self.store, max_cost=self.max_cost)  # fmt: skip
                found = self._scorings[id(judge)] = (judge, made)
            return found[1]

    def check(
        self,
        trace: Any,
        *,
        minimum: Mapping[str, object] | None,
        maximum: Mapping[str, object] | None,
        judge: Judge | None,
        absent: Absent,
        order: tuple[int, int],
    ) -> Verdict:
        """Score ``trace`` and hold it against the limits; its result line goes to the part file under ``order``."""
        if absent not in ABSENT_POLICIES:
            raise ConfigError(f"absent={absent!r}: use one of {', '.join(map(repr, ABSENT_POLICIES))}")
        checked = limits(minimum, maximum)
        result = self.scoring(judge).score(payload(trace))
        with self._lock:
            self.checked += 1
            if self.part is not None:
                with self.part.open("a", encoding="utf-8") as f:
                    f.write(json.dumps([*order, result.encoded()[1]], ensure_ascii=False) + "\n")
        return verdict(result, checked)

    def summary(self) -> dict[str, Any]:
        """What this process checked and what its judges spent (plain data: it crosses from an xdist worker)."""
        usages = []
        for _, scoring in self._scorings.values():
            usage = scoring.usage
            if usage is not None:
                usages.append(usage.as_dict() | {"model": scoring.judge_model})
        return {"checked": self.checked, "judged": bool(usages), "usage": spent(usages)}

    def close(self) -> None:
        for _, scoring in self._scorings.values():
            scoring.close()


def _numbered(text: str, line: int) -> str:
    """A result line with ``line`` set where ``score --out`` puts it (the same bytes as ``result.encoded()``)."""
    plain: dict[str, Any] = json.loads(text)
    out: dict[str, Any] = {}
    for key, value in plain.items():
        if key in _AFTER_LINE and "line" not in out:
            out["line"] = line
        if key != "line":
            out[key] = value
    out.setdefault("line", line)
    return json.dumps(out, ensure_ascii=False, default=str)


def merge_parts(out: Path, token: str, *, partial: bool) -> tuple[Path, int]:
    """Merge this session's part files into ``out`` (``partial``: ``out.partial``) in collection order; the parts
    are removed. Returns the file written and its line count."""
    parts = sorted(out.parent.glob(f"{out.name}.{token}.*.part"))
    rows: list[tuple[int, int, str]] = []
    for part in parts:
        with part.open(encoding="utf-8") as f:
            rows += [tuple(json.loads(line)) for line in f if line.strip()]
    rows.sort(key=lambda r: (r[0], r[1]))
    target = out.with_name(out.name + ".partial") if partial else out
    tmp = target.with_name(f"{target.name}.{token}.tmp")
    with tmp.open("w", encoding="utf-8") as f:
        f.writelines(_numbered(text, n) + "\n" for n, (_, _, text) in enumerate(rows, start=1))
    os.replace(tmp, target)
    for part in parts:
        part.unlink()
    return target, len(rows)
