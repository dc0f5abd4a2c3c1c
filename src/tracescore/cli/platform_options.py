"""The command-line options platforms add (``Platform.options``), asked of the registry: one decorator puts them on a
command, one check says which go with the chosen platform. No platform is named here."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import click

from tracescore.platforms import registry

_F = TypeVar("_F", bound=Callable[..., Any])


def platform_options(command: str) -> Callable[[_F], _F]:
    """Every option a platform declares for ``command``, each once (unset: None, so a check can tell it was given)."""

    def decorate(f: _F) -> _F:
        for option, _ in reversed(registry.options(command)):
            if option.is_flag:
                f = click.option(option.flag, option.key, is_flag=True, default=None, help=option.help)(f)
            else:
                f = click.option(option.flag, option.key, default=None, help=option.help)(f)
        return f

    return decorate


def check_platform_options(
    kind: str, values: Mapping[str, Any], command: str, *, via: str = "--source", require: bool = True
) -> None:
    """An option given for a platform that does not declare it, or (``require``) one ``kind`` requires and was not
    given, is a ``click.BadParameter`` naming the flag; ``via`` is the option that chose the platform."""
    for option, owners in registry.options(command):
        given = values.get(option.key) is not None
        if given and kind not in owners:
            where = ", ".join(f"{via} {o}" for o in owners)
            raise click.BadParameter(f"applies to {where} only, not {via} {kind}", param_hint=option.flag)
        if require and not given and option.required and kind in owners:
            raise click.BadParameter(f"required with {via} {kind}: {option.required}", param_hint=option.flag)
