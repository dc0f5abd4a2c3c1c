"""The question and answer of an agent run recorded as nested calls (OpenTelemetry spans, Langfuse observations).

An agent framework's trace often starts with the application's own span (``main``), which records nothing, and holds
model calls whose prompts are the agent's plumbing (a planning prompt, a facts survey). What the user asked and what
the agent answered are on the **outermost agent call** (OpenInference ``AGENT``: an agent run with no agent run above
it): its input (smolagents: ``{"task": …}``) is the question, and the argument of its own ``final_answer`` tool call
(the last one made directly under it, not a sub-agent's) is the answer, else the agent run's output. Adapters ask the
root first and use these only when the root carries no question (answer), and the first model call after them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tracescore.adapters.fields import MISSING, call_arguments, parse_maybe_json
from tracescore.adapters.mapping import MappingConfig, answer_text, question_text
from tracescore.adapters.text import text_of

FINAL_ANSWER = "final_answer"
"""The tool an agent answers with (smolagents, and the convention it follows)."""


@dataclass(frozen=True)
class Call:
    """One recorded call as the question/answer reader sees it, in call order: an agent run (``agent``) or a tool
    call (``tool`` its name), with its decoded input and output and its tool's declared ``parameters``."""

    id: str
    parent: str | None
    agent: bool = False
    tool: str | None = None
    input: Any = None
    output: Any = None
    parameters: Any = None


def _agent_above(call: Call, by_id: Mapping[str, Call]) -> Call | None:
    """The nearest agent run above ``call`` (a cycle of parents ends the walk)."""
    seen: set[str] = {call.id}
    parent = call.parent
    while parent is not None and parent in by_id and parent not in seen:
        seen.add(parent)
        above = by_id[parent]
        if above.agent:
            return above
        parent = above.parent
    return None


def outermost_agent(calls: Sequence[Call]) -> Call | None:
    """The first agent run (in call order) with no agent run above it, else None."""
    by_id = {c.id: c for c in calls}
    return next((c for c in calls if c.agent and _agent_above(c, by_id) is None), None)


def agent_question(agent: Call, mapping: MappingConfig) -> str:
    """The question an agent run was given: its ``task`` (a ``question_paths`` entry), else its input as text."""
    return question_text(agent.input, mapping)


def agent_answer(calls: Sequence[Call], agent: Call, mapping: MappingConfig) -> str:
    """The argument of the last ``final_answer`` call made directly under ``agent`` (no agent run in between: a
    sub-agent's final answer is its report to the manager), else ``agent``'s output."""
    by_id = {c.id: c for c in calls}
    finals = [c for c in calls if c.tool == FINAL_ANSWER and _agent_above(c, by_id) is agent]
    for final in reversed(finals):
        arguments = call_arguments(final.input, final.parameters)
        value = arguments.get("answer", MISSING) if isinstance(arguments, Mapping) else MISSING
        if value is MISSING and isinstance(arguments, Mapping) and len(arguments) == 1:
            value = next(iter(arguments.values()))  # the tool's one argument, whatever its name
        text = text_of(value) if value is not MISSING else None
        if text:
            return text
        if (out := answer_text(final.output, mapping)) != "":
            return out
    return _stated(agent.output, mapping)


def _stated(output: Any, mapping: MappingConfig) -> str:
    """An agent run's output as an answer: text, an assistant message or an ``answer_paths`` field; "" for an object
    that holds none (a framework's task record, e.g. CrewAI's, dumped whole is no answer: the caller reads on)."""
    value = parse_maybe_json(output)
    text = answer_text(value, mapping)
    return "" if isinstance(value, Mapping | list) and text == text_of(value) else text
