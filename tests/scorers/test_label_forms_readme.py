"""The README's label-forms table (trace-format section) is what the scorers give."""

from __future__ import annotations

from tests.docs_pages import page
from tracescore.scorers.answer import answer_scorer
from tracescore.scorers.retrieval import retrieval_scorer
from tracescore.trace import Hit, Labels, SearchStep, Trace

README = page("getting-started/trace-format.md")  # the trace-format page of the docs
_HITS = [SearchStep(hits=[Hit(doc_id=d) for d in ("x", "faq-returns", "y", "shipping-v2")])]


def _retrieval(required: list[str | list[str]], steps: list[SearchStep] = _HITS) -> dict[str, object]:
    trace = Trace(id="t", steps=steps, labels=Labels(required_doc_ids=required))
    return {s.name: (s.value, s.metadata.get("missing")) if s.present else s.reason for s in retrieval_scorer()(trace)}


def test_each_readme_row_is_what_the_scorers_give() -> None:
    flat = _retrieval(["policy-returns-v4", "shipping-v2"])
    assert flat["retrieval.recall_at_5"] == (0.5, ["policy-returns-v4"]) and flat["retrieval.first_hit_rank"][0] == 4  # type: ignore[index]
    grouped = _retrieval([["faq-returns", "policy-returns-v4"], "shipping-v2"])
    assert grouped["retrieval.recall_at_5"] == (1.0, []) and grouped["retrieval.first_hit_rank"][0] == 2  # type: ignore[index]
    stale = _retrieval([["faq-returns", "policy-returns-v4"]], [SearchStep(hits=[Hit(doc_id="policy-returns-v3")])])
    assert "required policy-returns-v4 but retrieved policy-returns-v3" in str(stale["retrieval.recall_at_5"])
    labels = Labels(gold_answer="a month", gold_answers=["30 days", "30 calendar days"])
    got = {s.name: s for s in answer_scorer()(Trace(id="t", answer="thirty days", labels=labels))}
    assert got["answer.token_f1"].value == 1.0 and got["answer.exact_match"].value is True
    assert got["answer.token_f1"].metadata == {"gold": "30 days"}
    for cell in (
        '`"required_doc_ids": [["faq-returns", "policy-returns-v4"], "shipping-v2"]`',
        '`recall_at_5` 0.5 (`missing: ["policy-returns-v4"]`), `first_hit_rank` 4',
        "`recall_at_5` 1.0 (2 of 2 groups), `first_hit_rank` 2",
        "`required policy-returns-v4 but retrieved policy-returns-v3`",
        '`token_f1` 1.0, `exact_match` true, each with `metadata.gold: "30 days"`',
    ):
        assert cell in README, cell
