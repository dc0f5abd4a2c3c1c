"""JUnit XML of a gate result: one test case per rule and stage, so CI shows each stage's verdict on its own.

Test names are stable (``regression: retrieval.recall_at_5``): limits, band edges and counts go in the failure
message, so CI tools that keep per-test history see the same test when the baselines move. A case's line names its
trace and, when its result line had a ``trace_url``, the trace's URL (``url=…``: CI shows a URL in a failure as a link).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from tracescore.report.gate import GateResult
from tracescore.report.safe import link_url, visible


def render_junit(result: GateResult) -> str:
    """The gate's checks as a JUnit ``testsuites`` document (failures carry the rule, stage and cases)."""
    failures = sum(1 for c in result.checks if c.failed)
    skipped = sum(1 for c in result.checks if c.status == "warn")
    root = ET.Element("testsuites", name="tracescore", tests=str(len(result.checks)), failures=str(failures))
    suite = ET.SubElement(
        root,
        "testsuite",
        name="tracescore.gate",
        tests=str(len(result.checks)),
        failures=str(failures),
        errors="0",
        skipped=str(skipped),
    )
    for check in result.checks:  # user data goes through visible(): a control character is not XML (CI fails)
        case = ET.SubElement(suite, "testcase", classname=f"tracescore.gate.{check.rule}", name=visible(check.name))
        body = "\n".join(
            f"{visible(c.case)}\tstage={c.stage}"
            + (f"\ttrace={visible(c.trace_id)}" if c.trace_id else "")
            + (f"\turl={url}" if (url := link_url(result.links.get(c.trace_id))) else "")
            + (f"\t{visible(c.detail)}" if c.detail else "")
            for c in check.cases
        )
        message = visible(check.message)
        if check.failed:
            failure = ET.SubElement(case, "failure", message=message, type=check.rule)
            failure.text = body or message
        elif check.status == "warn":
            ET.SubElement(case, "skipped", message=message)
            if body:
                ET.SubElement(case, "system-out").text = body
        else:
            ET.SubElement(case, "system-out").text = message
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
