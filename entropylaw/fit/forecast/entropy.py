"""The entropy trajectory as a forecast: three forms, chosen by their own backtest.

``law+entropy`` and ``law+train`` need the entropy at steps not yet logged. Three forms
(``t = step - origin``), every one with ``H >= 0`` (the paper's constraint):

================  ======================================  ==================================
``exp-decay``     ``H = H_f + D exp(-t / tau)``, H_f >= 0  a floor reached exponentially
``power-decay``   ``H = H_f + B (t + 1)^(-c)``, H_f >= 0   a floor reached slowly
``power``         ``log H = log B - c log(t + 1)``          no floor: H -> 0 (fitted on log H)
================  ======================================  ==================================

:func:`choose` picks the form with the smallest error on the last 30 % of the window's
entropy points when fitted on the first 70 % (the form's own backtest on the entropy
series); :class:`EntropyPath` fits it on the whole window, with bootstrap draws.

>>> import numpy as np
>>> t = np.arange(0, 200.0)
>>> H = 0.05 + 0.5 * np.exp(-t / 30)
>>> path = EntropyPath().fit(t, H)
>>> path.form_, round(float(path.predict([1000])[0]), 3)
('exp-decay', 0.05)
>>> p = EntropyPath().fit(t, 0.4 * (t + 1) ** -0.5)
>>> p.form_, round(float(p.predict([999])[0]), 4)
('power', 0.0126)
"""

from __future__ import annotations

import numpy as np

from entropylaw.fit.forecast import curves as fc
from entropylaw.terminal import count


def _log_power_basis(shapes, t):
    x = np.log(t + 1.0)[None, :].repeat(len(shapes), axis=0)
    return np.stack([np.ones_like(x), -x], axis=-1)


POWER = fc.Family("power", ("log_B", "c"), (), [], _log_power_basis)


def families(L: float) -> dict:
    """Form name -> curve family for a window of ``L`` steps."""
    return {"exp-decay": fc.entropy_exp_decay(L), "power-decay": fc.entropy_power_decay(L), "power": POWER}


def _fit(form, fam, t, H, **kw):
    if form == "power":
        keep = H > 0
        if keep.sum() <= fam.n_params:
            raise fc.TooFewPoints(f"{count(int(keep.sum()), 'positive entropy point')} for a power law (needs 3)")
        return fc.fit_profile(fam, t[keep], np.log(H[keep]), **kw)
    return fc.fit_profile(fam, t, H, **kw)


def _eval(form, fit_or_family, shapes, betas, t):
    out = fc.curve(fit_or_family, shapes, betas, t)
    return np.exp(out) if form == "power" else out


def choose(t, H, L: float, holdout: float = 0.3) -> tuple[str, dict]:
    """The form with the smallest RMSE on the last ``holdout`` of the points; ``{form: rmse}``."""
    t, H = np.asarray(t, float), np.asarray(H, float)
    n_fit = int(np.floor((1 - holdout) * len(t)))
    errors = {}
    for form, fam in families(max(float(t[n_fit - 1]) if n_fit else L, 1.0)).items():
        try:
            f = _fit(form, fam, t[:n_fit], H[:n_fit])
            pred = _eval(form, fam, f.shape[None, :], f.beta[None, :], t[n_fit:])[0]
            errors[form] = float(np.sqrt(np.mean((pred - H[n_fit:]) ** 2)))
        except fc.TooFewPoints:
            errors[form] = np.inf
    if not np.isfinite(min(errors.values())):
        raise fc.TooFewPoints(f"{count(len(t), 'entropy point')}: too few to choose the entropy's form")
    return min(errors, key=errors.get), errors


class EntropyPath:
    """The window's entropy and its forecast (module docstring); ``form="auto"`` chooses."""

    def __init__(self, form: str = "auto", n_boot: int = 0, seed: int = 0):
        self.form = form
        self.n_boot = n_boot
        self.seed = seed

    def fit(self, t, H, prior=None, sigma2=None) -> "EntropyPath":
        t, H = np.asarray(t, float), np.asarray(H, float)
        L = max(float(t[-1] - t[0]), 1.0)
        if self.form == "auto":
            self.form_, self.errors_ = choose(t, H, L)
        else:
            self.form_, self.errors_ = self.form, {}
        self.family_ = families(L)[self.form_]
        self.fit_ = _fit(self.form_, self.family_, t, H, prior=prior, sigma2=sigma2, n_boot=self.n_boot,
                         seed=self.seed)
        f = self.fit_
        self.shape_draws_ = f.shape_draws if self.n_boot else f.shape[None, :]
        self.beta_draws_ = f.beta_draws if self.n_boot else f.beta[None, :]
        return self

    @property
    def floor_(self) -> float:
        return 0.0 if self.form_ == "power" else float(self.fit_.beta[0])

    def floor_draws(self) -> np.ndarray:
        return np.zeros(len(self.beta_draws_)) if self.form_ == "power" else self.beta_draws_[:, 0]

    def predict(self, t) -> np.ndarray:
        return _eval(self.form_, self.family_, self.fit_.shape[None, :], self.fit_.beta[None, :],
                     np.asarray(t, float))[0]

    def draws(self, t) -> np.ndarray:
        """(B, m) entropy draws at ``t`` (parameter uncertainty)."""
        return _eval(self.form_, self.family_, self.shape_draws_, self.beta_draws_, np.asarray(t, float))

    def params(self) -> dict:
        f = self.fit_
        if self.form_ == "power":
            return {"entropy_form": "power", "entropy_floor": 0.0, "entropy_B": float(np.exp(f.beta[0])),
                    "entropy_c": float(f.beta[1])}
        shape = "entropy_tau" if self.form_ == "exp-decay" else "entropy_c"
        return {"entropy_form": self.form_, "entropy_floor": float(f.beta[0]), "entropy_amplitude": float(f.beta[1]),
                shape: float(np.exp(f.shape[0]))}
