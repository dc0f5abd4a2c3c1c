"""One trace's spans → Trace: question and answer from the root span, else the outermost AGENT span; RETRIEVER/TOOL
spans give the steps.

Conventions read: OpenInference (``openinference.span.kind``, ``input.value``/``output.value``, ``tool.name``,
``tool.parameters``, ``retrieval.documents.N.document.{id,content,score,metadata}``) and OTel GenAI
(``gen_ai.operation.name = execute_tool``, ``gen_ai.tool.name``, ``gen_ai.tool.call.arguments``/``result``). Which
tool is a search, a fetch or a page tool comes from ``MappingConfig`` globs matched against ``tool.name``, else
``gen_ai.tool.name``, else the span name, as for every platform; a span nested in a counted step is not counted twice.
A text browser's pages (``adapters.browser``) are read as hits (a search page) or as the page text of their address;
a page tool's viewport (``page_down``, ``find_on_page_ctrl_f``…) extends the text read of the page it shows.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

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
    unflatten_indexed,
)
from tracescore.adapters.hits import extract_hits, tool_result, tool_semantics, unread_shape
from tracescore.adapters.jsonl import invalid_trace
from tracescore.adapters.mapping import MappingConfig, answer_text, question_text
from tracescore.adapters.nesting import plan_steps, search_through_nested
from tracescore.adapters.notes import note
from tracescore.adapters.text import extract_text, text_of
from tracescore.errors import AdapterError, InputError
from tracescore.platforms.otel.spans import group_spans, read_spans
from tracescore.trace import BlindSpot, FetchStep, Labels, SearchStep, Trace

_DEFAULT = MappingConfig()
_READ = frozenset(("trace_id", "span_id", "name", "error", "attributes"))  # the keys of a span ``read_spans`` made
_INPUT = ("input.value", "gen_ai.tool.call.arguments", "input")
_OUTPUT = ("output.value", "gen_ai.tool.call.result", "output")
_SESSION = ("session.id", "gen_ai.conversation.id")  # OpenInference, then the OTel GenAI convention


def otel_adapter(config: MappingConfig | None = None) -> Callable[[object], Trace]:
    """An adapter bound to ``config`` (tool names and field paths)."""
    return functools.partial(trace_from_spans, config=config or _DEFAULT)  # picklable: processes


def _value(attributes: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    for key in keys:
        if attributes.get(key) not in (None, ""):
            return parse_maybe_json(attributes[key])
    return None


def _label(span: Mapping[str, Any]) -> str:
    return f"span {span.get('name')!r} ({span.get('span_id')})"


def _arguments(attributes: Mapping[str, Any]) -> Any:
    """A tool span's input, its arguments named (smolagents' ``{"args", "kwargs"}``: ``fields.call_arguments``)."""
    return call_arguments(_value(attributes, _INPUT), attributes.get("tool.parameters"))


def _search(span: Mapping[str, Any], name: str, cfg: MappingConfig, blind: list[BlindSpot]) -> SearchStep:
    attributes = span["attributes"]
    inputs = _arguments(attributes)
    query = inputs if isinstance(inputs, str) else first_path(inputs, cfg.query_paths)
    documents = unflatten_indexed(attributes, "retrieval.documents")
    output, error = tool_result(_value(attributes, _OUTPUT))  # a LangChain tool message is unwrapped
    failed = span["error"] or error is not None  # a tool message with status error returned no results
    hits = extract_hits(documents, ()) if documents else None if error else extract_hits(output, cfg.hits_paths)
    if hits is None and not failed:
        shape = "no documents recorded" if output is None else unread_shape(output, cfg.hits_paths)
        blind.append(BlindSpot(kind="search", tool=name, reason=f"search {name!r}: {shape}"))
        note(_label(span), "blind spot", f"search span, but {shape} (see hits_paths)")
    else:
        note(_label(span), "search", f"{len(hits or [])} hits" + (f" ({error or 'failed'})" if failed else ""))
    return SearchStep(tool=name, query="" if query is MISSING else text_of(query) or "", hits=hits or [])


def _fetch(span: Mapping[str, Any], name: str, cfg: MappingConfig, blind: list[BlindSpot]) -> FetchStep:
    attributes = span["attributes"]
    inputs, (output, error) = _arguments(attributes), tool_result(_value(attributes, _OUTPUT))
    url = inputs if isinstance(inputs, str) else first_path(inputs, cfg.url_paths)
    if url is MISSING and isinstance(output, Mapping):
        url = first_path(output, cfg.url_paths)
    page = read_page(output) if isinstance(output, str) and error is None else None
    if page is not None and not page.is_search:  # a text browser's page: the text is of the address it shows
        url, output = page.address, page.text
    return fetch_step(
        _label(span),
        name,
        inputs,
        output,
        cfg,
        url=url,
        text=output if isinstance(output, str) else extract_text(output, cfg.text_paths),
        fetched_at=_time(span.get("end") or span.get("start")),
        failed="failed (span status ERROR)" if span["error"] else error,
        recorded=output is not None,
        blind=blind,
        kind="span",
    )


def _time(nanos: Any) -> datetime | None:
    return datetime.fromtimestamp(nanos / 1e9, tz=UTC) if isinstance(nanos, int) else None


def _classify(span: Mapping[str, Any], cfg: MappingConfig) -> tuple[str | None, str]:
    """``("search" | "fetch" | "page" | "skipped" | None, tool name)`` of one span ("skipped": a tool call of another
    name): by ``tool.name``, else ``gen_ai.tool.name``, else the span's name."""
    role, tool_name = tool_semantics(span["attributes"])
    name = tool_name or span["name"] or "tool"
    found = cfg.kind_by_role(role, name)
    return (found if found is not None else "skipped" if role == "tool" else None), name


def _labels(attributes: Mapping[str, Any], cfg: MappingConfig) -> Labels:
    """Labels from the root span's OpenInference ``metadata`` attribute, else from its attributes themselves."""
    labels = extract_labels(attributes.get("metadata"), cfg.labels_paths)
    return labels if labels != Labels() else extract_labels(attributes, cfg.labels_paths)


def _first_trace(document: Any) -> Mapping[str, Any]:
    """The first trace of a whole span document (what ``tracescore inspect FILE --source otel`` hands over)."""
    try:
        record = next(group_spans(read_spans(document)), None)
    except InputError as exc:
        raise AdapterError(str(exc)) from None
    if record is None or not isinstance(record.payload, Mapping):
        raise AdapterError("span file holds no spans")
    return record.payload


def trace_from_spans(payload: object, config: MappingConfig | None = None) -> Trace:
    """One trace's spans (``{"trace_id", "spans"}``) → ``Trace``; AdapterError names what is wrong."""
    cfg = config or _DEFAULT
    data = parse_maybe_json(payload)
    if isinstance(data, list):  # a whole file of flat spans (``inspect``)
        data = _first_trace(data)
    if not isinstance(data, Mapping):
        raise AdapterError(f"not a span record: expected a JSON object, got {type(data).__name__}")
    if "resourceSpans" in data or ("spans" in data and "trace_id" not in data):  # a whole file (``inspect``)
        data = _first_trace(data)
    if data.get("error"):
        raise AdapterError(str(data["error"]))
    if not all(isinstance(s, Mapping) and _READ <= s.keys() for s in data.get("spans") or []):
        data = _first_trace(data)  # raw spans handed over as one trace (``inspect``): read them as a file's
    spans = [s for s in data.get("spans") or [] if isinstance(s, Mapping)]
    if not spans or not data.get("trace_id"):
        raise AdapterError("span record has no trace_id or no spans")
    ids = {s["span_id"] for s in spans}
    spans.sort(key=lambda s: (s.get("start") is None, s.get("start") or 0))
    roots = [s for s in spans if not s.get("parent_id") or s["parent_id"] not in ids]
    root = roots[0]
    steps: list[SearchStep | FetchStep] = []
    blind: list[BlindSpot] = []
    kinds = {s["span_id"]: _classify(s, cfg) for s in spans}
    by_id = {s["span_id"]: s for s in spans}
    # a span inside a search or fetch span is not counted again
    calls = ((i, by_id[i].get("parent_id"), k if k in ("search", "fetch") else None) for i, (k, _) in kinds.items())
    plan = plan_steps(calls)
    reading = PageReading()
    for span in spans:
        (role, name), sid = kinds[span["span_id"]], span["span_id"]
        if sid in plan.inside:
            continue
        if role == "search":
            nested = [functools.partial(_search, by_id[n], kinds[n][1], cfg) for n in plan.nested.get(sid, [])]
            build = functools.partial(_search, span, name, cfg)
            steps.append(search_through_nested(_label(span), build, nested, blind))
        elif role == "fetch":
            fetched = _fetch(span, name, cfg, blind)
            steps.append(fetched)
            reading.opened(len(steps) - 1, fetched, _value(span["attributes"], _OUTPUT))
        elif role == "page":
            output = None if span["error"] else _value(span["attributes"], _OUTPUT)
            reading.more(_label(span), name, output, steps)
        elif role == "skipped":
            note(_label(span), "skipped", "a tool span whose name matches neither search_tools nor fetch_tools")
    reading.extend(steps)
    question, answer, agent = _question_answer(spans, root, kinds, cfg)
    attributes = root["attributes"]
    labels = _labels(attributes, cfg)
    if labels == Labels() and agent is not None:  # an application root span records none: the agent's (metadata)
        labels = _labels(agent["attributes"], cfg)
    metadata: dict[str, Any] = {
        "provider": "otel",
        "name": root["name"],
        "otel": {"trace_id": data["trace_id"], "root_span_id": root["span_id"], "spans": len(spans)},
    }
    model = attributes.get("llm.model_name") or attributes.get("gen_ai.request.model")
    if model:
        metadata["model"] = model
    # the root span's, else the first span's that carries one (OpenInference sets it on every span in its context)
    sessions = (session_key(s["attributes"], _SESSION) for s in (root, *spans))
    with invalid_trace(f"trace {data['trace_id']}"):
        return Trace(
            id=str(data["trace_id"]),
            session_id=next(filter(None, sessions), None),
            timestamp=_time(root.get("start")),
            question=question,
            steps=steps,
            answer=answer,
            labels=labels,
            blind_spots=blind,
            metadata=metadata,
        )


def _kind(span: Mapping[str, Any]) -> str:
    return str(span["attributes"].get("openinference.span.kind", "")).upper()


def _question_answer(
    spans: list[Mapping[str, Any]], root: Mapping[str, Any], kinds: Mapping[str, tuple[str | None, str]],
    cfg: MappingConfig,
) -> tuple[str, str, Mapping[str, Any] | None]:
    """Question and answer, each from the first that carries it: the root span; the outermost AGENT span (its task;
    its own ``final_answer`` call's argument, else its output: ``adapters.agents``); the first LLM span. Also the
    outermost AGENT span, if any (its labels are read when the root has none)."""
    calls = [
        Call(id=s["span_id"], parent=s.get("parent_id"), agent=_kind(s) == "AGENT",
             tool=kinds[s["span_id"]][1] if kinds[s["span_id"]][0] is not None else None,
             input=_value(s["attributes"], _INPUT), output=_value(s["attributes"], _OUTPUT),
             parameters=s["attributes"].get("tool.parameters"))
        for s in spans
    ]  # fmt: skip
    agent = outermost_agent(calls)
    models = [s for s in spans if _kind(s) == "LLM"]
    question = question_text(_value(root["attributes"], _INPUT), cfg)
    answer = answer_text(_value(root["attributes"], _OUTPUT), cfg)
    if agent is not None:
        question = question or agent_question(agent, cfg)
        answer = answer or agent_answer(calls, agent, cfg)
    question = question or next((q for s in models if (q := question_text(_value(s["attributes"], _INPUT), cfg))), "")
    answer = answer or next((a for s in models if (a := answer_text(_value(s["attributes"], _OUTPUT), cfg))), "")
    return question, answer, next((s for s in spans if agent is not None and s["span_id"] == agent.id), None)
