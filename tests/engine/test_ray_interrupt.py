"""SIGINT and SIGTERM stop ``score --engine ray`` (#27 part 2): exit 130/143 within the bound, no traceback, the
one line last on stderr; the shards done stay done and a re-run scores every trace once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.engine.test_interrupt import STOP_BOUND_S
from tests.engine.test_ray_engine import LAYOUT, Judge, by_trace, cluster, env, settled, shard_folder

pytestmark = pytest.mark.ray
ray = pytest.importorskip("ray")
__all__ = ["cluster"]  # the module's Ray cluster fixture, shared


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_ray_score_exits_with_its_code_and_a_rerun_scores_every_trace_once(
    cluster: str, tmp_path: Path, sig: signal.Signals
) -> None:
    shard_of = shard_folder(tmp_path / "traces")
    results = tmp_path / "out" / "results"
    command = [sys.executable, "-m", "tracescore.cli", "score", str(tmp_path / "traces"), "--engine", "ray",
               "--out", str(tmp_path / "out"), "--store", str(tmp_path / "t.db"), "-q"]
    with Judge(latency=0.2) as judge:
        child_env = os.environ | env(judge) | {"RAY_ADDRESS": cluster}
        child = subprocess.Popen(command, env=child_env, start_new_session=True, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not (results.is_dir() and list(results.glob("*.parquet"))):
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "no shard done in 120 s"
            time.sleep(0.02)
        judge.hold.set()  # nothing more is answered: the shards in flight cannot all finish before the signal lands
        sent = time.monotonic()
        os.killpg(child.pid, sig)
        _, err = child.communicate(timeout=60)
        took = time.monotonic() - sent
        done = settled(results)
        judge.release.set()
    assert child.returncode == 128 + sig, err
    assert took <= STOP_BOUND_S, f"the stop took {took:.1f} s"
    assert "Traceback" not in err
    last = err.strip().splitlines()[-1]
    assert last.startswith("tracescore: interrupted after ") and last.endswith("nothing is duplicated"), err
    assert 1 <= len(done) < len(LAYOUT)

    with Judge() as judge:
        rerun = subprocess.run(command, env=os.environ | env(judge) | {"RAY_ADDRESS": cluster},
                               capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    got = by_trace(results)
    assert set(got) == set(shard_of) and all(len(lines) == 1 for lines in got.values())
