"""Trace links: each record read from LangSmith carries its root run's URL in the UI, built as the SDK's
``Client.get_run_url`` builds it: ``<UI host>/o/<tenant id>/projects/p/<project id>/r/<run id>?poll=true``, the UI
host derived from the API URL (``LANGSMITH_ENDPOINT``) by the SDK's own rule, the tenant and project ids from the one
project lookup the source makes anyway."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote


def run_url(api_url: str, tenant_id: str | None, project_id: str, run_id: object) -> str | None:
    """The run's UI URL, or None without a tenant id (an old deployment's project may not name one)."""
    if not tenant_id or not isinstance(run_id, str) or not run_id:
        return None
    return f"{_host(api_url)}/o/{quote(tenant_id, safe='')}/projects/p/{quote(project_id, safe='')}/r/" + (
        f"{quote(run_id, safe='')}?poll=true"
    )


def _host(api_url: str) -> Any:
    from langsmith.utils import get_host_url  # the SDK's rule (localhost, /api suffixes, regional hosts)

    return get_host_url(None, api_url)
