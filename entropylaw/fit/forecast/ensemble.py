"""``ensemble`` (methods weighted by their error on the late part of the window) and
``curve-ensemble`` (saturating curve families weighted by their fit): forecasts made of
other methods fitted on the same window."""

from __future__ import annotations

import numpy as np

from entropylaw.fit.forecast import calibrate as cal
from entropylaw.fit.forecast import regimes
from entropylaw.fit.forecast.curve_methods import ExpSaturation, PowerLaw, Sigmoid
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.methods import Method, _ci


class Ensemble(Method):
    """Methods weighted by ``1 / late_rmse_^2`` (their error on the late part of the window).

    ``members``: the methods fitted on the window; none: every one of ``methods`` (classes by
    name), fitted here. Members without a late-window error (too few points) or that cannot
    run get no weight. The forecast is the weighted mean; its interval the quantiles of the
    weighted mixture of the members' predictive draws; plateau and 90 % step likewise over
    the members that give one."""

    name = "ensemble"
    simplicity = 12
    description = "methods weighted by their error on the late part of the window"
    needs = frozenset({"members", "methods"})

    def __init__(self, conf=0.9, n_boot=200, seed=0, members=(), methods=None):
        self.conf = conf
        self.n_boot = n_boot
        self.seed = seed
        self.members = list(members)
        self.methods = methods

    def fit(self, run: RunData) -> "Ensemble":
        """Weigh the members (fitting them first where none are given)."""
        fitted = self.members or [m(self.conf, self.n_boot, self.seed).fit(run) for m in (self.methods or {}).values()]
        self.members_ = [m for m in fitted if m.ok_ and m.late_rmse_ is not None]
        self.end_, self.warnings_, self.target_kind_, self.bounds_ = run.end, [], run.target_kind, run.bounds
        self.ok_, self.reason_, self.late_rmse_ = bool(self.members_), None, None
        if not self.ok_:
            self.reason_ = "no method could be scored on the late part of the window (too few points)"
            return self
        inv = np.array([1.0 / (m.late_rmse_**2 + 1e-6) for m in self.members_])
        self._weigh(inv / inv.sum())
        self.params_ = {"weights": self.weights_}
        return self

    def _weigh(self, w):
        """Set the members' weights ``w`` (summing to 1) and the mixture's plateau, 90 % step, noise."""
        self.weights_ = {m.name: float(x) for m, x in zip(self.members_, w)}
        self.sigma_ = float(sum(self.weights_[m.name] * m.sigma_ for m in self.members_))
        w = np.array(list(self.weights_.values()))
        self.plateau_, self._plateau_draws = self._combine([m.plateau_ for m in self.members_],
                                                           [m._plateau_draws for m in self.members_], w)
        self.t90_, self._t90_draws = self._combine([m.t90_ for m in self.members_],
                                                   [m._t90_draws for m in self.members_], w)

    def _combine(self, points, draws, w):
        keep = [i for i, p in enumerate(points) if p is not None and draws[i] is not None]
        if not keep:
            return None, None
        wk = w[keep] / w[keep].sum()
        point = float(sum(wk[j] * points[i] for j, i in enumerate(keep)))
        return point, self._mixture([np.asarray(draws[i], float)[:, None] for i in keep], wk)[:, 0]

    def _mixture(self, draws, w):
        rng = np.random.default_rng(self.seed + 5)
        counts = rng.multinomial(max(self.n_boot, 1), w)
        return np.concatenate([d[rng.integers(0, len(d), c)] for d, c in zip(draws, counts) if c])

    def curve(self, steps):
        w = np.array([self.weights_[m.name] for m in self.members_])
        outs = [m.curve(steps) for m in self.members_]
        return sum(wi * o[0] for wi, o in zip(w, outs)), self._mixture([o[1] for o in outs], w)

    def predictive(self, steps, calibrated=None, average=False, noise=True):
        calibrated = self.calibrated if calibrated is None else calibrated
        w = np.array([self.weights_[m.name] for m in self.members_])
        outs = [m.predictive(steps, calibrated=False, average=average, noise=noise) for m in self.members_]
        mid = sum(wi * o[0] for wi, o in zip(w, outs))
        draws = self._mixture([o[1] for o in outs], w)
        steps = np.asarray(steps, float)
        first = min(m.origin_ for m in self.members_)
        h = (max(float(steps.max()), self.end_) - self.end_) / max(self.end_ - first, 1.0)  # the furthest step's band
        c = cal.method_factor(self.name, self.target_kind_, h) if calibrated else 1.0
        draws = cal.rescale(mid, draws, self.bounds_, c)
        regime = getattr(self, "regime_", None)  # set by forecast() on the method it shows (:mod:`.regimes`)
        if regime is not None:
            mid, draws = regimes.apply(regime, self.regime_rates_, steps[-1:] if average else steps, mid, draws,
                                       self.end_, self.bounds_, self.seed, own=True)
        return mid, draws

    def plateau_ci(self):
        d = self._plateau_draws
        return _ci(d if d is None or self.bounds_ is None else np.clip(d, *self.bounds_), self.conf)

    def t90_ci(self):
        return _ci(self._t90_draws, self.conf)


class CurveEnsemble(Ensemble):
    """Saturating curve families weighted by how well each fits the window, in the manner of
    Domhan et al. (IJCAI 2015): ``exp-saturation``, ``power`` and ScaleRL's ``sigmoid``, each
    with its bootstrap draws, weighted by ``exp(-BIC / 2)`` (BIC of its least-squares fit to
    every window point: ``n ln(RSS / n) + k ln n``), an approximation of each family's
    posterior probability; the forecast is the weighted mean, the interval the mixture's.

    >>> import numpy as np
    >>> from entropylaw.fit.forecast.data import RunData
    >>> steps = np.arange(0, 300, 5.0)
    >>> run = RunData.from_arrays(steps, 0.8 - 0.5 * np.exp(-steps / 40) + 0.002 * np.cos(steps))
    >>> e = CurveEnsemble(n_boot=50).fit(run.window(150))
    >>> max(e.weights_, key=e.weights_.get), round(float(e.predict([295.0])["forecast"].iloc[0]), 2)
    ('exp-saturation', 0.8)
    """

    name = "curve-ensemble"
    simplicity = 13
    description = "saturating families weighted by their fit (BIC), Domhan et al. 2015"
    needs = frozenset({"members"})
    FAMILIES = (ExpSaturation, PowerLaw, Sigmoid)

    def fit(self, run: RunData) -> "CurveEnsemble":
        """Weigh the families, taking each from the members where fitted there, else fitting it."""
        have = {m.name: m for m in self.members}
        members = [have.get(f.name) or f(self.conf, self.n_boot, self.seed).fit(run) for f in self.FAMILIES]
        self.members_ = [m for m in members if m.ok_ and getattr(m, "fit_", None) is not None]
        self.end_, self.warnings_, self.target_kind_, self.bounds_ = run.end, [], run.target_kind, run.bounds
        self.ok_, self.reason_, self.late_rmse_ = bool(self.members_), None, None
        if not self.ok_:
            self.reason_ = "no saturating family could be fitted to the window: " + "; ".join(
                f"{m.name}: {m.reason_}" for m in members if not m.ok_)
            return self
        bic = []
        for m in self.members_:
            n, k = m.fit_.n, m.fit_.family.n_params
            bic.append(n * np.log(max(m.fit_.rss, 1e-12) / n) + k * np.log(n))
        bic = np.array(bic)
        w = np.exp(-(bic - bic.min()) / 2)
        self._weigh(w / w.sum())
        self.params_ = {"weights": self.weights_, "bic": dict(zip(self.weights_, map(float, bic)))}
        return self
