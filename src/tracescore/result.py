"""``TraceResult``: the scores of one trace (present and absent), its errors, notes, per-citation and per-claim rows;
and ``UrlRow``, the per-URL row of the surface stage."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from datetime import datetime
from json.encoder import encode_basestring
from typing import Any, Literal

from tracescore.jsontext import encoder
from tracescore.scores import Score, ScoreValue


@dataclass(frozen=True)
class CitationRow:
    """One cited source of one sentence, as stored per trace in the local store."""

    sentence_index: int
    marker: str | None
    target: str
    kind: str  # "url" | "doc_id" | "text"
    normalized: str
    fetched: bool
    seen: bool

    @property
    def fabricated(self) -> bool:
        """A url/doc id the agent never saw (a text citation cannot be fabricated)."""
        return self.kind != "text" and not self.seen


@dataclass
class ClaimRow:
    """One claim of one answer: its verdict after quote verification, the evidence it rests on, and citations."""

    claim_index: int
    sentence_index: int
    text: str
    verdict: str
    judge_verdict: str
    doc: str | None = None
    quote: str | None = None
    quote_check: str | None = None
    reason: str | None = None
    cited: list[str] = field(default_factory=list)
    cited_verdict: str | None = None
    drift_to: str | None = None
    calls: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The row as plain JSON-able fields, for the store and reports."""
        return asdict(self)


Label = Literal["supports", "contradicts", "neither"]
"""A surface's or a page's label against the gold answer (the ``surface`` rubric)."""


@dataclass
class UrlRow:
    """One URL of one trace: its labels after quote verification, its partition cell and the quotes behind it."""

    url: str | None
    key: str
    domain: str
    rank: int | None
    search: int | None
    fetched: bool
    surface: Label | None  # None: the URL was fetched without appearing in a search result
    page: Label | None  # None: not fetched, or the fetch yielded no readable page
    cell: str | None  # smart / missed / blind / noop; None without a surface
    discovered: bool = False
    surface_quote: str | None = None
    page_quote: str | None = None
    unverified: list[str] = field(default_factory=list)
    call: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TraceResult:
    """What scoring one trace (or failing to read one input line) produced.

    ``to_json()`` is the documented result line: ``trace_id``, ``scores`` {name: value}, ``missing`` {name: reason},
    ``errors`` [...], plus ``line``, ``timestamp``, ``session_id``, ``comments``, ``metadata`` and ``trace_url``.
    """

    trace_id: str | None
    scores: dict[str, Score] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    citations: list[CitationRow] = field(default_factory=list)
    claims: list[ClaimRow] = field(default_factory=list)
    line: int | None = None
    timestamp: datetime | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    trace_url: str | None = None  # the trace in the platform's UI; absent (no field) for traces read from files
    session_id: str | None = None  # the trace's conversation (``Trace.session_id``); absent (no field) without one

    def __post_init__(self) -> None:
        self.metadata = _strict(self.metadata)

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def values(self) -> dict[str, ScoreValue]:
        return {n: s.value for n, s in self.scores.items() if s.value is not None}

    @property
    def missing(self) -> dict[str, str]:
        return {n: s.reason or "not computed" for n, s in self.scores.items() if s.value is None}

    def to_json(self) -> dict[str, Any]:
        return _strict(self._plain())  # type: ignore[no-any-return]

    def encoded(self) -> tuple[dict[str, Any], str]:
        """The result line as a dict and as JSON text, serialised once: ``--out``, the store and the table share it.

        Same bytes as ``json.dumps(self.to_json(), ensure_ascii=False, default=str)``. The common case (plain float,
        bool and text values, text names, reasons and comments) is written piece by piece in the one pass that builds
        the dict, reusing the encoded ``"name": "reason"`` of absent scores (one reason repeats over many names and
        traces); anything else goes through the json module, and the strict-JSON walk runs only for infinite or NaN.
        """
        try:
            return self._encode()
        except (_Slow, ValueError, TypeError, RecursionError):  # TypeError: a name, reason or comment not text
            pass
        plain = self._plain()
        try:
            return plain, json.dumps(plain, ensure_ascii=False, default=str, allow_nan=False)
        except ValueError:
            strict = _strict(plain)
            return strict, json.dumps(strict, ensure_ascii=False, default=str)

    def _encode(self) -> tuple[dict[str, Any], str]:
        """``(self._plain(), its JSON text)`` for the common case; raises _Slow (or ValueError) for anything else."""
        values: dict[str, ScoreValue] = {}
        missing: dict[str, str] = {}
        comments: dict[str, str] = {}
        judged: dict[str, Any] | None = None
        usage = False
        scored: list[str] = []
        commented: list[str] = []
        keys, floats = _KEYS, _FLOATS
        for name, s in self.scores.items():  # one pass: this runs once per trace on the hot path (#14)
            value, metadata = s.value, s.metadata
            if value is None:
                missing[name] = s.reason or "not computed"  # written after the loop, pair by pair from _PAIRS
            else:
                values[name] = value
                key = keys.get(name) or _key(name)
                if type(value) is float:
                    text = floats.get(value)
                    if text is None:
                        if value - value != 0.0:  # infinite or NaN: the strict walk writes it as text
                            raise _Slow
                        text = float.__repr__(value)
                        if value != 0.0:  # 0.0 == -0.0: only other values are looked up by value
                            _remember(floats, value, text)
                    scored.append(key + text)
                elif type(value) is bool:
                    scored.append(key + ("true" if value else "false"))
                elif type(value) is str:
                    scored.append(key + _text(value))
                else:
                    raise _Slow
            if s.comment:
                comments[name] = s.comment
                commented.append((keys.get(name) or _key(name)) + _text(s.comment))
            if metadata:  # most scores carry none: one test of it for both of these (bool() per score cost ~1.5 us)
                if "judge_usage" in metadata:
                    usage = True
                if judged is None and value is not None and "judge_model" in metadata:
                    judged = metadata
        tid = self.trace_id
        out: dict[str, Any] = {"trace_id": tid, "scores": values, "missing": missing, "errors": self.errors}
        parts = [
            '{"trace_id": ',
            "null" if tid is None else _text(tid),
            ', "scores": {',
            ", ".join(scored),
            '}, "missing": {',
            _absent(missing),
            '}, "errors": ',
            _ENCODE(self.errors) if self.errors else "[]",
        ]
        if self.notes:
            out["notes"] = self.notes
            parts += ', "notes": ', _ENCODE(self.notes)
        if comments:
            out["comments"] = comments
            parts += ', "comments": {', ", ".join(commented), "}"
        if self.line is not None:
            out["line"] = self.line
            parts += ', "line": ', str(self.line) if type(self.line) is int else _ENCODE(self.line)
        if self.timestamp is not None:
            out["timestamp"] = stamp = self.timestamp.isoformat()
            parts += ', "timestamp": ', _text(stamp)
        if self.session_id is not None:
            out["session_id"] = self.session_id
            parts += ', "session_id": ', _text(self.session_id)
        if self.metadata:
            out["metadata"] = self.metadata
            parts += ', "metadata": ', _flat(self.metadata)
        judge = self._judge(judged, usage)
        if judge:
            out["judge"] = judge
            parts += ', "judge": ', _ENCODE(judge)
        if self.trace_url is not None:
            out["trace_url"] = self.trace_url
            parts += ', "trace_url": ', _text(self.trace_url)
        parts.append("}")
        return out, "".join(parts)

    def _plain(self) -> dict[str, Any]:
        values: dict[str, ScoreValue] = {}
        missing: dict[str, str] = {}
        comments: dict[str, str] = {}
        judged: dict[str, Any] | None = None
        usage = False
        for name, s in self.scores.items():  # one pass: this runs once per trace on the hot path (#14)
            if s.value is None:
                missing[name] = s.reason or "not computed"
            else:
                values[name] = s.value
                if judged is None and s.metadata and "judge_model" in s.metadata:
                    judged = s.metadata
            if s.comment:
                comments[name] = s.comment
            usage = usage or (bool(s.metadata) and "judge_usage" in s.metadata)
        out: dict[str, Any] = {"trace_id": self.trace_id, "scores": values, "missing": missing, "errors": self.errors}
        if self.notes:
            out["notes"] = self.notes
        if comments:
            out["comments"] = comments
        if self.line is not None:
            out["line"] = self.line
        if self.timestamp is not None:
            out["timestamp"] = self.timestamp.isoformat()
        if self.session_id is not None:
            out["session_id"] = self.session_id
        if self.metadata:
            out["metadata"] = self.metadata
        judge = self._judge(judged, usage)
        if judge:
            out["judge"] = judge
        if self.trace_url is not None:
            out["trace_url"] = self.trace_url
        return out

    def _judge(self, judged: dict[str, Any] | None, usage: bool) -> dict[str, Any]:
        """The line's ``judge`` object: usage summed over the judged stages, and which judge gave the scores."""
        judge = _judge_usage(self.scores.values()) if usage else {}
        if judged:  # which judge and rubric gave the judged scores: the gate looks up their calibration
            judge.update(model=judged["judge_model"], rubric_version=judged.get("rubric_version"))
            if "agreement" in judged:  # measured against human labels; absent when never measured
                judge["agreement"] = judged["agreement"]
            if "judge_sample" in judged:  # [scoring] judge_sample: the rate, and whether the hash or a flag chose it
                judge["sample"] = judged["judge_sample"]
        return judge


def result_from_line(line: dict[str, Any], metadata: dict[str, Any] | None = None) -> TraceResult:
    """A ``TraceResult`` back from its result line (values, absences, comments, errors, timestamp, session,
    metadata), with each score's ``metadata`` (the store's ``score_metadata``: {name: metadata}) when given; the
    per-citation and per-claim rows are not in a line. What the session scores are computed from, afterwards."""
    comments = line.get("comments") or {}
    metadata = metadata or {}
    scores = {name: Score(name, value, comment=comments.get(name), metadata=metadata.get(name) or {})
              for name, value in (line.get("scores") or {}).items()}  # fmt: skip
    scores |= {name: Score(name, None, reason) for name, reason in (line.get("missing") or {}).items()}
    stamp = line.get("timestamp")
    return TraceResult(
        trace_id=line.get("trace_id"),
        scores=scores,
        errors=list(line.get("errors") or []),
        timestamp=datetime.fromisoformat(stamp) if isinstance(stamp, str) else None,
        metadata=dict(line.get("metadata") or {}),
        trace_url=line.get("trace_url"),
        session_id=line.get("session_id"),
    )


_ENCODE = encoder(ensure_ascii=False)
"""``json.dumps(value, ensure_ascii=False, default=str, allow_nan=False)`` without building an encoder per call."""

_text = encode_basestring
"""A str as a JSON string literal with ``ensure_ascii=False`` (the function ``jsontext.encoder`` uses)."""

_PAIRS: dict[tuple[str, str], str] = {}
"""(score name, reason) → ``"name": "reason"``: a few reasons repeat over every trace."""

_FLOATS: dict[float, str] = {}
"""JSON text of non-zero float values already written (rates and counts repeat)."""

_KEYS: dict[str, str] = {}
"""``"name": `` of score names already written."""

_REMEMBERED = 4096
"""Entries each of those caches keeps before it starts over (reasons that name a trace would grow it forever)."""


class _Slow(Exception):
    """A value the piecewise writer does not handle: the json module writes the whole line."""


def _remember(cache: dict[Any, Any], key: Any, value: Any) -> Any:
    if len(cache) >= _REMEMBERED:
        cache.clear()
    cache[key] = value
    return value


def _absent(missing: dict[str, str]) -> str:
    """``"name": "reason", ...`` of the absent scores: each pair looked up in C (a loop of lookups in Python cost ~3
    us a trace); a pair not written yet (a reason that names the trace is new on every trace) is found in C too and
    written once (a name or reason not text goes the slow way)."""
    written = list(map(_PAIRS.get, missing.items()))
    if None in written:
        pairs = list(missing.items())
        while None in written:
            i = written.index(None)
            name, reason = pair = pairs[i]
            if type(reason) is not str:
                raise _Slow
            written[i] = _remember(_PAIRS, pair, _key(name) + _text(reason))
    return ", ".join(written)  # type: ignore[arg-type]  # every None was written above


def _flat(metadata: dict[str, Any]) -> str:
    """``_ENCODE(metadata)``; a trace's metadata of texts only (the common case) written pair by pair, which costs a
    fraction of the C encoder's set-up for a small dict."""
    items = []
    for key, value in metadata.items():
        if type(key) is not str or type(value) is not str:
            return _ENCODE(metadata)
        items.append(f"{_text(key)}: {_text(value)}")
    return "{" + ", ".join(items) + "}"


def _key(name: str) -> str:
    """``"name": `` (a score name is text; anything else goes the slow way, as json.dumps would convert it)."""
    found = _KEYS.get(name)
    if found is None:
        if type(name) is not str:
            raise _Slow
        found = _remember(_KEYS, name, _text(name) + ": ")
    return found


_USAGE_KEYS = ("calls", "input_tokens", "output_tokens", "cost_usd")


def _judge_usage(scores: Iterable[Score]) -> dict[str, Any]:
    """This trace's judge usage summed over every judged stage (grounding, surface, semantic; each counted once).

    The scores of one stage share one ``judge_usage``; its rubric version tells the stages apart.
    """
    stages = {s.metadata.get("rubric_version") or s.name: s.metadata["judge_usage"] for s in scores
              if isinstance(s.metadata.get("judge_usage"), dict)}  # fmt: skip
    if not stages:
        return {}
    total: dict[str, Any] = {k: sum(u.get(k) or 0 for u in stages.values()) for k in _USAGE_KEYS}
    total["cost_usd"] = round(total["cost_usd"], 6)
    return total


_KEPT = frozenset((str, int, bool, type(None)))
"""Types ``_strict`` returns unchanged (exactly these: a subclass goes through its checks)."""


def _strict(value: Any) -> Any:
    """``value`` with every infinite/NaN float written as a string ("Infinity", "-Infinity", "NaN"): strict JSON out.

    JSONL input rejects such numbers (the adapter names the path); this catches what a platform record carried.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):  # text, ints, bools and None are kept as they are, without a call each (a trace's
        # metadata passes here when its result is made)
        return {k: v if type(v) in _KEPT else _strict(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_strict(v) for v in value]
    return value
