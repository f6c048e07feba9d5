"""Shared fixtures. Tests that need ../shared skip cleanly when it is absent."""

from __future__ import annotations

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
