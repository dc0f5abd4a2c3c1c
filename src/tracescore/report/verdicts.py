"""One result line read by stage: pass/fail per stage, the stage of a score name, a field by path (report and gate)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from tracescore import catalog
from tracescore.scorers.answer import ANSWER_CORRECT
from tracescore.scorers.citations import CITATION_FABRICATED_COUNT, CITATION_UNFETCHED_RATE
from tracescore.scorers.diagnosis import DIAGNOSIS, MIN_GROUNDING, MIN_RECALL
from tracescore.scorers.grounding import GROUNDING_RATE
from tracescore.scorers.retrieval import RECALL_PREFIX

# the catalog's stages that have a pass/fail verdict per trace (surface has counts, diagnosis is the cell itself)
STAGES: tuple[str, ...] = tuple(s for s in catalog.STAGES if s in ("retrieval", "grounding", "citations", "answer"))
_RESULT_KEYS = frozenset(
    ("trace_id", "scores", "missing", "errors", "notes", "comments", "line", "timestamp", "metadata", "judge")
)


def as_number(value: object) -> float | None:
    """A score value as a number (booleans count as 0/1); None for text or a missing value."""
    return float(value) if isinstance(value, bool | int | float) else None


def stage_verdicts(result: Mapping[str, Any], *, unread_fails: bool = True) -> dict[str, bool | None]:
    """Pass (True), fail (False) or undecided (None) per stage of one result line, from its scores.

    retrieval and answer come from the ``diagnosis`` cell (answer from ``answer.correct`` first); grounding from
    the grounded/ungrounded row or ``grounding.rate``; citations pass when no cited URL is fabricated or (unless
    ``unread_fails`` is off) unread.
    """
    return verdicts_of(result.get("scores") or {}, unread_fails)


def verdicts_of(scores: Mapping[str, Any], unread_fails: bool = True) -> dict[str, bool | None]:
    """``stage_verdicts`` of a line's ``scores`` (the summary folds every line through it: kept to one pass)."""
    get = scores.get
    cell = get(DIAGNOSIS)
    row, _, col = cell.partition("/") if isinstance(cell, str) else ("", "", "")
    out: dict[str, bool | None] = dict.fromkeys(STAGES)
    if row:
        out["retrieval"] = row != "retrieval_fail"
    else:
        recall = next((as_number(v) for n, v in scores.items() if n.startswith(RECALL_PREFIX)), None)
        out["retrieval"] = None if recall is None else recall >= MIN_RECALL
    if row == "grounded" or row == "ungrounded":
        out["grounding"] = row == "grounded"
    else:
        rate = get(GROUNDING_RATE)
        if type(rate) is float or isinstance(rate, bool | int | float):
            out["grounding"] = float(rate) >= MIN_GROUNDING
    correct = get(ANSWER_CORRECT)
    if isinstance(correct, bool):
        out["answer"] = correct
    elif col:
        out["answer"] = col == "right"
    fabricated = get(CITATION_FABRICATED_COUNT)
    if type(fabricated) is float or isinstance(fabricated, bool | int | float):
        unread = (as_number(get(CITATION_UNFETCHED_RATE)) or 0.0) if unread_fails else 0.0
        out["citations"] = float(fabricated) == 0 and unread == 0
    return out


def decided_verdicts(scores: Mapping[str, Any]) -> tuple[tuple[str, bool], ...]:
    """The decided ``(stage, verdict)`` pairs of ``verdicts_of(scores)``, in its order (the summary folds every line).

    A line with a diagnosis cell is decided by the cell and four scores alone: their values and types are the key of
    the verdicts already worked out (a run has a few combinations). Any other line is worked out as it comes.
    """
    get = scores.get
    cell = get(DIAGNOSIS)
    if type(cell) is not str or cell.startswith("/") or not cell:
        return _decided(scores)
    rate, correct = get(GROUNDING_RATE), get(ANSWER_CORRECT)
    fabricated, unread = get(CITATION_FABRICATED_COUNT), get(CITATION_UNFETCHED_RATE)
    key = (cell, type(rate), rate, type(correct), correct, type(fabricated), fabricated, type(unread), unread)
    try:
        found = _DECIDED.get(key)
    except TypeError:  # a value that cannot be a key (a list read from a file)
        return _decided(scores)
    if found is None:
        if len(_DECIDED) >= 4096:  # continuous values (a judged rate) would grow it forever
            _DECIDED.clear()
        found = _DECIDED[key] = _decided(scores)
    return found


_DECIDED: dict[tuple[Any, ...], tuple[tuple[str, bool], ...]] = {}


def _decided(scores: Mapping[str, Any]) -> tuple[tuple[str, bool], ...]:
    return tuple((stage, verdict) for stage, verdict in verdicts_of(scores).items() if verdict is not None)


def score_stage(name: str) -> str:
    """The stage of a score name: the catalog's; for a name it does not hold, the stage the name starts with (every
    scorer's names start with its stage, a ``[[criteria]]`` criterion's too: read back from a results file or the
    store by a command that loaded no config, it is reported there, ``citation.…`` under ``citations``); ``other``
    for a name with no stage."""
    name = name.split("@", 1)[0]
    found = catalog.entry(name)
    if found:
        return found.stage
    head, dot, _ = name.partition(".")
    return next((s for s in catalog.STAGES if head in (s, s.removesuffix("s"))), head) if dot else "other"


def by_stage(names: Iterable[str]) -> list[str]:
    """Score names in the catalog's stage order (retrieval, grounding, citations, answer, …), by name within one."""
    order: dict[str, int] = {stage: i for i, stage in enumerate(catalog.STAGES)}
    return sorted(names, key=lambda n: (order.get(score_stage(n), len(order)), n))


def full_path(path: str) -> str:
    """The path ``field_value`` reads: a bare name (``provider``) is looked up in metadata (``metadata.provider``)."""
    return path if path.split(".")[0] in _RESULT_KEYS else f"metadata.{path}"


def field_value(result: Mapping[str, Any], path: str) -> str | None:
    """The value at a dotted path of a result line (``metadata.provider``), as text; bare names look in metadata."""
    parts = path.split(".")
    node: Any = result if parts[0] in _RESULT_KEYS else result.get("metadata") or {}
    for part in parts:
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    if node is None:
        return None
    if isinstance(node, list | tuple):
        return ",".join(str(v) for v in node)
    return str(node).lower() if isinstance(node, bool) else str(node)
