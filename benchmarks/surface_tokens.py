"""Surface oracle tokens: one call per trace (ours) against a naive oracle that makes one call per URL.

    python benchmarks/surface_tokens.py [--wice PATH] [--wice-traces N]

Every request goes through the real ``anthropic`` SDK to the fake Messages API on loopback (``tests/fakes``) and is
counted with the project's tokenizer-free counter (``approx_tokens``) over the system prompt, the user content and
the JSON schema of the structured output — the same count ``benchmarks/judge_tokens.py`` uses. Ours: the trace's
request(s); each URL is charged its own ``<item>`` block plus an equal share of what the call shares (rubric,
question, gold answer, schema). Naive: one request per URL, carrying the same item block (same passages) with the
rubric, question, gold answer and schema every time; "naive, whole pages" is that call with the fetched page pasted
whole instead of its passages (counted, not sent). Target: ours ≤ 0.3× naive.

1. The sample traces (``cookbook/data/traces.jsonl``) that have a gold answer or ``expected_answer_contains``.
2. Long pages: WiCE dev claims (``../shared/data/wice/claim_dev.jsonl``) as traces of six hits each, the claim as
   the gold answer, the first sentence of each page as its snippet and two of the six pages fetched (whole page
   stored: passage selection matters here).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from tracescore.judge.passages import approx_tokens  # noqa: E402

SAMPLES = ROOT / "cookbook" / "data" / "traces.jsonl"
WICE = ROOT.parent / "shared" / "data" / "wice" / "claim_dev.jsonl"
_ITEM = re.compile(r'<item id="U\d+"[^>]*>.*?</item>', re.S)
_PAGE = re.compile(r"<page>\n(.*?)\n</page>", re.S)


def _request_tokens(body: dict[str, Any]) -> tuple[int, list[int]]:
    """Input tokens of one request body, and the tokens of each ``<item>`` block in it."""
    system = "".join(b["text"] for b in body.get("system", []))
    content = "".join(b["text"] for b in body["messages"][0]["content"])
    total = approx_tokens(system) + approx_tokens(content) + approx_tokens(json.dumps(body["output_config"]["format"]))
    return total, [approx_tokens(block) for block in _ITEM.findall(content)]


def measure(traces: list[Any]) -> dict[str, dict[str, list[int]]]:
    """Per side (ours, naive), per kind (surface, fetched): input tokens charged to each URL."""
    from tests.fakes.anthropic import FakeAnthropic
    from tests.fakes.anthropic_surface import surface_oracle
    from tracescore.judge.anthropic import AnthropicJudge
    from tracescore.scorers.surface import collect_items, gold_text, surface_requests, surface_scorer

    sides = ("ours", "naive", "whole")
    out: dict[str, dict[str, list[int]]] = {side: {"surface": [], "fetched": []} for side in sides}
    with FakeAnthropic(tamper=surface_oracle) as fake, AnthropicJudge(api_key="bench", base_url=fake.url) as judge:
        scorer = surface_scorer(judge=judge)
        for trace in traces:
            gold, _ = gold_text(trace)
            items = collect_items(trace)
            if gold is None or not items:
                continue
            kinds = ["fetched" if item.page is not None else "surface" for item in items]
            before = len(fake.messages())
            scorer(trace)
            charged: list[int] = []
            for request in fake.messages()[before:]:
                total, blocks = _request_tokens(request.json())
                shared = (total - sum(blocks)) / max(1, len(blocks))
                charged += [round(b + shared) for b in blocks]
            for kind, tokens in zip(kinds, charged, strict=True):
                out["ours"][kind].append(tokens)
            for kind, item in zip(kinds, items, strict=True):
                ((request, _),) = surface_requests(trace, [item], gold)
                before = len(fake.messages())
                judge.judge(request)
                (body,) = fake.messages()[before:]
                tokens = _request_tokens(body.json())[0]
                out["naive"][kind].append(tokens)
                if item.page is not None:  # the same call with the whole page pasted instead of its passages
                    sent = _PAGE.search(request.content)
                    tokens += approx_tokens(item.page) - (approx_tokens(sent.group(1)) if sent else 0)
                out["whole"][kind].append(tokens)
    return out


def report(title: str, traces: list[Any]) -> tuple[float, float]:
    """Print per-URL tokens of the oracles; return ours / naive and ours / naive-with-whole-pages over all URLs."""
    result = measure(traces)
    print(f"\n{title}")
    print(
        f"   {'URLs':<14}{'count':>7}{'ours tok/URL':>14}{'naive tok/URL':>15}{'ratio':>7}"
        f"{'naive, whole pages':>20}{'ratio':>7}"
    )

    def pick(side: str, kind: str) -> list[int]:
        return result[side]["surface"] + result[side]["fetched"] if kind == "all" else result[side][kind]

    for kind in ("surface", "fetched", "all"):
        ours, naive, whole = pick("ours", kind), pick("naive", kind), pick("whole", kind)
        if not ours:
            continue
        label = {"surface": "surface-only", "fetched": "fetched", "all": "all"}[kind]
        print(
            f"   {label:<14}{len(ours):>7}{sum(ours) / len(ours):>14.0f}{sum(naive) / len(naive):>15.0f}"
            f"{sum(ours) / sum(naive):>7.2f}{sum(whole) / len(whole):>20.0f}{sum(ours) / sum(whole):>7.2f}"
        )
    return sum(pick("ours", "all")) / sum(pick("naive", "all")), sum(pick("ours", "all")) / sum(pick("whole", "all"))


def wice_traces(path: Path, n: int) -> list[Any]:
    from tracescore.trace import FetchStep, Hit, Labels, SearchStep, Trace

    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()][: n * 6]
    traces = []
    for t in range(len(rows) // 6):
        group = rows[t * 6 : t * 6 + 6]
        hits = [
            Hit(rank=i, url=f"https://wice.example.org/{t}/{i}", title=f"page {i}", snippet=row["evidence"][0])
            for i, row in enumerate(group, start=1)
        ]
        fetches = [FetchStep(url=hits[i].url, text="\n".join(group[i]["evidence"]), status=200) for i in (0, 3)]
        traces.append(
            Trace(
                id=f"wice-{t}",
                question="Is this claim true?",
                steps=[SearchStep(query=group[0]["claim"], hits=hits), *fetches],
                labels=Labels(gold_answer=group[0]["claim"]),
            )
        )
    return traces


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--wice", type=Path, default=WICE)
    parser.add_argument("--wice-traces", type=int, default=20)
    args = parser.parse_args()

    from tracescore.trace import Trace

    samples = [Trace.model_validate_json(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines()]
    ratios = report("1. sample traces: oracle input tokens per URL, one call per trace vs one call per URL", samples)
    print(f"   → ours / naive = {ratios[0]:.3f}; with whole pages {ratios[1]:.3f} (target ≤ 0.30)")
    if args.wice.is_file():
        ratios = report("2. WiCE pages as six-hit traces, two pages fetched", wice_traces(args.wice, args.wice_traces))
        print(f"   → ours / naive = {ratios[0]:.3f}; with whole pages {ratios[1]:.3f} (target ≤ 0.30)")
    else:
        print(f"\n2. skipped: no WiCE file at {args.wice}")


if __name__ == "__main__":
    main()
