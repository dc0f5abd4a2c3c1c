"""Adversarial traces that once stalled a run (issue #14): each must score in ≤ 0.25 s, beyond process start.

- ``brackets``: an answer that is one 40,000-character line of ``[`` (the markdown-link regex scanned from every
  ``[`` to the end of the line: ~10 s for one trace);
- ``explicit_citations``: 1,200 explicit ``citations`` each naming its answer sentence (matched against every
  sentence: O(citations × sentences × length));
- ``wide_search``: 100 search calls × 50 hits and 300 inline citations (5,000 URLs: the URL cache thrashed, the
  unfetched check scanned every row per source).

Each case runs through every deterministic scorer and the pipeline's citation rows, as ``tracescore score`` does.
Times are CPU seconds per trace (best of ``--repeat``), beside a light baseline trace in the same process.

    python benchmarks/worst_case.py
    python benchmarks/worst_case.py --scale 4   # 4× every size: linear code takes ~4× as long, quadratic ~16×
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from tracescore.engine.pipeline import score_trace
from tracescore.engine.plan import deterministic_scorers
from tracescore.scorers.citations import parse_answer
from tracescore.trace import Citation, FetchStep, Hit, Labels, SearchStep, Trace

LIMIT_SECONDS = 0.25


def brackets(n: int = 40_000) -> Trace:
    """One answer line of ``n`` opening brackets after a real sentence."""
    return Trace(id="brackets", question="q", answer="The answer is here. " + "[" * n)


def explicit_citations(n: int = 1_200) -> Trace:
    """``n`` answer sentences, each backed by an explicit citation that names it; every URL searched and fetched."""
    sentences = [f"Item {i} of the list has the property number {i * 7} as stated." for i in range(n)]
    urls = [f"https://s{i % 97}.example/page/{i}" for i in range(n)]
    return Trace(
        id="explicit_citations",
        question="q",
        answer=" ".join(sentences),
        steps=[
            SearchStep(query="q", hits=[Hit(url=u) for u in urls]),
            *[FetchStep(url=u, text="page", status=200) for u in urls[: n // 2]],
        ],
        citations=[Citation(url=u, sentence=s) for u, s in zip(urls, sentences, strict=True)],
    )


def wide_search(calls: int = 100, hits: int = 50, cited: int = 300) -> Trace:
    """``calls`` search calls × ``hits`` hits (distinct URLs) and an answer citing ``cited`` of them inline."""
    steps: list[SearchStep | FetchStep] = [
        SearchStep(
            query=f"query {c}",
            hits=[
                Hit(rank=r + 1, doc_id=f"d{c}-{r}", url=f"https://site{c}.example/p/{r}?utm_source=x")
                for r in range(hits)
            ],
        )
        for c in range(calls)
    ]
    targets = [f"https://site{i % calls}.example/p/{i % hits}" for i in range(cited)]
    steps += [FetchStep(url=u, text="page", status=200) for u in targets[::3]]
    body = " ".join(f"Fact {i} is supported [{i % 999 + 1}]." for i in range(cited))
    refs = "\n".join(f"[{i % 999 + 1}] {u}" for i, u in enumerate(targets))
    labels = Labels(
        required_doc_ids=[f"d{c}-1" for c in range(0, calls, 10)], gold_answer="Fact", expected_answer_contains=["Fact"]
    )
    return Trace(id="wide_search", question="q", answer=f"{body}\n\nReferences:\n{refs}", steps=steps, labels=labels)


def baseline() -> Trace:
    """A light ordinary trace: the yardstick the worst cases are printed beside."""
    return Trace(
        id="baseline",
        question="q",
        answer="Returns take 30 days [1]. Refunds go to the card [2].\n[1] https://a.example/r\n[2] https://b.example/x",
        steps=[SearchStep(hits=[Hit(url="https://a.example/r"), Hit(url="https://b.example/x")])],
    )


CASES: dict[str, Callable[[int], Trace]] = {
    "brackets (40k-char line of '[')": lambda s: brackets(40_000 * s),
    "explicit_citations (1,200 with sentences)": lambda s: explicit_citations(1_200 * s),
    "wide_search (100 calls x 50 hits, 300 cited)": lambda s: wide_search(100 * s, 50, 300 * s),
}


def cpu_seconds(trace: Trace, repeat: int = 3, clock: Callable[[], float] = time.process_time) -> float:
    """Best CPU time of scoring ``trace`` as the pipeline does (a fresh copy and cache each time: nothing reused)."""
    scorers = deterministic_scorers()
    best = float("inf")
    for _ in range(repeat):
        copy = trace.model_copy()
        getattr(parse_answer, "cache_clear", lambda: None)()  # memoised since #14; absent on older versions
        start = clock()
        score_trace(copy, scorers)
        best = min(best, clock() - start)
    return best


def main() -> None:
    """Print each worst case's CPU seconds per trace and its ratio to the light baseline."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, default=1, help="multiply every size (linear: time × scale)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    base = cpu_seconds(baseline(), repeat=50)
    print(f"{'case':48} {'s/trace':>9} {'× baseline':>11}  limit {LIMIT_SECONDS} s")
    print(f"{'baseline (light trace)':48} {base:9.5f} {1:11.0f}")
    failed = False
    for name, build in CASES.items():
        trace = build(args.scale)
        seconds = cpu_seconds(trace, repeat=args.repeat)
        ok = seconds <= LIMIT_SECONDS * args.scale
        failed |= not ok
        print(f"{name:48} {seconds:9.4f} {seconds / base:11.0f}  {'ok' if ok else 'OVER'}")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
