"""Ctrl-C while the command is still starting (importing numpy, pandas, scipy: a second or more)
ends it as later: ``entropylaw: interrupted``, exit 130, no traceback. ``python -m entropylaw``
imports the package before its ``__main__``, so a handler there alone came too late. Imported as a
library, entropylaw leaves Ctrl-C a ``KeyboardInterrupt``.

Each process runs under ``-X importtime`` (one stderr line per module imported) and is sent SIGINT
as soon as numpy has been imported: the package is then mid-import, pandas and scipy still to
come, however fast or loaded the machine (no guessed delay).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IMPORT_TIME = "import time:"


def _default_sigint():
    """The child starts with SIGINT's default disposition, however the suite was started (nohup, &)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupted_while_importing(argv: list[str]) -> tuple[int, str]:
    """(exit code, stderr without the import-time lines) of ``python -X importtime ARGV`` sent SIGINT
    once numpy is imported; skipped if it never was (the process ended first)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    proc = subprocess.Popen([sys.executable, "-X", "importtime", *argv], cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=env, preexec_fn=_default_sigint)
    watchdog = threading.Timer(5.0, proc.kill)  # the whole test stays under 5 s a process
    watchdog.start()
    lines, sent = [], False
    try:
        for line in proc.stderr:
            lines.append(line)
            if not sent and line.startswith(IMPORT_TIME) and line.rstrip().split("|")[-1].strip() == "numpy":
                proc.send_signal(signal.SIGINT)
                sent = True
        proc.wait()
    finally:
        watchdog.cancel()
    if not sent:
        pytest.skip("the process ended before numpy was imported")
    return proc.returncode, "".join(ln for ln in lines if not ln.startswith(IMPORT_TIME))


@pytest.mark.parametrize("how", ["python -m", "script"])
def test_ctrl_c_while_the_command_imports_is_one_line_and_exit_130(how, tmp_path):
    if how == "script":  # the installed `entropylaw` script's shape: a file named entropylaw calling __main__.main
        script = tmp_path / "entropylaw"
        script.write_text("import sys\nfrom entropylaw.__main__ import main\nsys.exit(main())\n")
        argv = [str(script), "forecast", "data/real"]
    else:
        argv = ["-m", "entropylaw", "forecast", "data/real"]
    code, err = _interrupted_while_importing(argv)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert code == 130 and err.strip() == "entropylaw: interrupted", (code, err)


def test_ctrl_c_while_a_program_imports_the_library_stays_a_keyboard_interrupt():
    code, err = _interrupted_while_importing(["-c", "import entropylaw"])
    assert code != 130 and "KeyboardInterrupt" in err and "entropylaw: interrupted" not in err, (code, err)


@pytest.mark.parametrize("argv, module", [
    (["py", "-m", "entropylaw", "fit"], "entropylaw"), (["py", "-Im", "entropylaw"], "entropylaw"),
    (["py", "-mentropylaw"], "entropylaw"), (["py", "-X", "importtime", "-m", "entropylaw"], "entropylaw"),
    (["py", "-Ximporttime", "-m", "entropylaw"], "entropylaw"),
    (["py", "-W", "ignore", "-m", "entropylaw"], "entropylaw"), (["py", "-c", "import entropylaw"], ""),
    (["py", "tool.py", "-m", "entropylaw"], ""), (["py", "-u", "-m", "pytest"], "pytest"),
])
def test_the_module_python_runs_is_read_off_the_interpreters_options(argv, module, monkeypatch):
    """``python -Im entropylaw`` is the command too (its Ctrl-C at start one line); a script's own
    ``-m`` after it, or ``-c``, is not."""
    from entropylaw import _startup

    monkeypatch.setattr(sys, "orig_argv", argv, raising=False)
    assert _startup._module_run() == module
