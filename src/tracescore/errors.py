"""The one error tree of tracescore. SDK, HTTP and sqlite errors are re-raised as these at the boundary.

TracescoreError
├── ConfigError          a bad option, config key or value (names the value and what is allowed)
│   └── MissingInputError  an input file, folder or store named on the command line that does not exist
├── InputError           a trace line or native record that cannot be read or mapped
│   ├── AdapterError     a native platform record that cannot become a Trace
│   └── NoResultsError   a results file or run holds no scored trace (empty, unreadable, or a traces file)
├── SourceError          reading from a platform failed after the bounded retries
├── SinkError            writing scores failed after the bounded retries
├── StoreError           the local SQLite store cannot be opened, migrated or written
├── JudgeError           a judge call failed after the bounded retries (scores absent: ``judge_error``)
└── LockError            another run holds the store's lock

Interrupted              SIGINT or SIGTERM stopped the command (exit 130 / 143: ``exit_code``). Like
                         ``KeyboardInterrupt`` it is a ``BaseException``, outside the tree: no handler of failures
                         catches it (an interrupt is not a failure). What was committed before it stays committed.
"""

from __future__ import annotations

import signal

from tracescore.secrets import redact

__all__ = [
    "AdapterError",
    "ConfigError",
    "InputError",
    "Interrupted",
    "JudgeError",
    "LockError",
    "MissingInputError",
    "NoResultsError",
    "SinkError",
    "SourceError",
    "StoreError",
    "TracescoreError",
]


class TracescoreError(Exception):
    """Base class of every error tracescore raises on purpose. Its message never holds a credential: it is redacted
    when the error is made (a server's error body may echo one)."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))


class ConfigError(TracescoreError):
    """A bad option, config key or value."""


class MissingInputError(ConfigError):
    """An input file, folder or store named on the command line that does not exist: a bad argument, nothing ran
    (the same exit code for every command)."""


class InputError(TracescoreError):
    """A trace line or native record that cannot be read."""


class AdapterError(InputError):
    """A native platform record that cannot be mapped to a Trace."""


class SourceError(TracescoreError):
    """Reading from a platform failed after the bounded retries."""


class SinkError(TracescoreError):
    """Writing scores failed after the bounded retries."""


class StoreError(TracescoreError):
    """The local SQLite store cannot be opened, migrated or written."""


class JudgeError(TracescoreError):
    """A judge call failed after the bounded retries."""


class LockError(TracescoreError):
    """Another run holds the store's lock."""


class NoResultsError(InputError):
    """A results file or run that holds no scored trace: empty, unreadable, or not a results file at all."""


class Interrupted(BaseException):
    """SIGINT or SIGTERM stopped the command; ``exit_code`` is 128 + the signal (130 for SIGINT, 143 for SIGTERM)."""

    exit_code = 128 + signal.SIGINT

    def __init__(self, signum: int = signal.SIGINT, message: str = "") -> None:
        self.signum = int(signum)
        self.exit_code = 128 + self.signum
        super().__init__(redact(message) if message else f"interrupted ({signal.Signals(self.signum).name})")
