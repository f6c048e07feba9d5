"""Ctrl-C while the ``entropylaw`` command is still starting ends it as Ctrl-C does later on:
``entropylaw: interrupted`` on stderr, exit 130, no traceback.

Starting takes a second or more (numpy, pandas, scipy), and ``python -m entropylaw`` imports the
package (``entropylaw/__init__.py``, which imports the API) before it runs ``__main__.py``: so the
package's own imports are guarded too (:func:`interrupted_on_start`), before any of them. This
module imports nothing heavy. Imported as a library, entropylaw leaves Ctrl-C a
``KeyboardInterrupt``: the guard acts only in the command's process (:func:`as_command`).
"""

from __future__ import annotations

import contextlib
import os
import sys

INTERRUPTED = 130  # the shell's code for a command ended by SIGINT (128 + 2)
COMMAND = "entropylaw"
MODULES = (COMMAND, f"{COMMAND}.__main__")  # what ``python -m`` runs as the command


FLAGS = set("bBdEhiIOPqRsSuvx")  # the interpreter's options that take no value: may precede m in one word (-Im)


def _module_run() -> str:
    """The module ``python -m`` was given (``sys.orig_argv``: ``-m NAME``, ``-mNAME``, ``-Im NAME``),
    else ''."""
    argv = [str(a) for a in getattr(sys, "orig_argv", ())]
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg in ("-X", "-W", "--check-hash-based-pycs"):  # an option and its value
            i += 2
            continue
        if not arg.startswith("-") or arg.startswith("-c"):  # a script or -c: the interpreter's options end
            return ""
        at = arg.find("m")
        if not arg.startswith("--") and at > 0 and set(arg[1:at]) <= FLAGS:
            return arg[at + 1:] or (argv[i + 1] if i + 1 < len(argv) else "")
        i += 1
    return ""


def as_command() -> bool:
    """Whether this process is the ``entropylaw`` command: ``python -m entropylaw`` (its package
    imported while ``-m`` looks for ``__main__``: ``sys.argv[0]`` is then ``'-m'``, later the
    file's path), the installed ``entropylaw`` script, or ``python .../entropylaw/__main__.py``.

    >>> as_command()  # doctest's own process
    False
    """
    first = os.path.normpath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if first == "-m":
        return _module_run() in MODULES
    return (os.path.basename(first).removesuffix(".exe") == COMMAND
            or first.endswith(os.path.join(COMMAND, "__main__.py")))


@contextlib.contextmanager
def interrupted_on_start(always: bool = False):
    """A ``KeyboardInterrupt`` inside: in the command's process (or ``always``), one line and
    exit 130 (``SystemExit``); elsewhere it goes on as it came."""
    try:
        yield
    except KeyboardInterrupt:
        if not (always or as_command()):
            raise
        print(f"{COMMAND}: interrupted", file=sys.stderr)
        raise SystemExit(INTERRUPTED) from None
