"""URL normalisation, so that a cited URL and the URL the agent fetched compare equal when they name one page."""

from __future__ import annotations

import re
from functools import lru_cache
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

URL_CACHE_SIZE = 16_384  # > the URLs of one wide trace (100 search calls × 50 hits + citations), so it never thrashes

TRACKING_PARAMS = frozenset(
    {"gclid", "fbclid", "msclkid", "dclid", "yclid", "mc_cid", "mc_eid", "_ga", "_gl", "igshid", "ref_src", "srsltid"}
)
_DEFAULT_PORTS = {"http": 80, "https": 443}
# \Z, not $: "$" also matches before a final newline, and such a URL must go the full path (stripped)
_ALREADY_CANONICAL = re.compile(r"^https?://[a-z0-9.-]+(?:/[^?#\s%]*[^/?#\s%])?\Z")
_URL = re.compile(r"^[a-z][a-z0-9+.-]*://[^\s]+$", re.IGNORECASE)


def is_url(text: str) -> bool:
    """True for an absolute URL with a scheme (``https://…``)."""
    return bool(_URL.match(text.strip()))


@lru_cache(maxsize=URL_CACHE_SIZE)
def normalize_url(url: str) -> str:
    """Canonical form: lower-case scheme and host, no default port, fragment, tracking parameters or trailing slash.

    The query keeps its other parameters in sorted order; the path keeps its case (paths are case-sensitive).
    """
    if _ALREADY_CANONICAL.match(url):
        return url  # fast path: lower-case host, no port, query, fragment or trailing slash
    text = url.strip().strip("<>")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return text
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:  # an IPv6 address: urlsplit gives it without its brackets
        host = f"[{host}]"
    if port is not None and _DEFAULT_PORTS.get(scheme) != port:
        host = f"{host}:{port}"
    query = [
        (k, v)
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
        if not k.lower().startswith("utm_") and k.lower() not in TRACKING_PARAMS
    ]
    path = parts.path.rstrip("/")
    return urlunsplit((scheme, host, path, urlencode(sorted(query)), ""))
