"""The LangSmith annotation queue of judge calibration: feedback configs, the queue with its rubric, runs, labels back.

``setup`` makes sure of one feedback config per label (the judged scores' keys and categories; the required doc ids
a free-form key): a key's existing config is reused when it is the same (type, bounds, categories; the sink creates
the scores' ones from the same catalog, so ``answer.correct`` written first is found as it is needed), a missing one
is created, and one that differs stops setup with a ConfigError naming the key, that config and the one needed (never
retried). Then it finds or creates the queue with those rubric items. ``push`` adds each item's root run once through
the generated client's ``annotation_queues.items.create`` (the SDK's ``add_runs_to_annotation_queue`` is deprecated
and goes after January 2027) with its run id, project (session) id and start time (the trace's, from the store: a
SmithDB deployment locates a run by them), remembered in the store, plus a ``tracescore.review`` feedback whose
comment shows the claim, its document, URL and quote, never the judge's verdict; no rubric key is prefilled.
``pull`` reads the feedback on queued runs and keeps a reviewer's (source not ``api``/``model``, a user id), never
ours. A failed request is said with its endpoint, status and the server's full detail; a 4xx other than 408/409/429
is not retried.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from tracescore.calibrate.labels import LABELS, Label, LabelSpec, label_spec
from tracescore.calibrate.queued import mark_pushed, pushed, review_text, unpushed
from tracescore.calibrate.sampling import Item
from tracescore.errors import ConfigError, SinkError
from tracescore.platforms.base import QueueRef
from tracescore.platforms.langsmith.configs import BOOLEAN, FeedbackConfigs
from tracescore.platforms.langsmith.failures import describe, permanent
from tracescore.platforms.langsmith.sink import SdkLogFilter
from tracescore.store.db import Store

if TYPE_CHECKING:
    from langsmith import Client, Langsmith

QUEUE_NAME = "tracescore-calibration"
REVIEW_KEY = "tracescore.review"  # the feedback that shows the reviewer the claim (a comment; no score, no value)
COMMENT_LIMIT = 5000
_ATTEMPTS = 4
_BACKOFF = 0.2
_NOT_HUMAN = frozenset({"api", "model"})
_ITEM_NAMESPACE = uuid.uuid5(uuid.NAMESPACE_URL, "https://tracescore.dev/calibration-item")
_INSTRUCTIONS = (
    "One claim of the agent's answer per run, chosen by tracescore: read the tracescore.review note (claim, document,"
    " URL, quote) and label it without looking at any judge score. grounding.verdict: does the document support the"
    " claim? Put the ids or URLs of the documents needed to answer in retrieval.required_doc_ids."
)


def feedback_config(spec: LabelSpec) -> dict[str, Any]:
    """The LangSmith feedback config of one label: categories for categorical, 0..1 for yes/no, else free-form."""
    if spec.kind == "categorical":
        return {
            "type": "categorical",
            "categories": [{"value": float(i), "label": c} for i, c in enumerate(spec.categories)],
        }
    if spec.kind == "boolean":
        return dict(BOOLEAN)
    return {"type": "freeform"}


def items_client(client: Client) -> Langsmith:
    """The generated v2 client beside the v1 ``Client`` (same key and host) for the annotation-queue items API."""
    from langsmith import Langsmith

    base = str(client.api_url).rstrip("/")
    for suffix in ("/api/v1", "/api"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
    return Langsmith(api_key=client.api_key, base_url=base, max_retries=0)  # retried here: see ``_add``


def start_times(store: Store, trace_ids: Sequence[str]) -> dict[str, str]:
    """The start time of each trace as the store's latest result of it holds (ISO, as the source read it)."""
    out: dict[str, str] = {}
    ids = sorted(set(trace_ids))
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        rows = store.query(
            f"SELECT trace_id, timestamp FROM results WHERE timestamp IS NOT NULL AND trace_id IN"
            f" ({', '.join('?' * len(chunk))}) ORDER BY id",
            tuple(chunk),
        )
        out |= {str(trace): str(stamp) for trace, stamp in rows}
    return out


class LangSmithLabelQueue:
    """One LangSmith workspace's calibration queue over the runs of one project."""

    def __init__(
        self, client: Client, store: Store, *, project: str, name: str = QUEUE_NAME, items: Langsmith | None = None
    ) -> None:
        self.client, self.store, self.project, self.name = client, store, project, name
        self._items = items
        self._ref: QueueRef | None = None
        self._project_id: str | None = None

    @property
    def key(self) -> str:
        """The store's name of this queue (``calibration_items.queue``)."""
        return f"langsmith:{self.name}"

    def _fail(self, what: str, exc: BaseException) -> SinkError:
        return SinkError(f"LangSmith {what} failed: {describe(exc, secret=getattr(self.client, 'api_key', None))}")

    def _configs(self) -> dict[str, str]:
        """Each label's feedback config, reused when the same, else created; a differing one is a ConfigError."""
        known = FeedbackConfigs(self.client, strict=True)
        try:
            problems = known.ensure({spec.name: feedback_config(spec) for spec in LABELS})
        except Exception as exc:
            raise self._fail("feedback config setup", exc) from exc
        if problems:
            first, *more = problems.values()
            also = f" (also: {', '.join(repr(k) for k in list(problems)[1:])})" if more else ""
            raise ConfigError(f"calibrate setup stopped: {first}{also}")
        return {spec.name: known.ids.get(spec.name) or spec.name for spec in LABELS}

    def setup(self) -> QueueRef:
        """Make sure of the feedback configs (the same one reused, a differing one refused) and find or create the
        queue."""
        if self._ref is not None:
            return self._ref
        configs = self._configs()
        try:
            found = next(iter(self.client.list_annotation_queues(name=self.name, limit=1)), None)
            if found is None:
                found = self.client.create_annotation_queue(
                    name=self.name,
                    description="tracescore judge calibration: one claim per run, labelled blind",
                    rubric_instructions=_INSTRUCTIONS,
                    rubric_items=[
                        {"feedback_key": spec.name, "description": spec.description, "is_required": spec.kind != "text"}
                        for spec in LABELS
                    ],
                )
        except Exception as exc:
            raise self._fail("queue setup", exc) from exc
        self._ref = QueueRef("langsmith", str(found.id), self.name, configs)
        return self._ref

    def _session(self) -> str:
        if self._project_id is None:
            try:
                self._project_id = str(self.client.read_project(project_name=self.project).id)
            except Exception as exc:
                raise self._fail(f"project lookup of {self.project!r}", exc) from exc
        return self._project_id

    def push(self, items: Sequence[Item]) -> int:
        """Queue each item's root run once, with the review note; an item the store remembers is skipped."""
        ref = self.setup()
        session = self._session()
        api = self._items if self._items is not None else items_client(self.client)
        self._items = api
        todo = list(unpushed(self.store, self.key, items))
        starts = start_times(self.store, [item.trace_id for item in todo])
        quiet = SdkLogFilter()  # a failed review note is reported below, not as the SDK's traceback
        logging.getLogger("langsmith.client").addFilter(quiet)
        try:
            return self._push(api, ref, session, todo, starts)
        finally:
            logging.getLogger("langsmith.client").removeFilter(quiet)

    def _push(self, api: Langsmith, ref: QueueRef, session: str, todo: list[Item], starts: dict[str, str]) -> int:
        count = 0
        for item in todo:
            start = starts.get(item.trace_id)
            if start is None:
                raise SinkError(
                    f"cannot queue run {item.trace_id!r}: the store holds no start time of it, and LangSmith needs"
                    f" one for a queue item; score the trace again with --source langsmith, then sample"
                )
            row = self._add(api, ref.queue_id, item.trace_id, session, start)
            mark_pushed(self.store, item.item_id, str(row.id or item.trace_id))
            try:
                self.client.create_feedback(
                    item.trace_id,
                    REVIEW_KEY,
                    comment=review_text(item, COMMENT_LIMIT),
                    feedback_id=uuid.uuid5(_ITEM_NAMESPACE, item.item_id),
                    feedback_source_type="api",
                    source_info={"tool": "tracescore", "tracescore_item": item.item_id},
                    session_id=session,
                    extend_trace_retention=False,
                    stop_after_attempt=1,  # the HTTP adapter retries 429/5xx; the SDK's loop would retry a 404 too
                )
            except Exception as exc:
                if type(exc).__name__ != "LangSmithConflictError":  # already there from an earlier, cut-short push
                    raise self._fail(f"review note on run {item.trace_id!r}", exc) from exc
            count += 1
        return count

    def _add(self, api: Langsmith, queue_id: str, run_id: str, session: str, start: str) -> Any:
        """Add one run, retrying; a retry first looks for the item an earlier, cut-short attempt may have stored
        (the server makes another item on every POST, so a lost answer must not become a copy)."""
        last: Exception | None = None
        for attempt in range(_ATTEMPTS):
            try:
                if attempt:
                    found = self._find(api, queue_id, run_id)
                    if found is not None:
                        return found
                    time.sleep(_BACKOFF * 2 ** (attempt - 1))
                created = api.annotation_queues.items.create(
                    queue_id,
                    items=[{"item_type": "RUN", "run_id": run_id, "project_id": session, "start_time": start}],
                )
                if created.items:
                    return created.items[0]
                raise ValueError("the queue answered with no item")
            except Exception as exc:
                if permanent(exc):  # sent once: no retry changes a refusal
                    raise self._fail(f"queueing run {run_id!r}", exc) from exc
                last = exc
        raise self._fail(f"queueing run {run_id!r} ({_ATTEMPTS} attempts)", last or RuntimeError("no attempt"))

    @staticmethod
    def _find(api: Langsmith, queue_id: str, run_id: str) -> Any:
        for status in ("needs_my_review", "needs_others_review", "archived"):
            for row in api.annotation_queues.items.list(queue_id, status=status, item_type="RUN", page_size=100):
                if row.run_id == run_id:
                    return row
        return None

    def pull(self, since: datetime | None = None) -> list[Label]:
        """Reviewers' feedback on queued runs (not ``api``/``model`` sources, with a user id), never ours."""
        self.setup()
        by_run = {trace: item for item, (trace, _) in pushed(self.store, self.key).items()}
        if not by_run:
            return []
        names = [spec.name for spec in LABELS]
        out: list[Label] = []
        runs = sorted(by_run)
        try:
            for start in range(0, len(runs), 100):
                for fb in self.client.list_feedback(run_ids=runs[start : start + 100], feedback_key=names):
                    label = self._label(fb, by_run, since)
                    if label is not None:
                        out.append(label)
        except Exception as exc:
            raise self._fail("feedback listing", exc) from exc
        return out

    @staticmethod
    def _label(fb: Any, by_run: dict[str, str], since: datetime | None) -> Label | None:
        source = fb.feedback_source
        kind = str(getattr(source, "type", "") or "").lower()
        user = getattr(source, "user_id", None) or getattr(source, "user_name", None)
        meta = (getattr(source, "metadata", None) or {}) | (fb.extra or {})
        if kind in _NOT_HUMAN or not kind or not user or meta.get("tool") == "tracescore" or "scorer_version" in meta:
            return None
        item = by_run.get(str(fb.run_id))
        if item is None:
            return None
        stamp = fb.modified_at or fb.created_at or datetime.now(UTC)
        stamp = stamp if stamp.tzinfo else stamp.replace(tzinfo=UTC)
        if since is not None and stamp < since:
            return None
        spec = label_spec(fb.key)
        if spec.kind == "boolean":
            raw = "" if fb.score is None else ("true" if float(fb.score) >= 0.5 else "false")
        else:
            raw = str(fb.value if fb.value is not None else "")
        try:
            value = spec.normalise(raw)
        except ValueError:
            return None
        if not value:
            return None
        return Label(item, fb.key, value, str(user), stamp, "langsmith", str(fb.id))
