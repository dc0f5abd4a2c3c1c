"""``[judge]`` of ``tracescore.toml``: the judge's provider, model, rubric, redaction and price, one pydantic model
(``JudgeSettings``) with its parts (``RedactPattern``, ``JudgePrice``); ``tracescore.sections`` composes it with the
other sections."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tracescore.judge.redact import BUILT_IN, custom_pattern
from tracescore.judge.registry import installed


class RedactPattern(BaseModel):
    """A team's own ``[judge] redact`` entry: ``{pattern = "ACCT-\\d{8}", name = "account"}`` → ``<account-1>``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pattern: str = Field(description="a Python regular expression; every match is redacted")
    name: str = Field(description="the placeholder's kind: lower-case letters, digits, _")

    @model_validator(mode="after")
    def _compiles(self) -> RedactPattern:
        custom_pattern(self.pattern, self.name)  # ValueError naming the fault
        return self


class JudgePrice(BaseModel):
    """``[judge.price]``: USD per million tokens of a judge model no price table lists."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_mtok: float = Field(ge=0, description="USD per million input tokens")
    output_per_mtok: float = Field(ge=0, description="USD per million output tokens")
    cached_input_per_mtok: float | None = Field(
        default=None, ge=0, description="USD per million cached input tokens (default: the input price)"
    )


PROVIDER_KEYS = ("model", "region", "project", "base_url", "api_key_env", "structured", "endpoint", "deployment",
                 "api_version")
"""The ``[judge]`` keys of one provider or another (each provider declares those it reads)."""


class JudgeSettings(BaseModel):
    """``[judge]``: the judge's provider, model and rubric; part of the scoring identity (a change starts a new
    backfill)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    provider: str = Field(
        default="anthropic",
        min_length=1,
        description="the judge: an installed judge's entry-point name ('tracescore judges' lists them): 'anthropic',"
        " 'bedrock', 'vertex' (Claude through the anthropic SDK's own clients), 'openai' (the Chat Completions API"
        " of OpenAI or any OpenAI-compatible server at base_url), 'azure-openai', or a plugin's",
    )
    model: str | None = Field(
        default=None,
        description="the judge's model in the provider's own id (overrides [scoring] judge_model), e.g."
        " 'claude-sonnet-4-6', Bedrock 'global.anthropic.claude-sonnet-4-6', Vertex 'claude-sonnet-4-5@20250929'",
    )
    region: str | None = Field(
        default=None,
        min_length=1,
        description="bedrock: the AWS region (else AWS_REGION); vertex: the location, e.g. 'global' (else"
        " CLOUD_ML_REGION)",
    )
    project: str | None = Field(
        default=None, min_length=1, description="vertex: the Google Cloud project (else ANTHROPIC_VERTEX_PROJECT_ID)"
    )
    base_url: str | None = Field(
        default=None,
        min_length=1,
        description="openai: an OpenAI-compatible server, e.g. 'http://localhost:8000/v1' (vLLM) or"
        " 'http://localhost:11434/v1' (Ollama); else OPENAI_BASE_URL, else OpenAI's API",
    )
    api_key_env: str | None = Field(
        default=None,
        min_length=1,
        description="openai: the environment variable holding the key (default OPENAI_API_KEY); a server that asks"
        " for none needs none",
    )
    structured: bool = Field(
        default=True,
        description="openai: send the reply's schema as response_format json_schema (strict); false: in the prompt"
        " (for a server without structured output; also chosen by itself when a server refuses response_format)",
    )
    endpoint: str | None = Field(
        default=None,
        min_length=1,
        description="azure-openai: the resource's endpoint, e.g. 'https://my-resource.openai.azure.com' (else"
        " AZURE_OPENAI_ENDPOINT)",
    )
    deployment: str | None = Field(
        default=None, min_length=1, description="azure-openai: the model deployment's name (the judge's model)"
    )
    api_version: str | None = Field(
        default=None,
        min_length=1,
        description="azure-openai: the API version (else OPENAI_API_VERSION, else '2024-10-21')",
    )
    options: dict[str, Any] = Field(
        default_factory=dict, description="[judge.options]: a plugin judge's own keys, handed to its factory"
    )
    price: JudgePrice | None = Field(
        default=None,
        description="the judge model's price when it is not in the price table (a server of your own: 0); without"
        " one the cost is unknown and a budget is refused",
    )
    rubric: str = Field(
        default="grounding",
        min_length=1,
        description="grounding rubric: a bundled name (scorers/<name>.toml) or a TOML file in that format",
    )
    surface_rubric: str = Field(
        default="surface", min_length=1, description="surface oracle rubric: a bundled name or a TOML file"
    )
    semantic_rubric: str = Field(
        default="semantic", min_length=1, description="semantic match rubric: a bundled name or a TOML file"
    )
    merge_partial: Literal["contradicted", "unsupported"] | None = Field(
        default=None,
        description="count the judge's PARTIAL verdicts as this verdict in grounding and citation scores (when a"
        " calibration shows PARTIAL is not above chance); said in each judged score's metadata; off by default",
    )
    redact: list[str | RedactPattern] = Field(
        default_factory=list,
        description="personal data replaced with placeholders (<email-1>) before the judge sees a trace: "
        + ", ".join(repr(n) for n in BUILT_IN)
        + ' or {pattern = "…", name = "…"}',
    )

    @model_validator(mode="after")
    def _provider(self) -> JudgeSettings:
        """``provider`` is an installed judge, and each provider key set is one it reads (``region`` with
        ``openai``, a typo in ``[judge.options]``: said, never ignored)."""
        found = installed()
        if self.provider not in found:
            raise ValueError(
                f"provider {self.provider!r} is not an installed judge; installed: {', '.join(found) or 'none'}"
                " ('tracescore judges' lists them with what each needs)"
            )
        reads = found[self.provider].provider.keys
        default = {k: f.default for k, f in type(self).model_fields.items()}
        # a key at its default (a starter listing every key) changes nothing
        unread = [k for k in PROVIDER_KEYS if k not in reads and getattr(self, k) != default[k]]
        unread += [f"options.{k}" for k in self.options if k not in reads]
        if unread:
            raise ValueError(
                f"{', '.join(unread)}: not read by provider {self.provider!r}, which reads: {', '.join(reads)}"
            )
        return self

    @field_validator("redact", mode="before")
    @classmethod
    def _entries(cls, value: object) -> object:
        """Each entry checked here, so the message names the entry: an unknown kind, a pattern that does not compile
        (or matches empty text), a bad or repeated name."""
        if not isinstance(value, list):
            return value
        names: list[str] = []
        for n, entry in enumerate(value, start=1):
            if isinstance(entry, str):
                if entry not in BUILT_IN:
                    kinds = ", ".join(repr(k) for k in BUILT_IN)
                    raise ValueError(f"entry {n}: unknown kind {entry!r}; expected one of {kinds} or a table"
                                     ' {pattern = "…", name = "…"}')  # fmt: skip
                names.append(entry)
            elif isinstance(entry, dict):
                if set(entry) != {"pattern", "name"} or not all(isinstance(v, str) for v in entry.values()):
                    raise ValueError(f'entry {n}: a table needs exactly pattern = "…" and name = "…" (text)')
                custom_pattern(entry["pattern"], entry["name"])
                names.append(entry["name"])
            elif not isinstance(entry, RedactPattern):
                raise ValueError(f'entry {n}: expected a kind name or {{pattern = "…", name = "…"}}')
        if twice := sorted({name for name in names if names.count(name) > 1}):
            raise ValueError(f"{', '.join(repr(name) for name in twice)} listed more than once")
        return value
