"""``exit_on_error``: each of our errors exits with its code from the one table, with one line on stderr."""

from __future__ import annotations

import pytest

from tracescore.cli.exits import EXIT_ABORTED, EXIT_INPUT, EXIT_USAGE, exit_on_error
from tracescore.errors import AdapterError, ConfigError, InputError, LockError, SinkError


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ConfigError("bad key 'x'"), EXIT_USAGE),
        (InputError("line 3: not JSON"), EXIT_INPUT),
        (AdapterError("trace t1: no root"), EXIT_INPUT),  # a subclass takes its parent's code
        (SinkError("Langfuse did not take 2 scores"), EXIT_ABORTED),
        (LockError("held by pid 7"), EXIT_ABORTED),
    ],
)
def test_each_error_exits_with_its_code_and_one_line(
    error: Exception, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped, exit_on_error():
        raise error
    assert stopped.value.code == code
    assert capsys.readouterr().err == f"tracescore: {error}\n"


def test_a_table_of_its_own_decides_and_an_unlisted_error_propagates() -> None:
    with pytest.raises(SystemExit) as stopped, exit_on_error(((LockError, 3), (ConfigError, EXIT_USAGE))):
        raise LockError("held")
    assert stopped.value.code == 3
    with pytest.raises(SinkError), exit_on_error(((ConfigError, EXIT_USAGE),)):
        raise SinkError("not ours to map here")
    with pytest.raises(KeyError), exit_on_error():
        raise KeyError("not a tracescore error: a bug, with its traceback")


def test_no_error_no_exit() -> None:
    with exit_on_error():
        value = 1
    assert value == 1
