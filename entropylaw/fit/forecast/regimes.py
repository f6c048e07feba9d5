"""The regime a run is in at the window's end, read off the window alone, and what runs in that
regime did next (rates learned from real runs of several recipes, stored by the backtest).

A forecast method extrapolates the window's shape. That holds while the run saturates; it fails
in two other regimes, each recognised from the window:

- **take-off**: the score started near its floor (its first point in the lower
  :data:`FLOOR` of its range) and the late half of the window still climbs fast (the
  logit rate ``c`` per unit of ``ln(1 + step)`` at least :data:`FAST`, and the climb beyond
  the score's noise). Where the climb stops is not in the window. Real runs that
  were in take-off at the same point and climbed on did so at a share ``rho`` of their window's
  rate: ``logit(final) = logit(end) + rho c ln((1 + T) / (1 + end))``; those that fell (beyond
  :data:`DROP_SD` standard errors of a point; less is a climb that stopped, ``rho`` 0) are kept
  by the logit they lost per unit of ``ln(1 + step)`` (a negative ``rho``, :func:`rate`): a fall
  is not in proportion to how fast the run climbed before it (a slow climber's fall, scaled by a
  fast climber's rate, put the fast one back on its floor). The forecast draws ``rho``
  from such runs (their 5-95 % range; it opens upward to what they reached); where the method
  extrapolates the window's own climb, half its own draws are kept (:func:`apply`). In a sweep
  (2 other runs or more taking off at the same point), the climb carried on at the sweep's
  rate (:func:`own_climb`) stands in for the method's draws.
- **instability**: the entropy rose several-fold (:data:`ENTROPY_FOLD`: its smoothed level
  late in the window over its lowest earlier level), or the score fell beyond its noise
  after a peak and stayed there: its last :data:`DROP_POINTS` points each more than
  :data:`DROP_SD` standard errors of a point below the peak (one point alone: more than
  :data:`DROP_ALONE_SD`), and by :data:`DROP_SHARE` of its height above the floor or more.
  The peak is the highest of many noisy points, and one point below it by 3 standard errors
  is what noise gives on a long flat run. Real runs in that
  state often collapsed; the forecast keeps its centre and its upper end and moves its lower
  end to the 5 % point of its draws each scaled toward the score's floor by what such runs
  kept of their level (``r = final / window end``, above the floor, at most 1), and it warns
  "collapse risk" with the share of such runs that collapsed (fell below half their level).
- **saturation**: neither; the methods' own forecast.

The rates are learned by ``analysis/bench_forecast.py`` from every real run at 10, 15, 25
and 50 % of its steps (:func:`learn`), stored in ``calibration.json`` as fitted numbers
only (quantiles and counts), and measured there leaving whole recipes out.

>>> import numpy as np
>>> from entropylaw.fit.forecast.data import RunData
>>> steps = np.arange(1.0, 60.0, 5.0)
>>> run = RunData.from_arrays(steps, 0.04 + 0.3 * np.log1p(steps) / np.log(60), target_key="val/math")
>>> classify(run.window(25.0))["name"]
'take-off'
>>> classify(run.window(25.0), entropy_fold=None)["c"] > FAST
True
"""

from __future__ import annotations

import numpy as np

from entropylaw.fit.forecast.data_switch import SWITCH_WIDEN
from entropylaw.fit.forecast.problems import run_problems
from entropylaw.fit.forecast.drift_fit import late, logit_weights, posterior
from entropylaw.fit.forecast.data import own_noise, robust_noise
from entropylaw.fit.forecast.takeoff import (MIN_CASES, carries_sweep, group_rates, grouped, own_climb, quantiles,
                                             rate, steady, takeoff_rates)
from entropylaw.fit.logit import EPS, from_logit, to_logit

REGIMES = ("take-off", "instability", "saturation")
FLOOR = 0.3  # the window's first score in the lowest 30 % of its range: it starts near its floor
FAST = 0.3  # logit per unit of ln(1 + step): ~3x the slow drift of saturating runs (0.05-0.12)
RISE_SD = 3.0  # the window's climb, first point to last, beyond 3 standard errors of a point
# the entropy's late level over its lowest earlier level: "several-fold" (on the real runs at hand,
# the windows whose entropy rose 2.5-3x then fell or collapsed; of those from 2x, 2 of 6 climbed on)
ENTROPY_FOLD = 2.5
DROP_SD = 3.0  # the last DROP_POINTS points below the window's peak by more than 3 standard errors of a point
# each of the last 2 points: on a flat GSM8K run of 22 to 56 points, the highest point minus the
# last one alone reaches 3.2-3.4 standard errors by noise (veRL gpg and grpo-deepseek at 50 %)
DROP_POINTS = 2
DROP_ALONE_SD = 6.0  # one point alone that far below the peak is no noise: said at once
# and by a tenth of its height above the floor or more: on a 5,000-problem set, 3 standard errors are 2 points,
# and a flat MATH score that dipped 2.7 points from 0.537 (veRL gpg, at 15 %) then held at 0.50 to its end is no
# collapse; every fall the real runs at hand read as one without an entropy rise lost a third of it or more
DROP_SHARE = 0.1
COLLAPSED = 0.5  # a run that ends below half its window-end level (above the floor) collapsed
STAYED = 0.02  # a run on its floor that ended within 2 % of the score's range of it stayed there


def beyond_noise(drop: float, sd: float) -> bool:
    """A drop beyond :data:`DROP_SD` point standard errors ``sd``: a fall (after a peak, or a take-off's), not noise."""
    return drop > DROP_SD * sd


def material(drop: float, peak: float, floor: float) -> bool:
    """A drop of :data:`DROP_SHARE` of the peak's height above the floor or more: a fall that signals a collapse, not
    a dip a large validation set measures precisely.

    >>> material(0.027, 0.537, 0.0), material(0.1, 0.537, 0.0), material(0.02, 0.05, -1.0)
    (False, True, False)
    """
    return drop >= DROP_SHARE * (peak - floor)


def point_sd(win) -> float:
    """The standard error of one score of the window: binomial where the validation set's size
    is known or, for a short window, assumed (:func:`~.problems.run_problems`), else the window's
    own scatter: a validation score's about its local trend (a climb is no noise), a training
    reward's successive differences."""
    return _point_sd(win, run_problems(win)[0])


def _point_sd(win, n) -> float:
    """:func:`point_sd` with the window's validation set size ``n`` read (None: not known)."""
    y = win.target
    lo, hi = win.bounds or (0.0, 1.0)
    if n:
        p = float(np.clip((y.values[-1] - lo) / (hi - lo), 0.02, 0.98))
        return float((hi - lo) * np.sqrt(p * (1 - p) / n))
    return max(own_noise(y.values, y.steps, win.target_kind)[0], 1e-3 * (hi - lo))


def climb(win):
    """The late half's climb on the logit scale: ``(c, se, z_end)`` (rate per unit of ln(1 + step),
    its standard error, the fitted logit at the window's end), or None."""
    return _climb(win, run_problems(win)[0])


def _climb(win, problems):
    """:func:`climb` with the window's validation set size ``problems`` read (None: not known)."""
    y = win.target
    if win.bounds is None or len(y) < 2:
        return None
    s, v = late(y)
    w, n = logit_weights(v, win.bounds, problems, robust_noise(y.values))
    t, z = np.maximum(s, 0.0), to_logit(v, win.bounds, 0.5 / n)
    mean, cov, _ = posterior(t, z, w)
    return float(mean[1]), float(np.sqrt(cov[1, 1])), float(mean[0] + mean[1] * np.log1p(max(win.end, 0.0)))


def entropy_rise(win) -> float | None:
    """The entropy's fold rise in the window: its smoothed level at the end over the lowest
    smoothed level before (a rolling median over a tenth of the points, at least 3); None
    without entropy."""
    h = win.entropy
    if h is None or len(h) < 6:
        return None
    k = max(3, len(h) // 10)
    v = np.asarray(h.values, float)
    sm = np.array([np.median(v[max(0, i - k + 1):i + 1]) for i in range(len(v))])
    floor = np.minimum.accumulate(np.maximum(sm, 1e-9))
    return float(np.max(sm[k:] / floor[k - 1:-1])) if len(sm) > k else None


def classify(win, entropy_fold=ENTROPY_FOLD) -> dict:
    """The window's regime: ``{"name", "why", ...}`` (see the module docstring)."""
    y = win.target
    out = {"name": "saturation", "why": "the score is not taking off and nothing in the window signals a collapse",
           "task": win.task, "model": win.model}
    if win.bounds is None or len(y) < 2:
        out["why"] = "the score has no bounds or the window too few points: no regime read"
        return out
    lo, hi = win.bounds
    n = run_problems(win)[0]  # read once: a lattice search over the window's scores (4 ms on 400)
    sd = _point_sd(win, n)
    got = _climb(win, n)
    rise = entropy_rise(win) if entropy_fold else None
    peak = float(np.max(y.values))
    drop = peak - float(y.values[-1])
    after = len(y) - 1 - int(np.argmax(y.values))  # points after the peak
    held = peak - float(np.max(y.values[-DROP_POINTS:])) if after >= DROP_POINTS else 0.0
    first = (float(y.values[0]) - lo) / (hi - lo)
    low = np.abs(y.values - lo) <= 2 * sd  # the points at the floor, within 2 standard errors of a point
    out.update(point_sd=sd, entropy_fold=rise, drop=drop,
               floor_points=int(np.argmin(low[::-1])) if not low.all() else len(low))  # the last ones, in a row
    signs = []

    def share(x):  # a fraction's points; another range's share of it (a reward in [-1, 1] has no points)
        return f"{100 * x / (hi - lo):.1f} " + ("points" if (lo, hi) == (0.0, 1.0) else "% of the score's range")
    if rise is not None and rise >= entropy_fold:
        signs.append(f"the entropy rose {rise:.1f}-fold in the window")
    # a fall is read against the noise the window shows where it shows more than its set's size says (a score that
    # dips now and then: sampling, a judge), once it has the 5 points its scatter about the trend needs, besides
    # the points whose fall is read; the smaller scatter with them or without: a fall is no measure of its own
    # noise (GSM8K's 0.3, 0.4, 0.5, 0.0, 0.0 read as scattering 0.30, and no fall). Without a set's size, sd is
    # the window's scatter already
    spread = sd
    if len(y) - DROP_POINTS >= 5 and n:
        spread = max(sd, min(own_noise(v, s, win.target_kind)[0] for v, s in
                             ((y.values, y.steps), (y.values[:-DROP_POINTS], y.steps[:-DROP_POINTS]))))
    noise = "a point's standard error" if spread == sd else "its points' scatter about their trend"
    if beyond_noise(held, spread) and material(held, peak, lo):
        signs.append(f"the score's last {DROP_POINTS} points lie {share(held)} or more below "
                     f"its peak of {peak:.3f}, {held / spread:.1f} times {noise}")
    elif after >= 1 and drop > DROP_ALONE_SD * spread and material(drop, peak, lo):
        signs.append(f"the score fell {share(drop)} below its peak of {peak:.3f}, "
                     f"{drop / spread:.1f} times {noise}")
    elif beyond_noise(held, spread):  # said, not acted on: no stored run fell so little and was read as unstable
        out["why"] = (f"the score is not taking off; its last {DROP_POINTS} points lie {share(held)} or more below its "
                      f"peak of {peak:.3f} ({held / spread:.1f} times {noise}), less than {DROP_SHARE:.0%} of its "
                      "height above the floor: a dip, not a sign of collapse")
    if got is not None:
        c, se, z_end = got
        out.update(c=c, c_se=se, z_end=z_end, on_floor=bool(float(from_logit(z_end, win.bounds)) - lo <= 2 * sd))
        if win.target_kind == "validation" and first <= FLOOR and c >= FAST and \
                y.values[-1] - y.values[0] > RISE_SD * sd:
            out.update(name="take-off", why=f"the score started near its floor ({y.values[0]:.3f}) and still climbs "
                                            f"fast ({c:.2f} logit per unit of ln(1 + step) over the window's late "
                                            f"half, {y.values[0]:.3f} -> {y.values[-1]:.3f})")
    if signs:
        out.update(name="instability", why="; ".join(signs), takeoff=out["name"] == "take-off")
    return out


# ---------------------------------------------------------------------------- what runs did next
def case(win, regime, final, final_step) -> dict | None:
    """What a run in ``regime`` at the window's end did next, for :func:`learn`: take-off, its
    ``rho``; instability, its ``r`` and whether it collapsed. None for saturation."""
    lo, hi = win.bounds or (0.0, 1.0)
    if regime["name"] == "saturation" or "c" not in regime:
        return None
    out = {"regime": regime["name"]}
    if regime["name"] == "take-off" or regime.get("takeoff"):
        log_span = np.log((1 + final_step) / (1 + win.end))
        if regime["c"] * log_span > 0:
            change = float(to_logit(final, win.bounds) - regime["z_end"]) / log_span  # logit per unit of ln(1 + step)
            # no fall within the noise: Countdown's at 50 % (2.4 sd below the fitted end) was 6 points at 15 %
            fall = beyond_noise(float(from_logit(regime["z_end"], win.bounds)) - final, regime["point_sd"])
            out["rho"] = change / regime["c"] if change >= 0 else change if fall else 0.0
            out["reached"] = float((final - lo) / (hi - lo))
            out["fold"] = regime.get("entropy_fold")  # whether its entropy held: the steady rates (takeoff.steady)
    if regime["name"] == "instability":
        level = float(from_logit(regime["z_end"], win.bounds)) - lo
        if level <= 2 * regime["point_sd"]:  # already on its floor: nothing left to lose
            if fell(regime):  # where a run on its floor after a fall ended is kept (on_floor)
                out["floor_reached"] = float(np.clip((final - lo) / (hi - lo), 0.0, 1.0))
            return out if len(out) > 1 else None
        r = (final - lo) / level
        out.update(r=float(np.clip(r, 0.0, 1.0)), collapsed=bool(r < COLLAPSED))
    return out


def learn(cases) -> dict:
    """The stored rates of each regime from backtest ``cases`` (dicts of :func:`case` with
    ``recipe`` and ``run``): take-off, the quantiles of ``rho``; instability, those of ``r`` and
    the collapse count. A regime needs :data:`MIN_CASES` cases from 2 recipes or more."""
    out = {}
    rho = [c for c in cases if "rho" in c and np.isfinite(c["rho"])]
    if len(rho) >= MIN_CASES and len({c["recipe"] for c in rho}) >= 2:
        out["take-off"] = group_rates(rho, "recipe")
        out["take-off"]["tasks"] = grouped(rho, "task")
        out["take-off"]["models"] = grouped(rho, "model")
    ins = [c for c in cases if "r" in c]
    if len(ins) >= MIN_CASES and len({c["recipe"] for c in ins}) >= 2:
        out["instability"] = {"r": quantiles([c["r"] for c in ins], [c["recipe"] for c in ins]), "cases": len(ins),
                              "collapsed": int(sum(c["collapsed"] for c in ins)),
                              "runs": len({c["run"] for c in ins}),
                              "collapsed_runs": len({c["run"] for c in ins if c["collapsed"]}),
                              "recipes": sorted({c["recipe"] for c in ins})}
    low = [c for c in cases if "floor_reached" in c]
    if len(low) >= MIN_CASES and len({c["recipe"] for c in low}) >= 2:
        out["floor"] = {"reached": quantiles([c["floor_reached"] for c in low], [c["recipe"] for c in low]),
                        "cases": len(low), "runs": len({c["run"] for c in low}),
                        "stayed": int(sum(c["floor_reached"] <= STAYED for c in low)),
                        "recipes": sorted({c["recipe"] for c in low})}
    return out


def _sample(qs, u):
    """Draws from stored quantiles (linear between them) at uniforms ``u``."""
    return np.interp(u, np.linspace(0, 1, len(qs)), qs)


def apply(regime, rates, steps, mid, draws, end, bounds, seed=0, own=False):
    """A method's point forecast (m,) and draws (B, m) at ``steps`` in ``regime``, with the
    stored ``rates`` (see the module docstring); unchanged in saturation or without rates.

    ``own``: the method models change (its curve extrapolates the window's own climb). In a
    take-off its draws are then kept in a random half of the rows and the rates' fill the other
    half, an equal mixture of the two answers, with its median as the forecast and its
    quantiles the mixture's own (stretching its 5 and 95 % points to reach each answer's own
    covered every CS336 take-off at 15 and 25 % with intervals 48-65 points wide, leaving recipes
    out or not: the mixture's own narrowed them by 2-6 points, holding as many): the window's own climb
    and what take-off runs of other recipes did next each hold on some recipes and fail on others
    (``analysis/bench_forecast_regimes.py`` measures both and the mixture, leaving recipes out). A
    flat method (last-value) has no climb of its own: the rates' draws alone. In a sweep
    (:func:`~.takeoff.carries_sweep`), the method's half, flat or not, is the climb carried on at
    the sweep's rate (:func:`~.takeoff.own_climb`): every method then gives the same draws."""
    if bounds is None or regime is None or (regime["name"] == "saturation" and not regime.get("data_switch")):
        return mid, draws
    steps = np.asarray(steps, float)
    lo, _ = bounds
    rng = np.random.default_rng(seed + 11)
    name = regime["name"]
    take = steady(takeoff_rates(rates, regime)[0], regime)[0] if name == "take-off" else None
    if take and "c" in regime:
        c = regime.get("pooled_c", regime["c"])
        log_span = np.log((1 + np.maximum(steps, end)) / (1 + end))
        span = c * log_span
        if carries_sweep(rates, regime):  # a flat method's half too: the sweep measured the climb
            draws, own = own_climb(regime, log_span, len(draws), bounds, seed), True
        rho = _sample(take["rho"], rng.uniform(size=(len(draws), 1)))
        mid = from_logit(regime["z_end"] + rate(float(np.median(take["rho"])), c) * log_span, bounds)
        z = regime["z_end"] + rate(rho, c) * log_span[None, :]
        # by the last step forecast, the upper end reaches what such runs reached (their 95 % point)
        reach = to_logit(bounds[0] + (bounds[1] - bounds[0]) * take["reached"][19], bounds)
        share = span / span[-1] if span[-1] > 0 else np.zeros_like(span)
        q95 = np.quantile(z, 0.95, axis=0)
        top = np.maximum(q95, q95 * (1 - share) + reach * share)
        taken = from_logit(_stretch(z, np.quantile(z, 0.05, axis=0), top), bounds)
        if own:  # an equal mixture of the two answers, row by row
            # a random half of the rows, kept in place: an ensemble stacks its members' draws in order,
            # and a kept row stays paired with the method's own draw of the level now (decide.final_and_now)
            swap = rng.permutation(len(draws))[len(draws) // 2:]
            zo, zt = to_logit(draws, bounds), to_logit(taken, bounds)
            zm = zo.copy()
            zm[swap] = zt[swap]
            draws = from_logit(zm, bounds)
            mid = np.nanmedian(draws, axis=0)
        else:
            draws = taken
    floor = on_floor(regime, rates)
    ins = rates.get("instability") if name == "instability" and not floor else None
    if floor:  # on its floor after a collapse: where such runs ended, each draw one of them (not the window's noise)
        reached = _sample(floor["reached"], rng.uniform(size=(len(draws), 1)))
        draws = np.broadcast_to(lo + (bounds[1] - lo) * reached, draws.shape).copy()
        mid = np.full(draws.shape[1], lo + (bounds[1] - lo) * float(np.median(floor["reached"])))
    if ins:  # the lower end moves to where such runs' kept levels put it; the upper end stays
        r = _sample(ins["r"], rng.uniform(size=(len(draws), 1)))
        z = to_logit(draws, bounds)
        low = to_logit(np.quantile(lo + (draws - lo) * r, 0.05, axis=0), bounds)
        draws = from_logit(_stretch(z, low, np.quantile(z, 0.95, axis=0)), bounds)
        draws = np.where(draws <= lo + 2 * EPS * (bounds[1] - lo), lo, draws)  # the logit's edge is the floor
    if regime.get("data_switch"):  # later steps train on other data: the spread doubled on the logit scale
        zm = to_logit(mid, bounds)
        draws = from_logit(zm + SWITCH_WIDEN * (to_logit(draws, bounds) - zm), bounds)
    return mid, draws


def moves(regime, rates) -> bool:
    """Whether :func:`apply` moves a forecast's centre from where the window ends: take-off (with
    rates for it and the window's climb). A flat method so moved models change (the decision reads
    its gain, from the take-off's anchor: :func:`.decide.anchor`). Instability moves only the lower end: a
    flat method's gain then has no upward side, and a stop read from it would be one by
    construction, so it does not count; data that changes only widens.

    >>> moves({"name": "take-off", "c": 0.9}, {"take-off": {"rho": [0.5] * 21, "tasks": {}}}), moves(None, {})
    (True, False)
    """
    if not regime or not rates:
        return False
    if on_floor(regime, rates):  # where such runs went from their floor: an upward side of its own
        return True
    return regime["name"] == "take-off" and "c" in regime and takeoff_rates(rates, regime)[0] is not None


def on_floor(regime, rates) -> dict | None:
    """The stored rates of runs on their floor after a collapse, where this window is one
    (instability, its fitted level within 2 standard errors of a point of the range's bottom),
    else None. Such a run's forecast is where they ended (:func:`apply`): the window's own noise,
    read across the fall, spans the range (rasbt's KL run at 25 %: 0.156, 0.408, 0.000 gave
    [0.00, 1.00] and no call; it stayed at 0.000 to its end).

    >>> rates = {"floor": {"reached": [0.0] * 21, "cases": 10}}
    >>> down = {"name": "instability", "on_floor": True, "drop": 0.4, "point_sd": 0.02, "floor_points": 2}
    >>> on_floor(down, rates) is rates["floor"], on_floor({**down, "on_floor": False}, rates)
    (True, None)
    >>> on_floor({**down, "drop": 0.0}, rates) is None   # on its floor, its entropy rising: it never left it
    True
    """
    return (rates or {}).get("floor") if collapsed(regime) else None


def collapsed(regime) -> bool:
    """Whether the window is a run on its floor after a collapse: instability, its fitted level
    within 2 standard errors of a point of the range's bottom (``on_floor``), after a fall
    (:func:`fell`)."""
    return bool(regime) and regime.get("name") == "instability" and bool(regime.get("on_floor")) and fell(regime)


def fell(regime) -> bool:
    """Whether the window's score fell from its peak by more than :data:`DROP_SD` standard errors
    of a point and stays on its floor: its last :data:`DROP_POINTS` points there, or one with the
    entropy risen several-fold (:data:`ENTROPY_FOLD`). Not a run that has yet to leave its floor
    (its entropy rising while it learns the answer's format), nor one evaluation at 0 alone (an
    evaluation that failed reads so, and the next may not).

    >>> down = {"drop": 0.4, "point_sd": 0.02, "floor_points": 2}
    >>> fell(down), fell({**down, "drop": 0.0}), fell({**down, "floor_points": 1}), fell({})
    (True, False, False, False)
    >>> fell({**down, "floor_points": 1, "entropy_fold": 57.8})   # rasbt's KL run at 25 %
    True
    """
    if not beyond_noise(regime.get("drop", 0.0), regime.get("point_sd", np.inf)):
        return False
    fold = regime.get("entropy_fold")
    return regime.get("floor_points", 0) >= DROP_POINTS or (fold is not None and fold >= ENTROPY_FOLD)


def _stretch(z, lo, hi):
    """Draws ``z`` (B, m) stretched around their median, each side apart, so that their 5 and 95 %
    points reach ``lo`` and ``hi`` where those lie further out (never narrowed); a draw that is
    not a number stays so, and the others' quantiles leave it out."""
    med, q05, q95 = (np.nanquantile(z, q, axis=0) for q in (0.5, 0.05, 0.95))
    down = np.where(med - q05 > 1e-9, np.maximum((med - lo) / np.maximum(med - q05, 1e-9), 1.0), 1.0)
    up = np.where(q95 - med > 1e-9, np.maximum((hi - med) / np.maximum(q95 - med, 1e-9), 1.0), 1.0)
    return med + (z - med) * np.where(z < med, down, up)
