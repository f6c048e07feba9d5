"""How a test runs a command: ``run_cli`` (re-exported by conftest).

A command runs in a fork of the test process, which has imported entropylaw already (2.4 s of
each command's 3 s at start-up, about 200 commands in the suite), set up as a fresh
``python -m entropylaw`` starts:

- its working directory, environment (with ``env`` added), ``sys.argv`` and ``sys.path[0]``;
- its standard streams on files of its own (stdin from /dev/null; stderr line-buffered with
  ``backslashreplace``; unbuffered under ``PYTHONUNBUFFERED``), no faulthandler;
- Python's start-up signals (SIGINT raises KeyboardInterrupt, SIGPIPE ignored: a closed pipe is
  a ``BrokenPipeError``, SIGTERM default), hooks (``sys.excepthook``, ``sys.unraisablehook``,
  ``threading.excepthook``) and logging (no handler: a warning reaches stderr as in a fresh one);
- the warning filters a fresh interpreter has after importing what the command imports (read
  once from one, with this environment's ``PYTHONWARNINGS``), not pytest's;
- entropylaw's caches of fits and forecasts emptied (a fresh process starts with none);
- an exit that runs nothing of the test process's (``os._exit``), its status as the
  interpreter's (modulo 256); interrupted or past ``timeout``, the child is killed and reaped.

What a fork cannot be gets a fresh interpreter: ``fresh=True``, a command that runs torch
(:data:`FRESH_COMMANDS`: libgomp's thread pool does not survive a fork), or an ``env`` that sets
what is read only at start-up (:data:`AT_START`). A test's own monkeypatches do reach a forked
command (they would not a fresh one): a test that patches entropylaw runs its command fresh.
"""

from __future__ import annotations

import builtins
import importlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FRESH_COMMANDS = {"probe", "probe-checkpoints", "audit", "lab"}
AT_START = ("OPENBLAS", "OMP_", "MKL_", "PYTHON", "LD_", "MALLOC")  # read as a process starts
FORKED = "<forked from the test process> -m entropylaw"  # a forked command's ``args[0]``
# what a command may import whose import adds warning filters (numpy's, scipy's): the fresh
# interpreter the filters are read from imports them too
IMPORTS = ("entropylaw.cli.main", "numpy", "scipy.stats", "scipy.optimize", "pandas", "matplotlib.pyplot", "lmfit")
_FILTERS: list = []


def run_cli(*args: str, cwd: Path | None = None, env: dict | None = None, fresh: bool = False,
            timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``python -m entropylaw ARGS`` in a process of its own and capture its output (above)."""
    env = {k: v for k, v in (env or {}).items() if os.environ.get(k) != v}  # what it changes
    command = next((a for a in args if not a.startswith("-")), "")
    if fresh or command in FRESH_COMMANDS or any(k.startswith(AT_START) for k in env):
        return subprocess.run([sys.executable, "-m", "entropylaw", *args], cwd=cwd or ROOT, capture_output=True,
                              text=True, env=dict(os.environ, **env), timeout=timeout)
    return _forked(list(args), Path(cwd or ROOT), env, timeout)


def fresh_filters() -> list:
    """The warning filters of a fresh interpreter that imported :data:`IMPORTS`, as
    ``warnings.filters`` holds them (read from one once, then kept)."""
    if not _FILTERS:
        code = ("import importlib, json, warnings\n"
                f"for name in {IMPORTS!r}:\n"
                "    try:\n        importlib.import_module(name)\n    except ImportError:\n        pass\n"
                "text = lambda r: r if r is None else [r.pattern, 're'] if hasattr(r, 'pattern') else [r, 'text']\n"
                "print(json.dumps([(a, text(m), c.__module__, c.__qualname__, text(mod), n)"
                " for a, m, c, mod, n in warnings.filters]))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                             timeout=300)
        for action, message, module, name, where, line in json.loads(out.stdout.strip().splitlines()[-1]):
            category = builtins if module == "builtins" else importlib.import_module(module)
            for part in name.split("."):
                category = getattr(category, part)
            _FILTERS.append((action, _pattern(message, re.I), category, _pattern(where, 0), line))
    return _FILTERS


def _pattern(kept, flags):
    """A filter's message or module as the interpreter held it: a compiled pattern, an exact text, None."""
    if kept is None:
        return None
    text, kind = kept
    return re.compile(text, flags) if kind == "re" else text


def _forked(args: list[str], cwd: Path, env: dict, timeout: float) -> subprocess.CompletedProcess:
    from entropylaw.cli.main import main

    filters = fresh_filters()  # in this process: the child only assigns them
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        sys.stdout.flush(), sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # the child: never returns into pytest
            code = 1
            try:
                _as_fresh(out, err, cwd, env, filters)
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
                    os._exit(code % 256 if isinstance(code, int) else 1)
        status = _wait(pid, timeout, args)
        out.seek(0), err.seek(0)
        return subprocess.CompletedProcess([FORKED, *args], os.waitstatus_to_exitcode(status),
                                           out.read().decode(errors="replace"), err.read().decode(errors="replace"))


def _as_fresh(out, err, cwd: Path, env: dict, filters: list) -> None:
    """The child set up as a fresh ``python -m entropylaw`` (module docstring)."""
    import faulthandler
    import logging
    import threading
    import warnings

    os.dup2(out.fileno(), 1), os.dup2(err.fileno(), 2)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    unbuffered = bool(os.environ.get("PYTHONUNBUFFERED") or env.get("PYTHONUNBUFFERED"))
    sys.stdin = open(0, closefd=False)
    sys.stdout = open(1, "w", closefd=False, buffering=1 if unbuffered else -1)
    sys.stderr = open(2, "w", closefd=False, errors="backslashreplace", buffering=1)
    if unbuffered:
        sys.stdout.reconfigure(write_through=True), sys.stderr.reconfigure(write_through=True)
    faulthandler.disable()
    os.chdir(cwd)
    os.environ.update(env)
    sys.path[0:0] = [str(cwd)]
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    sys.excepthook, sys.unraisablehook = sys.__excepthook__, sys.__unraisablehook__
    threading.excepthook = threading.__excepthook__
    logging.root.handlers.clear()
    logging.root.setLevel(logging.WARNING)
    warnings.filters[:] = filters
    warnings._filters_mutated()  # every module's record of warnings already said is stale
    from entropylaw.figure_sets import base
    from entropylaw.results import cache, runs

    cache._CACHE.clear(), cache._KEYS.clear(), runs._USABLE.clear(), base._TABLES.clear()


def _wait(pid: int, timeout: float, args) -> int:
    """The child's status; interrupted or past ``timeout``, the child killed and reaped first."""
    deadline = time.monotonic() + timeout
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return status
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired([FORKED, *args], timeout)
            time.sleep(0.01)
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
