"""Shared fixtures. Tests that need ../shared skip cleanly when it is absent."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
REAL_LOGS = SHARED / "data" / "real-logs"

os.environ.setdefault("WANDB_SILENT", "true")
os.environ.setdefault("WANDB_MODE", "offline")
os.environ.setdefault("MPLBACKEND", "Agg")
# two xdist workers on two cores: one BLAS/OpenMP thread each avoids oversubscription
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("MKL_NUM_THREADS", "1")
# dequantised GGUF models are cached (entropylaw/probing/model.py gguf_cache_dir): never in the user's ~/.cache;
# one folder per test session (xdist's workers and the commands the tests run inherit it), removed at its end:
# SmolLM2's dequantised copy is 0.5 GB, and a folder left behind by every `make test` fills the disk
OWN_CACHE = None
if "ENTROPYLAW_CACHE" not in os.environ:
    import tempfile

    OWN_CACHE = os.environ["ENTROPYLAW_CACHE"] = tempfile.mkdtemp(prefix="entropylaw-test-cache-")


# The slowest test files, slowest first (seconds of one idle `pytest -n 2 --dist loadfile --durations=0`
# run, summed per file): collected first, so that with `--no-loadscope-reorder` (make test) xdist hands
# them out first (an A/B on idle main: 673 s against 682 s in xdist's own order, within the noise).
SLOWEST_FIRST = (
    "test_probe_smollm2.py", "test_figures_layout.py", "test_probe_dist.py", "test_ingest_mlflow.py",
    "test_text_width.py", "test_audit_smollm2.py", "test_report.py", "test_demo.py", "test_golden.py",
    "test_badinput_commands.py", "test_ingest_data_real.py", "test_size_law_intervals.py",
    "test_ingest_custom_trainers.py", "test_layers.py", "test_probe_triton.py", "test_api.py",
)


def pytest_ignore_collect(collection_path, config):
    """``-m printed`` alone (make test's second pass, under another BLAS kernel set): a test file
    that marks no test ``printed`` is not imported (collecting every file costs each worker
    about 18 s on 2 cores, for 14 files of 130 that hold such tests)."""
    if config.getoption("markexpr", "") == "printed" and collection_path.suffix == ".py" \
            and collection_path.name.startswith("test_") and "mark.printed" not in collection_path.read_text():
        return True
    return None


def pytest_collection_modifyitems(config, items):
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the rest keep their order


def pytest_sessionfinish(session, exitstatus):
    """The session's GGUF cache goes with it (the process that made it: xdist's controller, after its workers)."""
    if OWN_CACHE and not hasattr(session.config, "workerinput"):
        import shutil

        shutil.rmtree(OWN_CACHE, ignore_errors=True)


@pytest.fixture(autouse=True)
def _piped_width():
    """The commands a test runs print at the width of a pipe (120), not at the width of the
    terminal pytest runs in: something in the test process exports COLUMNS to the C
    environment (not to os.environ), so it is unset there too (a test that wants a width sets it)."""
    os.environ.pop("COLUMNS", None)
    os.unsetenv("COLUMNS")


@pytest.fixture
def real_logs() -> Path:
    """The directory of real veRL logs in ../shared; skips when absent."""
    if not REAL_LOGS.is_dir():
        pytest.skip("../shared/data/real-logs is absent (only CI and developers have it)")
    return REAL_LOGS


from _fork_cli import FORKED, run_cli  # noqa: E402,F401  (the tests' way to run a command)


@pytest.fixture
def cli():
    return run_cli


def logical_lines(text: str) -> list[str]:
    """The lines of a command's output with each wrapped line joined back to the line it continues
    (a continuation starts with spaces: the hanging indent of entropylaw.terminal.wrap)."""
    out: list[str] = []
    for line in text.splitlines():
        if out and line.startswith(" ") and line.strip():
            out[-1] += " " + line.strip()
        else:
            out.append(line)
    return out


def run_main(capsys, *args):
    """A command run in this process: (exit code, stdout, stderr with its wrapped lines joined, one space
    between words)."""
    from entropylaw.cli.main import main

    code = main([*map(str, args)])
    out = capsys.readouterr()
    return code, out.out, " ".join(out.err.split())


def verl_log(path, score_wiggle: float = 0.01, val_every: int = 0):
    """A veRL JSON lines log of 60 steps whose score follows the law of its entropy, ``score_wiggle`` the
    height of a sine on the training score; a GSM8K validation every ``val_every`` steps (none at 0)."""
    with open(path, "w") as f:
        for s in range(1, 61):
            h = 0.05 + 1.2 * math.exp(-s / 20)
            score = 0.9 - 0.2 * math.exp(h)
            if score_wiggle:
                score += score_wiggle * math.sin(s)
            data = {"actor/entropy": h, "critic/score/mean": score}
            if val_every and s % val_every == 0:
                data["val-core/gsm8k/acc/mean@1"] = 0.88 - 0.2 * math.exp(h) + 0.01 * math.sin(s)
            f.write(json.dumps({"step": s, "data": data}) + "\n")
    return path
