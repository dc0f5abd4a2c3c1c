"""Credentials out of everything tracescore says. A server's error body or an SDK's message may echo a credential (a
401 reply repeating the request's headers, an API key named in a message): ``redact`` takes out every credential
tracescore reads from the environment, in the forms a request carries it (Langfuse's Basic ``public:secret``), any
``Bearer``/``Basic`` credential and any password in a URL, before a text is printed, logged or stored."""

from __future__ import annotations

import base64
import logging
import os
import re
from collections.abc import Mapping

SECRET_VARS = (
    "LANGFUSE_SECRET_KEY",
    "LANGFUSE_PUBLIC_KEY",
    "LANGSMITH_API_KEY",
    "LANGCHAIN_API_KEY",
    "ANTHROPIC_API_KEY",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
)
HIDDEN = "***"
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s/@:'\"]*):[^\s/@'\"]*@")  # scheme://user:password@host
_AUTH = re.compile(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=-]{8,}")  # an Authorization header's credential


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` without the credentials of ``env`` (the process environment), ``Bearer``/``Basic`` credentials and
    URL passwords, each replaced by ``***``."""
    env = os.environ if env is None else env
    secrets = [value for name in SECRET_VARS if len(value := env.get(name, "").strip()) >= 6]
    public, secret = env.get("LANGFUSE_PUBLIC_KEY", "").strip(), env.get("LANGFUSE_SECRET_KEY", "").strip()
    if public and secret:  # how the Langfuse SDK sends them: an echoed Authorization header holds this
        secrets.append(base64.b64encode(f"{public}:{secret}".encode()).decode())
    for value in sorted(secrets, key=len, reverse=True):
        text = text.replace(value, HIDDEN)
    if "://" in text:
        text = _USERINFO.sub(rf"\1:{HIDDEN}@", text)
    return _AUTH.sub(rf"\1\2{HIDDEN}", text)


class RedactLogs(logging.Filter):
    """A log filter that redacts each record's message and traceback (an SDK logging a failed request with its
    response body): attach it to the SDK's logger."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = redact(record.getMessage()), None
        if record.exc_info:
            text = logging.Formatter().formatException(record.exc_info)
            record.exc_info, record.exc_text = None, redact(text)
        return True
