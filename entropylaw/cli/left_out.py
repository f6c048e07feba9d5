"""A run left out is said once in full: in the output (the ``left out:`` line under the table, or
its ``--json`` row's ``left_out``), and on stderr only as a one-line pointer there. The library
warns of each run it leaves out, with why (a script calling the API sees it); the command line
printed that warning and the same text again under its table (``forecast``, ``rank``).

>>> import warnings
>>> from entropylaw.errors import EntropyLawWarning
>>> w = warnings.WarningMessage(EntropyLawWarning("run 'a' left out: 1 point"), EntropyLawWarning, "x", 1)
>>> _left_out_of(w)
'a'
>>> pointer(["a", "b"], json_out=False)
"2 runs left out (a, b): why in the 'left out:' lines of the output"
"""

from __future__ import annotations

import re
import warnings

from entropylaw.errors import EntropyLawWarning
from entropylaw.api.plumbing import count

_LEFT_OUT = re.compile(r"^run (['\"])(.*?)\1 left out: ")


def said_once(call, json_out: bool = False):
    """``call()``, its warnings replayed after it, those of a run it left out (its result's
    ``left_out``) as one pointer line (module docstring); the others as they were."""
    error = result = None
    with warnings.catch_warnings(record=True) as caught:
        try:
            result = call()
        except Exception as err:  # noqa: BLE001 -- re-raised below, once the warnings are said
            error = err
    left = set(getattr(result, "left_out", None) or {})
    pointed = []
    for w in caught:
        rid = _left_out_of(w)
        if rid is not None and rid in left:
            pointed.append(rid)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if pointed:
        warnings.warn(pointer(list(dict.fromkeys(pointed)), json_out), EntropyLawWarning, stacklevel=2)
    if error is not None:
        raise error
    return result


def _left_out_of(w) -> str | None:
    """The run a caught warning says is left out, else None."""
    if not issubclass(w.category, EntropyLawWarning):
        return None
    found = _LEFT_OUT.match(str(w.message))
    return found.group(2) if found else None


def pointer(run_ids: list, json_out: bool) -> str:
    """The one line on stderr for the runs left out: which, and where their reasons are."""
    many = len(run_ids) > 1
    if json_out:
        where = ("each one's" if many else "its") + " JSON row ('left_out')"
    else:
        where = "the 'left out:' line" + "s" * many + " of the output"
    if len(run_ids) == 1:
        return f"run {run_ids[0]!r} left out: why in {where}"
    names = ", ".join(run_ids[:3]) + (f" and {len(run_ids) - 3} more" if len(run_ids) > 3 else "")
    return f"{count(len(run_ids), 'run')} left out ({names}): why in {where}"
