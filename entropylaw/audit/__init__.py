"""``entropylaw audit``: is the entropy a trainer logged the entropy of its policy?

Beside :mod:`entropylaw.probe` (it may import probe and ingest; nothing below imports it):

- :mod:`entropylaw.audit.conventions`: the trainers' aggregations of per-token entropy
  (pure arithmetic on per-token arrays, one function per convention);
- :mod:`entropylaw.audit.forward`: the model forward giving the per-token arrays;
- :mod:`entropylaw.audit.verdict`: tolerance, match, correction;
- :mod:`entropylaw.audit.core`: reads model, rollouts and log, and puts them together.
"""

import sys
import types


class _CallablePackage(types.ModuleType):
    """``el.audit(...)`` is :func:`entropylaw.api.audit`; but importing any ``entropylaw.audit.*``
    module sets the attribute ``entropylaw.audit`` to this package, so the package itself must
    call the same function whichever Python finds."""

    def __call__(self, *args, **kwargs):
        from entropylaw.audit.core import audit

        return audit(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
