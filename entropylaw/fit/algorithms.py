"""Is the law algorithm-irrelevant (paper Fig. 6)? A nested-model test.

Shared model: one ``(a, b)`` for the runs of every algorithm. Separate model: one
``(a, b)`` per algorithm. Residuals are autocorrelated within a run, so both models are
compared after prewhitening each run with an AR(1) filter (Prais-Winsten), ``phi`` chosen
by restricted likelihood of the separate model on a grid; then the classical F-test
``F = ((RSS_shared - RSS_sep) / (p_sep - p_shared)) / (RSS_sep / (n - p_sep))`` and Gaussian
AIC on the prewhitened data. ``p >= 1 - conf`` reads "consistent with algorithm-irrelevant".

>>> import numpy as np, pandas as pd
>>> rng = np.random.default_rng(1)
>>> def run(b):
...     H = 0.05 + np.exp(-np.arange(40) / 10)
...     return pd.DataFrame({"H": H, "R": b - 0.2 * np.exp(H) + 0.01 * rng.standard_normal(40)})
>>> t = AlgorithmTest().fit({"g1": run(0.8), "g2": run(0.8), "r1": run(0.8)},
...                         {"g1": "grpo", "g2": "grpo", "r1": "rloo"})
>>> t.verdict_.startswith("consistent")
True
>>> print(t)  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
algorithms: grpo, rloo; 3 runs, 120 points, AR(1) phi = ...
AIC shared = ..., separate = ...
(a, b) shared (...); per algorithm grpo (...), rloo (...) (fitted on the AR(1)-prewhitened points
the test compares: ...)
consistent with algorithm-irrelevant (F = ..., p = ...; AIC prefers shared)
note: one run of rloo: what tells it apart may be that run's own (seed, data order), not its algorithm; give several
runs of each to test the algorithm
"""

from __future__ import annotations

import numpy as np
from scipy import special  # fdtrc = F survival function (scipy.stats costs ~1.5 s to import)

from entropylaw.errors import EntropyLawError
from entropylaw.fit.estimator import Estimator
from entropylaw.fit.pairing import check_pairs
from entropylaw.fit.trust import few_points
from entropylaw.fit.uncertainty import check_conf
from entropylaw.terminal import count, wrap

PHI_GRID = np.linspace(-0.9, 0.98, 95)


def one_run_note(algorithms) -> str:
    """What a verdict on an algorithm with one run cannot tell apart (the text and the figure say it)."""
    return (f"one run of {', '.join(algorithms)}: what tells it apart may be that run's own (seed, data order), "
            "not its algorithm; give several runs of each to test the algorithm")


def few_points_note(points_of_run: dict) -> str | None:
    """What the verdict rests on where runs have few points (the rule of ``fit`` and ``scale``:
    :func:`~entropylaw.fit.trust.few_points`), None where no run has.

    >>> few_points_note({"g1": 5, "g2": 40, "p1": 4})
    'few points: g1 only 5 points, p1 only 4 points: F and p rest on them and are rough'
    """
    few = {r: why for r, n in points_of_run.items() if (why := few_points(n))}
    if not few:
        return None
    said = ", ".join(f"{r} {why}" for r, why in list(few.items())[:4]) + (f" and {len(few) - 4} more"
                                                                          if len(few) > 4 else "")
    return f"few points: {said}: F and p rest on them and are rough"


def _prewhiten(M, phi, run):
    """Prais-Winsten transform of the rows of ``M`` within each run."""
    out = M.copy()
    for k in np.unique(run):
        idx = np.nonzero(run == k)[0]
        out[idx[0]] = np.sqrt(1 - phi**2) * M[idx[0]]
        out[idx[1:]] = M[idx[1:]] - phi * M[idx[:-1]]
    return out


def _rss(X, y, beta_out=None):
    beta, *_ = np.linalg.lstsq(X, y, rcond=None)
    r = y - X @ beta
    if beta_out is not None:
        beta_out[:] = beta
    return float(r @ r)


def _ab(v: dict) -> str:
    """``(a, b)`` as the report prints it; an a <= 0 is a law that does not describe those runs, said there."""
    return f"({v['a']:.4g}, {v['b']:.4g})" + ("" if v["a"] > 0 else " a <= 0: the law does not describe them")


# `algorithm` gives every run read one algorithm, or each run its own: runs whose names say none are named
UNKNOWN = ("unknown algorithm (its name and config say none): give each run its own with `algorithm` RUN=NAME "
           "(entropylaw algorithms RUNS --algorithm run1=grpo --algorithm run2=ppo; in Python a dict, "
           "algorithm={'run1': 'grpo', 'run2': 'ppo'})")


class AlgorithmTest(Estimator):
    """Nested F-test and AIC: one (a, b) for all algorithms vs one per algorithm."""

    FITTED, FIT_CALL = "verdict_", "fit(pairs_by_run, algorithm_of_run)"

    def __init__(self, conf=0.95):
        self.conf = conf

    def fit(self, pairs_by_run: dict, algorithm_of_run: dict, left_out: dict | None = None):
        """``left_out``: runs kept out of the test before it, with why (said in the report)."""
        check_conf(self.conf)
        self.left_out_ = dict(left_out or {})
        names = list(pairs_by_run)
        missing = [r for r in names if not algorithm_of_run.get(r)]
        if missing:
            raise EntropyLawError(f"run {missing[0]!r}: {UNKNOWN}")
        algs = sorted({algorithm_of_run[r] for r in names})
        if len(algs) < 2:
            from entropylaw.fit.run import left_out_line  # fit.run imports the law, which this module need not

            got = f"{', '.join(algs)} alone" if algs else "none"
            raise EntropyLawError(left_out_line(self.left_out_, f"the algorithm test needs runs of at least 2 "
                                                                f"algorithms (got {got})"))
        H, R, run, alg = [], [], [], []
        for i, r in enumerate(names):
            h, y = check_pairs(pairs_by_run[r]["H"], pairs_by_run[r]["R"], where=f"run {r!r}")
            (H.append(h), R.append(y), run.append(np.full(len(h), i)),
             alg.append(np.full(len(h), algs.index(algorithm_of_run[r]))))
        H, R, run, alg = (np.concatenate(v) for v in (H, R, run, alg))
        x = np.exp(H)
        shared = np.column_stack([-x, np.ones_like(x)])
        onehot = (alg[:, None] == np.arange(len(algs))[None, :]).astype(float)
        sep = np.column_stack([-x[:, None] * onehot, onehot])
        n, p0, p1 = len(R), 2, 2 * len(algs)
        if n <= p1:
            raise EntropyLawError(f"{n} points are too few for {p1} parameters")
        m = len(names)
        loglik = []
        for phi in PHI_GRID:  # REML of the separate model
            Xs, ys = _prewhiten(sep, phi, run), _prewhiten(R, phi, run)
            sign, logdet = np.linalg.slogdet(Xs.T @ Xs)
            loglik.append(-0.5 * (-m * np.log(1 - phi**2) + logdet + (n - p1) * np.log(_rss(Xs, ys))))
        self.phi_ = float(PHI_GRID[int(np.argmax(loglik))])
        ys = _prewhiten(R, self.phi_, run)
        beta0, beta1 = np.empty(p0), np.empty(p1)
        self.rss_shared_ = _rss(_prewhiten(shared, self.phi_, run), ys, beta0)
        self.rss_separate_ = _rss(_prewhiten(sep, self.phi_, run), ys, beta1)
        # the two models' (a, b), estimated on the prewhitened data as the test compares them
        self.shared_ = {"a": float(beta0[0]), "b": float(beta0[1])}
        self.per_algorithm_ = {g: {"a": float(beta1[k]), "b": float(beta1[len(algs) + k])} for k, g in enumerate(algs)}
        self.pairs_ = {r: pairs_by_run[r] for r in names}
        self.algorithm_of_ = {r: algorithm_of_run[r] for r in names}
        self.few_points_ = {r: len(pairs_by_run[r]["H"]) for r in names if few_points(len(pairs_by_run[r]["H"]))}
        self.f_stat_ = ((self.rss_shared_ - self.rss_separate_) / (p1 - p0)) / (self.rss_separate_ / (n - p1))
        self.p_value_ = float(special.fdtrc(p1 - p0, n - p1, self.f_stat_))
        self.aic_shared_ = n * np.log(self.rss_shared_ / n) + 2 * (p0 + 1)
        self.aic_separate_ = n * np.log(self.rss_separate_ / n) + 2 * (p1 + 1)
        self.algorithms_, self.n_, self.dof_ = algs, n, (p1 - p0, n - p1)
        # an algorithm with one run: that run's own spread (its seed) is all the test sees of it
        self.confounded_ = [g for g in algs if sum(algorithm_of_run[r] == g for r in names) == 1]
        alpha = 1 - self.conf
        aic_word = "shared" if self.aic_shared_ <= self.aic_separate_ else "separate"
        if self.p_value_ >= alpha:
            self.verdict_ = (f"consistent with algorithm-irrelevant (F = {self.f_stat_:.3g}, p = {self.p_value_:.3g}; "
                             f"AIC prefers {aic_word})")
        else:
            self.verdict_ = (f"algorithm matters: one (a, b) per algorithm fits better "
                             f"(F = {self.f_stat_:.3g}, p = {self.p_value_:.3g}; AIC prefers {aic_word})")
        return self

    def to_dict(self) -> dict:
        self._fitted("to_dict()")
        return {"algorithms": self.algorithms_, "n": self.n_, "n_runs": len(self.pairs_), "phi": self.phi_,
                "f_stat": float(self.f_stat_), "dof": list(self.dof_), "p_value": self.p_value_,
                "aic_shared": float(self.aic_shared_), "aic_separate": float(self.aic_separate_),
                "shared": dict(self.shared_), "per_algorithm": {g: dict(v) for g, v in self.per_algorithm_.items()},
                "verdict": self.verdict_, "one_run_an_algorithm": self.confounded_, "few_points": dict(self.few_points_),
                "left_out": dict(self.left_out_)}

    def report(self) -> str:
        """What ``entropylaw algorithms`` prints: the algorithms, the data, the two models' AIC, the verdict."""
        self._fitted("report()")
        lines = [f"algorithms: {', '.join(self.algorithms_)}; {count(len(self.pairs_), 'run')}, "
                 f"{count(self.n_, 'point')}, AR(1) phi = {self.phi_:.2f}",
                 f"AIC shared = {self.aic_shared_:.1f}, separate = {self.aic_separate_:.1f}",
                 "(a, b) shared " + _ab(self.shared_) + "; per algorithm "
                 + ", ".join(f"{g} {_ab(v)}" for g, v in self.per_algorithm_.items())
                 + " (fitted on the AR(1)-prewhitened points the test compares: `fit` fits each run's own points, "
                   "and its figure draws those)", self.verdict_]
        few = few_points_note(self.few_points_)
        if few:  # beside the verdict it qualifies
            lines.append(f"note: {few}")
        if self.confounded_:
            lines.append(f"note: {one_run_note(self.confounded_)}")
        lines += [f"left out: {r}: {why}" for r, why in self.left_out_.items()]
        return wrap("\n".join(lines))

    def __repr__(self) -> str:
        if not self.is_fitted():
            return f"AlgorithmTest(conf={self.conf})"
        return f"<AlgorithmTest {', '.join(self.algorithms_)}: {count(len(self.pairs_), 'run')}; {self.verdict_}>"

    def plot(self, ax=None, **kwargs):
        """Every run's (entropy, score) points, marker by algorithm, the shared curve and each
        algorithm's own (the AR(1) estimates the test compares), F and p under the plot
        (paper Fig. 6); returns the axes."""
        from entropylaw.draw.law import plot_algorithms  # matplotlib: loaded on the first plot

        self._fitted("plot()")
        return plot_algorithms(self.pairs_, self.algorithm_of_, self.shared_, per_algorithm=self.per_algorithm_,
                               test={"f_stat": self.f_stat_, "p_value": self.p_value_, "verdict": self.verdict_},
                               ax=ax, **kwargs)
