"""Which take-off rates a run gets, and the climb carried on at its sweep's rate: the part of
:mod:`.regimes` that reads the stored rates for one run (see its module docstring).

>>> rates = {"take-off": {"rho": [0.5] * 21, "tasks": {}, "models": {}}}
>>> takeoff_rates(rates, {"task": "math"})[1] == ALL_RECIPES
True
>>> carries_sweep(rates, {"name": "take-off", "task": "math", "sweep_rate": [1.0, 0.3]})
True
"""

from __future__ import annotations

import zlib

import numpy as np

from entropylaw.fit.forecast.tasks import is_generic, model_key
from entropylaw.fit.logit import from_logit

ALL_RECIPES = "real runs of several recipes (each weighing the same)"  # none of the task's or model's serve
CARRIED = "carried on at its sweep's rate"  # what a forecast's take-off warning says where carries_sweep holds
MIN_RECIPES = 2  # a task's own rates serve every run of it where 2 recipes of 2 models or more made them
MIN_CASES = 3  # rates need 3 cases from 2 recipes or more (regimes.MIN_CASES)
MIN_TASK_RUNS = 3  # a task's (or a model's) own take-off rates need 3 runs of it
# the entropy's late level over its lowest earlier level in the window: below 1.5-fold it held. On the
# real runs at hand, take-offs whose entropy held rose 0.9-1.3-fold (CS336, veRL, Countdown); those
# that then fell rose 2-2.3-fold (rasbt), and one that climbed on 1.6-fold
RISING = 1.5
HELD = "those whose entropy held"  # how the warning names the steady rates
# a task's take-offs that went on at half their window's rate or more (median): its sweep carries its climb on
CLIMBED_ON = 0.5


def quantiles(x, groups=None) -> list:
    """21 quantiles (0, 5, ..., 100 %) of ``x``, each group (recipe) weighing the same: what is
    stored of a regime's cases.

    >>> quantiles([3.0, 1.0, 2.0])[10], quantiles([3.0, 1.0, 2.0])[0]
    (2.0, 1.0)
    """
    x = np.asarray(x, float)
    groups = np.asarray(groups if groups is not None else np.zeros(len(x)))
    _, inv, counts = np.unique(groups, return_inverse=True, return_counts=True)
    w = 1.0 / counts[inv]
    order = np.argsort(x, kind="stable")
    x, w = x[order], w[order]
    cdf = (np.cumsum(w) - 0.5 * w) / w.sum()  # each case at the middle of its weight
    return [float(v) for v in np.interp(np.linspace(0, 1, 21), cdf, x)]


def held(case) -> bool:
    """Whether a take-off case's window read an entropy that held (rose less than :data:`RISING`-fold)."""
    fold = case.get("fold")
    return fold is not None and bool(np.isfinite(fold)) and fold < RISING


def group_rates(cases, weigh: str, enough=None) -> dict:
    """The take-off rates of ``cases`` (dicts with ``rho``, ``reached``, ``run``, ``recipe``, ``fold``),
    each value of ``weigh`` (recipe, run) weighing the same; with ``steady``, the same of the
    cases whose entropy held (:func:`held`), where ``enough`` (a test of those cases) passes.

    >>> cs = [{"rho": r, "reached": 0.5, "run": f"r{i}", "recipe": f"p{i % 2}", "fold": f}
    ...       for i, (r, f) in enumerate([(-0.4, 2.1), (0.6, 1.0), (0.5, 1.1), (0.7, 1.0), (-0.2, 2.2)])]
    >>> g = group_rates(cs, "recipe")
    >>> round(g["rho"][0], 2), round(g["steady"]["rho"][0], 2), g["steady"]["cases"]
    (-0.4, 0.5, 3)
    """
    enough = enough or (lambda cs: len(cs) >= MIN_CASES and len({c["recipe"] for c in cs}) >= 2)
    out = _rates(cases, weigh)
    steady = [c for c in cases if held(c)]
    if steady and len(steady) < len(cases) and enough(steady):
        out["steady"] = _rates(steady, weigh)
    return out


def _rates(cases, weigh) -> dict:
    return {"rho": quantiles([c["rho"] for c in cases], [c[weigh] for c in cases]),
            "reached": quantiles([c["reached"] for c in cases], [c[weigh] for c in cases]),
            "cases": len(cases), "runs": len({c["run"] for c in cases}),
            "recipes": sorted({c["recipe"] for c in cases})}


def grouped(rho, by) -> dict:
    """The take-off rates of each value of ``by`` (task, model) that :data:`MIN_TASK_RUNS` runs
    among the cases ``rho`` share: their own runs' rho, each run weighing the same."""
    out = {}
    # a measure's name (accuracy) is no task: a group of it would stand in for the model's
    for name in sorted({c.get(by) for c in rho if c.get(by) and not (by == "task" and is_generic(c[by]))}):
        own = [c for c in rho if c.get(by) == name]
        if len({c["run"] for c in own}) >= MIN_TASK_RUNS:
            out[name] = group_rates(own, "run", lambda cs: len({c["run"] for c in cs}) >= MIN_TASK_RUNS)
            if by == "model":
                out[name]["tasks"] = sorted({c["task"] for c in own if c.get("task")})
            else:  # whose runs they are: one recipe's rates serve only a run of its model (takeoff_rates)
                out[name]["models"] = sorted({model_key(c["model"]) for c in own if model_key(c.get("model"))})
    return out


def steady(take, regime) -> tuple[dict | None, str]:
    """The take-off rates ``take`` (:func:`takeoff_rates`) narrowed to those of windows whose
    entropy held where this window's held too and such rates are stored, and a note of it
    (empty otherwise): a run whose entropy rose while it climbed is the one that fell, and a run
    whose entropy held is forecast from runs like it. A run that logs no entropy keeps them all.

    >>> take = {"rho": [-0.4] + [0.5] * 20, "reached": [0.6] * 21, "steady": {"rho": [0.5] * 21, "cases": 3}}
    >>> steady(take, {"entropy_fold": 1.1})[0]["rho"][0], steady(take, {"entropy_fold": 2.0})[0]["rho"][0]
    (0.5, -0.4)
    >>> steady(take, {"entropy_fold": None})[1]
    ''
    """
    fold = (regime or {}).get("entropy_fold")
    if not take or not take.get("steady") or fold is None or not np.isfinite(fold) or fold >= RISING:
        return take, ""
    # the upward opening keeps what every such run reached: holding entropy says a run is less likely to
    # fall, not that it climbs higher (taken from the steady runs alone, every CS336 run's upper end rose to a
    # GSM8K run's 0.78 and rank, leaving the recipe out, pruned 2 of 25 runs at 25 %, not 10)
    note = f"{HELD} (their entropy rose less than {RISING:g}-fold in the window, as this run's, {fold:.1f}-fold)"
    return {**take["steady"], "reached": take["reached"]}, note


def takeoff_rates(rates, regime) -> tuple[dict | None, str]:
    """The take-off rates a run gets: its task's own where 3 runs of the task are among the
    cases, made by 2 recipes and 2 models or more; else, where the task's runs are fewer kinds,
    only for a run of one of their models or a run whose log names no model (a new run of that
    recipe, for all the log says); where the run's key names no benchmark
    (:func:`~.tasks.is_generic`), its model's own where 3 runs of the model are (a sweep of a
    model the rates know, logged under a measure's name: runs of one model start from the same
    floor and reach alike; where one recipe made them, the run is a new run of it for all the log
    says, as a task's run that names no model is); else those of every recipe (each weighing the
    same); and whose they are, in words. Model names are compared as keys (:func:`~.tasks.model_key`).
    One recipe's take-offs say what that recipe did, not what its task does: the CS336 grid's
    base model climbing on MATH from 0.05 carried a GSM8K instruct run's take-off, logged as
    MATH, 36 points past where it ended; a run that names the task and another model gets them not.

    >>> one = {"rho": [0.9] * 21, "recipes": ["cs336"], "models": ["qwen2.5-math-1.5b"]}
    >>> rates = {"take-off": {"rho": [0.1] * 21, "tasks": {"math": one}, "models": {}}}
    >>> takeoff_rates(rates, {"task": "math", "model": "qwen2.5-math-1.5b"})[1]
    "runs of task 'math'"
    >>> takeoff_rates(rates, {"task": "math", "model": ""})[1]
    "runs of task 'math'"
    >>> takeoff_rates(rates, {"task": "math", "model": "qwen2.5-0.5b-instruct"})[1] == ALL_RECIPES
    True
    >>> rates["take-off"]["models"] = {"qwen2.5-math-1.5b": {**one, "tasks": ["math"]}}
    >>> takeoff_rates(rates, {"task": "accuracy", "model": "qwen2.5-math-1.5b"})[1]
    "runs of model 'qwen2.5-math-1.5b' (this run's task is not named; theirs: math; 1 recipe)"
    """
    take = rates.get("take-off")
    if not take:
        return None, ""
    task, model = regime.get("task"), model_key(regime.get("model"))
    named = bool(task) and not is_generic(task)
    own = (take.get("tasks") or {}).get(task) if named else None
    # a group stored with no models (an older calibration.json) serves only a run whose log names none
    models = {model_key(m) for m in own.get("models") or []} if own else set()
    if own and ((len(own.get("recipes") or []) >= MIN_RECIPES and len(models) >= MIN_RECIPES)
                or not model or model in models):
        return own, f"runs of task {task!r}"
    mine = (take.get("models") or {}).get(model) if model and not named else None
    if mine:
        tasks = ", ".join(mine.get("tasks") or []) or "not named"
        recipes = len(mine.get("recipes") or [])
        return mine, (f"runs of model {model!r} (this run's task is not named; theirs: {tasks}; "
                      f"{recipes} recipe{'s' if recipes != 1 else ''})")
    return take, ALL_RECIPES


def rate(rho, c):
    """The logit rate per unit of ``ln(1 + step)`` of a stored ``rho`` (:func:`~.regimes.case`) for a window
    climbing at ``c``: a climb's share of ``c``, a fall as it is.

    >>> rate(0.5, 2.0), rate(-0.3, 2.0)
    (1.0, -0.3)
    """
    rho = np.asarray(rho, float)
    out = np.where(rho >= 0, rho * c, rho)
    return float(out) if out.ndim == 0 else out


def said(rho, went: bool = False) -> str:
    """A stored ``rho`` in words; ``went``: as what runs did ("went on at ...", "went on falling ...").

    >>> said(0.45), said(-0.29)
    ("0.45 times their window's rate", 'falling 0.29 logit per unit of ln(1 + step)')
    >>> said(-0.29, went=True)
    'went on falling 0.29 logit per unit of ln(1 + step)'
    """
    words = f"{rho:.2f} times their window's rate" if rho >= 0 else f"falling {-rho:.2f} logit per unit of ln(1 + step)"
    return ("went on at " if rho >= 0 else "went on ") + words if went else words


def carries_sweep(rates, regime) -> bool:
    """Whether a take-off's method half is the climb carried on at its sweep's rate
    (:func:`own_climb`): a run in take-off in a sweep (its rate pooled with 2 others or more
    taking off at the same point) whose take-off rates are every recipe's (other recipes'
    take-offs say little of this one), or its task's (or model's) own where those runs went on
    at :data:`CLIMBED_ON` of their window's rate or more at the median: a curve fitted to the
    window stops the climb too soon there too (on the CS336 sweep, its recipe known, the forecast
    at 50 % ended 2.9 points low at the median with the method's draws, 0.4 with the sweep's
    climb; ``analysis/bench_forecast_regimes.py``). Where a task's take-offs stopped soon (GSM8K's
    went on at 0.10 of their rate: an instruct model learning the answer's format), the method's
    draws stay: a sweep of the GSM8K 0.5B run's seeds, carried on at its rate, was forecast 0.85
    at 15 % and ended 0.55 (``tests/test_forecast_regimes.py``).

    >>> sweep = {"name": "take-off", "sweep_rate": [1.0, 0.2], "task": "math", "model": ""}
    >>> def rates(rho):
    ...     one = {"rho": [rho] * 21, "recipes": ["a", "b"], "models": ["m", "n"]}
    ...     return {"take-off": {"rho": [0.1] * 21, "tasks": {"math": one}, "models": {}}}
    >>> carries_sweep(rates(0.75), sweep), carries_sweep(rates(0.1), sweep)
    (True, False)
    """
    if regime.get("name") != "take-off" or "sweep_rate" not in regime:
        return False
    take, whose = takeoff_rates(rates, regime)
    return take is not None and (whose == ALL_RECIPES or float(take["rho"][10]) >= CLIMBED_ON)


def own_climb(regime, log_span, n, bounds, seed=0):
    """``n`` draws of ``logit(end) + c ln((1 + T) / (1 + end))``, ``c`` drawn about the median
    climb rate of the sweep's other runs in take-off with their spread (a new run of the sweep
    differs from its peers by that much, however well its own window measures its rate). In
    place of a method's draws in a sweep (:func:`carries_sweep`): a curve fitted to a few points
    near the floor stops the climb too soon, other recipes' take-offs say little of this one, and
    a run's own early rate foretells its later climb no better than its peers'
    (``analysis/bench_forecast_regimes.py`` measures it). A run alone is left to the
    mixture of its method and the rates: a fast early climb of one run (a GSM8K run from 0.00
    to 0.37 in 17 steps that ended at 0.54) carried on would overshoot."""
    c, sd = regime["sweep_rate"]
    # a stream of the run's own, from its window (not its name): runs forecast together draw their
    # rates apart, as rank's joint draws take them, and one log forecasts alike under any name.
    # Rounded first: the last bits of a fitted rate differ between BLAS kernels (up to ~1e-13 between
    # OpenBLAS's SkylakeX, Haswell and Prescott kernels), and a hash of them would draw another
    # stream; + 0.0 makes a rounded -0.0 the same bytes as 0.0
    own = zlib.crc32((np.round(np.float64([regime["z_end"], regime["c"], c, sd]), 6) + 0.0).tobytes())
    rates = c + sd * np.random.default_rng([seed + 5, own]).standard_normal((n, 1))
    return from_logit(regime["z_end"] + rates * np.asarray(log_span, float)[None, :], bounds)
