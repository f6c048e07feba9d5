"""The suite's way of running a command (tests/_fork_cli.py, ``run_cli``): a fork of the test process that
behaves as a fresh ``python -m entropylaw`` would, compared here with one."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import pytest

from conftest import FORKED, ROOT, run_cli


@pytest.mark.parametrize("args", [("summary", "data/real-sizes"), ("summary", "no/such/dir"),
                                  ("forecast", "data/real-sizes", "--fit-frac", "0.25", "--n-boot", "20", "-q"),
                                  ("fit", "--no-such-flag")], ids=["ok", "user-error", "forecast", "bad-flag"])
def test_a_forked_command_says_what_a_fresh_one_says(args):
    forked, fresh = run_cli(*args), run_cli(*args, fresh=True)
    assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)


def test_the_fork_leaves_this_process_as_it_was(tmp_path):
    cwd, env, filters = os.getcwd(), dict(os.environ), list(warnings.filters)
    out = run_cli("ingest", str(ROOT / "data" / "real-sizes"), "-o", "t.parquet", cwd=tmp_path,
                  env={"ENTROPYLAW_TEST_MARK": "1"})
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "t.parquet").is_file()
    assert (os.getcwd(), dict(os.environ), list(warnings.filters)) == (cwd, env, filters)


def test_only_what_a_fork_can_set_is_forked():
    assert run_cli("--version").args[0] == FORKED
    # BLAS reads it once: a value other than the test process's (the suite may itself run on Prescott's kernels)
    other = "Haswell" if os.environ.get("OPENBLAS_CORETYPE") == "Prescott" else "Prescott"
    assert run_cli("--version", env={"OPENBLAS_CORETYPE": other}).args[0] == sys.executable
    same = os.environ.get("OPENBLAS_CORETYPE")
    assert run_cli("--version", env={"OPENBLAS_CORETYPE": same} if same else {}).args[0] == FORKED  # nothing changes
    assert run_cli("--version", env={"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}).args[0] == FORKED
    assert run_cli("probe", "--help").args[0] == sys.executable  # torch's thread pool does not survive a fork


def test_a_command_past_its_timeout_is_killed_and_reaped(tmp_path):
    import subprocess

    path = tmp_path / "run.csv"
    path.write_text("run_id,step,metric,value\n" + "".join(f"r,{s},entropy,{1 - s / 100}\nr,{s},score,{s / 100}\n"
                                                           for s in range(20)))
    before = _children()
    with pytest.raises(subprocess.TimeoutExpired):
        run_cli("watch", str(path), "--plain", "--interval", "0.2", timeout=3)  # watch follows until stopped
    assert _children() == before  # none left running, none left unreaped


def _children() -> set:
    """This process's child processes (any state, zombies included), from /proc."""
    out = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():
            out.add(stat.parent.name)
    return out
