"""One run's series for forecasting, and the fit window.

A forecast sees a :class:`RunData` cut at the window's end (:meth:`RunData.window`): every
series is truncated there, so nothing after the window can reach a method (the
no-future-information guarantee is structural, not a convention).

**Where the log starts.** ``origin`` is the first logged step of the series used (target,
entropy, training score). A run resumed from a checkpoint whose log starts at step 101 has
``origin = 101``; time inside the curve methods is ``t = step - origin``, while logit-drift
and the regime read ``ln(1 + step)`` from step 0 (a resumed run has trained its earlier steps;
a log starting further from 0 than its window spans is said: :func:`far_start`).

**The window** (:func:`window_end`):

- ``fit_frac=F`` (backtests): steps ``origin .. origin + F * (last - origin)``. The final
  step ``last`` is future information while a run is still going: a fraction of the whole
  run exists only once the run has finished, so ``F`` is for backtests of finished runs.
- ``fit_steps=K``: the first K steps, ``origin .. origin + K - 1``; usable live and in backtests.
- neither (live use): everything logged so far; the horizon is the user's (a step to
  forecast, or a number of steps ahead).

**Target.** The validation score (``val/mean``, else the single ``val/<bench>``, or the
key given) when the run has one, else the training score, said so in ``target_kind``.

>>> import numpy as np
>>> from entropylaw import table
>>> recs = [(s, "entropy", 0.5 / s) for s in range(101, 201)] + [(s, "val/gsm8k", 0.3) for s in range(110, 201, 10)]
>>> run = RunData.from_table(table.from_records(recs, run_id="r"), "r")
>>> run.origin, run.last, run.target_kind
(101.0, 200.0, 'validation')
>>> window_end(run, fit_frac=0.5)
150.5
>>> w = run.window(150.5)
>>> int(w.target.steps.max()), int(w.entropy.steps.max()), w.last
(150, 150, 150.0)
"""

from __future__ import annotations

import warnings
import json
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

import entropylaw.table as table
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.fit.forecast.problems import check_problems, is_size_name, logged_problems
from entropylaw.fit.forecast.tasks import model_key, task_of
from entropylaw.fit.window import window_end as _window_end
from entropylaw.terminal import not_found

TOKEN_KEYS = ("perf/total_num_tokens", "total_num_tokens", "num_tokens")


@dataclass(frozen=True)
class Series:
    """Steps (sorted, unique) and finite values of one metric."""

    steps: np.ndarray
    values: np.ndarray

    @classmethod
    def of(cls, steps, values) -> "Series":
        s = np.asarray(steps, float)
        v = np.asarray(values, float)
        keep = np.isfinite(s) & np.isfinite(v)
        s, v = s[keep], v[keep]
        order = np.argsort(s, kind="stable")
        s, v = s[order], v[order]
        last = np.r_[s[1:] != s[:-1], True] if len(s) else np.zeros(0, bool)  # a repeated step keeps its last value
        return cls(s[last], v[last])

    def upto(self, end: float) -> "Series":
        keep = self.steps <= end
        return Series(self.steps[keep], self.values[keep])

    def __len__(self) -> int:
        return len(self.steps)


@dataclass(frozen=True)
class RunData:
    """One run's series (see the module docstring). ``end`` is the window's end step."""

    run_id: str
    target: Series
    target_key: str
    target_kind: str  # "validation" or "training score"
    entropy: Series | None = None
    score: Series | None = None  # the per-step training score (also when it is the target)
    tokens: Series | None = None  # cumulative tokens from the first logged step
    origin: float = 0.0
    last: float = 0.0
    end: float = 0.0
    family: str = ""
    bounds: tuple | None = None  # (0, 1) or (-1, 1) when every observed target value lies there (score_bounds)
    tokens_raw: Series | None = None  # tokens as logged: cumulated per window (no later value decides how)
    tokens_cumulative: bool | None = None
    size: float = float("nan")  # parameters (non-embedding where known): the prior's size covariate
    task: str = ""  # the benchmark behind the score (entropylaw.fit.forecast.tasks.task_of)
    config: dict = field(default_factory=dict)  # the trainer's printed config (the table's ``config``)
    model: str = ""  # the model trained, as a key (entropylaw.fit.forecast.tasks.model_key): "" where unknown
    n_problems: float | None = None  # the validation set's size where the user gives it (its binomial noise)
    problems_logged: tuple | None = None  # (size, "the log's <key>") where the log states it beside the score
    target_asked: bool = False  # the target key was given (`y_key`), not chosen: a training score asked for

    @classmethod
    def from_arrays(cls, target_steps, target_values, entropy_steps=None, entropy_values=None,
                    score_steps=None, score_values=None, token_steps=None, token_values=None,
                    run_id="run", target_key="val", target_kind="validation", family="",
                    origin=None, cumulative_tokens=None) -> "RunData":
        """Build from numpy arrays; ``origin`` defaults to the first step of any series."""
        target = Series.of(target_steps, target_values)
        entropy = None if entropy_steps is None else Series.of(entropy_steps, entropy_values)
        score = None if score_steps is None else Series.of(score_steps, score_values)
        tokens = raw = None
        if token_steps is not None:
            raw = Series.of(token_steps, token_values)
            tokens = cumulative(raw, cumulative_tokens)
        parts = [s for s in (target, entropy, score) if s is not None and len(s)]
        if not len(target):
            raise EntropyLawError(f"run {run_id!r}: no {target_key} values to forecast")
        first = min(float(s.steps[0]) for s in parts) if origin is None else float(origin)
        last = max(float(s.steps[-1]) for s in parts)
        return cls(run_id, target, target_key, target_kind, entropy, score, tokens, first, last, last,
                   family, score_bounds(target.values), raw, cumulative_tokens,
                   task=task_of(target_key) if str(target_key).startswith("val/") or target_kind != "validation"
                   else "")

    @classmethod
    def from_table(cls, df: pd.DataFrame, run_id: str, y_key: str | None = None, x_key: str = table.ENTROPY,
                   tokens_key: str | None = None) -> "RunData":
        """One run of a tidy table; the target is chosen as in :func:`entropylaw.fit.pairing.score_key`."""
        from entropylaw.fit.pairing import score_key

        if run_id not in set(pd.unique(df["run_id"])):
            raise EntropyLawError(not_found("run", run_id, table.run_ids(df)))
        with warnings.catch_warnings():  # the forecast says itself what it forecasts
            warnings.simplefilter("ignore", EntropyLawWarning)
            key = score_key(df, run_id, y_key)
        kind = "validation" if key.startswith(table.VAL_PREFIX) else "training score"
        rows = df[df["run_id"] == run_id]
        metrics = set(pd.unique(rows["metric"]))

        def get(m):
            if m is None or m not in metrics:
                return None, None
            s = table.series(rows, run_id, m)
            return s.index.to_numpy(), s.to_numpy()

        if tokens_key is not None and tokens_key not in metrics:
            raise EntropyLawError(f"run {run_id!r}: no tokens metric {tokens_key!r}")
        tok = tokens_key or next((k for k in TOKEN_KEYS if k in metrics), None)
        meta = rows.iloc[0]
        family = "/".join(str(meta[c]) for c in ("model", "dataset") if str(meta[c]))
        size = float(meta["n_params_nonembedding"])
        size = size if size == size else float(meta["n_params"])
        try:
            config = json.loads(str(meta["config"]) or "{}")
        except ValueError:
            config = {}
        return replace(cls.from_arrays(*get(key), *get(x_key), *get(table.SCORE), *get(tok), run_id=run_id,
                                       target_key=key, target_kind=kind, family=family), size=size,
                       task=task_of(key, str(meta["dataset"])), config=config if isinstance(config, dict) else {},
                       model=model_key(meta["model"]), target_asked=y_key is not None,
                       problems_logged=logged_problems(key, {m: get(m)[1] for m in metrics
                                                             if is_size_name(m, metrics)}, metrics)
                       if kind == "validation" else None)

    def window(self, end: float) -> "RunData":
        """The run as seen at step ``end``: every series cut there, and what is read off a
        series (the score's range, whether tokens are logged cumulated) read off the cut."""
        cut = {name: (None if getattr(self, name) is None else getattr(self, name).upto(end))
               for name in ("target", "entropy", "score", "tokens_raw")}
        tokens = None if cut["tokens_raw"] is None else cumulative(cut["tokens_raw"], self.tokens_cumulative)
        bounds = score_bounds(cut["target"].values) if len(cut["target"]) else None
        # ``last`` is a logged step (what the output shows); ``end`` keeps the rule's value (150.5), which the
        # methods read as the window's time
        logged = [float(cut[n].steps[-1]) for n in ("target", "entropy", "score") if cut[n] is not None and len(cut[n])]
        last = max(logged) if logged else float(min(self.last, end))
        return replace(self, **cut, tokens=tokens, bounds=bounds, end=float(end), last=last)

    def describe_start(self) -> str:
        return f"the log of run {self.run_id!r} starts at step {self.origin:g} and ends at step {self.last:g}"


def robust_noise(values) -> float:
    """The SD of one score from its successive differences, robustly: 1.4826 times the median
    absolute difference over sqrt 2 (a take-off jump in the window is a trend, not noise).

    >>> round(robust_noise([0.0, 0.01, 0.6, 0.61, 0.6, 0.62]), 4)   # |diffs| .01 .59 .01 .01 .02
    0.0105
    """
    d = np.abs(np.diff(np.asarray(values, float)))
    return float(1.4826 * np.median(d) / np.sqrt(2)) if len(d) else 0.0


def level_noise(values) -> float:
    """:func:`robust_noise`, where it is 0 over a window whose last point moved: the median of the
    differences that move. A score held at its floor for over half the window, then taking off,
    repeats one value; those repeats say nothing of its noise now, and a noise of 0 gave an interval
    of no width to a score that had climbed 0 -> 0.3 in the window. A score held at its last value
    (a run collapsed to its floor and still there) keeps the noise its repeats say.

    >>> robust_noise([0, 0, 0, 0, 0, 0.1, 0.2, 0.3]), round(level_noise([0, 0, 0, 0, 0, 0.1, 0.2, 0.3]), 4)
    (0.0, 0.1048)
    >>> level_noise([0.5, 0.5, 0.5]), level_noise([0.3, 0.1, 0, 0, 0, 0])   # constant; collapsed and held
    (0.0, 0.0)
    """
    sigma = robust_noise(values)
    d = np.abs(np.diff(np.asarray(values, float)))
    moved = d[d > 0]
    return float(1.4826 * np.median(moved) / np.sqrt(2)) if sigma == 0 and len(d) and d[-1] > 0 else sigma


def trend_noise(values, steps=None) -> float:
    """The SD of one score about the window's local trend, with 3 triples of neighbours or more
    (5 points), else :func:`robust_noise`: each middle point's distance from the line through its
    two neighbours, ``r = y1 - (a y0 + b y2)`` with ``a = (t2 - t1) / (t2 - t0)``, ``b = 1 - a``,
    has SD ``s sqrt(1 + a^2 + b^2)`` for independent points with SD ``s``, and a straight climb
    has none; the SD is 1.4826 times the median of ``|r| / sqrt(1 + a^2 + b^2)``. ``steps``: the
    points' steps (default evenly spaced; then ``r`` is half the second difference). A run
    climbing one point a step shows successive differences of several points, which are its
    climb, not its noise.

    >>> round(trend_noise(np.arange(8) * 0.05 + [0, .01, 0, .01, 0, .01, 0, .01]), 4)   # |r| all .01
    0.0121
    >>> round(robust_noise(np.arange(8) * 0.05), 4)   # the climb read as noise
    0.0524
    >>> trend_noise([0.1, 0.2, 0.3, 0.4, 0.6], steps=[0, 1, 2, 3, 5]) == 0.0   # a straight climb, unevenly validated
    True
    """
    v = np.asarray(values, float)
    if len(v) < 5:
        return robust_noise(v)
    t = np.arange(len(v), dtype=float) if steps is None else np.asarray(steps, float)
    gap = np.maximum(t[2:] - t[:-2], 1e-12)
    a = (t[2:] - t[1:-1]) / gap
    b = 1.0 - a
    r = v[1:-1] - (a * v[:-2] + b * v[2:])
    return float(1.4826 * np.median(np.abs(r) / np.sqrt(1 + a**2 + b**2)))


def own_noise(values, steps=None, kind: str = "validation") -> tuple[float, bool]:
    """A window's noise from its own scores, and whether it is read about the local trend: a
    validation score with 5 points or more, :func:`trend_noise` (a climb is no noise); else
    :func:`robust_noise` (a training reward's batch means are discrete and often alternate,
    which second differences read as noise twice its size)."""
    trend = kind == "validation" and len(values) >= 5
    return (trend_noise(values, steps) if trend else robust_noise(values)), trend


def score_bounds(values) -> tuple | None:
    """The range a score lives in, from its values: (0, 1) for an accuracy or pass rate,
    (-1, 1) for a reward with a penalty (veRL's -1 for a wrong format), None otherwise.

    >>> score_bounds([0.2, 0.9]), score_bounds([-1.0, -0.97, 0.01]), score_bounds([0.5, 3.0])
    ((0.0, 1.0), (-1.0, 1.0), None)
    """
    v = np.asarray(values, float)
    if np.all((v >= 0) & (v <= 1)):
        return (0.0, 1.0)
    if np.all((v >= -1) & (v <= 1)):
        return (-1.0, 1.0)
    return None


def cumulative(tokens: Series, is_cumulative: bool | None = None) -> Series:
    """Cumulative tokens. veRL logs tokens per step (they go up and down), TRL a running total.

    A per-step series is summed with each value counted once per step since the previous
    logged step, so a series logged every k steps is not undercounted."""
    v = tokens.values
    if is_cumulative is None:
        is_cumulative = len(v) >= 3 and bool(np.all(np.diff(v) >= 0)) and v[-1] > 1.5 * v[0]
    if is_cumulative:
        return tokens
    gaps = np.diff(tokens.steps, prepend=tokens.steps[0] - 1) if len(v) else v
    return Series(tokens.steps, np.cumsum(v * gaps))


def far_start(run: RunData, end: float) -> list[str]:
    """A note where ``run``'s log starts further from step 0 than its window spans (``end``): the
    curves count time from the log's first step, logit-drift and the regime from step 0 (their
    climb is in ln(1 + step)). Kept so: a run resumed at step 5000 has trained 5000 steps, and its
    climb in the window is that of a run 5000 steps in; the same curve logged from 0 is forecast
    as a run just started (the final score differed by a point on a real 116-step gsm8k run from
    step 100, and the regime read its window as a take-off from step 5000). Said, not guessed.

    >>> r = RunData.from_arrays(np.arange(5000.0, 5201.0, 10.0), np.linspace(0.3, 0.6, 21))
    >>> far_start(r, 5050.0)[0][:81]
    'the log starts at step 5000, further from step 0 than the window spans (50 steps)'
    >>> far_start(replace(r, origin=40.0), 90.0)   # a log resumed at step 40: near enough to 0
    []
    """
    span = float(end) - run.origin
    if run.origin <= max(span, 0.0):
        return []
    return [f"the log starts at step {run.origin:g}, further from step 0 than the window spans ({span:g} steps): "
            f"logit-drift and the regime count steps from 0 (their climb is in ln(1 + step)), as for a run resumed "
            f"at step {run.origin:g}; a run that began training at step {run.origin:g} is read as one that far in: "
            "log its steps from 0 to forecast it as just started"]


def with_problems(run: RunData, n_problems=None) -> RunData:
    """``run`` with its validation set's size where the user gives one (its binomial noise then
    weighs the points, reads the regime and sets the threshold), else unchanged; a size of under
    :data:`~.problems.MIN_PROBLEMS` (or not whole) is refused (:func:`~.problems.check_problems`)."""
    check_problems(n_problems)
    return replace(run, n_problems=float(n_problems)) if n_problems else run


def window_end(run: RunData, fit_frac: float | None = None, fit_steps: float | None = None) -> float:
    """The window's last step on ``run``: :func:`entropylaw.fit.window.window_end`, the one rule."""
    return _window_end(run.origin, run.last, fit_frac, fit_steps, start=run.describe_start())


def prior_runs(prior: pd.DataFrame | None, x_key: str = table.ENTROPY) -> tuple:
    """The finished runs of ``prior`` (a tidy table) as :class:`RunData`: a run that cannot be one (no
    score) is left out with a warning naming `prior`, and the others go on (it stopped every forecast)."""
    if prior is None:
        return ()
    out = []
    for rid in table.run_ids(prior):
        try:
            out.append(RunData.from_table(prior, rid, x_key=x_key))
        except EntropyLawError as err:
            warnings.warn(f"`prior`: run {rid!r} left out: {str(err).removeprefix(f'run {rid!r}: ')}",
                          EntropyLawWarning, stacklevel=4)
    return tuple(out)
