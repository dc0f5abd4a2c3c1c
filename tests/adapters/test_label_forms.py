"""The label forms of #34 (groups of alternative documents, several gold answers) through both decoders: the msgspec
struct and the pydantic model give the same trace on every new form and the same one-line error on every hostile
variant, and ``tracescore score`` reports a bad line by its number while scoring the rest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.test_struct_decode import outcome, reference
from tests.engine.test_golden import score_file
from tracescore.adapters import structs
from tracescore.adapters.jsonl import trace_from_json


def _labels(**labels: Any) -> bytes:
    steps = [{"kind": "search", "hits": [{"doc_id": "faq-returns"}, {"doc_id": "shipping-v2"}]}]
    return json.dumps({"id": "h", "steps": steps, "answer": "30 days", "labels": labels}).encode()


ACCEPTED = [
    _labels(required_doc_ids=[["faq-returns", "policy-returns-v4"], "shipping-v2"]),
    _labels(required_doc_ids=[["faq-returns"]]),  # a group of one
    _labels(required_doc_ids=["faq-returns", "shipping-v2"]),  # today's flat form
    _labels(required_doc_ids=[["a", "b"], ["b", "a"], "c"]),
    _labels(required_doc_ids=[[""]]),  # decodes; scored as a broken label (absent), as an empty id is today
    _labels(gold_answers=["30 days", "thirty days"]),
    _labels(gold_answer="30 days", gold_answers=["a month"]),
    _labels(gold_answers=[]),
    _labels(hops=[["faq-returns"], ["shipping-v2"]]),  # multi-hop
    _labels(hops=["faq-returns", ["shipping-v2", "shipping-v3"]], required_doc_ids=["shipping-v2"]),
    _labels(hops=[["faq-returns"]]),  # a single hop, a group of one
]

HOSTILE = {
    _labels(required_doc_ids=[[]]): "required_doc_ids[0] is an empty group ([])",
    _labels(required_doc_ids=["a", []]): "required_doc_ids[1] is an empty group ([])",
    _labels(required_doc_ids=[["a", ["b"]]]): "required_doc_ids[0] nests deeper than one list of alternatives",
    _labels(required_doc_ids=[[["a"]]]): "required_doc_ids[0] nests deeper than one list of alternatives",
    _labels(required_doc_ids=[["a", {"id": "b"}]]): "required_doc_ids[0] nests deeper than one list of alternatives",
    _labels(required_doc_ids=[["a", 1]]): "required_doc_ids[0] holds a member that is not an id",
    _labels(required_doc_ids=[1]): "required_doc_ids[0] is neither an id nor a list of ids",
    _labels(required_doc_ids=[None]): "required_doc_ids[0] is neither an id nor a list of ids",
    _labels(required_doc_ids="faq-returns"): "wrong value at labels.required_doc_ids: Input should be a valid array",
    _labels(hops=[]): "wrong value at labels.hops: List should have at least 1 item",
    _labels(hops=[[]]): "hops[0] is an empty group ([])",
    _labels(hops=["a", [["b"]]]): "hops[1] nests deeper than one list of alternatives",
    _labels(hops=[["a", 2]]): "hops[0] holds a member that is not an id",
    _labels(hops=[{"doc": "a"}]): "hops[0] is neither an id nor a list of ids",
    _labels(hops="a"): "wrong value at labels.hops: Input should be a valid array",
    _labels(gold_answers="30 days"): "wrong value at labels.gold_answers: Input should be a valid array",
    _labels(gold_answers=["30 days", 30]): "wrong value at labels.gold_answers.1: Input should be a valid string",
}


@pytest.mark.parametrize("line", ACCEPTED, ids=range(len(ACCEPTED)))
def test_both_decoders_give_the_same_trace_on_every_new_form(line: bytes) -> None:
    assert structs.decode(line) is not None  # the hot path takes it
    assert outcome(trace_from_json, line) == outcome(reference, line)
    assert outcome(reference, line)[0] == "trace"


@pytest.mark.parametrize(("line", "message"), HOSTILE.items(), ids=range(len(HOSTILE)))
def test_both_decoders_give_one_clear_error_on_every_hostile_variant(line: bytes, message: str) -> None:
    assert structs.decode(line) is None  # msgspec refuses it, so pydantic's error is the one reported
    kind, error = outcome(trace_from_json, line)
    assert (kind, error) == outcome(reference, line)
    assert kind == "error" and message in error and "\n" not in error, error


def test_score_reports_a_hostile_line_by_number_and_scores_the_others(tmp_path: Path) -> None:
    path = tmp_path / "forms.jsonl"
    path.write_bytes(ACCEPTED[0] + b"\n" + _labels(required_doc_ids=[["a", ["b"]]]) + b"\n" + ACCEPTED[5] + b"\n")
    for workers in ("1", "2"):
        _, out = score_file(path, tmp_path, "--workers", workers)
        rows = [json.loads(x) for x in out.splitlines()]
        assert [r["line"] for r in rows] == [1, 2, 3]
        assert rows[0]["scores"]["retrieval.recall_at_5"] == 1.0  # one of the group came back, and shipping-v2
        assert rows[1]["scores"] == {} and len(rows[1]["errors"]) == 1
        assert rows[1]["errors"][0].startswith("line 2: wrong value at labels.required_doc_ids: Value error, ")
        assert rows[2]["scores"]["answer.exact_match"] is True  # gold_answers alone is a gold label


def test_a_huge_hostile_entry_is_shown_cut_short() -> None:
    line = _labels(required_doc_ids=[["a", ["b" * 50] * 1000]])
    kind, error = outcome(trace_from_json, line)
    assert kind == "error" and "nests deeper than one list of alternatives (['a', [" in error and len(error) < 400


def test_score_writes_the_hop_scores_only_on_a_line_with_a_hops_label(tmp_path: Path) -> None:
    path = tmp_path / "hops.jsonl"
    right = ["30 days"]
    both = _labels(hops=[["faq-returns"], ["shipping-v2"]], expected_answer_contains=right)
    one = _labels(hops=[["faq-returns"], ["doc-a"]], expected_answer_contains=right)
    path.write_bytes(ACCEPTED[2] + b"\n" + both + b"\n" + one + b"\n")  # flat required_doc_ids; then hops
    for workers in ("1", "2"):  # the hot path (msgspec structs) in the worker processes too
        _, out = score_file(path, tmp_path, "--workers", workers)
        flat, found, short = (json.loads(x) for x in out.splitlines())
        assert not any(n.startswith("retrieval.hop") for row in (flat["scores"], flat["missing"]) for n in row)
        # both came back in the one search, faq-returns never fetched: every hop found, out of order
        assert found["scores"]["retrieval.hops_found"] == 1.0 and found["scores"]["retrieval.hop_order"] is False
        assert found["scores"]["diagnosis"] == "retrieval_pass/right"  # every hop found
        assert short["scores"]["retrieval.hops_found"] == 0.5 and short["comments"]["retrieval.hops_found"] == (
            "hops never found: doc-a"
        )
        assert short["missing"]["retrieval.hop_order"] == "hop order undecided: hop(s) doc-a never came back"
        assert short["scores"]["diagnosis"] == "retrieval_fail/right"  # a hop never came back
