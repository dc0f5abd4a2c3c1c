"""The files a command reads and the files it writes, told apart where click reads its options, and written whole.

An option or argument whose type is ``reads()`` or ``writes()`` registers its path with the command's context as
click converts it (before the command runs, so before anything is read or a run is started); a path that is the
same file as another of the command, where one of the two is written, is refused then: ``ConfigError`` (exit 2),
one line naming both. "The same file" is the same path once resolved (symlinks followed, relative to the working
directory) or, when both exist, ``os.path.samefile`` (a hard link too). ``-`` (stdin/stdout) and URIs (``s3://``)
are not files here. A path known only later (a store from the config, a target that is a sheet only when it ends in
``.csv``) is registered with ``claim`` by the command, before it reads anything.

``write_text`` writes an output whole (``PATH.partial``, then renamed), and a file that cannot be written is an
``OutputError`` (exit 4) naming the path and the OS's reason.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from tracescore.errors import ConfigError, OutputError

_CLAIMS = "tracescore.paths"


@dataclass(frozen=True)
class _Claim:
    flag: str  # how the command line names it: --out, TRACES
    path: str  # as given
    written: bool


class _Role(click.Path):
    """``click.Path`` that registers the converted path with its command as read or written."""

    def __init__(self, *, written: bool, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.written = written

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        value = super().convert(value, param, ctx)
        if ctx is not None and param is not None and value is not None:
            claim(ctx, _flag(param), os.fspath(value), written=self.written)
        return value


def reads(**kwargs: Any) -> click.Path:
    """The type of an option or argument naming a file or folder the command reads (``click.Path`` options)."""
    return _Role(written=False, **kwargs)


def writes(**kwargs: Any) -> click.Path:
    """The type of an option naming a file or folder the command writes, or a store it reads and writes."""
    return _Role(written=True, **kwargs)


def _flag(param: click.Parameter) -> str:
    if isinstance(param, click.Option):
        return max(param.opts, key=len)
    return param.human_readable_name


def _is_file(path: str) -> bool:
    return path != "-" and "://" not in path


def _same(a: str, b: str) -> bool:
    if os.path.exists(a) and os.path.exists(b):
        return os.path.samefile(a, b)
    return os.path.realpath(a) == os.path.realpath(b)


def claim(ctx: click.Context, flag: str, path: str, *, written: bool) -> None:
    """Register ``path`` (named ``flag`` on the command line) as read or ``written`` by the command of ``ctx``;
    ConfigError when it is the same file as a path registered before and one of the two is written."""
    if not _is_file(path):
        return
    claims: list[_Claim] = ctx.meta.setdefault(_CLAIMS, [])
    new = _Claim(flag, path, written)
    for old in claims:
        if (written or old.written) and _same(old.path, path):
            out, other = (new, old) if written else (old, new)
            raise ConfigError(
                f"{out.flag} {out.path!r} is the same file as {other.flag} {other.path!r}: writing it would destroy"
                f" what {other.flag} holds; give {out.flag} another path"
            )
    claims.append(new)


def write_text(path: str, text: str) -> None:
    """``text`` to ``path`` whole: written to ``PATH.partial`` and renamed, so a failed write leaves the previous file
    as it was; OutputError (exit 4) names the path and the OS's reason when it cannot be written."""
    target = Path(path)
    partial = target.with_name(target.name + ".partial")
    try:
        partial.write_text(text, encoding="utf-8")
        partial.replace(target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            partial.unlink(missing_ok=True)
        raise OutputError(f"cannot write {path!r}: {exc.strerror or exc}") from exc
