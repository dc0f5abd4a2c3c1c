"""Which Ray cluster ``--engine ray`` joins, checked before Ray is asked: an empty ``RAY_ADDRESS`` or a cluster that
does not answer is one line naming the address and where it came from, not Ray's traceback a minute later (Ray
waits for an unreachable head for minutes before it gives up)."""

from __future__ import annotations

import os
import socket
from urllib.parse import urlsplit

from tracescore.errors import ConfigError, SourceError

PROBE_TIMEOUT = 5.0  # seconds to open a TCP connection to the head before saying it does not answer


def cluster_address(given: str | None, environ: dict[str, str] | None = None) -> tuple[str | None, str]:
    """The address to join (None: start a local cluster) and where it came from (for messages).

    An empty ``RAY_ADDRESS`` is a config error (Ray reads it too and fails with "Invalid address format"); a
    ``host:port`` or ``ray://host:port`` that refuses a TCP connection is a ``SourceError`` at once."""
    env = os.environ if environ is None else environ
    if given:
        address, origin = given, "the address given"
    elif "RAY_ADDRESS" in env:
        address, origin = env["RAY_ADDRESS"].strip(), "RAY_ADDRESS"
        if not address:
            raise ConfigError(
                "RAY_ADDRESS is set but empty; unset it (unset RAY_ADDRESS) to start a local Ray cluster on this"
                " machine, or set it to the cluster's head, e.g. ray://head:10001 or head:6379"
            )
    else:
        return None, "a local cluster"
    if address not in ("auto", "local"):
        _probe(address, origin)
    return address, origin


def _probe(address: str, origin: str) -> None:
    parts = urlsplit(address if "://" in address else f"ray://{address}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host or port is None:
        raise ConfigError(f"{origin} {address!r} is not a Ray address; expected host:port or ray://host:port")
    try:
        with socket.create_connection((host, port), timeout=PROBE_TIMEOUT):
            pass
    except OSError as exc:
        raise SourceError(
            f"cannot join the Ray cluster at {address} ({origin}): {exc.strerror or exc}; check that the head is up"
            " and the address is right, or unset RAY_ADDRESS to start a local cluster"
        ) from exc


def describe_init_error(address: str | None, origin: str, exc: Exception) -> str:
    """One line for a failed ``ray.init``."""
    where = f"join the Ray cluster at {address} ({origin})" if address else "start a local Ray cluster"
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return f"cannot {where}: {type(exc).__name__}: {first}"
