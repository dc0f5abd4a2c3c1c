"""The gate's verdict as one JSON object (``gate --format json``): the run, then each rule with what was observed,
the limit it was held to and its verdict, and the cases that broke it."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from tracescore.report.gate import GateCheck, GateResult


def gate_to_json(result: GateResult) -> dict[str, Any]:
    """``result`` as plain JSON: ``passed``, the traces read and the baselines, and one entry per rule checked."""
    return {
        "passed": result.passed,
        "source": result.source,
        "traces": result.traces,
        "unreadable": result.unreadable,
        "baseline_runs": result.baseline_runs,
        "baselines": list(result.baselines),
        "failed": len(result.failures),
        "rules": [_rule(check) for check in result.checks],
    }


def _rule(check: GateCheck) -> dict[str, Any]:
    band = check.band
    return {
        "name": check.name,
        "rule": check.rule,
        "subject": check.subject,
        "verdict": check.status,
        "observed": check.observed,
        "limit": check.limit,
        "band": None if band is None else {"low": band.low, "high": band.high, "runs": band.runs},
        "message": check.message,
        "cases": [asdict(case) for case in check.cases],
    }
