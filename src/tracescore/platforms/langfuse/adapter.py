"""Langfuse observations → ``Trace``.

Accepts the source's payload ``{"id": trace_id, "observations": [v2 rows]}`` and the UI export shape ``{"trace":
{...}, "observations": [...]}``. Searches are RETRIEVER observations and tool calls whose name is a configured search
tool; fetches are tool calls named as fetch tools. A tool call is a TOOL observation or any other observation with
tool semantics (OTel/OpenInference attributes, a tool message output: ``fields.tool_semantics``); start/finish/success
event spans of one call (BeeAI) are folded into one. GENERATIONs are read for provider built-in web search. Hits and
page text are found with the field paths of ``MappingConfig``. The question and answer come from the root observation
(the trace object of an export), with the first/last generation as fallback; labels from the root's (or trace's)
metadata; the conversation (``Trace.session_id``) from the trace's ``sessionId``. A search or fetch whose output
cannot be read is a blind spot of the trace; one nested inside another is not counted twice (``adapters.nesting``: a
search tool that returns text reads its nested retriever's documents).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from tracescore.adapters.agents import Call, agent_answer, agent_question, outermost_agent
from tracescore.adapters.browser import PageReading, read_page
from tracescore.adapters.fetch import fetch_step
from tracescore.adapters.fields import (
    MISSING,
    call_arguments,
    extract_labels,
    first_path,
    parse_maybe_json,
    session_key,
)
from tracescore.adapters.hits import extract_hits, find_flat, span_attributes, tool_result, tool_semantics, unread_shape
from tracescore.adapters.mapping import MappingConfig, answer_text, question_text
from tracescore.adapters.nesting import plan_steps, search_through_nested
from tracescore.adapters.notes import note
from tracescore.adapters.provider_search import add_builtin_search
from tracescore.adapters.text import extract_text, text_of
from tracescore.errors import AdapterError, InputError
from tracescore.trace import BlindSpot, Citation, FetchStep, Labels, SearchStep, Step, Trace

_GENERATION = "GENERATION"
_SESSION = ("sessionId",)  # the trace's (an export's trace object, else the root row's: v2 rows repeat it)


def _time(value: Any) -> datetime | None:
    if value in (None, ""):
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _is_root(row: Mapping[str, Any]) -> bool:
    flag = row.get("isRootObservation")
    return bool(flag) if flag is not None else not row.get("parentObservationId")


_EVENT = re.compile(r"^(?P<base>.+)\.(?P<event>start|finish|success|error)(?:-(?P<n>\d+))?$")
_QUERY_ATTRIBUTES = ("input.value", "tool.parameters", "gen_ai.tool.call.arguments")


def _fold_events(rows: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """One row per call: ``x.start-12`` / ``x.finish-12`` / ``x.success-12`` spans (BeeAI) merged into ``x``.

    The merged row keeps the first input, the last output, the union of the span attributes and ``level: ERROR``
    when an ``error`` event was recorded. Generations are never folded.
    """
    groups: dict[tuple[str, str | None, Any], list[Mapping[str, Any]]] = {}
    order: list[Mapping[str, Any] | tuple[str, str | None, Any]] = []
    for row in rows:
        match = _EVENT.match(str(row.get("name") or ""))
        if match is None or row.get("type") == _GENERATION:
            order.append(row)
            continue
        key = (match["base"], match["n"], row.get("parentObservationId"))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(row)
    folded: list[Mapping[str, Any]] = []
    for item in order:
        if isinstance(item, Mapping):
            folded.append(item)
            continue
        events = groups[item]
        if len(events) == 1:
            folded.append(events[0])
            continue
        attributes: dict[str, Any] = {}
        for event in events:
            attributes.update({k: v for k, v in span_attributes(event.get("metadata")).items() if v not in (None, "")})
        merged = dict(events[0])
        merged["name"] = item[0]
        merged["metadata"] = {"attributes": attributes}
        merged["input"] = next((e.get("input") for e in events if e.get("input") not in (None, "")), None)
        merged["output"] = next((e.get("output") for e in reversed(events) if e.get("output") not in (None, "")), None)
        merged["endTime"] = events[-1].get("endTime") or events[-1].get("startTime")
        failed = [e for e in events if str(e.get("name")).rsplit(".", 1)[-1].startswith("error") or _failed(e)]
        if failed:
            merged["level"] = "ERROR"
            merged["statusMessage"] = failed[-1].get("statusMessage") or "error event"
        folded.append(merged)
    return folded


def _label(row: Mapping[str, Any]) -> str:
    return f"{row.get('type')} {row.get('name')!r} ({row.get('id')})"


def _failed(row: Mapping[str, Any]) -> bool:
    return str(row.get("level") or "").upper() == "ERROR"


def _input(row: Mapping[str, Any]) -> Any:
    """A tool call's input (smolagents' ``{"args", "kwargs"}`` named: ``fields.call_arguments``): the row's, else the
    tool-call arguments among its span attributes."""
    raw = parse_maybe_json(row.get("input"))
    if raw not in (None, "", {}):
        return call_arguments(raw, span_attributes(row.get("metadata")).get("tool.parameters"))
    attributes = span_attributes(row.get("metadata"))
    for key in _QUERY_ATTRIBUTES:
        value = parse_maybe_json(attributes.get(key))
        if value not in (None, "", "None", {}):
            return value
    return raw


def _search_step(row: Mapping[str, Any], mapping: MappingConfig, blind: list[BlindSpot]) -> SearchStep:
    raw_input = _input(row)
    name = _tool_name(row) or "search"
    if isinstance(raw_input, str):
        query = raw_input
    else:
        found = first_path(raw_input, mapping.query_paths)
        query = "" if found is MISSING else (text_of(found) or "")
    output, error = tool_result(row.get("output"))
    failed = _failed(row) or error is not None  # a tool message with status error returned no results
    hits = None if error else extract_hits(output, mapping.hits_paths)
    if hits is None and not error:  # OpenInference retrievers keep documents in span attributes (metadata), flat
        hits = extract_hits(row.get("metadata"), mapping.hits_paths)
        flat = find_flat(row.get("metadata"), "retrieval.documents") if hits is None else None
        hits = extract_hits(flat, ()) if flat else hits
    if hits is None and not failed:
        shape = "no output recorded" if output in (None, "") else unread_shape(output, mapping.hits_paths)
        blind.append(BlindSpot(kind="search", tool=name, reason=f"search {name!r}: {shape}"))
        note(_label(row), "blind spot", f"search tool, but {shape} (see hits_paths)")
    else:
        outcome = f" ({error or 'failed'})" if failed else ""
        note(_label(row), "search", f"query {query!r}, {len(hits or [])} hits{outcome}")
    return SearchStep(tool=name, query=query, hits=hits or [])


def _fetch_step(row: Mapping[str, Any], mapping: MappingConfig, blind: list[BlindSpot]) -> FetchStep:
    raw_input = _input(row)
    output, error = tool_result(row.get("output"))
    url: Any = raw_input if isinstance(raw_input, str) and raw_input.strip().startswith("http") else MISSING
    if url is MISSING:
        url = first_path(raw_input, mapping.url_paths)
    if url is MISSING:
        url = first_path(output, mapping.url_paths)
    page = read_page(output) if isinstance(output, str) and error is None else None
    if page is not None and not page.is_search:  # a text browser's page: the text is of the address it shows
        url, output = page.address, page.text
    text = extract_text(output, mapping.text_paths) or ""
    failed = f"failed: {row.get('statusMessage') or 'level ERROR'}" if _failed(row) else error
    fetched_at = _time(row.get("endTime")) or _time(row.get("startTime"))
    return fetch_step(
        _label(row), _tool_name(row) or "fetch", raw_input, output, mapping, url=url, text=text,
        fetched_at=fetched_at, failed=failed, recorded=output not in (None, ""), blind=blind,
        detail=f", {len(text)} characters",
    )


def _tool_name(row: Mapping[str, Any]) -> str | None:
    """The tool an observation calls: its span's ``tool.name``, else ``gen_ai.tool.name`` (OTel ingestion keeps
    them in ``metadata.attributes``), else the observation's name."""
    named = tool_semantics(span_attributes(row.get("metadata")))[1]
    return named or (str(row["name"]) if row.get("name") else None)


def _classify(row: Mapping[str, Any], mapping: MappingConfig) -> str | None:
    """``"search"``, ``"fetch"``, ``"page"`` or None for one observation, by its tool name (``_tool_name``); tool
    semantics make a generic SPAN a tool call."""
    name, kind = _tool_name(row), row.get("type")
    if kind in mapping.tool_types and mapping.is_page(name):
        return "page"
    found = mapping.kind_of(name, kind)
    if found is not None or kind in mapping.tool_types or kind in mapping.search_types or kind == _GENERATION:
        return found
    role, tool_name = tool_semantics(span_attributes(row.get("metadata")), row.get("output"))
    return mapping.kind_by_role(role, tool_name or name)


def _experiment_labels(item: Mapping[str, Any], mapping: MappingConfig) -> Labels:
    """Labels of an experiment trace from its dataset item: the expected output (an object with label keys or a
    labels object; a plain string is the gold answer), then the item's metadata."""
    expected = parse_maybe_json(item.get("expectedOutput"))
    if isinstance(expected, str) and expected.strip():
        from_expected = Labels(gold_answer=expected)
    else:
        from_expected = extract_labels(expected, mapping.labels_paths)
    return _merge(from_expected, extract_labels(item.get("experimentItemMetadata"), mapping.labels_paths))


def _merge(first: Labels, second: Labels) -> Labels:
    """Field by field: ``first`` where set, else ``second``."""
    return Labels.model_validate(
        {k: getattr(first, k) if getattr(first, k) is not None else getattr(second, k) for k in Labels.model_fields}
    )


def trace_from_observations(payload: object, mapping: MappingConfig | None = None) -> Trace:
    """One Langfuse trace (its observation rows) → ``Trace``; AdapterError names the trace and what is wrong."""
    mapping = mapping or MappingConfig()
    data = parse_maybe_json(payload)
    if not isinstance(data, Mapping) or not isinstance(data.get("observations"), list):
        raise AdapterError("not a Langfuse trace: expected an object with an 'observations' list")
    trace_obj: Mapping[str, Any] = data["trace"] if isinstance(data.get("trace"), Mapping) else {}
    rows = [r for r in data["observations"] if isinstance(r, Mapping)]
    trace_id = str(data.get("id") or trace_obj.get("id") or next((r.get("traceId") for r in rows), "") or "")
    if not trace_id:
        raise AdapterError("Langfuse trace without an id")
    if not rows and not trace_obj:
        raise AdapterError(f"trace {trace_id}: no observations")
    for row in rows:
        if _time(row.get("startTime")) is None:
            raise AdapterError(f"trace {trace_id}: observation {row.get('id')!r} has no readable startTime")
    rows.sort(key=lambda r: (_time(r.get("startTime")), str(r.get("id"))))
    roots = [r for r in rows if _is_root(r)]
    root: Mapping[str, Any] = roots[0] if roots else (rows[0] if rows else {})
    generations = [r for r in rows if r.get("type") == _GENERATION]

    question = question_text(trace_obj.get("input"), mapping) if trace_obj else ""
    question = question or question_text(root.get("input"), mapping)
    answer = answer_text(trace_obj.get("output"), mapping) if trace_obj else ""
    answer = answer or answer_text(root.get("output"), mapping)
    agent_row, agent_question_answer = _agent(rows, mapping)
    question, answer = question or agent_question_answer[0], answer or agent_question_answer[1]
    if not question and generations:
        question = question_text(generations[0].get("input"), mapping)
    if not answer and generations:
        answer = answer_text(generations[-1].get("output"), mapping)

    steps: list[Step] = []
    blind: list[BlindSpot] = []
    citations: list[Citation] = []
    builtin_seen: set[str] = set()
    calls = _fold_events(rows)
    roles = [None if row.get("type") == _GENERATION else _classify(row, mapping) for row in calls]
    ids = [str(row["id"]) if row.get("id") else f"#{n}" for n, row in enumerate(calls)]
    by_id = dict(zip(ids, calls, strict=True))
    parents = [str(row["parentObservationId"]) if row.get("parentObservationId") else None for row in calls]
    step_roles = [r if r in ("search", "fetch") else None for r in roles]
    plan = plan_steps(zip(ids, parents, step_roles, strict=True))  # a call inside a search or fetch: not again
    reading = PageReading()
    for row, role, oid in zip(calls, roles, ids, strict=True):
        name = row.get("name")
        try:
            if row.get("type") == _GENERATION:
                request = [row.get("input"), row.get("modelParameters"), span_attributes(row.get("metadata"))]
                add_builtin_search(_label(row), row.get("output"), request, builtin_seen, steps, citations, blind)
                continue
            if oid in plan.inside:
                continue
            if role == "search":
                nested = [functools.partial(_search_step, by_id[n], mapping) for n in plan.nested.get(oid, [])]
                build = functools.partial(_search_step, row, mapping)
                steps.append(search_through_nested(_label(row), build, nested, blind))
            elif role == "fetch":
                fetched = _fetch_step(row, mapping, blind)
                steps.append(fetched)
                reading.opened(len(steps) - 1, fetched, tool_result(row.get("output"))[0])
            elif role == "page":
                output = None if _failed(row) else tool_result(row.get("output"))[0]
                reading.more(_label(row), _tool_name(row) or "page", output, steps)
            elif row.get("type") in mapping.tool_types or tool_semantics(span_attributes(row.get("metadata")))[0]:
                note(_label(row), "skipped", "a tool call whose name matches neither search_tools nor fetch_tools")
        except ValidationError as exc:
            raise AdapterError(
                f"trace {trace_id}: observation {row.get('id')!r} ({name}): {exc.errors()[0]['msg']}"
            ) from None

    reading.extend(steps)
    metadata_source = trace_obj.get("metadata") if trace_obj.get("metadata") else root.get("metadata")
    labels = extract_labels(metadata_source, mapping.labels_paths)
    if labels == Labels() and agent_row is not None:  # OpenInference metadata of the agent's span (OTel ingestion)
        labels = extract_labels(span_attributes(agent_row.get("metadata")).get("metadata"), mapping.labels_paths)
    experiment = data.get("experiment_item")
    if isinstance(experiment, Mapping):
        labels = _merge(_experiment_labels(experiment, mapping), labels)
    timestamp = _time(trace_obj.get("timestamp")) if trace_obj else None
    timestamp = timestamp or _time(root.get("startTime"))
    metadata = {
        "provider": "langfuse",
        "experiment": experiment.get("experimentName") if isinstance(experiment, Mapping) else None,
        "dataset_item_id": experiment.get("experimentItemId") if isinstance(experiment, Mapping) else None,
        "trace_name": trace_obj.get("name") or root.get("traceName") or root.get("name") or None,
        "environment": trace_obj.get("environment") or root.get("environment") or None,
        "tags": list(trace_obj.get("tags") or root.get("tags") or []),
        "observations": len(rows),
    }
    try:
        return Trace(
            id=trace_id,
            session_id=session_key(trace_obj, _SESSION) or session_key(root, _SESSION),
            timestamp=timestamp,
            question=question,
            steps=steps,
            answer=answer,
            citations=citations or None,
            labels=labels,
            blind_spots=blind,
            metadata={k: v for k, v in metadata.items() if v not in (None, [], "")},
        )
    except ValidationError as exc:
        raise AdapterError(f"trace {trace_id}: {exc.errors()[0]['msg']}") from None


def langfuse_adapter(mapping: MappingConfig | None = None) -> Callable[[object], Trace]:
    """The adapter with a given mapping (``tracescore.toml [mapping]``); the registered default uses the defaults."""
    return functools.partial(trace_from_observations, mapping=mapping or MappingConfig())  # picklable: processes


_DOWNLOAD = "a Langfuse trace download"


def downloaded(document: object) -> tuple[str, list[object]]:
    """The traces of a file downloaded from Langfuse (``sources.documents``): a trace with its observations as the
    UI's download and ``GET /api/public/traces/{id}`` give it (``{"trace": …, "observations": […]}`` or the trace
    object holding ``observations``), or a list of them. InputError says what was expected otherwise."""
    items = document if isinstance(document, list) else [document]
    if items and all(isinstance(i, Mapping) and isinstance(i.get("observations"), list) for i in items):
        return _DOWNLOAD, list(items)
    raise InputError(
        f'not {_DOWNLOAD}: expected {{"trace": ..., "observations": [...]}} as the UI or GET /api/public/traces/ID'
        " gives it, or a list of them"
    )


def _agent(
    rows: list[Mapping[str, Any]], mapping: MappingConfig
) -> tuple[Mapping[str, Any] | None, tuple[str, str]]:
    """The outermost agent observation (type AGENT, or an OpenInference AGENT span kept as a SPAN) and its question
    and answer (``adapters.agents``), or ``(None, ("", ""))``."""
    calls = []
    for row in rows:
        attributes = span_attributes(row.get("metadata"))
        kind = str(attributes.get("openinference.span.kind") or "").upper()
        is_tool = row.get("type") in mapping.tool_types or kind == "TOOL"
        calls.append(Call(
            id=str(row.get("id")), parent=str(row["parentObservationId"]) if row.get("parentObservationId") else None,
            agent=row.get("type") == "AGENT" or kind == "AGENT", tool=_tool_name(row) if is_tool else None,
            input=row.get("input"), output=row.get("output"), parameters=attributes.get("tool.parameters"),
        ))  # fmt: skip
    agent = outermost_agent(calls)
    if agent is None:
        return None, ("", "")
    row = next(r for r in rows if str(r.get("id")) == agent.id)
    return row, (agent_question(agent, mapping), agent_answer(calls, agent, mapping))
