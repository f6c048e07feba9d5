"""SIGTERM and SIGINT while ``ingest -o big.csv`` is writing: no temporary file left, the
existing output untouched, one line (SIGINT) or the terminated status (SIGTERM), no traceback.

Both commands run at once in subprocesses (each pays the interpreter's start-up once);
the signal is sent as soon as the temporary file beside the output exists and grows.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from badinput.build import verl_line

ROOT = Path(__file__).resolve().parents[2]
N_STEPS = 150_000  # about 450k rows: a CSV of ~30 MB takes a second or more to write
OLD = "run_id,step,metric,value\nold,1,entropy,0.5\n"


def _big_log(path: Path) -> None:
    with open(path, "w") as f:
        for chunk in range(0, N_STEPS, 10_000):
            f.write("".join(verl_line(s, round(1.0 / s, 6), round(0.5 + s * 1e-6, 6), None) + "\n"
                            for s in range(chunk + 1, min(chunk + 10_000, N_STEPS) + 1)))


def _temp_files(d: Path) -> list[Path]:
    return [p for p in d.iterdir() if p.name.startswith(".") and ".tmp" in p.name]


def _default_sigint():
    """The child starts with SIGINT's default disposition, however the suite was started (nohup, &)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.slow
def test_signal_during_write_leaves_nothing_half_written(tmp_path):
    log = tmp_path / "big.log"
    _big_log(log)
    procs = {}
    for sig in (signal.SIGTERM, signal.SIGINT):
        out = tmp_path / sig.name
        out.mkdir()
        (out / "big.csv").write_text(OLD)
        procs[sig] = (out, subprocess.Popen([sys.executable, "-m", "entropylaw", "ingest", str(log), "-o",
                                             str(out / "big.csv"), "-q"], cwd=ROOT, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.PIPE, text=True, preexec_fn=_default_sigint))
    sent = {}
    deadline = time.monotonic() + 300
    while len(sent) < len(procs) and time.monotonic() < deadline:
        for sig, (out, proc) in procs.items():
            if sig in sent:
                continue
            temps = _temp_files(out)
            if temps and temps[0].exists() and temps[0].stat().st_size > 0:
                proc.send_signal(sig)
                sent[sig] = True
            elif proc.poll() is not None:
                pytest.fail(f"{sig.name}: the command ended before its temporary file was seen: "
                            f"{proc.stderr.read()}")
        time.sleep(0.005)
    assert len(sent) == len(procs), "no temporary file appeared in time"
    for sig, (out, proc) in procs.items():
        err = proc.communicate(timeout=120)[1]
        assert "Traceback" not in err, err
        if sig == signal.SIGTERM:
            assert proc.returncode == 128 + signal.SIGTERM, (proc.returncode, err)
        else:
            assert proc.returncode == 130 and err.strip().splitlines()[-1] == "entropylaw: interrupted", err
        assert not _temp_files(out), _temp_files(out)
        assert sorted(os.listdir(out)) == ["big.csv"] and (out / "big.csv").read_text() == OLD
