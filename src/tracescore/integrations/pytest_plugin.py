"""The pytest plugin (entry point ``pytest11``: installed with tracescore, loaded by the user's own pytest): a
``tracescore`` fixture whose ``check`` scores a trace through the recipe ``tracescore score`` uses and fails the
test with one line per broken stage.

    def test_agent(tracescore):
        tracescore.check(run_agent("When was insulin isolated?"), min={"retrieval.recall_at_5": 1.0},
                         max={"citation.fabricated_count": 0})

Options: ``--tracescore-out results.jsonl`` (the result line of every checked trace, for ``tracescore report`` and
``gate``; one part per xdist worker, merged at the end), ``--tracescore-config FILE`` (default ``./tracescore.toml``
when present, as ``score`` reads it), ``--tracescore-store FILE`` (the judge cache ``score --store`` keeps; default:
a store for this session only, shared by its xdist workers). With a judge (the configured one, or ``judge=`` of a
check), the judge, its cache and its budget (``[scoring] max_cost``, split between xdist workers) are the session's,
and the terminal summary says once what it spent. The recipe is built when a test first asks for a check: a session
that never does scores nothing and writes nothing.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from tracescore.config import load_config
from tracescore.errors import TracescoreError
from tracescore.integrations.checks import Absent
from tracescore.integrations.scoring import spent, spent_line
from tracescore.integrations.session import CheckSession, merge_parts, part_path
from tracescore.judge.protocol import Judge
from tracescore.result import TraceResult
from tracescore.store.db import Store

_STATE = pytest.StashKey["_State"]()


class _State:
    """The session's plugin state in one process: its token, the worker's name, the session's checks."""

    def __init__(self, config: pytest.Config) -> None:
        worker = getattr(config, "workerinput", None)
        self.config = config
        self.worker: str = worker["workerid"] if worker is not None else "main"
        self.workers: int = int(worker.get("workercount", 1)) if worker is not None else 1
        self.token: str = worker["tracescore_token"] if worker is not None else uuid.uuid4().hex[:12]
        own = Path(tempfile.gettempdir()) / f"tracescore-pytest-{self.token}.db"
        given = config.getoption("tracescore_store")
        self.store = Path(given) if given else own
        self.own_store = None if given else own
        out = config.getoption("tracescore_out")
        self.out = Path(out).resolve() if out else None
        self.order: dict[str, int] = {}
        self.session: CheckSession | None = None
        self.summaries: list[dict[str, Any]] = []  # each process's (the workers', then this one's)
        self.written: tuple[Path, int] | None = None
        self.store_ready = False

    def checks(self) -> CheckSession:
        if self.session is None:
            config = load_config(self.config.getoption("tracescore_config"))
            budget = config.section("scoring").max_cost
            part = part_path(self.out, self.token, self.worker) if self.out is not None else None
            self.session = CheckSession(config, store=self.store,
                                        max_cost=budget / self.workers if budget is not None else None,
                                        part=part)  # fmt: skip
        return self.session


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("tracescore", "tracescore stage checks")
    group.addoption("--tracescore-out", metavar="PATH", default=None,
                    help="write the result line of every checked trace here (for tracescore report / gate)")
    group.addoption("--tracescore-config", metavar="FILE", default=None,
                    help="tracescore.toml to score with (default: ./tracescore.toml when present)")
    group.addoption("--tracescore-store", metavar="FILE", default=None,
                    help="local store holding the judge cache (default: one for this session only)")  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    state = config.stash[_STATE] = _State(config)
    if state.out is not None and not state.out.parent.is_dir():
        raise pytest.UsageError(f"--tracescore-out {state.out}: no such folder {state.out.parent}; create it first")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: every worker gets the session's token (its part file, the session's store), and the store exists
    before any worker opens it (two processes creating one store at once can fail its migration)."""
    state = node.config.stash[_STATE]
    node.workerinput["tracescore_token"] = state.token
    if not state.store_ready:
        state.store_ready = True
        try:
            Store(state.store).close()
        except TracescoreError as exc:  # said again, on its test, by the first check that opens it
            node.config.issue_config_time_warning(pytest.PytestWarning(f"tracescore: {exc}"), stacklevel=2)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    """xdist: a worker's checks and judge usage, for the one summary at the end."""
    said = getattr(node, "workeroutput", {}).get("tracescore")
    if said:
        node.config.stash[_STATE].summaries.append(said)


def pytest_collection_finish(session: pytest.Session) -> None:
    session.config.stash[_STATE].order = {item.nodeid: n for n, item in enumerate(session.items)}


class Checker:
    """The ``tracescore`` fixture: ``check`` a trace against per-score limits in this test."""

    def __init__(self, state: _State, nodeid: str) -> None:
        self._state, self._nodeid, self._count = state, nodeid, 0

    def check(
        self,
        trace: Any,
        min: Mapping[str, object] | None = None,  # noqa: A002 - the issue's keyword
        max: Mapping[str, object] | None = None,  # noqa: A002
        judge: Judge | None = None,
        absent: Absent = "fail",
    ) -> TraceResult:
        """Score ``trace`` (a ``Trace``, a dict in the trace format, a LangSmith record or run tree, a Langfuse
        record) and fail the test with one line per broken stage; an absent score a limit names fails with its
        reason, or skips the test with ``absent="skip"``. Returns the trace's result."""
        __tracebackhide__ = True  # a skip or failure is reported at the test's line, not here
        self._count += 1
        order = (self._state.order.get(self._nodeid, len(self._state.order)), self._count)
        bad: str | None = None
        try:
            found = self._state.checks().check(trace, minimum=min, maximum=max, judge=judge, absent=absent,
                                               order=order)  # fmt: skip
        except TracescoreError as exc:  # a bad limit or config: one line naming it, not a traceback
            bad = f"tracescore.check: {exc}"
        if bad is not None:  # failed outside the handler: pytest shows no "During handling of …" chain
            pytest.fail(bad, pytrace=False)
        failure = found.failure(absent)
        if failure is not None:
            pytest.fail(failure, pytrace=False)
        skipped = found.skipped() if absent == "skip" else None
        if skipped is not None:
            pytest.skip(skipped)
        return found.result


@pytest.fixture
def tracescore(request: pytest.FixtureRequest) -> Iterator[Checker]:
    """Check agent traces stage by stage: ``tracescore.check(trace, min={...}, max={...})``."""
    yield Checker(request.config.stash[_STATE], request.node.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash[_STATE]
    if state.session is not None:
        state.session.close()
        mine = state.session.summary()
        if hasattr(session.config, "workeroutput"):  # an xdist worker: the controller sums and merges
            session.config.workeroutput["tracescore"] = mine
            return
        state.summaries.append(mine)
    if hasattr(session.config, "workeroutput") or state.out is None:
        return
    state.written = merge_parts(state.out, state.token, partial=exitstatus == pytest.ExitCode.INTERRUPTED)


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    state = config.stash[_STATE]
    if not state.summaries and state.written is None:
        return
    checked = sum(s["checked"] for s in state.summaries)
    terminalreporter.write_sep("-", "tracescore")
    where = f"; {state.written[1]} result line(s) in {state.written[0]}" if state.written is not None else ""
    terminalreporter.write_line(f"tracescore: {checked} trace(s) checked{where}")
    judged = [s["usage"] for s in state.summaries if s["judged"]]
    if judged:
        terminalreporter.write_line("tracescore: " + spent_line(_summed(judged)))


def _summed(usages: list[dict[str, Any]]) -> dict[str, Any]:
    """The processes' usage sums summed again (each carries its models)."""
    models = sorted({m for u in usages for m in u.get("models", [])})
    return dict(spent(usages)) | {"models": models}


def pytest_unconfigure(config: pytest.Config) -> None:
    state = config.stash.get(_STATE, None)
    if state is None or hasattr(config, "workeroutput") or state.own_store is None:
        return
    for suffix in ("", "-wal", "-shm"):
        Path(f"{state.own_store}{suffix}").unlink(missing_ok=True)
