"""A package that is also the API function of the same name (``el.probe``, ``el.report``,
``el.figures``, ``el.audit``).

``entropylaw`` exports those functions, and it has subpackages of the same names: importing any
``entropylaw.page.*`` module sets the attribute ``entropylaw.page`` to the package. So the
package itself calls the function, and ``el.report(...)`` works whichever Python finds.
"""

from __future__ import annotations

import importlib
import sys
import types


def calls(package: str, module: str, function: str) -> None:
    """Make the package ``package`` callable as ``module.function`` (imported on the first call)."""

    class _CallablePackage(types.ModuleType):
        def __call__(self, *args, **kwargs):
            return getattr(importlib.import_module(module), function)(*args, **kwargs)

    _CallablePackage.__doc__ = f"``{package}(...)`` is ``{module}.{function}(...)``."
    sys.modules[package].__class__ = _CallablePackage
