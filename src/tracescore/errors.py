"""The one error tree of tracescore. SDK, HTTP and sqlite errors are re-raised as these at the boundary.

Each class carries the exit code of a command it stops (``exit_code``, a class attribute, as click's
``ClickException.exit_code``); ``cli/main.py`` is the one place that turns an error into its line and code.

TracescoreError       4  any other failure: stopped (what is written stays written)
├── ConfigError       2  a bad option, config key or value (names the value and what is allowed): nothing ran
│   └── MissingInputError  2  an input file, folder or store named on the command line that does not exist
├── InputError        1  a trace line, native record or input file that cannot be read or mapped
│   ├── AdapterError  1  a native platform record that cannot become a Trace
│   ├── InputShapeError  2  an input file of no shape its source reads (names what was expected): nothing scored
│   └── NoResultsError  6  a results file or run spec holds no scored trace (empty, unreadable, a traces file,
│                          no such run): nothing to report or gate
├── NothingToDoError  6  nothing to work on (no judged claim, no human label, partial results to gate)
├── OutputError       4  a file named as an output (--out, --junit, a sheet, init's config) cannot be written
├── SourceError       4  reading from a platform failed after the bounded retries
├── SinkError         4  writing scores failed after the bounded retries
├── StoreError        4  the local SQLite store cannot be opened, migrated or written
├── JudgeError        4  a judge call failed after the bounded retries (scores absent: ``judge_error``)
└── LockError         3  another run holds the store's lock

Interrupted           130 / 143  SIGINT or SIGTERM stopped the command (128 + the signal: ``exit_code``). Like
                      ``KeyboardInterrupt`` it is a ``BaseException``, outside the tree: no handler of failures
                      catches it (an interrupt is not a failure). What was committed before it stays committed.
"""

from __future__ import annotations

import signal
from typing import ClassVar

from tracescore.secrets import redact


class TracescoreError(Exception):
    """Base class of every error tracescore raises on purpose. Its message never holds a credential: it is redacted
    when the error is made (a server's error body may echo one)."""

    exit_code: ClassVar[int] = 4

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))


class ConfigError(TracescoreError):
    """A bad option, config key or value."""

    exit_code: ClassVar[int] = 2


class MissingInputError(ConfigError):
    """An input file, folder or store named on the command line that does not exist or cannot be opened: a bad
    argument, nothing ran (the same exit code for every command)."""

    exit_code: ClassVar[int] = 2


class InputError(TracescoreError):
    """A trace line or native record that cannot be read."""

    exit_code: ClassVar[int] = 1


class InputShapeError(InputError):
    """An input file whose records are of no shape its source reads (a span file that holds neither OTLP spans nor
    flat spans with ``attributes``): the wrong file, as a bad argument is; the message names what was expected."""

    exit_code: ClassVar[int] = 2


class AdapterError(InputError):
    """A native platform record that cannot be mapped to a Trace."""

    exit_code: ClassVar[int] = 1


class SourceError(TracescoreError):
    """Reading from a platform failed after the bounded retries."""

    exit_code: ClassVar[int] = 4


class SinkError(TracescoreError):
    """Writing scores failed after the bounded retries."""

    exit_code: ClassVar[int] = 4


class StoreError(TracescoreError):
    """The local SQLite store cannot be opened, migrated or written."""

    exit_code: ClassVar[int] = 4


class JudgeError(TracescoreError):
    """A judge call failed after the bounded retries."""

    exit_code: ClassVar[int] = 4


class LockError(TracescoreError):
    """Another run holds the store's lock."""

    exit_code: ClassVar[int] = 3


class NoResultsError(InputError):
    """A results file or run that holds no scored trace: empty, unreadable, not a results file at all, or a run spec
    that names no run."""

    exit_code: ClassVar[int] = 6


class NothingToDoError(TracescoreError):
    """Nothing to work on: no judged claim to sample, no human label to measure, partial results to gate without
    ``--allow-partial``. Not a success that did 0 things."""

    exit_code: ClassVar[int] = 6


class OutputError(TracescoreError):
    """A file named as an output (``--out``, ``--junit``, ``--markdown``, a calibration sheet, ``init``'s config)
    cannot be written; the message names the path and the OS's reason."""

    exit_code: ClassVar[int] = 4


class Interrupted(BaseException):
    """SIGINT or SIGTERM stopped the command; ``exit_code`` is 128 + the signal (130 for SIGINT, 143 for SIGTERM)."""

    exit_code = 128 + signal.SIGINT

    def __init__(self, signum: int = signal.SIGINT, message: str = "") -> None:
        self.signum = int(signum)
        self.exit_code = 128 + self.signum
        super().__init__(redact(message) if message else f"interrupted ({signal.Signals(self.signum).name})")
