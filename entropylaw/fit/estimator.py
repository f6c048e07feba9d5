"""scikit-learn's conventions, shared by the package's estimators (:class:`~entropylaw.fit.law.EntropyLawFit`,
:class:`~entropylaw.fit.early.EarlyPrediction`, :class:`~entropylaw.fit.algorithms.AlgorithmTest`): the
options are ``__init__``'s keywords (:meth:`Estimator.get_params` / :meth:`Estimator.set_params`), and
what only a fitted one can do, asked of one not fitted, is one :class:`NotFittedError` saying so.

>>> from entropylaw.fit.law import EntropyLawFit
>>> f = EntropyLawFit().set_params(conf=0.9)
>>> f.get_params()["conf"]
0.9
>>> f.predict([0.5])
Traceback (most recent call last):
...
entropylaw.fit.estimator.NotFittedError: this EntropyLawFit is not fitted yet: call fit(H, R) before predict()
"""

from __future__ import annotations

import inspect

import numpy as np

from entropylaw.errors import EntropyLawError


class NotFittedError(EntropyLawError, AttributeError):
    """An estimator used before ``fit`` (as scikit-learn's, an AttributeError too)."""


class Estimator:
    """``get_params``/``set_params`` over ``__init__``'s keywords; ``_fitted(what)`` refuses an unfitted
    estimator. ``FITTED``: an attribute ``fit`` sets; ``FIT_CALL``: how to fit one, for the message."""

    FITTED = "n_"
    FIT_CALL = "fit(...)"
    REPORT = "report"  # the method that writes a fitted one's text: str() and a notebook show it

    def __str__(self) -> str:
        """The fitted one's report; one not fitted yet says so, as its methods do (not their error)."""
        if not self.is_fitted():
            return f"{type(self).__name__} (not fitted yet: call {self.FIT_CALL})"
        return getattr(self, self.REPORT)()

    def _repr_html_(self) -> str:
        """A notebook shows the report (one not fitted yet: its repr, the options it was given)."""
        from entropylaw.terminal import as_html

        return as_html(str(self) if self.is_fitted() else repr(self))

    @classmethod
    def _param_names(cls) -> list[str]:
        return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]

    def get_params(self, deep: bool = True) -> dict:
        """The estimator's options, as ``__init__`` takes them."""
        return {k: getattr(self, k) for k in self._param_names()}

    def set_params(self, **params):
        """Change options (``__init__``'s keywords); returns the estimator. An unknown one is an error naming it."""
        known = self._param_names()
        for k in params:
            if k not in known:
                raise EntropyLawError(f"unknown option `{k}` of {type(self).__name__} (expected one of "
                                      f"{', '.join(known)})")
        for k, v in params.items():
            setattr(self, k, v)
        return self

    def to_json(self, **kwargs) -> str:
        """``to_dict()`` as strict JSON (NaN as null)."""
        from entropylaw.fileio import dumps

        return dumps(self.to_dict(), **kwargs)

    def is_fitted(self) -> bool:
        return hasattr(self, self.FITTED)

    def _fitted(self, what: str) -> None:
        if not self.is_fitted():
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet: call {self.FIT_CALL} before {what}")


def shown(value, width: int = 40) -> str:
    """``value`` as a message quotes it: its repr, or its type and size where that is long."""
    text = repr(value)
    if len(text) <= width:
        return text
    size = f" of {np.size(value)}" if np.ndim(value) else ""
    return f"a {type(value).__name__}{size}"


def as_numbers(value, name: str, expected: str) -> np.ndarray:
    """``value`` as a float array, or one :class:`EntropyLawError` naming ``name`` and what is
    ``expected``: a string, None or anything else that is not numbers is refused, not read as NaN.

    >>> as_numbers([0.1, 2], "H", "entropies in nats")
    array([0.1, 2. ])
    >>> as_numbers("x", "H", "entropies in nats")
    Traceback (most recent call last):
    ...
    entropylaw.errors.EntropyLawError: `H` 'x': expected entropies in nats
    """
    arr = None
    try:
        raw = np.asarray(value)
        if raw.dtype.kind in "biuf" or (raw.dtype.kind == "O" and not any(v is None for v in raw.ravel())):
            arr = raw.astype(float)
    except (TypeError, ValueError):  # "x" in an object array, a ragged list
        pass
    if arr is None:
        raise EntropyLawError(f"`{name}` {shown(value)}: expected {expected}")
    return arr
