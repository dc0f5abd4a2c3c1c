"""tracescore.toml loading: defaults, overrides, and errors naming the file, key and what is allowed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs_pages import page
from tracescore.config import load_config
from tracescore.errors import ConfigError


def test_no_file_means_defaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    config = load_config()
    assert config.path is None
    assert "RETRIEVER" in config.mapping.search_types
    assert config.section("langfuse").page_size == 1000


def test_overrides(tmp_path: Path) -> None:
    path = tmp_path / "tracescore.toml"
    path.write_text('[mapping]\nsearch_tools = ["kb_lookup"]\n[langfuse]\nenvironment = ["production"]\n')
    config = load_config(path)
    assert config.mapping.search_tools == ["kb_lookup"]
    assert config.mapping.fetch_tools  # untouched defaults stay
    assert config.section("langfuse").environment == ["production"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("[mapping]\nserch_tools = []\n", "unknown key 'mapping.serch_tools'; allowed keys in [mapping]:"),
        ("[mapping]\nsearch_tools = 3\n", "bad value for 'mapping.search_tools'"),
        ("[langfuse]\npage_size = 5000\n", "bad value for 'langfuse.page_size'"),
        ("[mapp]\n", "unknown section [mapp]; expected one of"),
        ("mapping = 1\n", "mapping must be a table"),
        ("[mapping\n", "not valid TOML"),
    ],
)
def test_errors_name_file_key_and_allowed(tmp_path: Path, text: str, expected: str) -> None:
    path = tmp_path / "tracescore.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(path) in str(info.value)
    assert expected in str(info.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read config file"):
        load_config(tmp_path / "nope.toml")


def test_readme_documents_the_actual_defaults() -> None:
    import re
    import tomllib

    from tracescore.adapters.mapping import MappingConfig
    from tracescore.config import parse_sections
    from tracescore.platforms.langfuse.settings import LangfuseSettings

    readme = page("guides/configuration.md") + page("getting-started/langfuse.md")
    documented: dict[str, object] = {}
    for block in re.findall(r"```toml\n(.*?)```", readme, re.S):
        if "project" not in tomllib.loads(block):  # a plugin's pyproject.toml ("Your own scorers"), not tracescore's
            documented |= parse_sections(tomllib.loads(block))
    assert documented["mapping"] == MappingConfig()
    langfuse = documented["langfuse"].model_dump()  # type: ignore[attr-defined]
    assert {k: (v or None) if isinstance(v, str) else v for k, v in langfuse.items()} == LangfuseSettings().model_dump()
