"""The Python API: what the CLI does, in a notebook, in five lines.

>>> import entropylaw as el
>>> df = el.load("data/real")                                         # doctest: +SKIP
>>> f = el.fit(df, run="verl_ppo_qwen2.5-0.5b-instruct_gsm8k_resp512_verl-data")  # doctest: +SKIP
>>> print(f)                         # a, b, ceiling with intervals, R², trust flag  # doctest: +SKIP
>>> f.plot()                                                          # doctest: +SKIP

Everything here is the same code the CLI, the report and ``make figures`` run: one
score-choice rule, one minimum number of points, one trust rule
(:mod:`entropylaw.fit.run`).

- :func:`load` reads logs, tables, directories, ``wandb://`` URIs into the tidy run table;
  the row accounts are in ``df.attrs["row_accounts"]`` and any loss is warned about.
- :func:`fit` fits one run (or a pooled family) -> :class:`EntropyLawFit`;
  :func:`fit_all` every run.
- :func:`predict`: the paper's early-prediction protocol (observed later entropy).
- :func:`forecast`: a true forecast from the first steps (no later information).
- :func:`scale`: a, b and the ceiling vs model size; :func:`algorithms`: one law for
  several algorithms, or one each; :func:`summary`: what was read.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd

import entropylaw.table as table
from entropylaw.errors import EntropyLawError, EntropyLawWarning, RowsDroppedWarning
from entropylaw.fit.algorithms import AlgorithmTest
from entropylaw.fit.forecast import core as _forecast
from entropylaw.fit import law as _law
from entropylaw.fit.early import EarlyPrediction
from entropylaw.fit.forecast.core import Forecast, forecast_table
from entropylaw.fit.law import EntropyLawFit
from entropylaw.fit.pairing import check_pairs, pair
from entropylaw.fit.run import fit_run, fit_runs, fits_frame
from entropylaw.fit.scaling import SizeLaw  # noqa: F401 (re-exported)
from entropylaw.fit import size_series as _size_series
from entropylaw.fit.size_series import ScaleResult
from entropylaw.ingest.common import KeyOptions
from entropylaw.ingest.dispatch import load as _load_sources
from entropylaw.ingest.model_size import parse_params
from entropylaw.ingest.accounts import ACCOUNTS
from entropylaw.fit.run_summary import summarize


# fit/ sits below plots/, so results get their drawers from here, the top layer. The drawers
# import matplotlib: they are loaded on the first .plot(), not on `import entropylaw`.
def _draw_fit(fit, ax=None, **kwargs):
    from entropylaw.plots.law import draw_fit

    return draw_fit(fit, ax=ax, **kwargs)


def _draw_forecast(fc, ax=None, methods=None):
    from entropylaw.plots.forecast import plot_forecast

    return plot_forecast(fc, ax=ax, methods=methods)


def _draw_scale(res, ax=None, predict=None):
    from entropylaw.plots.scaling import plot_final_score

    return plot_final_score(res, ax=ax, predict=predict)


_law.PLOTTER = _draw_fit
_forecast.PLOTTER = _draw_forecast
_size_series.PLOTTER = _draw_scale

__all__ = ["load", "fit", "fit_all", "predict", "forecast", "scale", "algorithms", "summary",
           "row_accounts", "EntropyLawFit", "Forecast", "fits_frame"]


def load(*paths, entropy_key=None, score_key=None, val_keys=None, model=None, algorithm=None,
         dataset=None, params=None, run_id=None, logging_steps=None, reward_func=None, skip_bad=False,
         warn=True) -> pd.DataFrame:
    """Read logs / tables / directories / ``wandb://`` URIs into one tidy run table.

    Keyword arguments are the CLI's source options (``--entropy-key`` ...). The row
    account of every source (rows read, kept, dropped by reason, notes) is in
    ``df.attrs["row_accounts"]``; when anything was dropped or skipped a
    :class:`~entropylaw.errors.RowsDroppedWarning` says so (``warn=False`` to silence).
    """
    if len(paths) == 1 and isinstance(paths[0], (list, tuple)):
        paths = tuple(paths[0])
    if not paths:
        raise EntropyLawError("load: give at least one path (a log file, a run table, a directory or a wandb:// URI)")
    if isinstance(val_keys, str):
        val_keys = [val_keys]
    opts = KeyOptions(entropy_key=entropy_key, score_key=score_key, val_keys=val_keys, model=model,
                      algorithm=algorithm, dataset=dataset, run_id=run_id)
    if logging_steps is not None:
        opts.logging_steps = logging_steps
    if reward_func is not None:
        opts.reward_func = reward_func
    if params is not None:
        opts.n_params = float(params) if not isinstance(params, str) else parse_params(params)
    df, reports = _load_sources([os.fspath(p) for p in paths], opts, skip_bad=skip_bad)
    df.attrs[ACCOUNTS] = [r.to_dict() for r in reports]
    if warn:
        for r in reports:
            line = r.drop_line()
            if line:
                warnings.warn(line, RowsDroppedWarning, stacklevel=2)
    return df


def row_accounts(df: pd.DataFrame) -> list[dict]:
    """The row accounts :func:`load` attached to ``df`` ([] for a table built otherwise)."""
    return list(df.attrs.get(ACCOUNTS, []))


def _runs(df: pd.DataFrame) -> list[str]:
    if not table.is_table(df):
        raise EntropyLawError("expected the tidy run table from entropylaw.load (columns run_id, step, metric, value)")
    return table.run_ids(df)


def _one_run(df: pd.DataFrame, run: str | None) -> str:
    ids = _runs(df)
    if run is None:
        if len(ids) == 1:
            return ids[0]
        raise EntropyLawError(f"the table holds {len(ids)} runs: choose one with run=... "
                              f"({', '.join(ids[:8])}{' ...' if len(ids) > 8 else ''}), or use fit_all")
    if run not in ids:
        raise EntropyLawError(f"no run {run!r} in the table (runs: {', '.join(ids[:8])}{' ...' if len(ids) > 8 else ''})")
    return run


def fit(df: pd.DataFrame, run: str | None = None, *, pool: bool | list = False, **options) -> EntropyLawFit:
    """Fit R = -a*exp(H) + b to one run (``pool=True``: all runs, or a list of runs, as one family).

    ``options``: ``y`` (score metric), ``x``, ``pairing``, ``form``, ``interval``, ``conf``,
    ``robust``, ``errors_in_variables``, ``score_range``, ``n_boot``, ``seed``.
    """
    if pool:
        ids = _runs(df) if pool is True else [_one_run(df, r) for r in pool]
        return fit_runs(df, ids, pool=True, **options)[0]
    return fit_run(df, _one_run(df, run), **options)


def fit_all(df: pd.DataFrame, runs=None, *, skip_errors: bool = False, **options) -> list[EntropyLawFit]:
    """:func:`fit` on every run (or ``runs``); ``fits_frame(fits)`` tabulates them."""
    return fit_runs(df, runs if runs is not None else _runs(df), skip_errors=skip_errors, **options)


def predict(df: pd.DataFrame, run: str | None = None, *, fit_frac=None, fit_steps=None, predict_steps=None,
            y=None, x=table.ENTROPY, pairing="nearest-earlier", conf=0.95, score_range=None) -> EarlyPrediction:
    """The paper's protocol (Fig. 5): fit on the first steps, predict each later score from its
    *observed* entropy. Not a forecast (it uses later entropy): see :func:`forecast`."""
    p = pair(df, _one_run(df, run), x=x, y=y, mode=pairing)
    return EarlyPrediction(fit_steps=fit_steps, fit_frac=fit_frac, conf=conf, score_range=score_range,
                           predict_steps=predict_steps).fit(p)


def forecast(df: pd.DataFrame, run: str | None = None, *, prior: pd.DataFrame | None = None,
             **options) -> Forecast:
    """Forecast a run's score from its first steps, using no later information.

    ``options``: ``fit_frac`` (backtests) or ``fit_steps`` (default: everything logged so
    far), ``at_steps``, ``methods`` (default all; the recommended one is
    ``Forecast.default``), ``conf`` (0.9), ``y_key``, ``n_boot``, ``seed``; ``prior``: a
    table of finished runs of the same family. "Can I stop?" and "will it get there?" are in
    ``Forecast.decision`` (the stop-paying step and, with ``target=0.85``, the step that
    reaches it, each with an interval; ``n_problems``, ``threshold``, ``total_steps``). See
    :mod:`entropylaw.fit.forecast.core`.

    >>> import numpy as np, entropylaw as el
    >>> recs = [(s, "val/gsm8k", 0.8 - 0.4 * np.exp(-s / 80)) for s in range(0, 500, 10)]
    >>> fc = el.forecast(el.table.from_records(recs, run_id="r"), fit_frac=0.4, methods=["exp-saturation"],
    ...                  target=0.79, n_boot=20)
    >>> d = fc.decision                                # 0.8 - 0.4 exp(-s/80) = 0.79 at s = 295.1
    >>> d["method"], bool(abs(d["target_step"] - 80 * np.log(0.4 / 0.01)) < 10)
    ('exp-saturation', True)
    """
    rid = _one_run(df, run)
    return forecast_table(df, [rid], prior=prior, **options)[rid]


def scale(df: pd.DataFrame, runs=None, *, conf=0.9, **options) -> ScaleResult:
    """One recipe at several model sizes: the final-score law (what will a larger size reach?)
    and the paper's coefficient law (a, b, ceiling linear in log10 N) over the runs whose fit
    the law describes (:mod:`entropylaw.fit.size_series`). ``options`` go to the law fits.
    ``str(result)`` is what ``entropylaw scale`` prints; ``result.plot(predict=[32e9])`` draws it.

    N is the non-embedding parameter count (a family's published count, a config.json, or
    ``--params``); total parameters, with a warning, where only those are known.

    >>> res = el.scale(el.load("data/real-sizes"))                       # doctest: +SKIP
    >>> res.predict(32e9)["final_score"]                                 # doctest: +SKIP
    """
    from entropylaw.fit.size_series import scale_runs

    return scale_runs(df, list(runs) if runs is not None else _runs(df), conf=conf, **options)


def algorithms(df: pd.DataFrame, runs=None, *, conf=0.95, y=None, x=table.ENTROPY, pairing="nearest-earlier",
               score_range=None) -> AlgorithmTest:
    """One shared (a, b) for several algorithms against one per algorithm (F-test, AIC)."""
    ids = list(runs) if runs is not None else _runs(df)
    meta = table.runs(df).set_index("run_id")
    pairs = {}
    for r in ids:
        p = pair(df, r, x=x, y=y, mode=pairing)
        check_pairs(p["H"], p["R"], where=f"run {r!r}", score_range=score_range)
        pairs[r] = p
    return AlgorithmTest(conf=conf).fit(pairs, {r: meta.loc[r, "algorithm"] for r in pairs})


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """One row per run: steps, the keys read, first/last entropy, score and validation."""
    return summarize(df)



def audit(model, rollouts, log=None, step=None, *, logged=None, temperature=1.0, micro_batch_size=None,
          token_budget=None, horizon=None, tolerance=None, entropy_key=None, device="cpu",
          chat_template=None, trainer_precision="bf16") -> dict:
    """Is the entropy a trainer logged at ``step`` the entropy of its policy? (``entropylaw audit``)

    Recomputes the per-token entropy of ``model`` (the checkpoint that produced step
    ``step``) on that step's ``rollouts``, aggregates it under every trainer convention, and
    compares each with the value ``log`` recorded (or ``logged``). Returns a dict: ``logged``,
    ``conventions`` (name -> value), ``matched`` (name or None), ``tolerance`` (absolute),
    ``correction`` and ``verdict`` (one line), and ``tolerance_model``: what the tolerance assumes
    (``trainer_precision``: what the trainer computed in, bf16 by default). Needs torch (the
    ``probe`` extra).

    >>> r = el.audit("ckpt-0", "data/trl/audit/rollouts_step1.jsonl", "data/trl/audit/trainer_state.json",
    ...              step=1)                                           # doctest: +SKIP
    >>> r["matched"], r["conventions"]["token-mean"]                   # doctest: +SKIP
    ('token-mean', 1.9107298...)
    """
    from entropylaw.audit.core import audit as _audit

    return _audit(model, rollouts, log, step, logged=logged, temperature=temperature,
                  micro_batch_size=micro_batch_size, token_budget=token_budget, horizon=horizon,
                  tolerance=tolerance, entropy_key=entropy_key, device=device, chat_template=chat_template,
                  trainer_precision=trainer_precision)
