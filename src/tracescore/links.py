"""Do cited links still resolve? ``LinkChecker`` for ``--check-links`` (off by default: it makes network requests).

Each URL is checked once per run: ``HEAD``, falling back to ``GET`` (headers only) when ``HEAD`` answers an error
status other than 429 (a rate-limited host is not asked twice); redirects are followed. 404 / 410 / DNS failure /
connection refused / timeout = **dead**; 2xx and 3xx after redirects = **alive**; 401 / 403 / 429 and every other
status (5xx, 405 on both methods, too many redirects) = **unknown**, never dead. Requests run with bounded
concurrency and per-host politeness (successive requests to one host at least ``per_host_interval`` seconds apart,
on an injected clock). Definitive results (alive, dead) go to an optional dict-like cache (url → JSON) that the
local store can back; unknown ones are re-checked next run.
``httpx`` is imported when a checker is built (``pip install 'tracescore[links]'``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import urlsplit

from tracescore.urls import normalize_url

if TYPE_CHECKING:
    import httpx

LinkState = Literal["alive", "dead", "unknown"]
DEAD_STATUSES = frozenset({404, 410})
UNKNOWN_STATUSES = frozenset({401, 403, 429})  # the page may be there; we are not allowed to see it (yet)
MAX_CONCURRENCY = 8
PER_HOST_INTERVAL = 1.0
TIMEOUT_SECONDS = 10.0
USER_AGENT = "tracescore-linkcheck/1 (+https://tracescore.dev/check-links)"


@dataclass(frozen=True)
class LinkStatus:
    """The outcome of checking one URL: alive / dead / unknown, the last status seen and why."""

    url: str
    state: LinkState
    detail: str
    status: int | None = None
    method: str | None = None
    final_url: str | None = None

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> LinkStatus:
        return cls(**json.loads(text))


class LinkCheck(Protocol):
    """Anything that checks a batch of URLs; results keyed by normalised URL (``LinkChecker.check``)."""

    def __call__(self, urls: Sequence[str]) -> Mapping[str, LinkStatus]: ...


def classify_status(status: int) -> LinkState:
    """The state a final HTTP status (after redirects) means: 2xx/3xx alive, 404/410 dead, anything else unknown."""
    if 200 <= status < 400:
        return "alive"
    return "dead" if status in DEAD_STATUSES else "unknown"


class HostGate:
    """Per-host politeness: each request to a host takes the next free slot, ``interval`` seconds after the last."""

    def __init__(self, interval: float, *, clock: Callable[[], float], sleep: Callable[[float], None]) -> None:
        self.interval = interval
        self.clock, self.sleep = clock, sleep
        self._next: dict[str, float] = {}
        self._lock = threading.Lock()

    def reserve(self, host: str) -> float:
        """Book the host's next slot; returns how long to wait for it (0 when the host is free)."""
        with self._lock:
            now = self.clock()
            slot = max(now, self._next.get(host, now))
            self._next[host] = slot + self.interval
            return slot - now

    def wait(self, host: str) -> None:
        delay = self.reserve(host)
        if delay > 0:
            self.sleep(delay)


def _error_state(exc: BaseException) -> tuple[LinkState, str]:
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return "dead", f"timeout ({type(exc).__name__})"
    if isinstance(exc, httpx.ConnectError):
        text = str(exc)
        dns = "Name or service not known" in text or "nodename nor servname" in text or "getaddrinfo" in text
        return "dead", ("DNS failure: " if dns else "connection failed: ") + text[:120]
    if isinstance(exc, httpx.TooManyRedirects):
        return "unknown", "too many redirects"
    return "unknown", f"{type(exc).__name__}: {str(exc)[:120]}"


class LinkChecker:
    """Checks URLs over HTTP: once per URL per run, ``max_concurrency`` at a time, polite per host, cached."""

    def __init__(
        self,
        *,
        client: httpx.Client | None = None,
        cache: MutableMapping[str, str] | None = None,
        max_concurrency: int = MAX_CONCURRENCY,
        per_host_interval: float = PER_HOST_INTERVAL,
        timeout: float = TIMEOUT_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency!r}")
        import httpx

        self._owns_client = client is None
        self.client = client or httpx.Client(
            follow_redirects=True, timeout=timeout, headers={"User-Agent": USER_AGENT}
        )
        self.cache = cache
        self.max_concurrency = max_concurrency
        self.gate = HostGate(per_host_interval, clock=clock, sleep=sleep)
        self.requests = 0  # HTTP requests sent this run (HEAD and GET)
        self._done: dict[str, LinkStatus] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        if self._owns_client:
            self.client.close()

    def __enter__(self) -> LinkChecker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __call__(self, urls: Sequence[str]) -> Mapping[str, LinkStatus]:
        return self.check(urls)

    def check(self, urls: Iterable[str]) -> dict[str, LinkStatus]:
        """The status of every URL, keyed by normalised URL; each is fetched at most once per checker (run)."""
        wanted: dict[str, str] = {}
        for url in urls:
            wanted.setdefault(normalize_url(url), url)
        out: dict[str, LinkStatus] = {}
        todo: list[tuple[str, str]] = []
        with self._lock:
            for key, url in wanted.items():
                known = self._done.get(key) or self._cached(key)
                if known is not None:
                    out[key] = self._done.setdefault(key, known)
                else:
                    todo.append((key, url))
        if todo:
            with ThreadPoolExecutor(max_workers=min(self.max_concurrency, len(todo))) as pool:
                for (key, _), status in zip(todo, pool.map(lambda kv: self._check_one(kv[1]), todo), strict=True):
                    out[key] = status
        with self._lock:
            for key, _ in todo:
                self._done[key] = out[key]
                if self.cache is not None and out[key].state != "unknown":
                    self.cache[key] = out[key].to_json()
        return out

    def _cached(self, key: str) -> LinkStatus | None:
        if self.cache is None:
            return None
        text = self.cache.get(key)
        return LinkStatus.from_json(text) if text else None

    def _request(self, method: str, url: str) -> Any:
        self.gate.wait(urlsplit(url).hostname or "")
        with self._lock:
            self.requests += 1
        with self.client.stream(method, url) as response:  # headers only: the body is never read
            return response

    def _check_one(self, url: str) -> LinkStatus:
        scheme = urlsplit(url).scheme.lower()
        if scheme not in ("http", "https"):
            return LinkStatus(url, "unknown", f"not an http(s) URL (scheme {scheme!r})")
        import httpx

        method = "HEAD"
        try:
            response = self._request("HEAD", url)
            if response.status_code >= 400 and response.status_code != 429:  # HEAD is often refused: ask with GET
                method = "GET"
                response = self._request("GET", url)
        except httpx.HTTPError as exc:
            state, detail = _error_state(exc)
            return LinkStatus(url, state, detail, method=method)
        status = response.status_code
        hops = len(response.history)
        detail = f"HTTP {status}" + (f" after {hops} redirect(s)" if hops else "")
        final = str(response.url)
        return LinkStatus(url, classify_status(status), detail, status, method, final if final != url else None)
