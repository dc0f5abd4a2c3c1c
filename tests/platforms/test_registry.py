"""A platform is one folder: the registry, the config schema, ``[source] kind`` and the one-shot run pick it up."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

import tracescore.platforms as platforms_package
from tracescore.config import load_config, parse_sections, schema
from tracescore.engine.setup import build_platform
from tracescore.errors import ConfigError
from tracescore.limits import RateLimiter
from tracescore.platforms import registry
from tracescore.platforms.base import EVERYTHING

DEMO = '''
from pydantic import BaseModel, ConfigDict

from tracescore.platforms.base import Platform


class DemoSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")
    greeting: str = "hello"


PLATFORM = Platform(name="demo", factory="tracescore.platforms.demo.platform:build",
                    adapter="tracescore.platforms.jsonl.platform:adapter", sections={"demo": DemoSettings}, file=True)
'''

FACTORY = '''
from tracescore.platforms.base import Parts, PlatformContext
from tracescore.platforms.jsonl.platform import FileSource, adapter


def build(context: PlatformContext) -> Parts:
    assert context.sections["demo"].greeting == "hi"
    path = context.config_dir / context.path if context.config_dir else context.path
    return Parts(FileSource(path), "demo:" + str(path), adapter(), None, describe="demo:x")
'''


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Path]:
    """A ``demo`` platform folder outside the source tree, on the platforms package's path."""
    folder = tmp_path / "demo"
    folder.mkdir()
    (folder / "__init__.py").write_text(DEMO)
    (folder / "platform.py").write_text(FACTORY)
    platforms_package.__path__.append(str(tmp_path))
    registry.platforms.cache_clear()
    yield tmp_path
    platforms_package.__path__.remove(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("tracescore.platforms.demo")]:
        del sys.modules[name]
    registry.platforms.cache_clear()


def test_the_built_ins_register_like_any_platform() -> None:
    assert registry.names()[:1] == ["jsonl"] and {"langfuse", "langsmith"} <= set(registry.names())
    assert {"langfuse", "langsmith", "source", "job", "scoring", "judge", "mapping", "gate"} <= set(schema())


def test_a_new_folder_is_a_source_kind_with_its_section_and_nothing_else_edited(demo: Path) -> None:
    assert "demo" in registry.names() and "demo" in schema()
    config_file = demo / "tracescore.toml"
    config_file.write_text('[source]\nkind = "demo"\npath = "t.jsonl"\n[demo]\ngreeting = "hi"\n')
    (demo / "t.jsonl").write_text((Path(__file__).resolve().parents[2] / "cookbook/data/traces.jsonl").read_text())
    config = load_config(config_file)
    with ExitStack() as resources:
        parts = build_platform(config, RateLimiter(None), resources)
        assert parts.key.startswith("demo:") and sum(1 for _ in parts.source.records(EVERYTHING)) == 38
    with pytest.raises(ConfigError, match=r"unknown key 'demo.greting'"):
        parse_sections({"demo": {"greting": "hi"}})


def test_an_unknown_kind_names_the_registered_ones() -> None:
    expected = r"expected one of 'jsonl', 'langfuse', 'langfuse-export', 'langsmith', 'langsmith-export', 'otel'"
    with pytest.raises(ConfigError, match=r"source.kind.*" + expected):
        parse_sections({"source": {"kind": "nope"}})
