"""``[langsmith]`` in tracescore.toml: validated, and the README documents the real defaults."""

from __future__ import annotations

import re
import tomllib

import pytest

from tests.docs_pages import page
from tracescore.config import parse_sections
from tracescore.errors import ConfigError
from tracescore.platforms.langsmith.settings import LangSmithSettings


def test_readme_documents_the_langsmith_defaults() -> None:
    readme = page("getting-started/langsmith.md")
    blocks = [b for b in re.findall(r"```toml\n(.*?)```", readme, re.S) if "[langsmith]" in b]
    assert len(blocks) == 1
    assert parse_sections(tomllib.loads(blocks[0]))["langsmith"] == LangSmithSettings()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"page_size": 500}, "bad value for 'langsmith.page_size'"),
        ({"feedback_source_type": "human"}, "bad value for 'langsmith.feedback_source_type'"),
        ({"api_key": "x"}, "unknown key 'langsmith.api_key'"),  # credentials only from the environment
    ],
)
def test_bad_langsmith_settings_name_the_key(body: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        parse_sections({"langsmith": body}, source="tracescore.toml")
