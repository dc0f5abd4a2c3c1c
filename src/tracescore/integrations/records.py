"""Whatever a test hands ``tracescore.check``: a ``Trace``, a dict in the trace format (or its JSON line), a
LangSmith record or run tree, or a Langfuse record, read by the adapter ``tracescore score`` reads it with.

- the trace format: a ``Trace``, a mapping with ``steps``, a JSON line (``str`` / ``bytes``);
- LangSmith: a record as ``score --source langsmith`` reads it (``{"root", "runs", …}``, or a recorded ingest body
  ``{"post", "patch"}``), or a run tree (a ``Run`` / ``RunTree`` with its ``child_runs``);
- Langfuse: a stored trace as ``score --source langfuse`` reads it (``{"id", "observations"}``; see
  ``integrations.langfuse.stored_trace``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tracescore.config import Config
from tracescore.integrations.langsmith import to_record
from tracescore.platforms.jsonl.platform import adapter as canonical_adapter
from tracescore.platforms.langfuse.adapter import langfuse_adapter
from tracescore.platforms.langsmith.adapter import langsmith_adapter
from tracescore.trace import Trace


def payload(trace: Any) -> Any:
    """``trace`` as the payload of a record: a ``Trace`` as its canonical dict, a LangSmith run tree as its record,
    anything else as it is (the adapter says what is wrong with it)."""
    if isinstance(trace, Trace):
        return trace.model_dump(mode="json")
    if not isinstance(trace, Mapping | str | bytes) and hasattr(trace, "child_runs") and hasattr(trace, "run_type"):
        return to_record(trace)
    return dict(trace) if isinstance(trace, Mapping) else trace


def _platform(plain: object) -> str:
    if isinstance(plain, Mapping):
        if "observations" in plain:
            return "langfuse"
        if "root" in plain or "post" in plain:
            return "langsmith"
    return "trace"


def any_adapter(config: Config | None) -> Callable[[object], Trace]:
    """One adapter for every payload ``payload`` gives: by its shape, the platform's adapter with ``[mapping]`` of
    ``config``, else the trace format's."""
    mapping = config.mapping if config is not None else None
    adapters = {"langfuse": langfuse_adapter(mapping), "langsmith": langsmith_adapter(mapping),
                "trace": canonical_adapter()}  # fmt: skip
    return lambda plain: adapters[_platform(plain)](plain)
