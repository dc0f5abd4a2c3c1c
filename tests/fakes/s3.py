"""A real S3 API on loopback: moto's server mode in a thread, with the AWS environment pointing at it.

No boto/fsspec mock inside the test process: the code under test talks HTTP to the server like to any S3-compatible
store (credentials, region and ``AWS_ENDPOINT_URL`` from the environment). ``upload`` copies a local folder there.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

__all__ = ["S3", "s3"]


@dataclass
class S3:
    """The running server: its endpoint URL and the environment that points SDKs at it."""

    url: str
    env: dict[str, str]

    def client(self) -> Any:
        import boto3

        return boto3.client(
            "s3",
            endpoint_url=self.url,
            region_name=self.env["AWS_DEFAULT_REGION"],
            aws_access_key_id=self.env["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=self.env["AWS_SECRET_ACCESS_KEY"],
        )

    def upload(self, folder: Path, bucket: str, prefix: str = "") -> str:
        """Create ``bucket`` (if needed), copy every file under ``folder`` to ``prefix``; returns ``s3://bucket/prefix``."""
        client = self.client()
        existing = {b["Name"] for b in client.list_buckets().get("Buckets", [])}
        if bucket not in existing:
            client.create_bucket(Bucket=bucket)
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                key = "/".join(p for p in (prefix.strip("/"), path.relative_to(folder).as_posix()) if p)
                client.put_object(Bucket=bucket, Key=key, Body=path.read_bytes())
        return f"s3://{bucket}/{prefix.strip('/')}".rstrip("/")


@pytest.fixture(scope="module")
def s3() -> Iterator[S3]:
    """A moto S3 server for the module, and the AWS variables set for it (restored afterwards)."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    env = {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": url,
    }
    patch = pytest.MonkeyPatch()
    for name, value in env.items():
        patch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
        patch.delenv(name, raising=False)
    try:
        yield S3(url, env)
    finally:
        patch.undo()
        server.stop()
