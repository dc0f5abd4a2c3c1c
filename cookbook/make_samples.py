"""Generate ``cookbook/data/traces.jsonl``: search-agent traces covering every stage cell and citation failure.

Run ``python cookbook/make_samples.py`` to regenerate (deterministic: same seed, same file). Each scenario is a
small function that builds one canonical trace from a tiny corpus of support-policy and research pages.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

OUT = Path(__file__).parent / "data" / "traces.jsonl"
PROVIDERS = ["tavily", "exa", "brave", "serpapi"]

# doc_id: (url, title, text). Texts are what the agent's fetch tool returned.
CORPUS: dict[str, tuple[str, str, str]] = {
    "policy-returns-v4": (
        "https://help.acme-shop.com/policies/returns",
        "Returns policy (v4)",
        "Returns policy. You can return most items within 30 days of delivery for a full refund. "
        "Items must be unused and in their original packaging. Final-sale items cannot be returned. "
        "Refunds are issued to the original payment method within 5 business days of receiving the item.",
    ),
    "policy-returns-v3": (
        "https://help.acme-shop.com/policies/returns-2023",
        "Returns policy (2023, archived)",
        "Returns policy (archived). You can return most items within 60 days of delivery. "
        "Refunds are issued as store credit.",
    ),
    "policy-shipping-v2": (
        "https://help.acme-shop.com/policies/shipping",
        "Shipping policy",
        "Standard shipping takes 3 to 5 business days. Express shipping takes 1 to 2 business days and costs $12. "
        "Orders over $50 ship free with standard shipping.",
    ),
    "policy-warranty-v1": (
        "https://help.acme-shop.com/policies/warranty",
        "Warranty",
        "Electronics carry a 2-year limited warranty covering manufacturing defects. Accidental damage is not covered. "
        "To claim, contact support with your order number and a photo of the defect.",
    ),
    "policy-price-match-v1": (
        "https://help.acme-shop.com/policies/price-match",
        "Price match guarantee",
        "We match the price of an identical item sold by a major retailer within 14 days of your purchase. "
        "Marketplace sellers and clearance prices are excluded.",
    ),
    "blog-returns-tips": (
        "https://blog.acme-shop.com/2022/05/holiday-returns",
        "Holiday returns made easy",
        "This holiday season, enjoy extended returns: gifts bought in December can be returned until January 31. "
        "Our returns window is 90 days for members.",
    ),
    "wiki-mount-everest": (
        "https://en.wikipedia.org/wiki/Mount_Everest",
        "Mount Everest - Wikipedia",
        "Mount Everest is Earth's highest mountain above sea level, located in the Mahalangur Himal sub-range of the "
        "Himalayas. Its elevation of 8,848.86 m was most recently established in 2020 by the Chinese and Nepali "
        "authorities. The first recorded ascent was made in 1953 by Tenzing Norgay and Edmund Hillary.",
    ),
    "wiki-k2": (
        "https://en.wikipedia.org/wiki/K2",
        "K2 - Wikipedia",
        "K2, at 8,611 metres above sea level, is the second-highest mountain on Earth. It was first climbed in 1954 "
        "by Lino Lacedelli and Achille Compagnoni on an Italian expedition.",
    ),
    "wiki-insulin": (
        "https://en.wikipedia.org/wiki/Insulin",
        "Insulin - Wikipedia",
        "Insulin is a peptide hormone produced by beta cells of the pancreatic islets. It was first isolated in 1921 "
        "by Frederick Banting and Charles Best at the University of Toronto. Banting and John Macleod received the "
        "Nobel Prize in Physiology or Medicine in 1923.",
    ),
    "wiki-penicillin": (
        "https://en.wikipedia.org/wiki/Penicillin",
        "Penicillin - Wikipedia",
        "Penicillin was discovered in 1928 by Scottish scientist Alexander Fleming. Mass production began during "
        "the Second World War, in 1942.",
    ),
    "wiki-great-wall": (
        "https://en.wikipedia.org/wiki/Great_Wall_of_China",
        "Great Wall of China - Wikipedia",
        "The Great Wall of China is a series of fortifications built across the historical northern borders of "
        "ancient Chinese states. A 2012 survey measured the wall and its branches at 21,196 km. "
        "Contrary to a popular myth, the wall is not visible to the naked eye from the Moon.",
    ),
    "news-everest-myth": (
        "https://www.example-news.com/science/everest-height-disputed",
        "Is Everest shrinking?",
        "Some climbers claim Everest is 8,850 m tall, a figure from a 1999 GPS survey.",
    ),
}

POLICY_DOCS = [d for d in CORPUS if d.startswith(("policy", "blog"))]
RESEARCH_DOCS = [d for d in CORPUS if d.startswith(("wiki", "news"))]


def _hit(doc_id: str, rank: int, tracking: bool = False) -> dict[str, Any]:
    url, title, text = CORPUS[doc_id]
    if tracking:
        url += "?utm_source=search&utm_medium=agent"
    return {"rank": rank, "doc_id": doc_id, "url": url, "title": title, "snippet": text[:160]}


def _search(
    rng: random.Random, query: str, relevant: list[str], pool: list[str], rank: int = 1, n: int = 6
) -> dict[str, Any]:
    """A search call whose hits put the relevant docs from ``rank`` on and fill the rest with distractors."""
    distractors = [d for d in pool if d not in relevant]
    rng.shuffle(distractors)
    order = distractors[: rank - 1] + relevant + distractors[rank - 1 :]
    order = order[:n]
    return {
        "kind": "search",
        "tool": "web_search",
        "query": query,
        "hits": [_hit(d, i) for i, d in enumerate(order, 1)],
    }


def _fetch(doc_id: str, when: datetime, status: int = 200) -> dict[str, Any]:
    url, _, text = CORPUS[doc_id]
    return {
        "kind": "fetch",
        "tool": "fetch_page",
        "url": url,
        "doc_id": doc_id,
        "text": text if status == 200 else "",
        "status": status,
        "fetched_at": when.isoformat(),
    }


def _refs(*doc_ids: str) -> str:
    return "\n\nSources:\n" + "\n".join(f"[{i}] {CORPUS[d][0]}" for i, d in enumerate(doc_ids, 1))


Scenario = Callable[[random.Random, datetime], dict[str, Any]]


def grounded_right(rng: random.Random, t: datetime) -> dict[str, Any]:
    return {
        "question": "How many days do I have to return an item?",
        "steps": [
            _search(rng, "acme return window days", ["policy-returns-v4"], POLICY_DOCS),
            _fetch("policy-returns-v4", t),
        ],
        "answer": "You can return most items within 30 days of delivery for a full refund [1]. "
        "Refunds go to the original payment method within 5 business days [1]." + _refs("policy-returns-v4"),
        "labels": {"required_doc_ids": ["policy-returns-v4"], "expected_answer_contains": ["30 days"]},
        "_scenario": "grounded/right",
    }


def grounded_right_shipping(rng: random.Random, t: datetime) -> dict[str, Any]:
    return {
        "question": "How much does express shipping cost and how long does it take?",
        "steps": [
            _search(rng, "express shipping cost", ["policy-shipping-v2"], POLICY_DOCS, rank=2),
            _fetch("policy-shipping-v2", t),
        ],
        "answer": "Express shipping takes 1 to 2 business days and costs $12 [1]." + _refs("policy-shipping-v2"),
        "labels": {"required_doc_ids": ["policy-shipping-v2"], "expected_answer_contains": ["$12", "1 to 2"]},
        "_scenario": "grounded/right",
    }


def retrieval_fail_wrong(rng: random.Random, t: datetime) -> dict[str, Any]:
    return {
        "question": "Does the warranty cover accidental damage?",
        "steps": [
            _search(rng, "acme accidental damage protection", [], [d for d in POLICY_DOCS if d != "policy-warranty-v1"])
        ],
        "answer": "Yes, accidental damage is covered for one year under the standard warranty.",
        "labels": {"required_doc_ids": ["policy-warranty-v1"], "expected_answer_contains": ["not covered"]},
        "_scenario": "retrieval_fail/wrong",
    }


def retrieval_fail_right(rng: random.Random, t: datetime) -> dict[str, Any]:
    return {
        "question": "Who made the first recorded ascent of Mount Everest?",
        "steps": [_search(rng, "first everest ascent", [], ["wiki-k2", "wiki-great-wall", "news-everest-myth"])],
        "answer": "Tenzing Norgay and Edmund Hillary made the first recorded ascent in 1953.",
        "labels": {
            "required_doc_ids": ["wiki-mount-everest"],
            "expected_answer_contains": ["Hillary", "1953"],
            "gold_answer": "Tenzing Norgay and Edmund Hillary",
        },
        "_scenario": "retrieval_fail/right",
    }


def retrieval_deep_rank(rng: random.Random, t: datetime) -> dict[str, Any]:
    """The required doc came back, but at rank 7: outside recall@5."""
    return {
        "question": "What is the price match window?",
        "steps": [
            _search(rng, "price match", ["policy-price-match-v1"], POLICY_DOCS + RESEARCH_DOCS, rank=7, n=8),
            _fetch("policy-price-match-v1", t),
        ],
        "answer": "We match an identical item's price within 14 days of purchase [1]." + _refs("policy-price-match-v1"),
        "labels": {"required_doc_ids": ["policy-price-match-v1"], "expected_answer_contains": ["14 days"]},
        "_scenario": "retrieval_fail/right",
    }


def ungrounded_wrong(rng: random.Random, t: datetime) -> dict[str, Any]:
    """Right doc retrieved and read, but the answer contradicts it (reasoning / reading failure)."""
    return {
        "question": "How many days do I have to return an item?",
        "steps": [
            _search(rng, "return policy days", ["policy-returns-v4"], POLICY_DOCS),
            _fetch("policy-returns-v4", t),
            _fetch("blog-returns-tips", t),
        ],
        "answer": "You have 90 days to return any item, including final-sale items [1]." + _refs("policy-returns-v4"),
        "labels": {"required_doc_ids": ["policy-returns-v4"], "expected_answer_contains": ["30 days"]},
        "_scenario": "ungrounded/wrong",
    }


def ungrounded_right(rng: random.Random, t: datetime) -> dict[str, Any]:
    """Right answer, but padded with claims no retrieved page supports."""
    return {
        "question": "When was insulin first isolated?",
        "steps": [_search(rng, "insulin isolated year", ["wiki-insulin"], RESEARCH_DOCS), _fetch("wiki-insulin", t)],
        "answer": "Insulin was first isolated in 1921 [1]. The discovery was made in a basement laboratory funded by "
        "a private donor, and the first patient was treated in Boston." + _refs("wiki-insulin"),
        "labels": {"required_doc_ids": ["wiki-insulin"], "expected_answer_contains": ["1921"], "gold_answer": "1921"},
        "_scenario": "ungrounded/right",
    }


def grounded_wrong(rng: random.Random, t: datetime) -> dict[str, Any]:
    """Faithful to what it read, but it read (and cited) an outdated page next to the right one."""
    return {
        "question": "What is the height of Mount Everest?",
        "steps": [
            _search(rng, "everest height metres", ["wiki-mount-everest", "news-everest-myth"], RESEARCH_DOCS),
            _fetch("news-everest-myth", t),
        ],
        "answer": "FINAL ANSWER: Mount Everest is 8,850 m tall, a figure from a 1999 GPS survey [1]."
        + _refs("news-everest-myth"),
        "labels": {
            "required_doc_ids": ["wiki-mount-everest"],
            "expected_answer_contains": ["8,848.86"],
            "gold_answer": "8,848.86 m",
        },
        "_scenario": "grounded/wrong",
    }


def research_gold(rng: random.Random, t: datetime) -> dict[str, Any]:
    return {
        "question": "Who discovered penicillin?",
        "steps": [
            _search(rng, "penicillin discovered by", ["wiki-penicillin"], RESEARCH_DOCS),
            _fetch("wiki-penicillin", t),
        ],
        "answer": "Penicillin was discovered in 1928 by Alexander Fleming [1].\n\nFINAL ANSWER: Alexander Fleming"
        + _refs("wiki-penicillin"),
        "labels": {
            "required_doc_ids": ["wiki-penicillin"],
            "expected_answer_contains": ["Alexander Fleming"],
            "gold_answer": "Alexander Fleming",
        },
        "_scenario": "grounded/right",
    }


def cites_unfetched(rng: random.Random, t: datetime) -> dict[str, Any]:
    """Cites a page it only saw as a search snippet and never opened."""
    return {
        "question": "How long is the Great Wall of China?",
        "steps": [_search(rng, "great wall length km", ["wiki-great-wall"], RESEARCH_DOCS)],
        "answer": "A 2012 survey measured the Great Wall and its branches at 21,196 km [1]." + _refs("wiki-great-wall"),
        "labels": {"required_doc_ids": ["wiki-great-wall"], "expected_answer_contains": ["21,196"]},
        "_scenario": "citation/unfetched",
    }


def cites_fabricated(rng: random.Random, t: datetime) -> dict[str, Any]:
    """Cites a URL that never appeared in any search result or fetch."""
    return {
        "question": "Is the Great Wall visible from the Moon?",
        "steps": [
            _search(rng, "great wall visible from moon", ["wiki-great-wall"], RESEARCH_DOCS),
            _fetch("wiki-great-wall", t),
        ],
        "answer": "No, the wall is not visible to the naked eye from the Moon [1]. NASA confirmed this in 2004 [2]."
        "\n\nSources:\n[1] https://en.wikipedia.org/wiki/Great_Wall_of_China\n"
        "[2] https://www.nasa.gov/vision/space/workinginspace/great_wall.html",
        "labels": {"required_doc_ids": ["wiki-great-wall"], "expected_answer_contains": ["not visible"]},
        "_scenario": "citation/fabricated",
    }


def cites_missing_marker(rng: random.Random, t: datetime) -> dict[str, Any]:
    """A marker [3] with no entry in the reference list, and a reference [2] listed but never cited."""
    return {
        "question": "What does the warranty cover?",
        "steps": [
            _search(rng, "acme warranty electronics", ["policy-warranty-v1"], POLICY_DOCS),
            _fetch("policy-warranty-v1", t),
        ],
        "answer": "Electronics carry a 2-year limited warranty covering manufacturing defects [1]. "
        "Accidental damage is not covered [3]. To claim, contact support with your order number."
        + _refs("policy-warranty-v1", "policy-shipping-v2"),
        "labels": {"required_doc_ids": ["policy-warranty-v1"], "expected_answer_contains": ["2-year"]},
        "_scenario": "citation/unresolved-marker",
    }


def cites_failed_fetch(rng: random.Random, t: datetime) -> dict[str, Any]:
    """Tried to fetch the page (404), cited it anyway, with tracking parameters on the link."""
    return {
        "question": "Can I return final-sale items?",
        "steps": [
            _search(rng, "final sale returns", ["policy-returns-v4"], POLICY_DOCS),
            _fetch("policy-returns-v4", t, status=404),
        ],
        "answer": "Final-sale items cannot be returned ([policy](https://help.acme-shop.com/policies/returns/"
        "?utm_source=agent#final-sale)).",
        "labels": {"required_doc_ids": ["policy-returns-v4"], "expected_answer_contains": ["cannot be returned"]},
        "_scenario": "citation/failed-fetch",
    }


def markdown_and_bare(rng: random.Random, t: datetime) -> dict[str, Any]:
    """Markdown links and bare URLs (case and trailing slash differ from the fetched URL)."""
    return {
        "question": "Which mountain is the second highest on Earth and how tall is it?",
        "steps": [_search(rng, "second highest mountain", ["wiki-k2"], RESEARCH_DOCS), _fetch("wiki-k2", t)],
        "answer": "K2 is the second-highest mountain on Earth, at 8,611 metres "
        "([Wikipedia](HTTPS://EN.WIKIPEDIA.ORG/wiki/K2/)). It was first climbed in 1954, see "
        "https://en.wikipedia.org/wiki/K2#History. It is often called the savage mountain.",
        "labels": {
            "required_doc_ids": ["wiki-k2"],
            "expected_answer_contains": ["K2", "8,611"],
            "gold_answer": "K2, 8,611 metres",
        },
        "_scenario": "grounded/right",
    }


def stale_label(rng: random.Random, t: datetime) -> dict[str, Any]:
    """The label pins returns v4, but the index only serves the archived v3 page: a labelling task."""
    return {
        "question": "What is the returns window?",
        "steps": [
            _search(rng, "returns window", ["policy-returns-v3"], [d for d in POLICY_DOCS if d != "policy-returns-v4"]),
            _fetch("policy-returns-v3", t),
        ],
        "answer": "You can return items within 60 days of delivery [1]." + _refs("policy-returns-v3"),
        "labels": {"required_doc_ids": ["policy-returns-v4"], "expected_answer_contains": ["30 days"]},
        "_scenario": "retrieval/stale-label",
    }


def refusal_right(rng: random.Random, t: datetime) -> dict[str, Any]:
    return {
        "question": "What is Acme's policy on returning items bought on the Moon?",
        "steps": [_search(rng, "acme moon purchases return", [], POLICY_DOCS)],
        "answer": "I could not find any information about purchases made on the Moon in Acme's policies.",
        "labels": {"required_doc_ids": [], "expect_refusal": True},
        "_scenario": "refusal/right",
    }


def refusal_wrong(rng: random.Random, t: datetime) -> dict[str, Any]:
    return {
        "question": "Does Acme offer a lifetime warranty on furniture?",
        "steps": [_search(rng, "acme lifetime warranty furniture", [], POLICY_DOCS)],
        "answer": "Yes, all furniture comes with a lifetime warranty [1]." + _refs("policy-warranty-v1"),
        "labels": {"required_doc_ids": [], "expect_refusal": True},
        "_scenario": "refusal/wrong",
    }


def no_results(rng: random.Random, t: datetime) -> dict[str, Any]:
    return {
        "question": "What is the Acme loyalty points expiry?",
        "steps": [{"kind": "search", "tool": "web_search", "query": "acme loyalty points expiry", "hits": []}],
        "answer": "",
        "labels": {"required_doc_ids": ["policy-loyalty-v1"], "expected_answer_contains": ["12 months"]},
        "_scenario": "retrieval_fail/empty",
    }


def unlabeled_unicode(rng: random.Random, t: datetime) -> dict[str, Any]:
    return {
        "question": "Quelle est la hauteur de l’Everest ?",
        "steps": [
            _search(rng, "hauteur everest — mètres", ["wiki-mount-everest"], RESEARCH_DOCS),
            _fetch("wiki-mount-everest", t),
        ],
        "answer": "L’Everest culmine à 8 848,86 m — établi en 2020 [1]. 🏔️" + _refs("wiki-mount-everest"),
        "labels": {},
        "_scenario": "unlabeled",
    }


SCENARIOS: list[Scenario] = [
    grounded_right,
    grounded_right_shipping,
    retrieval_fail_wrong,
    retrieval_fail_right,
    retrieval_deep_rank,
    ungrounded_wrong,
    ungrounded_right,
    grounded_wrong,
    research_gold,
    cites_unfetched,
    cites_fabricated,
    cites_missing_marker,
    cites_failed_fetch,
    markdown_and_bare,
    stale_label,
    refusal_right,
    refusal_wrong,
    no_results,
    unlabeled_unicode,
]


def make(copies: int = 2, seed: int = 7) -> list[dict[str, Any]]:
    """Every scenario ``copies`` times, with rotating search providers, models and timestamps."""
    rng = random.Random(seed)
    start = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    traces = []
    n = 0
    for copy in range(copies):
        for scenario in SCENARIOS:
            t = start + timedelta(minutes=7 * n)
            body = scenario(rng, t)
            kind = body.pop("_scenario")
            provider = PROVIDERS[n % len(PROVIDERS)]
            traces.append(
                {
                    "schema_version": "1",
                    "id": f"tr-{n:04d}",
                    "timestamp": t.isoformat(),
                    "question": body["question"],
                    "steps": body["steps"],
                    "answer": body["answer"],
                    "labels": body["labels"],
                    "metadata": {
                        "provider": provider,
                        "model": ["claude-sonnet-4-6", "claude-haiku-4-5"][copy % 2],
                        "scenario": kind,
                        "environment": "production",
                        "tags": ["support" if "policy" in json.dumps(body) else "research"],
                    },
                }
            )
            n += 1
    return traces


if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as fh:
        for trace in make():
            fh.write(json.dumps(trace, ensure_ascii=False) + "\n")
    print(f"wrote {OUT}")
