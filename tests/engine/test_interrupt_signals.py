"""The signal handling of every command (``engine.interrupt``): outside an engine a signal raises ``Interrupted``
with its exit code, inside one the first only asks it to stop, and the command line maps it to 130/143 and one line."""

from __future__ import annotations

import os
import signal
import threading
import time

import pytest

from tracescore.cli.main import exit_on_failure
from tracescore.engine.interrupt import listening, on_signals, received
from tracescore.errors import Interrupted


def _signal_self(sig: signal.Signals) -> None:
    os.kill(os.getpid(), sig)
    time.sleep(0.05)  # the handler runs in this (the main) thread at the next bytecode


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_outside_an_engine_a_signal_raises_interrupted_with_its_exit_code(sig: signal.Signals, code: int) -> None:
    with pytest.raises(Interrupted) as stopped, on_signals():
        _signal_self(sig)
    assert stopped.value.exit_code == code and stopped.value.signum == sig
    assert not isinstance(stopped.value, Exception)  # no ``except Exception`` / ``except TracescoreError`` takes it
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handlers are given back


def test_inside_an_engine_the_first_signal_only_asks_it_to_stop_and_a_second_one_raises() -> None:
    stop_event = threading.Event()
    with on_signals(), listening(stop_event):
        _signal_self(signal.SIGTERM)
        assert stop_event.is_set() and received() == signal.SIGTERM
        with pytest.raises(Interrupted):
            _signal_self(signal.SIGINT)


def test_an_interrupt_exits_with_its_code_and_its_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped, exit_on_failure():
        _signal_self(signal.SIGTERM)
    assert stopped.value.code == 143
    assert capsys.readouterr().err == "tracescore: interrupted (SIGTERM)\n"
    message = "interrupted after 3 traces (2 written); re-run to finish: nothing is duplicated"
    with pytest.raises(SystemExit) as stopped, exit_on_failure():
        raise Interrupted(signal.SIGINT, message)
    assert stopped.value.code == 130
    assert capsys.readouterr().err == f"tracescore: {message}\n"
