"""Shared fixtures. Tests that need ../shared skip cleanly when it is absent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
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


# commands that run torch: libgomp's thread pool does not survive a fork, so they start a fresh process
FRESH_COMMANDS = {"probe", "probe-checkpoints", "audit", "lab"}
# what the environment sets only as a process starts (BLAS kernels and threads, Python's own switches)
AT_START = ("OPENBLAS", "OMP_", "MKL_", "PYTHON", "LD_", "MALLOC")
FORKED = "<forked from the test process> -m entropylaw"  # a forked command's ``args[0]``


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None,
            fresh: bool = False) -> subprocess.CompletedProcess:
    """Run ``python -m entropylaw ARGS`` in a process of its own and capture its output.

    The process is a fork of this one, which has imported entropylaw already (2.4 s of each
    command's 3 s at start-up, 200 commands in the suite), set up as ``python -m entropylaw``
    starts: its own working directory, environment, standard streams and signals, Python's
    default warning filters, and an exit that runs nothing of this process's. A fresh
    interpreter where that cannot be the same: ``fresh=True``, a command that runs torch
    (:data:`FRESH_COMMANDS`), or an environment read only at start-up (:data:`AT_START`).
    """
    env = {k: v for k, v in (env or {}).items() if os.environ.get(k) != v}  # what it changes
    command = next((a for a in args if not a.startswith("-")), "")
    if fresh or command in FRESH_COMMANDS or any(k.startswith(AT_START) for k in env):
        return subprocess.run([sys.executable, "-m", "entropylaw", *args], cwd=cwd or ROOT, capture_output=True,
                              text=True, env=dict(os.environ, **env), timeout=600)
    return _forked(list(args), Path(cwd or ROOT), env)


def _forked(args: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    import tempfile
    import warnings

    from entropylaw.cli.main import main

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush(), sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            code = 1
            try:
                os.dup2(out.fileno(), 1), os.dup2(err.fileno(), 2)
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                sys.stdin = open(0, closefd=False)
                sys.stdout = open(1, "w", closefd=False)
                sys.stderr = open(2, "w", closefd=False, errors="backslashreplace")
                os.chdir(cwd)
                os.environ.update(env)
                for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
                    signal.signal(sig, signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL)
                warnings.resetwarnings()  # a fresh interpreter's filters, not pytest's
                for action, category in (("default", DeprecationWarning), ("ignore", DeprecationWarning),
                                         ("ignore", PendingDeprecationWarning), ("ignore", ImportWarning),
                                         ("ignore", ResourceWarning)):
                    warnings.filterwarnings(action, category=category,
                                            module="__main__" if action == "default" else "")
                sys.argv = [str(ROOT / "entropylaw" / "__main__.py"), *args]
                try:
                    code = main(args)
                except SystemExit as stop:
                    code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
                    if stop.code is not None and not isinstance(stop.code, int):
                        print(stop.code, file=sys.stderr)
            except BaseException:  # noqa: BLE001 -- as the interpreter would: the traceback, exit 1
                import traceback

                traceback.print_exc()
                code = 1
            finally:
                try:
                    sys.stdout.flush(), sys.stderr.flush()
                finally:
                    os._exit(code if isinstance(code, int) else 1)
        _, status = os.waitpid(pid, 0)
        out.seek(0), err.seek(0)
        return subprocess.CompletedProcess([FORKED, *args], os.waitstatus_to_exitcode(status),
                                           out.read().decode(errors="replace"), err.read().decode(errors="replace"))


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
