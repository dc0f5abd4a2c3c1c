"""LangSmith runs → Trace: the root run gives question, answer and labels; child runs give the search/fetch steps.

A native record is what ``sources.langsmith`` yields — ``{"id", "project", "root", "runs", "example", "error"}`` with
runs as plain dicts — or a recorded ingest body ``{"post": [...], "patch": [...]}`` (patches merged onto their posts).
Searches are ``run_type="retriever"`` runs (LangChain ``outputs["documents"]`` or a ``@traceable`` list under
``outputs["output"]``) and tool runs named as search tools; fetches are tool runs named as fetch tools (names and paths
come from ``MappingConfig``). Labels come from the reference example when the run belongs to an experiment, else from
the root run's metadata; the conversation (``Trace.session_id``) from the root run's thread key (``THREAD_KEYS``). A
search or fetch nested inside another one is not counted twice.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from tracescore.adapters.fetch import fetch_step
from tracescore.adapters.fields import MISSING, extract_labels, first_path, parse_maybe_json, session_key
from tracescore.adapters.hits import extract_hits, find_flat, tool_result, tool_semantics, unread_shape
from tracescore.adapters.jsonl import invalid_trace
from tracescore.adapters.mapping import MappingConfig, answer_text, question_text
from tracescore.adapters.nesting import plan_steps, search_through_nested
from tracescore.adapters.notes import note
from tracescore.adapters.provider_search import add_builtin_search
from tracescore.adapters.text import extract_text, text_of
from tracescore.errors import AdapterError, InputError
from tracescore.trace import BlindSpot, Citation, FetchStep, Labels, SearchStep, Trace

_DEFAULT = MappingConfig()
# LangSmith groups a root run into a thread by the first of these keys in its metadata (its ingest checks them in
# this order); the run's own ``session_id`` field is its project, not a conversation
THREAD_KEYS = ("session_id", "conversation_id", "thread_id")
_GOLD_KEYS = ("gold_answer", "answer", "expected_answer", "reference", "output", "expected")


def langsmith_adapter(config: MappingConfig | None = None) -> Callable[[object], Trace]:
    """An adapter bound to ``config`` (tool names and field paths)."""
    return functools.partial(trace_from_langsmith, config=config or _DEFAULT)  # picklable: processes


def merge_ingest(body: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Runs of a recorded ``{"post": [...], "patch": [...]}`` ingest body, each patch merged onto its post.

    A patch is matched by ``id``, else by ``dotted_order``/``trace_id`` (the JS SDK's patches omit the id).
    """
    posts = [dict(p) for p in body.get("post") or [] if isinstance(p, Mapping)]
    for patch in body.get("patch") or []:
        if not isinstance(patch, Mapping):
            continue
        target = next((p for p in posts if patch.get("id") and p.get("id") == patch.get("id")), None)
        if target is None:
            target = next(
                (p for p in posts if patch.get("dotted_order") and p.get("dotted_order") == patch.get("dotted_order")),
                None,
            )
        if target is None:
            target = next(
                (
                    p
                    for p in posts
                    if patch.get("trace_id")
                    and p.get("trace_id") == patch.get("trace_id")
                    and not p.get("parent_run_id")
                ),
                None,
            )
        if target is None:
            posts.append(dict(patch))
        else:
            target.update({k: v for k, v in patch.items() if v is not None})
    return posts


def _bundle(payload: object) -> dict[str, Any]:
    data = parse_maybe_json(payload)
    if not isinstance(data, Mapping):
        raise AdapterError(f"not a LangSmith record: expected a JSON object, got {type(data).__name__}")
    if data.get("error"):
        raise AdapterError(str(data["error"]))
    if "root" in data:
        return dict(data)
    if "post" in data or "patch" in data:
        runs = merge_ingest(data)
        roots = [r for r in runs if not r.get("parent_run_id")]
        if not roots:
            raise AdapterError("recorded LangSmith runs have no root run (every run has a parent_run_id)")
        root = roots[0]
        return {"root": root, "runs": [r for r in runs if r is not root], "example": None, "project": None}
    if "run_type" in data and "id" in data:  # one run, or a run tree (``read_run(..., load_child_runs=True)``)
        root, *runs = _flatten(data)
        return {"root": root, "runs": runs, "example": None, "project": None}
    raise AdapterError("not a LangSmith record: expected 'root' and 'runs', a recorded 'post'/'patch' body or a run")


def _flatten(run: Mapping[str, Any], parent: Any = None) -> list[dict[str, Any]]:
    """A run and every run under it (``child_runs``, nested), each a plain run with its ``parent_run_id``."""
    flat = {k: v for k, v in run.items() if k != "child_runs"}
    if parent is not None and not flat.get("parent_run_id"):
        flat["parent_run_id"] = parent
    out = [flat]
    for child in run.get("child_runs") or []:
        if isinstance(child, Mapping):
            out += _flatten(child, run.get("id"))
    return out


_DOWNLOAD = "a LangSmith run download"


def downloaded(document: object) -> tuple[str, list[object]]:
    """The traces of a file downloaded from LangSmith (``sources.documents``): a run tree as ``read_run(id,
    load_child_runs=True)`` or the API gives it, or a list of runs (trees, or the flat runs of ``list_runs``, grouped
    by ``trace_id`` into one trace per root). InputError says what was expected otherwise."""
    items = [i for i in (document if isinstance(document, list) else [document]) if isinstance(i, Mapping)]
    if not items or len(items) != (len(document) if isinstance(document, list) else 1) or not all(
        i.get("run_type") and i.get("id") for i in items
    ):
        raise InputError(f"not {_DOWNLOAD}: expected a run (with its child_runs) or a list of runs, as"
                         " read_run(id, load_child_runs=True) or the API gives them")
    runs = [r for item in items for r in _flatten(item)]
    by_id = {str(r["id"]): r for r in runs}

    def trace_of(run: dict[str, Any]) -> str:
        seen: set[str] = set()
        while run.get("parent_run_id") and str(run["parent_run_id"]) in by_id and str(run["id"]) not in seen:
            seen.add(str(run["id"]))
            run = by_id[str(run["parent_run_id"])]
        return str(run.get("trace_id") or run["id"])

    traces: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        traces.setdefault(trace_of(run), []).append(run)
    bundles: list[object] = []
    for members in traces.values():
        root = next((r for r in members if not r.get("parent_run_id")), members[0])
        bundles.append({"root": root, "runs": [r for r in members if r is not root], "example": None, "project": None})
    return _DOWNLOAD, bundles


def _outputs(run: Mapping[str, Any]) -> Any:
    """A run's outputs; a lone ``{"output": x}`` (how ``@traceable`` stores a non-dict return value) is unwrapped."""
    out = parse_maybe_json(run.get("outputs"))
    if isinstance(out, Mapping) and set(out) == {"output"}:
        return parse_maybe_json(out["output"])
    return out


def _labels(bundle: Mapping[str, Any], cfg: MappingConfig) -> Labels:
    example = bundle.get("example")
    if isinstance(example, Mapping):
        outputs = parse_maybe_json(example.get("outputs"))
        labels = extract_labels(outputs, cfg.labels_paths)
        if labels == Labels() and isinstance(outputs, Mapping):
            gold = first_path(outputs, _GOLD_KEYS)
            if isinstance(gold, str):
                labels = Labels(gold_answer=gold)
        return labels
    extra = parse_maybe_json(bundle["root"].get("extra"))
    metadata = extra.get("metadata") if isinstance(extra, Mapping) else None
    return extract_labels(metadata, cfg.labels_paths)


def _label(run: Mapping[str, Any]) -> str:
    return f"{run.get('run_type')} run {run.get('name')!r} ({run.get('id')})"


def _failed(run: Mapping[str, Any]) -> bool:
    """A run that raised: ``error`` set or status ``"error"`` (LangSmith keeps no outputs for it)."""
    return bool(run.get("error")) or str(run.get("status") or "").lower() == "error"


def _search(run: Mapping[str, Any], cfg: MappingConfig, blind: list[BlindSpot]) -> SearchStep:
    inputs = parse_maybe_json(run.get("inputs"))
    query = inputs if isinstance(inputs, str) else first_path(inputs, cfg.query_paths)
    outputs, error = tool_result(_outputs(run))
    failed = _failed(run) or error is not None  # a tool message with status error returned no results
    hits = None if error else extract_hits(outputs, cfg.hits_paths)
    if hits is None and not error:
        flat = find_flat(run.get("extra"), "retrieval.documents")
        hits = extract_hits(flat, ()) if flat else None
    name = str(run.get("name") or "search")
    if hits is None and not failed:
        shape = (
            "no output recorded" if outputs in (None, "", {}) else unread_shape(outputs, cfg.hits_paths)
        )
        blind.append(BlindSpot(kind="search", tool=name, reason=f"search {name!r}: {shape}"))
        note(_label(run), "blind spot", f"search tool, but {shape} (see hits_paths)")
    else:
        note(_label(run), "search", f"{len(hits or [])} hits" + (f" ({error or 'failed'})" if failed else ""))
    return SearchStep(tool=name, query="" if query is MISSING else text_of(query) or "", hits=hits or [])


def _fetch(run: Mapping[str, Any], cfg: MappingConfig, blind: list[BlindSpot]) -> FetchStep:
    inputs, (outputs, error) = parse_maybe_json(run.get("inputs")), tool_result(_outputs(run))
    url = first_path(inputs, cfg.url_paths)
    url = first_path(outputs, cfg.url_paths) if url is MISSING and isinstance(outputs, Mapping) else url
    if isinstance(inputs, str) and url is MISSING:
        url = inputs
    # the tool raised (404, timeout): LangSmith keeps the run with `error` and no outputs
    failed = f"failed: {str(run.get('error') or 'status error')[:120]}" if _failed(run) else error
    text, fetched_at = extract_text(outputs, cfg.text_paths), _time(run.get("end_time") or run.get("start_time"))
    return fetch_step(
        _label(run), str(run.get("name") or "fetch"), inputs, outputs, cfg, url=url, text=text,
        fetched_at=fetched_at, failed=failed, recorded=outputs not in (None, "", {}), blind=blind,
    )


def _classify(run: Mapping[str, Any], cfg: MappingConfig) -> str | None:
    """``"search"``, ``"fetch"``, ``"llm"`` or None; a chain run with tool semantics is a tool call."""
    name, kind = run.get("name"), run.get("run_type")
    found = cfg.kind_of(name, kind) or ("llm" if kind == "llm" else None)
    if found is not None or kind in cfg.tool_types:
        return found
    extra = parse_maybe_json(run.get("extra"))
    metadata = extra.get("metadata") if isinstance(extra, Mapping) else None
    role, tool_name = tool_semantics(metadata if isinstance(metadata, Mapping) else {}, run.get("outputs"))
    return cfg.kind_by_role(role, name, tool_name)


def _time(value: Any) -> datetime | None:
    """A run time: ISO 8601 text (the Python SDK, the API) or epoch milliseconds (the JS SDK's ingest bodies)."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value / 1000 if value > 1e11 else value, tz=UTC)
    try:
        moment = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        raise AdapterError(f"run time {value!r} is neither ISO 8601 nor epoch milliseconds") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _order(run: Mapping[str, Any]) -> tuple[str, str]:
    return (str(run.get("dotted_order") or ""), str(run.get("start_time") or ""))


def trace_from_langsmith(payload: object, config: MappingConfig | None = None) -> Trace:
    """One LangSmith trace (root run, child runs, reference example) → ``Trace``; AdapterError names what is wrong."""
    cfg = config or _DEFAULT
    bundle = _bundle(payload)
    root = bundle["root"]
    if not isinstance(root, Mapping) or not root.get("id"):
        raise AdapterError("LangSmith record has no root run id")
    steps: list[SearchStep | FetchStep] = []
    blind: list[BlindSpot] = []
    citations: list[Citation] = []
    builtin_seen: set[str] = set()
    runs = sorted((r for r in bundle.get("runs") or [] if isinstance(r, Mapping)), key=_order)
    llm_runs = [r for r in runs if r.get("run_type") == "llm"]
    if root.get("run_type") == "llm":
        llm_runs.insert(0, root)
    ordered = runs if root.get("run_type") != "llm" else [root, *runs]
    ids = [str(run["id"]) if run.get("id") else f"#{n}" for n, run in enumerate(ordered)]
    by_id, roles = dict(zip(ids, ordered, strict=True)), [_classify(run, cfg) for run in ordered]
    parents = [str(run["parent_run_id"]) if run.get("parent_run_id") else None for run in ordered]
    # a run inside a search or fetch is not counted again (nor read for built-in search)
    plan = plan_steps(zip(ids, parents, [r if r != "llm" else None for r in roles], strict=True))
    for run, role, rid in zip(ordered, roles, ids, strict=True):
        if rid in plan.inside:
            continue
        if role == "search":
            nested = [functools.partial(_search, by_id[n], cfg) for n in plan.nested.get(rid, [])]
            steps.append(search_through_nested(_label(run), functools.partial(_search, run, cfg), nested, blind))
        elif role == "fetch":
            steps.append(_fetch(run, cfg, blind))
        elif role == "llm":
            request = [run.get("inputs"), run.get("extra")]
            add_builtin_search(_label(run), run.get("outputs"), request, builtin_seen, steps, citations, blind)
        elif run.get("run_type") in cfg.tool_types:
            note(_label(run), "skipped", "a tool run whose name matches neither search_tools nor fetch_tools")
    question = question_text(root.get("inputs"), cfg)
    if not question and llm_runs:
        question = question_text(llm_runs[0].get("inputs"), cfg)
    found = bundle.get("project")
    project: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    extra = parse_maybe_json(root.get("extra"))
    found = extra.get("metadata") if isinstance(extra, Mapping) else None
    meta: Mapping[str, Any] = found if isinstance(found, Mapping) else {}
    metadata: dict[str, Any] = {
        "provider": "langsmith",
        "name": root.get("name"),
        "tags": list(root.get("tags") or []),
        "langsmith": {
            "run_id": str(root["id"]),
            "trace_id": str(root.get("trace_id") or root["id"]),
            "session_id": str(root.get("session_id") or project.get("id") or "") or None,
            "project": project.get("name"),
            "reference_example_id": str(root["reference_example_id"]) if root.get("reference_example_id") else None,
        },
    }
    if meta.get("ls_model_name"):
        metadata["model"] = meta["ls_model_name"]
    start = _time(root.get("start_time"))
    metadata["langsmith"]["start_time"] = start.isoformat() if start else None  # ISO, whatever the SDK sent
    with invalid_trace(f"LangSmith run {root['id']}"):
        return Trace(
            id=str(root["id"]),
            session_id=session_key(meta, THREAD_KEYS),
            timestamp=start,
            question=question,
            steps=steps,
            answer=answer_text(_outputs(root), cfg),
            citations=citations or None,
            labels=_labels(bundle, cfg),
            blind_spots=blind,
            metadata=metadata,
        )
