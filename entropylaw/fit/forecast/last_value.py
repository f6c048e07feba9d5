"""``last-value``: the last observed value carried forward (the naive baseline).

>>> import numpy as np
>>> from entropylaw.fit.forecast.data import RunData
>>> steps = np.arange(0, 200, 5.0)
>>> m = LastValue(n_boot=50).fit(RunData.from_arrays(steps, 0.8 - 0.5 * np.exp(-steps / 40)).window(100))
>>> round(m.plateau_, 3), m.t90_          # the last value, 0.8 - 0.5 exp(-100/40)
(0.759, None)
"""

from __future__ import annotations

import numpy as np

from entropylaw.fit.forecast.data import level_noise
from entropylaw.fit.forecast.methods import CannotRun, ForecastMethod
from entropylaw.fit.forecast.names import LAST_VALUE
from entropylaw.fit.forecast.problems import noise_floor


LAST_POINTS = 5  # a training score's last level: the mean of the window's last 5 points


class LastValue(ForecastMethod):
    """The last observed value carried forward (the naive baseline); for a training score,
    the mean of the window's last :data:`LAST_POINTS` points."""

    name = LAST_VALUE
    simplicity = 0
    description = "the last observed value carried forward"
    models_change = False  # carried forward: its curve is flat

    def _fit(self, run, n_boot):
        y = run.target.values
        if len(y) < 2:
            raise CannotRun(f"needs 2 {run.target_kind} points in the window (to size the noise); has {len(y)}")
        # the score's own noise, robust to a take-off jump and a floor held; repeats of one value on a small
        # validation set (0.6333 three times on 30 problems) read as 0: never below its binomial noise
        self.sigma_ = max(level_noise(y), noise_floor(run))
        # a training score is one batch's reward, far noisier than a validation pass: its last
        # level is the mean of the window's last few points, not the last batch alone
        k = min(LAST_POINTS, len(y)) if run.target_kind == "training score" else 1
        self.last_ = float(np.mean(y[-k:]))
        z = np.random.default_rng(self.seed).standard_normal(max(n_boot, 1))
        self._level = self.last_ + self.sigma_ / np.sqrt(k) * z
        self._finish(self.last_, self._level, None, None, {"last": self.last_, "sigma": self.sigma_, "points": k})
        self.t90_note_ = "last-value assumes no further change"

    def _calibrate(self, run):
        """No model-error term: the interval is the score's own noise, widened only by the
        calibration factor the backtest measured (not the late window's drift). The
        late-window error is still measured: the ensemble weighs by it."""
        super()._calibrate(run)
        self.q_ = 0.0

    def _mid(self, steps):
        return np.full(len(steps), self.last_)

    def _draws(self, steps):
        return np.repeat(self._level[:, None], len(steps), axis=1)
