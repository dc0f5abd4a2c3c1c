"""Judge tokens: what passage selection keeps, and what the judge sends beside RAGAS faithfulness.

    python benchmarks/judge_tokens.py [--wice PATH] [--ragas-python PYTHON]

1. WiCE dev (``../shared/data/wice/claim_dev.jsonl``): for supported claims, the share whose selected passages
   keep at least one gold supporting sentence, and the share of the page's tokens sent.
2. Sample traces (``cookbook/data/traces.jsonl``) and 3. WiCE claims as one-page traces: input tokens per trace that
   our judge sends (every request recorded by the fake Messages API, reached through the real ``anthropic`` SDK;
   no content cache) beside what RAGAS faithfulness would send for the same answer and the same evidence (its
   prompts captured by a recording fake LLM, run by ``--ragas-python``, an interpreter with ``ragas`` installed;
   ragas is not a dependency of tracescore). Both sides are counted with the same tokenizer-free counter
   (``approx_tokens``) over the prompt text plus the JSON schema of the structured output.

A RAGAS interpreter: ``python3 -m venv /tmp/ragas && /tmp/ragas/bin/pip install ragas==0.4.3
langchain-community==0.4.1`` (ragas 0.4.3 imports ``langchain_community.chat_models.vertexai``, gone in 0.4.2).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from tracescore.judge.passages import approx_tokens, select_passages  # noqa: E402

WICE = ROOT.parent / "shared" / "data" / "wice" / "claim_dev.jsonl"
SAMPLES = ROOT / "cookbook" / "data" / "traces.jsonl"


# -- 1. passage selection on WiCE ----------------------------------------------------------------------------
def passage_selection(rows: list[dict[str, Any]]) -> None:
    print("1. passage selection on WiCE dev (chunks = the dataset's sentences; claim = the query)")
    print(f"   {'label':<22}{'claims':>7}{'kept a gold sentence':>23}{'tokens sent / page':>21}{'median page':>13}")
    for label in ("supported", "partially_supported", "all with gold"):
        subset = [r for r in rows if label in (r["label"], "all with gold") and r["supporting_sentences"]]
        kept = sent = total = 0
        pages = []
        for row in subset:
            selected = select_passages(row["evidence"], [row["claim"]])
            gold = {i for group in row["supporting_sentences"] for i in group}
            kept += bool(gold & {p.index for p in selected})
            sent += sum(approx_tokens(p.text) for p in selected)
            page = sum(approx_tokens(s) for s in row["evidence"])
            total += page
            pages.append(page)
        pages.sort()
        print(
            f"   {label:<22}{len(subset):>7}{kept / len(subset):>23.1%}{sent / total:>21.1%}"
            f"{pages[len(pages) // 2]:>13}"
        )


# -- 2/3. our judge's input tokens per trace --------------------------------------------------------------------
def _request_tokens(body: dict[str, Any]) -> int:
    text = "".join(b["text"] for b in body.get("system", []))
    text += "".join(b["text"] for b in body["messages"][0]["content"])
    return approx_tokens(text) + approx_tokens(json.dumps(body["output_config"]["format"]["schema"]))


def our_tokens(traces: list[Any]) -> dict[str, dict[str, int]]:
    """Per trace: requests sent and their input tokens, and the cache-read tokens the fake reported."""
    from tests.fakes.anthropic import FakeAnthropic
    from tracescore.judge.anthropic import AnthropicJudge
    from tracescore.scorers.grounding import grounding_scorer

    out: dict[str, dict[str, int]] = {}
    with FakeAnthropic() as fake, AnthropicJudge(api_key="bench", base_url=fake.url) as judge:
        scorer = grounding_scorer(judge=judge)
        for trace in traces:
            before, cached = len(fake.messages()), judge.usage.cache_read_tokens
            scorer(trace)
            bodies = [r.json() for r in fake.messages()[before:]]
            out[trace.id] = {
                "requests": len(bodies),
                "tokens": sum(_request_tokens(b) for b in bodies),
                "cache_read": judge.usage.cache_read_tokens - cached,
            }
    return out


def ragas_inputs(traces: list[Any]) -> list[dict[str, Any]]:
    from tracescore.scorers.citations import parse_answer
    from tracescore.scorers.grounding import collect_evidence

    items = []
    for trace in traces:
        if not trace.answer.strip():
            continue
        contexts = [d.text for d in collect_evidence(trace)] or [""]
        statements = [s.text for s in parse_answer(trace.answer).sentences]
        items.append(
            {
                "id": trace.id,
                "question": trace.question or "-",
                "answer": trace.answer,
                "contexts": contexts,
                "statements": statements,
            }
        )
    return items


RAGAS_CAPTURE = r'''
import asyncio, json, re, sys
from ragas.llms.base import InstructorBaseRagasLLM
from ragas.metrics.collections import Faithfulness
from ragas.metrics.collections.faithfulness.util import NLIStatementOutput, StatementGeneratorOutput
import ragas

TOKEN = re.compile(r"\w+|[^\w\s]")
count = lambda text: len(TOKEN.findall(text))

class RecordingLLM(InstructorBaseRagasLLM):
    """Records every prompt RAGAS would send (plus the schema it asks for) and answers plausibly."""
    def __init__(self, statements):
        self.statements, self.prompts = statements, []
    def generate(self, prompt, response_model):
        return asyncio.run(self.agenerate(prompt, response_model))
    async def agenerate(self, prompt, response_model):
        self.prompts.append(count(prompt) + count(json.dumps(response_model.model_json_schema())))
        if response_model is StatementGeneratorOutput:
            return StatementGeneratorOutput(statements=self.statements)
        return NLIStatementOutput(statements=[{"statement": s, "reason": "r", "verdict": 1} for s in self.statements])

out = {"ragas_version": ragas.__version__, "traces": {}}
for line in sys.stdin:
    item = json.loads(line)
    llm = RecordingLLM(item["statements"])
    asyncio.run(Faithfulness(llm=llm).ascore(user_input=item["question"], response=item["answer"],
                                             retrieved_contexts=item["contexts"]))
    out["traces"][item["id"]] = {"requests": len(llm.prompts), "tokens": sum(llm.prompts)}
print(json.dumps(out))
'''


def ragas_tokens(items: list[dict[str, Any]], python: str) -> dict[str, Any] | None:
    payload = "\n".join(json.dumps(i) for i in items) + "\n"
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    done = subprocess.run([python, "-c", RAGAS_CAPTURE], input=payload, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        print(f"   RAGAS capture failed with {python}: {done.stderr.strip().splitlines()[-1:]}")
        return None
    return json.loads(done.stdout)


def compare(title: str, traces: list[Any], python: str, show_each: bool) -> None:
    print(f"\n{title}")
    ours = our_tokens(traces)
    theirs = ragas_tokens(ragas_inputs(traces), python)
    if theirs is None:
        print("   (install ragas in another venv and pass --ragas-python to compare)")
    ragas_traces = theirs["traces"] if theirs else {}
    ids = [t.id for t in traces if t.id in ragas_traces] if theirs else [t.id for t in traces if ours[t.id]["tokens"]]
    if show_each:
        print(
            f"   {'trace':<12}{'ours: calls':>12}{'ours: input tokens':>20}"
            f"{'ragas: calls':>14}{'ragas: tokens':>15}{'ratio':>8}"
        )
        for tid in ids:
            o, r = ours[tid], ragas_traces.get(tid, {"requests": 0, "tokens": 0})
            ratio = f"{o['tokens'] / r['tokens']:.2f}" if r["tokens"] else "—"
            print(f"   {tid:<12}{o['requests']:>12}{o['tokens']:>20}{r['requests']:>14}{r['tokens']:>15}{ratio:>8}")
    total_ours = sum(ours[t]["tokens"] for t in ids)
    cached = sum(ours[t]["cache_read"] for t in ids)
    line = f"   {len(ids)} traces: ours {total_ours / max(1, len(ids)):.0f} input tokens/trace"
    if theirs:
        total_theirs = sum(ragas_traces[t]["tokens"] for t in ids)
        line += (
            f", RAGAS {theirs['ragas_version']} faithfulness {total_theirs / max(1, len(ids)):.0f}/trace"
            f" → ratio ours/RAGAS = {total_ours / total_theirs:.2f}"
        )
    print(line)
    print(
        f"   of ours, {cached / max(1, total_ours):.0%} is a repeated prefix marked for prompt caching (billed at 0.1x"
        " when the provider caches it: prefixes under its minimum cacheable length are not cached)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wice", type=Path, default=WICE)
    parser.add_argument("--ragas-python", default=sys.executable, help="an interpreter with ragas installed")
    parser.add_argument("--wice-traces", type=int, default=120, help="WiCE claims to run as traces in part 3")
    args = parser.parse_args()

    from tracescore.trace import Trace

    rows = [json.loads(line) for line in args.wice.read_text(encoding="utf-8").splitlines()]
    passage_selection(rows)
    samples = [Trace.model_validate_json(line) for line in SAMPLES.read_text(encoding="utf-8").splitlines()]
    compare(
        "2. sample traces: judge input tokens per trace, ours vs RAGAS faithfulness",
        samples,
        args.ragas_python,
        show_each=True,
    )
    wice_traces = [
        Trace.model_validate(
            {
                "id": r["meta"]["id"],
                "question": f"{r['meta']['claim_title']}?",
                "answer": r["claim"],
                "steps": [
                    {
                        "kind": "fetch",
                        "url": f"https://wice.example/{r['meta']['id']}",
                        "text": "\n".join(r["evidence"]),
                        "status": 200,
                    }
                ],
            }
        )
        for r in rows[: args.wice_traces]
    ]
    compare(
        f"3. WiCE claims as one-page traces ({len(wice_traces)}): long pages",
        wice_traces,
        args.ragas_python,
        show_each=False,
    )


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    main()
