"""The Langfuse annotation queue of judge calibration: score configs, the queue, blind items, human labels back.

``setup`` finds or creates one score config per label (the judged scores' names and categories, so Langfuse's own
score views compare them) and the queue (``scoreConfigIds`` required). ``push`` adds each item's trace once (Langfuse
inserts a new queue item on every POST, so the store remembers what is queued) and a comment showing the claim, its
document, URL and quote, never the judge's verdict; no score is prefilled. ``pull`` reads ``source=ANNOTATION``
scores of the queue (v3 scores API) and keeps only those with a human author on a queued trace, never a score this
package wrote (its ids or its metadata).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from tracescore.calibrate.labels import LABELS, Label, LabelSpec, label_spec
from tracescore.calibrate.queued import mark_pushed, pushed, review_text, unpushed
from tracescore.calibrate.sampling import Item
from tracescore.errors import SinkError
from tracescore.platforms.base import QueueRef
from tracescore.platforms.langfuse.client import classify_error, describe_error, request_options, retry_policy
from tracescore.retry import call_with_retries
from tracescore.store.db import Store

if TYPE_CHECKING:
    from langfuse.api import LangfuseAPI

QUEUE_NAME = "tracescore-calibration"
COMMENT_LIMIT = 5000  # Langfuse's comment length limit
_OUR_KEYS = ("scorer_version", "tracescore_item")
_T = TypeVar("_T")


def is_ours(score_id: str, metadata: dict[str, Any] | None, our_ids: set[str]) -> bool:
    """Whether a score was written by this package: one of our ids, or our metadata keys on it."""
    meta = metadata or {}
    return score_id in our_ids or any(k in meta for k in _OUR_KEYS) or meta.get("tool") == "tracescore"


def _config_body(spec: LabelSpec) -> dict[str, Any]:
    if spec.kind == "categorical":
        return {
            "data_type": "CATEGORICAL",
            "categories": [{"label": c, "value": float(i)} for i, c in enumerate(spec.categories)],
        }
    return {"data_type": "BOOLEAN" if spec.kind == "boolean" else "TEXT"}


class LangfuseLabelQueue:
    """One Langfuse project's calibration queue, driven through the bare ``LangfuseAPI`` client."""

    def __init__(
        self,
        client: LangfuseAPI,
        store: Store,
        *,
        name: str = QUEUE_NAME,
        timeout: float = 30.0,
        max_attempts: int = 5,
        backoff: float = 0.5,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self.client, self.store, self.name = client, store, name
        self._options = request_options(timeout)
        self._policy = retry_policy(max_attempts, backoff)
        self._sleep = sleep
        self._ref: QueueRef | None = None
        self._project: str | None = None
        self.our_ids: set[str] = set()  # ids of scores this package wrote, when the caller knows them

    def _call(self, what: str, fn: Callable[[], _T]) -> _T:
        try:
            kwargs: dict[str, Any] = {"sleep": self._sleep} if self._sleep is not None else {}
            return call_with_retries(fn, classify=classify_error, policy=self._policy, **kwargs)
        except Exception as exc:
            raise SinkError(f"Langfuse {what} failed: {describe_error(exc)}") from exc

    # -- setup --------------------------------------------------------------------------------------------------
    def _pages(self, what: str, fetch: Callable[[int], Any]) -> Iterator[Any]:
        page = 1
        while True:
            listing = self._call(what, partial(fetch, page))
            yield from listing.data
            if page >= (listing.meta.total_pages or 1):
                return
            page += 1

    def _config(self, spec: LabelSpec) -> str:
        body = _config_body(spec)
        wanted = [c["label"] for c in body.get("categories", [])]
        for config in self._pages(
            "score-config listing",
            lambda p: self.client.score_configs.get(page=p, limit=100, request_options=self._options),
        ):
            labels = [c.label for c in (config.categories or [])]
            if config.name == spec.name and not config.is_archived and str(config.data_type) == body["data_type"]:
                if body["data_type"] != "CATEGORICAL" or labels == wanted:
                    return str(config.id)
        created = self._call(
            f"score config {spec.name!r}",
            lambda: self.client.score_configs.create(
                name=spec.name, description=spec.description, request_options=self._options, **body
            ),
        )
        return str(created.id)

    def setup(self) -> QueueRef:
        """Find or create one score config per label and the queue; a second call creates nothing."""
        if self._ref is not None:
            return self._ref
        configs = {spec.name: self._config(spec) for spec in LABELS}
        found = next(
            (
                q
                for q in self._pages(
                    "annotation-queue listing",
                    lambda p: self.client.annotation_queues.list_queues(
                        page=p, limit=100, request_options=self._options
                    ),
                )
                if q.name == self.name
            ),
            None,
        )
        if found is None:
            found = self._call(
                "annotation-queue creation",
                lambda: self.client.annotation_queues.create_queue(
                    name=self.name,
                    score_config_ids=list(configs.values()),
                    description="tracescore judge calibration: one claim per trace, labelled blind (see the comment)",
                    request_options=self._options,
                ),
            )
        self._ref = QueueRef("langfuse", str(found.id), self.name, configs)
        return self._ref

    @property
    def key(self) -> str:
        """The store's name of this queue (``calibration_items.queue``)."""
        return f"langfuse:{self.name}"

    # -- push ---------------------------------------------------------------------------------------------------
    def _project_id(self) -> str:
        if self._project is None:
            projects = self._call("project lookup", lambda: self.client.projects.get(request_options=self._options))
            if not projects.data:
                raise SinkError("Langfuse project lookup returned no project for these API keys")
            self._project = str(projects.data[0].id)
        return self._project

    def push(self, items: Sequence[Item]) -> int:
        """Queue each item's trace with a comment showing its claim; an item the store remembers is skipped."""
        ref = self.setup()
        count = 0
        for item in unpushed(self.store, self.key, items):
            queued = self._once(
                f"queue item for trace {item.trace_id!r}",
                partial(
                    self.client.annotation_queues.create_queue_item,
                    ref.queue_id,
                    object_id=item.trace_id,
                    object_type="TRACE",
                    request_options=self._options,
                ),
                partial(self._find_item, ref.queue_id, item.trace_id),
            )
            mark_pushed(self.store, item.item_id, str(queued.id))  # remembered before anything else can fail
            self._once(
                f"comment on trace {item.trace_id!r}",
                partial(
                    self.client.comments.create,
                    project_id=self._project_id(),
                    object_type="TRACE",
                    object_id=item.trace_id,
                    content=review_text(item, COMMENT_LIMIT),
                    request_options=self._options,
                ),
                partial(self._find_comment, item),
            )
            count += 1
        return count

    def _once(self, what: str, create: Callable[[], _T], find: Callable[[], Any]) -> Any:
        """Create, retrying; a retry first looks for what an earlier attempt may have stored (Langfuse inserts
        another queue item or comment on every POST, so a lost answer must not become a copy)."""
        attempts = 0

        def attempt() -> Any:
            nonlocal attempts
            attempts += 1
            if attempts > 1:
                found = find()
                if found is not None:
                    return found
            return create()

        return self._call(what, attempt)

    def _find_item(self, queue_id: str, trace_id: str) -> Any:
        for row in self._pages(
            "queue item listing",
            lambda p: self.client.annotation_queues.list_queue_items(
                queue_id, page=p, limit=100, request_options=self._options
            ),
        ):
            if row.object_id == trace_id and str(row.object_type) == "TRACE":
                return row
        return None

    def _find_comment(self, item: Item) -> Any:
        listing = self.client.comments.get(
            object_type="TRACE", object_id=item.trace_id, limit=100, request_options=self._options
        )
        marker = f"calibration item {item.item_id}"
        return next((c for c in listing.data if marker in c.content), None)

    # -- pull ---------------------------------------------------------------------------------------------------
    def pull(self, since: datetime | None = None) -> list[Label]:
        """Human labels on queued traces: ``source=ANNOTATION`` scores of this queue with an author, none of ours."""
        ref = self.setup()
        by_trace = {trace: item for item, (trace, _) in pushed(self.store, self.key).items()}
        our_ids = set(self.our_ids)
        names = {spec.name for spec in LABELS}
        out: list[Label] = []
        cursor: str | None = None
        while True:
            page = self._call(
                "annotation score listing",
                partial(
                    self.client.scores.get_many,
                    limit=100,
                    cursor=cursor,
                    fields="details,subject,annotation",
                    source="ANNOTATION",
                    queue_id=ref.queue_id,
                    from_timestamp=since,
                    request_options=self._options,
                ),
            )
            for score in page.data:
                label = self._label(score, by_trace, our_ids, names)
                if label is not None:
                    out.append(label)
            cursor = page.meta.cursor
            if not cursor:
                return out

    @staticmethod
    def _label(score: Any, by_trace: dict[str, str], our_ids: set[str], names: set[str]) -> Label | None:
        if str(score.source) != "ANNOTATION" or not score.author_user_id or score.name not in names:
            return None
        if is_ours(score.id, score.metadata, our_ids):
            return None
        subject = score.subject
        trace = getattr(subject, "trace_id", None) or getattr(subject, "id", None) if subject is not None else None
        item = by_trace.get(str(trace))
        if item is None:
            return None
        raw = score.value
        text = ("true" if raw else "false") if isinstance(raw, bool) else str(raw)
        try:
            value = label_spec(score.name).normalise(text)
        except ValueError:
            return None
        stamp = score.timestamp if score.timestamp.tzinfo else score.timestamp.replace(tzinfo=UTC)
        return Label(item, score.name, value, str(score.author_user_id), stamp, "langfuse", str(score.id))
