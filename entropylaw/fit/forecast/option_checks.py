"""The forecast's options that no run can change, checked before any run is read: the seed, the methods
asked for, the steps to forecast at and the horizon (:func:`~.core.check_options` reads them here).

>>> _is_number(3), _is_number(True), _is_number("3")
(True, False, False)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from entropylaw.errors import EntropyLawError


def _is_number(v) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, float, np.integer, np.floating))


def _check_where_and_how(options: dict) -> None:
    """``seed``, ``methods``, ``at_steps`` and ``horizon`` as :func:`forecast` reads them: a seed numpy
    takes, a name or a list of names, finite steps, a horizon above 0."""
    seed = options.get("seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise EntropyLawError(f"`seed` {seed!r}: expected a whole number, 0 or more")
    methods = options.get("methods")  # one name alone is that method (forecast_table makes it a list)
    if methods is not None and not isinstance(methods, str) and (not isinstance(methods, (list, tuple)) or not methods
                                                                 or not all(isinstance(m, str) for m in methods)):
        raise EntropyLawError(f"`methods` {methods!r}: expected a method's name or a list of names, such as "
                              "['exp-saturation']")
    horizon = options.get("horizon")
    if horizon is not None and not (np.isfinite(horizon) and horizon > 0):
        raise EntropyLawError(f"`horizon` {horizon!r}: expected a number of steps after the window's end, above 0")
    at = options.get("at_steps")
    if at is not None:
        steps = [at] if _is_number(at) else list(at) if isinstance(at, (list, tuple, np.ndarray, pd.Series)) else None
        if not steps or not all(_is_number(v) and np.isfinite(v) for v in steps):
            raise EntropyLawError(f"`at_steps` {at!r}: expected a training step or a list of them, finite numbers")
