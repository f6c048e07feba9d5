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
- :func:`predict`: the paper's early-prediction protocol (observed later entropy);
  :func:`predict_all` every run.
- :func:`forecast`: a true forecast from the first steps (no later information).
- :func:`scale`: a, b and the ceiling vs model size; :func:`algorithms`: one law for
  several algorithms, or one each; :func:`summary`: what was read.

Every command of the CLI is one call here (the CLI parses its flags and prints the result):
:func:`ingest`, :func:`forecast_all` (``str()`` is what ``entropylaw forecast`` prints), :func:`rank`,
:func:`snapshot` (``watch``), :func:`report`, :func:`figures`, :func:`overview` (``demo``),
:func:`probe`, :func:`probe_checkpoints`, :func:`audit`, and the lab's :func:`lab_run`,
:func:`lab_sweep`, :func:`lab_export`, :func:`lab_sizes`. A message names a parameter in
backticks (`` `fit_frac` ``); the CLI puts its flag (``--fit-frac``) there.
"""


import contextlib as _contextlib
import warnings as _warnings

import pandas as _pd

import entropylaw.table as _table
from entropylaw._version import __version__  # noqa: F401
from entropylaw.errors import EntropyLawError as _Error, EntropyLawWarning as _Warning
from entropylaw.fit.algorithms import UNKNOWN as _UNKNOWN_ALGORITHM, AlgorithmTest as _AlgorithmTest
from entropylaw.fit.run import each_run as _each_run, left_out_line as _left_out_line, run_verdict as _run_verdict
from entropylaw.fit.early import EarlyPrediction as _EarlyPrediction, EarlyPredictions as _EarlyPredictions
from entropylaw.fit.forecast.core import Forecast, forecast_table as _forecast_table
from entropylaw.fit.law import EntropyLawFit
from entropylaw.fit.pairing import check_pairs as _check_pairs, pair as _pair
from entropylaw.fit.run import NOT_APPLICABLE as _NOT_APPLICABLE, fit_run as _fit_run, fit_runs as _fit_runs
from entropylaw.fit.run import fits_frame
from entropylaw.fit.run_summary import summarize as _summarize
from entropylaw.fit.size_series import ScaleResult as _ScaleResult
from entropylaw.fit.uncertainty import check_conf as _check_conf
from entropylaw.api.checks import fit_call as _fit_call, predict_call as _predict_call
from entropylaw.api.checks import entropy_key as _entropy_key, runs_of as _runs_of, the_table as _the_table
from entropylaw.api.watching import snapshot
from entropylaw.api.deciding import rank
from entropylaw.api.outputs import FIGURES, figures, overview, report
from entropylaw.api.tools import audit, probe, probe_checkpoints
from entropylaw.api.lab import lab_export, lab_run, lab_sizes, lab_sweep
from entropylaw.api.reading import ingest, load, row_accounts, target_range_line as _target_range_line
from entropylaw.readers.names import algorithm_name as _algorithm_name
from entropylaw.terminal import group_repeats as _group_repeats, not_found as _not_found

# the API: everything else of the package (the readers, the fits' parts, the commands' plumbing in
# entropylaw.api.plumbing) is reached through its own module
__all__ = ["load", "ingest", "fit", "fit_all", "fits_frame", "predict", "predict_all", "forecast", "forecast_all",
           "scale", "algorithms", "summary", "row_accounts", "run_ids", "report", "figures", "FIGURES", "overview",
           "snapshot", "rank", "probe", "probe_checkpoints", "audit", "lab_run", "lab_sweep", "lab_export", "lab_sizes",
           "EntropyLawFit", "Forecast"]


@_contextlib.contextmanager
def _said_once():
    """The package's warnings of a call over many runs, each kind said once with its runs
    counted (:func:`entropylaw.terminal.group_repeats`); each grouped warning keeps the
    messages it stands for in ``.messages``. Other warnings pass as they came."""
    with _warnings.catch_warnings(record=True) as caught:
        _warnings.simplefilter("always")
        yield
    by_kind: dict = {}
    for w in caught:
        if issubclass(w.category, _Warning):
            by_kind.setdefault(w.category, []).append(str(w.message))
        else:
            _warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    for category, messages in by_kind.items():
        for line, members in _group_repeats(messages):
            said = category(line)
            said.messages = members
            _warnings.warn(said, stacklevel=4)


def run_ids(df: _pd.DataFrame) -> list[str]:
    """The runs of a tidy run table, in order (a table built otherwise is one clear error)."""
    return _table.run_ids(_the_table(df))


def _one_run(df: _pd.DataFrame, run: str | None, every: str = "fit_all") -> str:
    ids = run_ids(df)
    if not ids:
        raise _Error("`df`: the table holds no runs (no rows)")
    if run is None:
        if len(ids) == 1:
            return ids[0]
        raise _Error(f"the table holds {len(ids)} runs: choose one with run=... "
                              f"({', '.join(ids[:8])}{' ...' if len(ids) > 8 else ''}), or use {every}")
    if run not in ids:
        raise _Error(f"`run`: {_not_found('run', run, ids)}")
    return run


def fit(df: _pd.DataFrame, run: str | None = None, *, pool: bool | list = False, **options) -> EntropyLawFit:
    """Fit R = -a*exp(H) + b to one run (``pool=True``: all runs, or a list of runs, as one family).

    ``options``: ``y`` (score metric), ``x``, ``pairing``, ``form``, ``interval``, ``conf``,
    ``robust``, ``errors_in_variables``, ``score_range``, ``n_boot``, ``seed``.
    """
    if isinstance(pool, (list, tuple)) and not pool:
        raise _Error("`pool` []: give the runs to fit as one family, or pool=True for every run")
    if pool:
        ids = run_ids(df) if pool is True else _runs_of(df, pool, "pool")
        return _fit_runs(df, ids, pool=True, **options)[0]
    return _fit_run(df, _one_run(df, run), **options)


def fit_all(df: _pd.DataFrame, runs=None, *, pool: bool = False, skip_errors: bool = False,
            **options) -> list[EntropyLawFit]:
    """:func:`fit` on every run (or ``runs``; ``pool=True``: all of them as one family, one fit);
    ``fits_frame(fits)`` tabulates them. With ``skip_errors`` a run that cannot be fitted (no
    entropy, no score ...) is left out with a warning and named in ``.left_out`` (run -> why). A
    warning that several runs share is said once, with the runs counted; each fit keeps its own in
    ``.warnings_``."""
    with _said_once():
        return _fit_runs(df, _runs_of(df, runs), pool=pool, skip_errors=skip_errors, **options)


# predict's keywords, which predict_all passes on to it
_PREDICT_OPTIONS = ("fit_frac", "fit_steps", "predict_steps", "y", "x", "pairing", "conf", "score_range")


def predict(df: _pd.DataFrame, run: str | None = None, *, fit_frac=None, fit_steps=None, predict_steps=None,
            y=None, x=_table.ENTROPY, pairing="nearest-earlier", conf=0.95, score_range=None) -> _EarlyPrediction:
    """The paper's protocol (Fig. 5): fit on the first steps, predict each later score from its
    *observed* entropy. Not a forecast (it uses later entropy): see :func:`forecast`."""
    _predict_call(dict(fit_frac=fit_frac, fit_steps=fit_steps, predict_steps=predict_steps, pairing=pairing,
                       conf=conf, score_range=score_range), _PREDICT_OPTIONS)
    p = _pair(df, _one_run(df, run, "predict_all"), x=x, y=y, mode=pairing)
    return _EarlyPrediction(fit_steps=fit_steps, fit_frac=fit_frac, conf=conf, score_range=score_range,
                           predict_steps=predict_steps).fit(p)


def predict_all(df: _pd.DataFrame, runs=None, **options) -> _EarlyPredictions:
    """:func:`predict` on every run (or ``runs``), with the same ``options``:
    ``{run_id: EarlyPrediction}`` whose ``str()`` is what ``entropylaw predict`` prints
    (``.report(curve=True)``: each run's error vs window too). A warning several runs share
    is said once, with the runs counted. With several runs, one that cannot be predicted (too few
    points in its window, no entropy ...) is left out with a warning and named in ``.left_out``
    (run -> why); none left is an error."""
    ids = _runs_of(df, runs)
    _predict_call(options, _PREDICT_OPTIONS)  # once: a mistake of the call's is not every run left out
    with _said_once():
        done, left_out = _each_run(lambda r: predict(df, r, **options), ids)
    if not done:
        raise _Error(_left_out_line(left_out, "no run could be predicted"))
    return _EarlyPredictions(done, fit_steps=options.get("fit_steps"), fit_frac=options.get("fit_frac"),
                             predict_steps=options.get("predict_steps"), conf=options.get("conf", 0.95),
                             left_out=left_out)


def forecast(df: _pd.DataFrame, run: str | None = None, *, prior: _pd.DataFrame | None = None,
             **options) -> Forecast:
    """Forecast a run's score from its first steps, using no later information.

    ``options``: ``fit_frac`` (backtests) or ``fit_steps`` (default: everything logged so
    far), ``at_steps``, ``methods`` (default all; the recommended one is
    ``Forecast.default``), ``conf`` (0.9), ``y_key``, ``n_boot``, ``seed``; ``prior``: a
    table of finished runs of the same family. "What does the rest add? Can I stop? Will it
    get there?" are in ``Forecast.decision``: the gain to the planned last step with its
    90 % bounds, the call (stop / continue / undecided) and, with ``target=0.85``, the step
    that reaches it (``n_problems``, ``threshold``, ``total_steps``, ``step_cost``). See
    :mod:`entropylaw.fit.forecast.decide`.

    >>> import numpy as np, entropylaw as el
    >>> recs = [(s, "val/gsm8k", 0.8 - 0.4 * np.exp(-s / 80)) for s in range(0, 500, 10)]
    >>> fc = el.forecast(el.table.from_records(recs, run_id="r"), fit_frac=0.4, methods=["exp-saturation"],
    ...                  target=0.79, n_boot=20)
    >>> d = fc.decision                                # 0.8 - 0.4 exp(-s/80) = 0.79 at s = 295.1
    >>> d["method"], bool(abs(d["target_step"] - 80 * np.log(0.4 / 0.01)) < 10)
    ('exp-saturation', True)
    >>> d["call"], d["gain"]["to_step"]                # 0.4 (e^{-196/80} - e^{-490/80}) = 3.3 points to go
    ('continue', 490.0)
    """
    rid = _one_run(df, run, "forecast_all")  # a sweep's every run: forecast_all (it said fit_all)
    _entropy_key(df, [rid], options.get("x_key"))
    _target_in_range(df, [rid], options)
    if prior is not None:
        _the_table(prior, "prior")
    return _sourced(df, _forecast_table(df, [rid], prior=prior, **options))[rid]


def forecast_all(df: _pd.DataFrame, runs=None, *, prior: _pd.DataFrame | None = None, **options):
    """:func:`forecast` for every run (or ``runs``): ``{run_id: Forecast}`` whose ``str()`` is what
    ``entropylaw forecast`` prints. With several runs, one that cannot be forecast is left out
    with a warning (``.left_out``: run -> why); none left is an error. ``options`` and ``prior``
    as for :func:`forecast` (``methods=["default"]``: the recommended method only)."""
    ids = _runs_of(df, runs)
    _entropy_key(df, ids, options.get("x_key"))
    _target_in_range(df, ids, options)
    if prior is not None:
        _the_table(prior, "prior")
    return _sourced(df, _forecast_table(df, ids, prior=prior, **options))


def _target_in_range(df: _pd.DataFrame, ids, options: dict) -> None:
    """A target outside the score's range is a mistake (its units, its sign), said before any fit."""
    why = _target_range_line(df, options.get("target"), y_key=options.get("y_key"), runs=ids)
    if why:
        raise _Error(why.replace("--target", "`target`", 1))


def _sourced(df: _pd.DataFrame, forecasts):
    """``forecasts`` (run -> Forecast), each with the file its run was read from (``.source``, in its
    JSON as in :func:`rank`'s): runs of one name in two folders are run and run-2."""
    sources = _table.runs(df).set_index("run_id")["source"].astype(str).to_dict()
    for rid, fc in forecasts.items():
        fc.source = sources.get(rid, "")
    return forecasts


def scale(df: _pd.DataFrame, runs=None, *, conf=0.9, predict=None, **options) -> _ScaleResult:
    """One recipe at several model sizes: the final-score law (what will a larger size reach?)
    and the paper's coefficient law (a, b, ceiling linear in log10 N) over the runs whose fit
    the law describes (:mod:`entropylaw.fit.size_series`). ``options`` go to the law fits.
    ``predict``: sizes to predict, as the CLI's ``--predict`` takes them (``["32B", 72e9]`` or
    ``"32B,72B"``; a size without a unit, ``"32"``, is refused). ``str(result)`` is what
    ``entropylaw scale`` prints, with those predictions; ``result.predict("32B")`` one of
    them; ``result.plot()`` draws them.

    N is the non-embedding parameter count (a family's published count, a config.json, or
    ``--params``); total parameters, with a warning, where only those are known.

    >>> res = el.scale(el.load("data/real-sizes"), predict=["32B", "72B"])   # doctest: +SKIP
    >>> print(res)                 # the table, the laws and the two predictions  # doctest: +SKIP
    >>> res.predict("32B")["final_score"]                                # doctest: +SKIP
    """
    from entropylaw.fit.size_series import scale_runs
    from entropylaw.readers.model_size import parse_sizes

    asked = parse_sizes(predict, "`predict`")  # a bad size fails before any fitting
    _check_conf(conf, "`conf`")
    with _said_once():
        res = scale_runs(df, _runs_of(df, runs), conf=conf, **options)
    res.predicted = asked
    return res


def algorithms(df: _pd.DataFrame, runs=None, *, conf=0.95, y=None, x=_table.ENTROPY, pairing="nearest-earlier",
               score_range=None) -> _AlgorithmTest:
    """One shared (a, b) for several algorithms against one per algorithm (F-test, AIC).

    A run the law does not describe (:func:`entropylaw.fit.run.run_verdict`: entropy rising,
    a degenerate score ...), that cannot be paired (no entropy, too few points) or whose
    algorithm is unknown takes no part, and is named in the result's ``left_out``: its (a, b)
    says nothing of its algorithm."""
    ids = _runs_of(df, runs)
    _fit_call(conf=conf, pairing=pairing, score_range=score_range)  # once, before any run is paired
    meta = _table.runs(df).set_index("run_id")
    # one algorithm however a table spells it (GRPO, grpo, 'grpo ', gae for ppo): the readers' one rule
    meta["algorithm"] = [_algorithm_name(a) for a in meta["algorithm"]]
    pairs, left_out = {}, {}
    with _said_once():
        for r in ids:
            try:  # a run with too few pairs, or no entropy, is one run left out, not the end of the test
                p = _pair(df, r, x=x, y=y, mode=pairing)
                _check_pairs(p["H"], p["R"], where=f"run {r!r}", score_range=score_range)
            except _Error as err:
                left_out[r] = str(err).removeprefix(f"run {r!r}: ")
                continue
            verdict, why = _run_verdict(df, r, p.attrs["y_key"], x, score_range)
            if verdict == "applies":  # the run's own fit too: a <= 0 is a law that does not describe it
                own = _fit_run(df, r, y=p.attrs["y_key"], x=x, pairing=pairing, score_range=score_range, warn=False)
                verdict, why = ("applies", []) if own.trust_ != _NOT_APPLICABLE else ("n/a", own.trust_reasons_)
            if not meta.loc[r, "algorithm"]:
                left_out[r] = _UNKNOWN_ALGORITHM
            elif verdict != "applies":
                left_out[r] = f"the law does not apply ({'; '.join(why)})"
            else:
                pairs[r] = p
        _one_benchmark_one_model(pairs, meta)
        return _AlgorithmTest(conf=conf).fit(pairs, {r: meta.loc[r, "algorithm"] for r in pairs}, left_out=left_out)


def _one_benchmark_one_model(pairs: dict, meta: _pd.DataFrame) -> None:
    """The algorithm test's runs share a benchmark and a model (where the logs name one): a and b
    differ between benchmarks and between models, and the test would read that as the algorithm's
    doing (the paper compares algorithms on one model). Runs of one algorithm are the test's own
    refusal to say (it needs two), whatever their models."""
    if len({meta.loc[r, "algorithm"] for r in pairs}) < 2:
        return
    for what, of in (("benchmark", lambda r: pairs[r].attrs["y_key"]), ("model", lambda r: meta.loc[r, "model"])):
        groups: dict = {}
        for r in pairs:
            if of(r):
                groups.setdefault(of(r), []).append(f"{r} ({meta.loc[r, 'algorithm'] or '?'})")
        if len(groups) > 1:
            by = "; ".join(f"{k}: {', '.join(v[:3])}{' ...' if len(v) > 3 else ''}" for k, v in groups.items())
            raise _Error(f"the runs come from {len(groups)} {what}s ({by}): an algorithm test compares runs of one "
                         f"{what} (choose them with `run`)")


def summary(df: _pd.DataFrame) -> _pd.DataFrame:
    """One row per run: steps, the keys read, first/last entropy, score and validation."""
    return _summarize(_the_table(df))
