"""The error convention.

A user mistake (a missing file, a malformed line, a bad option) raises
:class:`EntropyLawError` with one line that names the file, the line or key, and what
was expected. The CLI prints that line, ``entropylaw: error: ...``, and exits 2; it
never shows a traceback for one. Anything else escaping is a bug in entropylaw.

>>> try:
...     raise EntropyLawError("runs.csv: no step column (expected one of step, _step, global_step)")
... except EntropyLawError as err:
...     print(err)
runs.csv: no step column (expected one of step, _step, global_step)

An OS error on an input or output (permission, read-only file system, no space) is not a
bug either; :func:`describe_os_error` gives its one line:

>>> describe_os_error(PermissionError(13, "Permission denied", "runs/a.log"))
'runs/a.log: Permission denied (EACCES)'
>>> describe_os_error(OSError("Error writing bytes to file. Detail: [errno 28] No space left on device"))
'Error writing bytes to file. Detail: [errno 28] No space left on device (ENOSPC)'
"""

import errno as _errno
import os as _os
import re as _re


class EntropyLawError(Exception):
    """A user-facing error: the message is one self-contained line."""


class EntropyLawWarning(UserWarning):
    """Something usable but suspect (an ill-conditioned fit, dropped rows)."""


class RowsDroppedWarning(EntropyLawWarning):
    """Rows of a source were dropped (with their reasons) or a whole source was skipped."""


def describe_os_error(err: OSError) -> str:
    """``<path>: <what> (<errno name>)``; libraries that drop ``errno`` (pyarrow writes
    ``[errno 28]`` into its text) still get the name. A rename names its target."""
    code = err.errno
    if code is None:
        found = _re.search(r"\[errno (\d+)\]", str(err), _re.IGNORECASE)
        code = int(found.group(1)) if found else None
    name = _errno.errorcode.get(code, "") if code is not None else ""
    what = err.strerror or str(err) or type(err).__name__
    what = (what.splitlines() or [what])[0]
    path = err.filename2 if err.filename2 is not None else err.filename
    text = f"{_os.fsdecode(path)}: {what}" if path is not None and path != "" else what
    return f"{text} ({name})" if name and f"({name})" not in text else text
