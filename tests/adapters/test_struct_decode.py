"""The msgspec decoder (adapters/structs.py) is exactly the pydantic model: on every fixture line and every hostile
line, the same trace (field by field, types and key order included) or the same error; and each pydantic model's
fields and defaults are its struct's, so a field added to one and not the other fails here."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import pytest
from pydantic import BaseModel

import tracescore.trace as model
from tests.conftest import SAMPLES, SHARED_DATA
from tests.engine.test_golden import expertqa_lines, faults_lines
from tracescore.adapters import structs
from tracescore.adapters.jsonl import _BOM, model_trace, trace_from_json
from tracescore.calibrate.required import HumanRequired, apply_required
from tracescore.errors import AdapterError

ROOT = Path(__file__).resolve().parents[2]


def canon(value: Any) -> Any:
    """A comparable form of a trace (struct or pydantic) that keeps what ``==`` forgets: each value's type (5 vs
    5.0, True vs 1), dict key order, a datetime's offset and tzinfo type, the model class name."""
    if isinstance(value, BaseModel):
        return (type(value).__name__, [(k, canon(getattr(value, k))) for k in type(value).model_fields])
    if isinstance(value, msgspec.Struct):
        config = value.__struct_config__
        tag = [(config.tag_field, canon(config.tag))] if config.tag_field else []
        fields = [(f.name, canon(getattr(value, f.name))) for f in msgspec.structs.fields(value)]
        return (type(value).__name__, sorted(tag + fields, key=lambda kv: _order(value, kv[0])))
    if isinstance(value, dict):
        return ("dict", [(canon(k), canon(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [canon(v) for v in value])
    if isinstance(value, datetime):
        return ("datetime", value.isoformat(), type(value.tzinfo).__name__, repr(value.tzinfo))
    if isinstance(value, float):
        return ("float", repr(value))
    return (type(value).__name__, value)


def _order(struct: msgspec.Struct, name: str) -> int:
    """A struct field's position in its pydantic model (the tag ``kind`` is the model's first field)."""
    return list(getattr(model, type(struct).__name__).model_fields).index(name)


def outcome(decode: Any, line: bytes) -> tuple[str, Any]:
    try:
        return "trace", canon(decode(line))
    except AdapterError as exc:
        return "error", str(exc)


def reference(line: bytes) -> Any:
    """The pydantic path alone, with the same line preparation as ``trace_from_json``."""
    return model_trace(line.removeprefix(_BOM).rstrip(b"\r\n"))


def fixture_lines() -> list[bytes]:
    """Every .jsonl line in tests/, the shared data and the cookbook, the planted faults and the ExpertQA traces."""
    files = [*sorted((ROOT / "tests").rglob("*.jsonl")), *sorted(SHARED_DATA.rglob("*.jsonl"))]
    files += sorted((ROOT / "cookbook").rglob("*.jsonl"))
    lines = [line for path in files for line in path.read_bytes().splitlines()]
    return lines + faults_lines() + expertqa_lines()


def _trace(**fields: Any) -> bytes:
    return json.dumps({"id": "h", **fields}).encode()


def _search(**hit: Any) -> bytes:
    return _trace(steps=[{"kind": "search", "hits": [hit]}])


def _fetch(**step: Any) -> bytes:
    return _trace(steps=[{"kind": "fetch", **step}])


def _nested(depth: int, opener: str = "[") -> str:
    closer = "]" if opener == "[" else "}"
    inner = opener if opener == "[" else '{"k": '
    return inner * depth + ("1" if opener == "{" else "") + closer * depth


BIG = 10**30
STAMPS = [
    "2026-01-01T00:00:00Z", "2026-01-01T00:00:00+00:00", "2026-01-01T00:00:00+05:30", "2026-01-01T00:00:00-00:00",
    "2026-01-01 00:00:00", "2026-01-01T00:00:00", "2026-01-01", "2026-01-01T00:00", "2026-01-01T00:00:00.123456Z",
    "2026-01-01T00:00:00.123456789Z", "2026-01-01t00:00:00z", "2016-12-31T23:59:60Z", "2026-01-01T24:00:00Z",
    "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z", "20260101T000000Z", "1700000000", "1700000000.5", "", "now",
    "2026-01-01T00:00:00+25:00", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z", " 2026-01-01T00:00:00Z",
    1700000000, 1700000000.5, 0, -1, BIG, 1e20, True, None, [], {},
]  # fmt: skip
HOSTILE: list[bytes] = [
    # lax coercions pydantic makes and msgspec refuses (or makes differently)
    *[_search(rank=v) for v in (1, 2, "1", 1.0, 1.5, True, False, 0, -1, BIG, None, "x", [1])],
    *[_search(score=v) for v in (1, 5, 1.5, -0.0, "1.5", "NaN", "inf", True, BIG, 2**63, 2**64, None, [1])],
    *[_search(url=v) for v in ("u", 1, 1.5, True, None, ["u"])],
    *[_search(metadata=v) for v in ({}, {"a": 1}, None, [], "x", {"a": BIG}, {"a": [1, 1.0, True, None]})],
    *[_fetch(status=v) for v in (200, "200", 200.0, 200.5, True, BIG, -1, None, "", [200])],
    *[_fetch(text=v) for v in ("t", 1, None, True)],
    *[_trace(id=v) for v in (5, -0, 0, True, False, 1.0, "", " ", BIG, 2**64, None, [1], {"a": 1}, "x" * 10_000)],
    *[_trace(timestamp=v) for v in STAMPS],
    *[_fetch(fetched_at=v) for v in STAMPS],
    *[_trace(schema_version=v) for v in ("1", 1, "2", 1.0, None, "")],
    *[_trace(question=v) for v in ("q", 1, None, ["q"], True)],
    *[_trace(labels=v) for v in ({}, None, [], {"required_doc_ids": "a"}, {"required_doc_ids": [1]})],
    *[_trace(labels={"expect_refusal": v}) for v in (True, False, None, "true", "yes", 1, 0, 1.0, "off")],
    *[_trace(labels={"gold_answer": v}) for v in ("a", 1, None)],
    *[_trace(citations=v) for v in (None, [], [{}], [{"url": "u", "marker": 1}], {}, [None])],
    *[_trace(blind_spots=v) for v in ([], [{"kind": "search", "reason": "r"}], [{"kind": "search"}], [{"kind": "x"}])],
    *[_trace(blind_spots=[{"kind": "fetch", "reason": "r", "tool": v}]) for v in ("t", None, 1)],
    *[_trace(metadata=v) for v in ({}, None, [], {"x": BIG}, {"x": -(2**63) - 1}, {"x": 10**4299}, {"x": 1e308})],
    *[_trace(steps=v) for v in ([], None, {}, [{}], [{"kind": "browse"}], [{"kind": None}], [{"kind": 1}], [None])],
    _trace(steps=[{"kind": "Search"}]),
    _trace(steps=[{"kind": "search", "hits": None}]),
    _trace(steps=[{"kind": "search", "hits": {}}]),
    _trace(steps=[{"tool": "t", "kind": "search"}]),  # the tag not first
    _trace(steps=[{"kind": "search", "hits": [{"rank": 1, "bogus": 1}]}]),
    _trace(steps=[{"kind": "fetch", "hits": []}]),  # a search field on a fetch
    _trace(labels={"bogus": 1}),
    _trace(bogus=1),
    # duplicate keys: the last wins in both, or msgspec refuses
    b'{"id": "a", "id": "b"}',
    b'{"id": "a", "metadata": {"x": 1, "y": 2, "x": 3}}',
    b'{"id": "a", "steps": [{"kind": "search", "kind": "search"}]}',
    b'{"id": "a", "steps": [{"kind": "fetch", "kind": "search"}]}',
    b'{"id": "a", "steps": [{"kind": "search", "kind": "fetch"}]}',
    b'{"id": "a", "steps": [{"kind": "search", "query": "x", "kind": "fetch"}]}',
    b'{"id": "a", "question": "q1", "question": "q2"}',
    # numbers
    b'{"id": "a", "metadata": {"x": 1e400}}',
    b'{"id": "a", "metadata": {"x": -1e400}}',
    b'{"id": "a", "metadata": {"x": 1' + b"0" * 400 + b'.0}}',
    b'{"id": "a", "metadata": {"x": 1' + b"0" * 4299 + b"}}",
    b'{"id": "a", "metadata": {"x": 1' + b"0" * 4300 + b"}}",
    b'{"id": "a", "metadata": {"x": 1.' + b"0" * 5000 + b'1}}',
    b'{"id": "a", "metadata": {"x": 4.9e-325, "y": 2.5E-3, "z": -0, "w": 1E5}}',
    b'{"id": "a", "metadata": {"x": 0.1000000000000000055511151231257827021181583404541015625}}',
    b'{"id": "a", "metadata": {"x": NaN}}',
    b'{"id": "a", "metadata": {"x": Infinity}}',
    b'{"id": "a", "metadata": {"x": -Infinity}}',
    b'{"id": "a", "steps": [{"kind": "search", "hits": [{"score": 1e400}]}]}',
    b'{"id": "a", "steps": [{"kind": "search", "hits": [{"score": NaN}]}]}',
    b'{"id": "a", "steps": [{"kind": "search", "hits": [{"rank": 1e0}]}]}',
    b'{"id": "a", "metadata": {"x": 01}}',
    b'{"id": "a", "metadata": {"x": 1.}}',
    b'{"id": "a", "metadata": {"x": .5}}',
    b'{"id": "a", "metadata": {"x": +1}}',
    b'{"id": "a", "metadata": {"x": -}}',
    # strings and bytes
    b'{"id": "a", "question": "\\ud800"}',
    b'{"id": "a", "question": "\\udc00x"}',
    b'{"id": "a", "question": "\\ud83d\\ude00 \\u00e9 \\/ \\u0000"}',
    b'{"id": "a", "question": "\xff"}',
    b'{"id": "a", "question": "\xed\xa0\x80"}',
    b'{"id": "a", "question": "\xc0\x80"}',
    b'{"id": "a", "question": "\xf4\x90\x80\x80"}',
    b'{"id": "a", "question": "x\ny"}',
    b'{"id": "a", "question": "x\ty"}',
    b'{"id": "a", "question": "\x7f"}',
    b'{"id": "a", "question": "\\x"}',
    b'{"id": "a", "metadata": {"k\\u0000": 1}}',
    b"{'id': 'a'}",
    # line framing: BOM, CRLF, whitespace, trailing content
    b'\xef\xbb\xbf{"id": "a"}',
    b'\xef\xbb\xbf\xef\xbb\xbf{"id": "a"}',
    b'{"id": "a"}\r\n',
    b'{"id": "a"}\r',
    b'{"id": "a"}\n\n',
    b'{"id": "a"}  ',
    b' \t{"id":\r"a"}',
    b'{"id": "a"}\x00',
    b'{"id": "a"}{}',
    b'{"id": "a",}',
    b'{"id": "a", "steps": [,]}',
    b"",
    b"   ",
    b"null",
    b"1",
    b'"a"',
    b"[]",
    b"{}",
    # nesting: pydantic's JSON parser refuses 200 deep; msgspec goes deeper, so deep metadata goes to pydantic
    *[_trace(metadata={"x": json.loads(_nested(d))}).replace(b" ", b"") for d in (1, 62, 63, 64, 65, 190)],
    *[f'{{"id": "a", "metadata": {{"x": {_nested(d, o)}}}}}'.encode() for d in (196, 198, 199, 200, 254) for o in "[{"],
    *[f'{{"id": "a", "steps": [{{"kind": "search", "hits": [{{"metadata": {{"x": {_nested(d, o)}}}}}]}}]}}'.encode()
      for d in (60, 64, 66, 190, 194, 195, 196, 300) for o in "[{"],
    f'{{"id": "a", "metadata": {_nested(5000)}}}'.encode(),
    ("[" * 100_000 + "]" * 100_000).encode(),
]  # fmt: skip


@pytest.mark.parametrize("source", ["fixtures", "hostile"])
def test_the_struct_decoder_gives_the_pydantic_trace_or_the_pydantic_error_on_every_line(source: str) -> None:
    lines = fixture_lines() if source == "fixtures" else HOSTILE
    accepted = decoded = 0
    for n, line in enumerate(lines, start=1):
        expected = outcome(reference, line)
        assert outcome(trace_from_json, line) == expected, f"{source} line {n}: {line[:200]!r}"
        accepted += expected[0] == "trace"
        decoded += structs.decode(line.removeprefix(_BOM)) is not None
    # the comparison is of the struct path, not of pydantic with itself: every fixture trace takes it (273 of 1132
    # lines are traces), and most hostile lines pydantic accepts (the rest are the lax ones, refused below)
    assert decoded == accepted >= 250 if source == "fixtures" else accepted > decoded >= 100, (accepted, decoded)


def test_the_struct_path_is_taken_for_a_plain_line_and_refused_for_every_lax_one() -> None:
    """The lines pydantic accepts only by coercing (or with a non-finite number) are never decoded by msgspec."""
    assert isinstance(trace_from_json(SAMPLES.read_bytes().splitlines()[0]), structs.Trace)
    refused = [
        _search(rank="1"), _search(rank=1.0), _search(rank=True), _search(score="1.5"), _search(score=True),
        _fetch(status=200.0), _fetch(status=True), _trace(id=True), _trace(id=1.0), _trace(timestamp="2026-01-01x"),
        _trace(labels={"expect_refusal": "yes"}), _trace(labels={"expect_refusal": 1}), _trace(id=""),
        b'{"id": "a", "metadata": {"x": 1e400}}', b'{"id": "a", "metadata": {"x": NaN}}',
        b'{"id": "a", "metadata": {"x": 1' + b"0" * 400 + b'.0}}', b'{"id": "a", "question": "\\ud800"}',
        f'{{"id": "a", "metadata": {{"x": {_nested(65)}}}}}'.encode(),
    ]  # fmt: skip
    assert [line for line in refused if structs.decode(line) is not None] == []


def test_the_comparison_sees_what_equality_forgets() -> None:
    """``canon`` can fail: an int score where pydantic has a float, a reordered metadata dict, another tz type."""
    line = b'{"id": "a", "timestamp": "2026-01-01T00:00:00Z", "metadata": {"x": 1, "y": 2}, "steps": [{"kind": '
    line += b'"search", "hits": [{"score": 5}]}]}'
    fast, slow = trace_from_json(line), reference(line)
    assert canon(fast) == canon(slow)
    assert isinstance(fast, structs.Trace)
    hit = fast.steps[0].hits[0]  # type: ignore[union-attr]
    step = msgspec.structs.replace(fast.steps[0], hits=[msgspec.structs.replace(hit, score=5)])  # type: ignore[arg-type]
    assert canon(msgspec.structs.replace(fast, steps=[step])) != canon(slow)
    assert canon(msgspec.structs.replace(fast, metadata={"y": 2, "x": 1})) != canon(slow)
    moment = datetime.fromisoformat("2026-01-01T00:00:00+00:00")
    assert canon(msgspec.structs.replace(fast, timestamp=moment)) != canon(slow)


PAIRS = [
    (model.Hit, structs.Hit),
    (model.SearchStep, structs.SearchStep),
    (model.FetchStep, structs.FetchStep),
    (model.Citation, structs.Citation),
    (model.BlindSpot, structs.BlindSpot),
    (model.Labels, structs.Labels),
    (model.Trace, structs.Trace),
]


def _model_fields(cls: type[BaseModel]) -> dict[str, tuple[bool, Any]]:
    return {
        name: (info.is_required(), None if info.is_required() else canon(info.get_default(call_default_factory=True)))
        for name, info in cls.model_fields.items()
    }


def _struct_fields(cls: type[msgspec.Struct]) -> dict[str, tuple[bool, Any]]:
    config = cls.__struct_config__
    out = {config.tag_field: (False, canon(config.tag))} if config.tag_field else {}
    for f in msgspec.structs.fields(cls):
        required = f.required
        default = None if required else canon(f.default_factory() if f.default is msgspec.NODEFAULT else f.default)
        out[f.name] = (required, default)
    return out


@pytest.mark.parametrize(("pydantic_model", "struct"), PAIRS, ids=[p[0].__name__ for p in PAIRS])
def test_each_struct_has_its_models_fields_and_defaults(pydantic_model: type[BaseModel], struct: type) -> None:
    assert _struct_fields(struct) == _model_fields(pydantic_model)
    assert struct.__struct_config__.frozen and struct.__struct_config__.forbid_unknown_fields


def test_every_model_in_trace_py_has_a_struct_and_the_parity_check_can_fail() -> None:
    models = {n for n, v in vars(model).items() if isinstance(v, type) and issubclass(v, model._Model)} - {"_Model"}
    assert models == {p[0].__name__ for p in PAIRS}

    class Wider(model.Labels):
        reviewer: str | None = None

    assert _model_fields(Wider) != _struct_fields(structs.Labels)


def test_a_struct_trace_is_copied_and_reported_like_the_model() -> None:
    """``apply_required`` and the mapping report take the struct as they take the model (same outcome)."""
    from tracescore.platforms.inspect import inspect_record

    line = SAMPLES.read_bytes().splitlines()[0]
    fast, slow = trace_from_json(line), reference(line)
    assert isinstance(fast, structs.Trace) and not isinstance(slow, structs.Trace)
    when = datetime(2026, 1, 1, tzinfo=UTC)
    human = {fast.id: HumanRequired(doc_ids=("d-1",), author="r", labelled_at=when, item_id="i", trace_id=fast.id)}
    assert canon(apply_required(fast, human)) == canon(apply_required(slow, human))
    assert apply_required(fast, human).labels.required_doc_ids == ["d-1"]
    assert inspect_record(line, trace_from_json) == inspect_record(line, reference)
    spotted = _trace(blind_spots=[{"kind": "fetch", "reason": "r"}], labels={"gold_answer": "g"})
    report = inspect_record(spotted, trace_from_json)
    assert report == inspect_record(spotted, reference)
    assert report.labels == {"gold_answer": "g"} and report.blind_spots[0].reason == "r"


def test_random_traces_round_trip_identically() -> None:
    """Random JSON values in every free-form and numeric field: the struct path equals the pydantic one."""
    rng = random.Random(14)

    def value(depth: int = 0) -> Any:
        pick = rng.randrange(8 if depth < 4 else 5)
        return [
            lambda: rng.uniform(-1e6, 1e6) * 10 ** rng.randint(-300, 300),
            lambda: rng.randint(-(2**70), 2**70),
            lambda: "".join(chr(rng.choice([rng.randint(32, 126), rng.randint(0x80, 0x10FFFF)])) for _ in range(5)),
            lambda: rng.choice([True, False, None]),
            lambda: rng.random(),
            lambda: [value(depth + 1) for _ in range(rng.randint(0, 3))],
            lambda: {f"k{rng.randint(0, 9)}": value(depth + 1) for _ in range(rng.randint(0, 3))},
            lambda: {"z": value(depth + 1), "a": value(depth + 1)},
        ][pick]()

    for _ in range(300):
        hits = [{"rank": rng.randint(1, 99), "score": value(), "metadata": {"m": value()}} for _ in range(3)]
        data = {"id": rng.randint(0, 2**63), "steps": [{"kind": "search", "hits": hits}], "metadata": {"v": value()}}
        line = json.dumps(data, ensure_ascii=rng.random() < 0.5).encode(errors="surrogatepass")
        assert outcome(trace_from_json, line) == outcome(reference, line), line[:300]


def test_the_python_api_scores_a_decoded_struct_like_the_model() -> None:
    import tracescore

    lines = SAMPLES.read_bytes().splitlines()[:5]
    fast = [trace_from_json(line) for line in lines]
    assert all(isinstance(t, structs.Trace) for t in fast)
    got = [r.to_json() for r in tracescore.score_traces(fast)]
    assert got == [r.to_json() for r in tracescore.score_traces([reference(line) for line in lines])]
    assert all(not r["errors"] and r["scores"] for r in got)
