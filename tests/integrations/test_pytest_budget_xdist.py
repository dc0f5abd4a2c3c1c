"""#30 item 4, the judge budget under ``pytest -n 2``: ``[scoring] max_cost`` is split evenly between the xdist
workers (README, the pytest plugin). As ``--max-cost``, it is checked between traces: each worker judges a trace only
while its own spend is under its share, so the session spends at most the budget plus the one trace per worker that
crossed its share. Judged by the real ``anthropic`` SDK against the loopback fake; which worker ran which test, in
which order, is read from xdist's own ``-v`` lines (``[gw0] [ 12%] PASSED …``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.fakes.anthropic import FakeAnthropic
from tests.integrations.pytest_runs import REPO, run_pytest
from tests.integrations.test_pytest_judge import SPENT

TRACES = REPO / "cookbook" / "data" / "traces.jsonl"
IDS = [f"tr-{n:04d}" for n in range(8)]
RAN = re.compile(r"^\[(gw\d+)\] .*?PASSED test_budget\.py::test_(\d+)\b", re.M)


def _suite(tmp: Path, max_cost: float) -> None:
    check = "    tracescore.check(TRACES[{!r}], max={{'citation.fabricated_count': 1000}})\n"
    tests = "".join(f"def test_{n}(tracescore):\n" + check.format(tid) for n, tid in enumerate(IDS))
    (tmp / "test_budget.py").write_text(
        "import json, pathlib\n"
        f"RUN = pathlib.Path({str(TRACES)!r})\n"
        "TRACES = {t['id']: t for t in map(json.loads, RUN.read_text(encoding='utf-8').splitlines())}\n" + tests,
        encoding="utf-8",
    )
    (tmp / "tracescore.toml").write_text(f"[scoring]\nmax_cost = {max_cost!r}\n", encoding="utf-8")


def _run(tmp: Path, max_cost: float, *args: str) -> tuple[str, list[dict[str, Any]], float]:
    """(pytest's output, the result lines in test order, the session's spend as the summary says it)."""
    tmp.mkdir()
    _suite(tmp, max_cost)
    with FakeAnthropic() as fake:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
        ran = run_pytest(tmp, "test_budget.py", "-v", "--tracescore-out", "results.jsonl", *args, env=env)
        calls = len(fake.messages())
    assert ran.code == 0 and f"{len(IDS)} passed" in ran.out, ran.out
    [spent] = SPENT.findall(ran.out)
    assert int(spent[1]) == calls, ran.out  # the summary counts every call the fake answered
    lines = [json.loads(line) for line in (tmp / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    assert [line["trace_id"] for line in lines] == IDS
    return ran.out, lines, float(spent[5])


def _cost(line: dict[str, Any]) -> float:
    return float((line.get("judge") or {}).get("cost_usd") or 0.0)


def test_each_xdist_worker_stops_judging_at_its_share_of_the_budget(tmp_path: Path) -> None:
    # what each trace's judging costs, with a budget it never reaches (one process, every trace judged)
    _, free, _ = _run(tmp_path / "free", 1000.0)
    costs = [_cost(line) for line in free]
    assert all(c > 0 for c in costs), costs
    budget = sum(costs) / 2  # each worker's share: a quarter of judging every trace, so both stop early
    out, lines, total = _run(tmp_path / "split", budget, "-n", "2")
    share = budget / 2
    workers: dict[str, list[int]] = {}
    for worker, n in RAN.findall(out):
        workers.setdefault(worker, []).append(int(n))
    assert sorted(n for ns in workers.values() for n in ns) == list(range(len(IDS))), out
    assert len(workers) == 2, out
    stops, spent_total = 0, 0.0
    for worker, order in workers.items():
        spent = 0.0
        for n in order:  # this worker's tests in the order it ran them
            line, reason = lines[n], (lines[n].get("missing") or {}).get("grounding.rate")
            if spent < share:  # under its share: judged (its price: the prompt cache makes it the order's)
                assert isinstance(line["scores"].get("grounding.rate"), float), (worker, n, reason)
                assert _cost(line) > 0, (worker, n)
                spent += _cost(line)
            else:  # its share spent: this trace and every later one on this worker unjudged, with the share named
                stops += 1
                assert reason == f"judge budget spent (${spent:.4f} of max ${share:.4f})", (worker, n, reason)
                assert _cost(line) == 0 and "grounding.rate" not in line["scores"], (worker, n)
        spent_total += spent
    assert stops > 0, out  # the budget did stop the judge
    assert abs(total - spent_total) < 1e-4, (total, spent_total)  # the summary's spend: the workers' summed
    # the session: within the budget but for the one trace per worker that crossed its share (checked between traces)
    assert spent_total < budget + 2 * max(_cost(line) for line in lines)
