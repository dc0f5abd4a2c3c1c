"""The judge of a distributed run: a pool of async Ray actors, each with a bounded number of calls in flight, every
HTTP request (retries included) admitted by the one cluster-wide limiter of the judge's API, and answered from the
Parquet judge cache first. ``RemoteJudge`` is the ``Judge`` the scorers see inside a shard task.

Each worker builds its judges through the judge registry (``make_judge``), so any registered provider judges on
Ray: the driver's ``[judge]`` settings and the provider's credential variables travel in the ``JudgeSpec``; a
factory that takes ``http_client`` (every built-in) gets the limiter's client, any other only the in-flight bound.

A request goes to the worker its content key hashes to, so the same request from two shards meets the same cache.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

from tracescore.engine.distributed.cache import ParquetJudgeCache
from tracescore.engine.judging import JudgePool
from tracescore.errors import JudgeError
from tracescore.judge.cache import CachingJudge
from tracescore.judge.calling import TIMEOUT_SECONDS, retry_after_header
from tracescore.judge.make import make_judge
from tracescore.judge.protocol import Judge, JudgeReply, JudgeRequest, JudgeUsage
from tracescore.judge.providers import ProviderSettings
from tracescore.judge.registry import provider

DEFAULT_PAUSE = 1.0  # seconds every worker waits after a 429 that names no Retry-After


@dataclass(frozen=True)
class JudgeSpec:
    """What a judge worker needs to build its judge: the ``[judge]`` settings, the provider's model id, the judge's
    identity (``model``: the cache key) and the provider's environment variables as the driver has them
    (credentials among them: passed to the workers, never printed)."""

    settings: ProviderSettings
    model_id: str
    model: str
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    in_flight: int = 8

    @classmethod
    def of(cls, settings: ProviderSettings, model_id: str, *, in_flight: int = 8) -> JudgeSpec:
        """The spec of ``settings``' provider on this machine: the variables it declares (``env``, its key's)."""
        chosen = provider(settings.provider)
        names = {*chosen.env, *([chosen.key_env(settings)] if chosen.key_env is not None else [])}
        env = {n: os.environ[n] for n in sorted(n for n in names if n) if n in os.environ}
        return cls(settings, model_id, settings.identity(model_id), env, in_flight)


@dataclass(frozen=True)
class _Failed:
    message: str


def retry_after(headers: Any) -> float:
    """Seconds a 429 asks to wait, ``DEFAULT_PAUSE`` when it names none."""
    seconds = retry_after_header(headers)
    return DEFAULT_PAUSE if seconds is None else seconds


class JudgeWorker:
    """An async actor: at most ``spec.in_flight`` judge calls at once, each in a thread with its own judge."""

    def __init__(self, spec: JudgeSpec, cache_dir: str, writer: str, limiter: Any) -> None:
        os.environ.update(spec.env)  # this actor's own process: the driver's credentials, as the provider reads them
        self.spec = spec
        self.limiter = limiter
        self.cache = ParquetJudgeCache(cache_dir, writer)
        self.pool = JudgePool(self._judge_for_thread, spec.model)
        self.executor = ThreadPoolExecutor(spec.in_flight, thread_name_prefix="judge")
        self._slots: asyncio.Semaphore | None = None
        self._pending: dict[str, asyncio.Future[JudgeReply | _Failed]] = {}

    def _judge_for_thread(self) -> Judge:
        options: dict[str, Any] = {}
        if provider(self.spec.settings.provider).takes_http_client:
            try:  # the HTTP package the SDKs take (httpx2 from anthropic 2.14 / openai 3 on, httpx before)
                import httpx2 as http
            except ImportError:
                import httpx as http  # type: ignore[no-redef]
            hooks: dict[str, list[Any]] = {"request": [self._admit], "response": [self._watch]}
            options["http_client"] = http.Client(timeout=TIMEOUT_SECONDS, event_hooks=hooks)
        inner = make_judge(self.spec.settings, self.spec.model_id, **options)
        return CachingJudge(inner, self.cache)

    def _admit(self, request: Any) -> None:
        import ray

        ray.get(self.limiter.acquire.remote())

    def _watch(self, response: Any) -> None:
        if response.status_code == 429:
            import ray

            ray.get(self.limiter.pause.remote(retry_after(response.headers)))

    def _call(self, request: JudgeRequest) -> JudgeReply | _Failed:
        try:
            return self.pool.judge(request)
        except JudgeError as exc:
            return _Failed(str(exc))

    async def judge(self, request: JudgeRequest) -> JudgeReply | _Failed:
        """One reply; a request equal to one in flight waits for that call instead of making its own."""
        key = request.key(self.spec.model)
        if key in self._pending:
            first = await asyncio.shield(self._pending[key])
            if isinstance(first, _Failed):
                return first
            return replace(first, cached=True, input_tokens=0, output_tokens=0, cache_read_tokens=0,
                           cache_write_tokens=0)
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.spec.in_flight)
        loop = asyncio.get_running_loop()
        self._pending[key] = loop.create_future()
        try:
            async with self._slots:
                got = await loop.run_in_executor(self.executor, self._call, request)
            self._pending[key].set_result(got)
            return got
        finally:
            future = self._pending.pop(key)
            if not future.done():
                future.set_result(_Failed("judge call cancelled"))

    async def close(self) -> dict[str, Any]:
        """Flush the cache to Parquet, close the HTTP clients; returns this worker's usage."""
        usage = self.pool.usage_dict() | {"cache_loaded": self.cache.loaded}
        usage["cache_written"] = self.cache.close()
        self.pool.close()
        self.executor.shutdown(wait=False)
        return usage


class RemoteJudge:
    """The ``Judge`` of a shard task: each call goes to a judge worker and waits for its reply."""

    def __init__(self, workers: list[Any], model: str) -> None:
        self.workers = workers
        self.model = model
        self.usage = JudgeUsage()
        self._lock = threading.Lock()

    def judge(self, request: JudgeRequest) -> JudgeReply:
        import ray

        key = request.key(self.model)
        worker = self.workers[int(key[:12], 16) % len(self.workers)]
        try:
            got = ray.get(worker.judge.remote(request))
        except Exception as exc:  # noqa: BLE001 - a lost or broken worker: this trace's judged scores are absent
            cause = getattr(exc, "cause", None) or exc
            got = _Failed(f"judge worker failed: {type(cause).__name__}: {str(cause).strip().splitlines()[-1][:200]}")
        with self._lock:
            if isinstance(got, _Failed):
                self.usage.failures += 1
                self.usage.errors.append(got.message)
                raise JudgeError(got.message)
            if got.cached:
                self.usage.cache_hits += 1
            else:
                self.usage.bill(got)
        return got  # type: ignore[no-any-return]
