"""Every forecast method, listed once: the CLI's choices, the API's, the backtest's and
:func:`~entropylaw.fit.forecast.core.forecast`'s all come from :data:`REGISTRY`.

To add a method: write its class in a module of its own (a subclass of
:class:`~.methods.ForecastMethod`, or of :class:`~.methods.Method` for a combination), saying
what it reads and needs, and add it to :data:`REGISTRY` below. Its place in the list is its
place in every table.
"""

from __future__ import annotations

import textwrap

from entropylaw.fit.forecast.curve_methods import ExpSaturation, Joint, PowerLaw, Sigmoid, SigmoidTokens
from entropylaw.fit.forecast.drift import DriftTrain, LogitDrift
from entropylaw.fit.forecast.ensemble import CurveEnsemble, Ensemble
from entropylaw.fit.forecast.last_value import LastValue
from entropylaw.fit.forecast.law import LawCeiling, LawEntropy, LawTrain
from entropylaw.fit.forecast.prior import PriorMethod

REGISTRY = {m.name: m for m in (
    LastValue, LawCeiling, LawEntropy, LawTrain, ExpSaturation, PowerLaw, Sigmoid, SigmoidTokens, Joint, LogitDrift,
    DriftTrain, PriorMethod, Ensemble, CurveEnsemble,
)}
ALL_METHODS = list(REGISTRY)
# the methods from the simplest: a tie in the backtest's rule for the default goes to the simpler
SIMPLER = sorted(REGISTRY, key=lambda name: REGISTRY[name].simplicity)
# the methods that fit one curve (not made of other methods): what a prior or an ensemble builds on
METHODS = {name: m for name, m in REGISTRY.items() if not m.combines()}

# where the default method cannot run on a window, this one is recommended instead
FALLBACK = LastValue.name
# where the decision's curve cannot run on a window, the next that models change is tried
DECISION_BACKUPS = (PowerLaw.name, ExpSaturation.name)


def methods_table(width: int = 96) -> str:
    """Every method's name and one-line description as a reST simple table, from :data:`REGISTRY`
    (the table in :mod:`~.core`'s docstring).

    >>> print(methods_table().splitlines()[3])
    ``last-value``         the last observed value carried forward
    """
    names = [f"``{name}``" for name in REGISTRY]
    first = max(map(len, names)) + 2
    rule = "=" * (first - 2) + "  " + "=" * (width - first)
    lines = [rule]
    for name, cls in zip(names, REGISTRY.values()):
        text = textwrap.wrap(cls.description, width - first) or [""]
        lines += [name.ljust(first) + text[0], *(" " * first + more for more in text[1:])]
    return "\n".join([rule, "method".ljust(first) + "what it does", *lines, rule])
