"""The one registry of judges: tracescore's own providers and a plugin's, each an entry point of group
``tracescore.judges`` (tracescore registers ``anthropic``, ``bedrock``, ``vertex``, ``openai`` and ``azure-openai``
in its own ``pyproject.toml``, as a third-party package registers its judge: one path, as for scorers).

A provider is a factory declared with ``@judge_provider``: ``make(settings, model, **options) -> Judge`` builds the
judge of ``[judge] provider = "<entry point>"`` (``settings``: ``ProviderSettings``, the ``[judge]`` keys;
``model``: the provider's own model id; ``options``: what a run hands in, e.g. ``http_client`` on ``--engine ray``
when the factory takes it). Its declaration says what it needs (credentials, environment variables, the package to
install, the ``[judge]`` keys it reads), its default model and the judge's identity (the cache key, the scores'
``judge_model``, the price; default ``<entry point>:<model>``). ``tracescore judges`` is its view.

``provider(name)`` reads the entry points once per process; a name that is not installed, or an entry point that
cannot be imported or is no ``@judge_provider``, is a ``ConfigError`` (exit 2) naming what is installed.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tracescore.entry_points import Origin, load_group
from tracescore.errors import ConfigError

GROUP = "tracescore.judges"
Judge = Any
"""A ``tracescore.judge.protocol.Judge`` (not imported here: the protocol prices replies, and pricing reads the
identities this registry declares)."""


@dataclass(frozen=True)
class ProviderSettings:
    """The ``[judge]`` keys a provider reads (None: from the provider's usual environment): ``provider`` (its
    entry-point name), ``region`` and ``project`` (bedrock, vertex); ``base_url``, ``api_key_env`` and ``structured``
    (openai; False: the schema goes in the prompt, no ``response_format``); ``endpoint``, ``deployment`` and
    ``api_version`` (azure-openai; ``structured`` too); ``options``: ``[judge.options]``, a plugin's own keys."""

    provider: str = "anthropic"
    region: str | None = None
    project: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    structured: bool = True
    endpoint: str | None = None
    deployment: str | None = None
    api_version: str | None = None
    options: tuple[tuple[str, Any], ...] = ()

    def resolved_region(self) -> str | None:
        """The region the client will use: ``[judge] region``, else the provider's environment variable."""
        if self.region:
            return self.region
        if self.provider == "bedrock":
            return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or None
        if self.provider == "vertex":
            return os.environ.get("CLOUD_ML_REGION") or None
        return None

    def identity(self, model: str) -> str:
        """The judge's identity for the provider's model id ``model``, as its provider declares it (the cache key,
        the scores' ``judge_model``, the price): ``openai:gpt-5.4``, ``azure-openai:<deployment>``, ..."""
        return provider(self.provider).identity_of(self, model)


@dataclass(frozen=True)
class JudgeProvider:
    """A declared judge provider (``@judge_provider``): the factory, unchanged, and what it needs.

    ``default_model``: the model when none is configured (a callable reads it from the settings, e.g. Azure's
    deployment); ``needs``: one line on credentials; ``env``: the environment variables it reads; ``key_env``: the
    one holding its key (``settings`` → the variable's name, or None when the provider resolves credentials itself
    or needs none): without it set the judged scores are absent with ``no_judge``, as without an Anthropic key;
    ``sdk``: the module that must import, ``install``: how to get it; ``keys``: the ``[judge]`` keys it reads;
    ``identity``: the judge's identity (None: ``<entry point>:<model>``); ``batch``: whether ``--judge-batch``
    is offered."""

    make: Callable[..., Judge]
    default_model: str | Callable[[ProviderSettings], str | None] | None = None
    needs: str = ""
    env: tuple[str, ...] = ()
    key_env: Callable[[ProviderSettings], str | None] | None = None
    sdk: str | None = None
    install: str | None = None
    keys: tuple[str, ...] = ("model",)
    identity: Callable[[ProviderSettings, str], str] | None = None
    description: str = ""

    def __call__(self, settings: ProviderSettings, model: str, **options: Any) -> Judge:
        return self.make(settings, model, **options)

    def model_for(self, settings: ProviderSettings) -> str | None:
        """The model when ``[judge] model`` is not set."""
        return self.default_model(settings) if callable(self.default_model) else self.default_model

    def identity_of(self, settings: ProviderSettings, model: str) -> str:
        return self.identity(settings, model) if self.identity is not None else f"{settings.provider}:{model}"

    @property
    def takes_http_client(self) -> bool:
        """Whether the factory takes ``http_client`` (an ``httpx2.Client``: the Ray engine's rate-limited one)."""
        params = inspect.signature(self.make).parameters
        return "http_client" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def judge_provider(
    *,
    default_model: str | Callable[[ProviderSettings], str | None] | None = None,
    needs: str = "",
    env: tuple[str, ...] = (),
    key_env: Callable[[ProviderSettings], str | None] | None = None,
    sdk: str | None = None,
    install: str | None = None,
    keys: tuple[str, ...] = ("model",),
    identity: Callable[[ProviderSettings, str], str] | None = None,
) -> Callable[[Callable[..., Judge]], JudgeProvider]:
    """Declare a judge factory ``make(settings, model, **options) -> Judge``; registered only through its entry
    point (group ``tracescore.judges``). Its docstring's first line is what ``tracescore judges`` says of it."""

    def declare(make: Callable[..., Judge]) -> JudgeProvider:
        doc = (make.__doc__ or "").strip().split("\n\n")[0]
        return JudgeProvider(make, default_model, needs, env, key_env, sdk, install, keys, identity,
                             " ".join(doc.split()))  # fmt: skip

    return declare


@dataclass(frozen=True)
class Installed(Origin):
    """One entry point of ``tracescore.judges``: its name, where it points, its distribution and its provider."""

    provider: JudgeProvider


_LOADED: dict[str, Installed] | None = None


def installed(*, refresh: bool = False) -> dict[str, Installed]:
    """Every installed judge provider by entry-point name, tracescore's first, then each plugin's by name; loaded
    once per process (``refresh``: again)."""
    global _LOADED
    if _LOADED is None or refresh:
        what = "a @tracescore.judge.registry.judge_provider factory"
        found = load_group(GROUP, kind="judge", want=JudgeProvider, what=what, make=Installed)
        _LOADED = {i.name: i for i in found}
    return _LOADED


def provider(name: str) -> JudgeProvider:
    """The installed provider ``name``; ConfigError (exit 2) naming the installed ones when there is none."""
    found = installed()
    if name not in found:
        raise ConfigError(
            f"[judge] provider = {name!r} is not an installed judge; installed: {', '.join(found) or 'none'}"
            " ('tracescore judges' lists them with what each needs)"
        )
    return found[name].provider
