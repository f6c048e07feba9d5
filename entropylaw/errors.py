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
"""


class EntropyLawError(Exception):
    """A user-facing error: the message is one self-contained line."""


class EntropyLawWarning(UserWarning):
    """Something usable but suspect (an ill-conditioned fit, dropped rows)."""


class RowsDroppedWarning(EntropyLawWarning):
    """Rows of a source were dropped (with their reasons) or a whole source was skipped."""
