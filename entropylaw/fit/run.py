"""The one fit pipeline: a run of the tidy table -> a fitted, judged :class:`EntropyLawFit`.

The CLI (``fit``, ``summary``), the report, the figures, the analysis scripts and the
Python API all fit through :func:`fit_run` / :func:`fit_runs`, so one rule decides which
score is fitted (:func:`entropylaw.fit.pairing.score_key`), one constant the minimum
number of points (:data:`MIN_POINTS`), and one function whether a fit can be trusted
(:func:`judge`).

Each fit carries, besides its estimates: the keys it used, whether the score is a
validation score or the training reward (``score_kind``), the functional form AIC and
BIC prefer (never a form whose shape parameter sits at its bound), and a trust flag:

- ``good fit``: a > 0 and distinguishable from 0, R² >= 0.5, enough points;
- ``weak fit``: usable with care (the reasons say why);
- ``law does not apply``: a <= 0, entropy rising over the run, a degenerate score.

>>> import numpy as np
>>> from entropylaw import table
>>> steps = np.arange(1, 41)
>>> H = 0.05 + np.exp(-steps / 10)
>>> R = 0.8 - 0.2 * np.exp(H) + 0.005 * np.sin(steps)
>>> t = table.concat([table.from_records([(int(s), "entropy", h) for s, h in zip(steps, H)], run_id="r"),
...                   table.from_records([(int(s), "val/gsm8k", r) for s, r in zip(steps, R)], run_id="r")])
>>> f = fit_run(t, "r")
>>> round(f.ceiling_, 2), f.trust_, f.meta_["score_kind"]
(0.6, 'good fit', 'validation')
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pandas as pd

from entropylaw.table import parallel
import entropylaw.table as table
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.fit import forms as forms_mod
from entropylaw.fit.applicability import law_applies
from entropylaw.fit.law import EntropyLawFit, check_options, fit_family, fit_pairs
from entropylaw.fit.pairing import MIN_POINTS, MODES, pair  # noqa: F401  (MIN_POINTS: re-exported)
from entropylaw.fit.trust import (GOOD, MIN_N_GOOD, MIN_R2_GOOD, NOT_APPLICABLE,  # noqa: F401 (re-exported)
                                  TRUST_LEVELS, WEAK, judge)
from entropylaw.terminal import count, same_kinds, some_names


def score_kind(y_key: str) -> str:
    """``validation`` for ``val/*`` scores, ``training score`` for the rollouts' own reward."""
    return "validation" if str(y_key).startswith(table.VAL_PREFIX) else "training score"


def _compare(fit: EntropyLawFit) -> None:
    comp = forms_mod.compare_forms(fit.H_, fit.R_, fit.w_)
    # a constant score: every form fits it exactly (each AIC -inf), and the "best" was the first in the table
    best = forms_mod.winner(comp) if np.ptp(fit.R_) > 0 else {"aic": None, "bic": None}
    fit.forms_ = comp
    fit.best_form_aic_, fit.best_form_bic_ = best["aic"], best["bic"]


def run_verdict(df: pd.DataFrame, run_id: str, y_key: str, x_key: str = table.ENTROPY,
                score_range: tuple[float, float] | None = None) -> tuple[str, list[str]]:
    """:func:`~.applicability.law_applies` on one run's whole entropy series and its score
    ``y_key``: the verdict every command shows beside the run's law. An accuracy lives in
    [0, 1]; a training reward (a sum of reward functions) need not (``score_range``)."""
    h, r = table.series(df, run_id, x_key), table.series(df, run_id, y_key)
    rng = score_range or ((0.0, 1.0) if score_kind(y_key) == "validation" else None)
    return law_applies(h.index.to_numpy(), h.to_numpy(), r.to_numpy(), score_range=rng, score_steps=r.index.to_numpy())


def _attach(fit: EntropyLawFit, df: pd.DataFrame, run_ids: list[str], y_key: str, compare: bool) -> EntropyLawFit:
    meta = table.runs(df[df["run_id"].isin(run_ids)])
    fit.meta_["score_kind"] = score_kind(y_key)
    fit.meta_["source"] = ", ".join(sorted({str(s) for s in meta["source"]}))
    extra = []
    if fit.meta_["score_kind"] != "validation":
        fit.meta_["note"] = "fitted on the training score: the run logs no validation score"
    for run_id in run_ids:
        verdict, why = run_verdict(df, run_id, y_key, fit.meta_.get("x_key") or table.ENTROPY, fit.score_range)
        if verdict != "applies":
            extra += [(NOT_APPLICABLE, f"{run_id}: {w}" if len(run_ids) > 1 else w) for w in why]
    if compare:
        _compare(fit)
    fit.trust_, fit.trust_reasons_ = judge(fit, tuple(extra))
    if extra and fit.warn:  # the fit's own warnings already said what it saw (a <= 0 ...)
        warnings.warn(f"{fit.where_}: the law does not apply ({'; '.join(r for _, r in extra)}); "
                      "its ceiling is not a forecast", EntropyLawWarning, stacklevel=3)
    return fit


OWN = ("y", "x", "pairing")  # fit_run's own keywords, named beside EntropyLawFit's where an option is unknown


def fit_run(df: pd.DataFrame, run_id: str, *, y: str | None = None, x: str = table.ENTROPY,
            pairing: str = "nearest-earlier", compare: bool = True, **options) -> EntropyLawFit:
    """Fit one run of a tidy table. ``options`` go to :class:`EntropyLawFit` (form, interval, conf ...)."""
    if pairing not in MODES:
        raise EntropyLawError(f"unknown pairing {pairing!r} (expected one of {', '.join(MODES)})")
    check_options(options, OWN)  # a mistake of the call's is no file's: said before any run is read
    try:
        p = pair(df, run_id, x=x, y=y, mode=pairing)
        fit = fit_pairs(p, **options)
    except EntropyLawError as err:  # name the file the run came from, not only the run
        src = _source(df, run_id)
        raise EntropyLawError(f"{src}: {err}" if src and src not in str(err) else str(err)) from None
    fit.pairs_ = p
    return _attach(fit, df, [run_id], p.attrs["y_key"], compare)


def _source(df: pd.DataFrame, run_id: str) -> str:
    rows = df["source"][df["run_id"] == run_id]
    return str(rows.iloc[0]) if len(rows) else ""


def fit_runs(df: pd.DataFrame, run_ids=None, *, pool: bool = False, y: str | None = None,
             x: str = table.ENTROPY, pairing: str = "nearest-earlier", compare: bool = True,
             skip_errors: bool = False, **options) -> list[EntropyLawFit]:
    """Fit every run (or ``run_ids``); ``pool=True`` fits them as one family (one a, b).

    With ``skip_errors`` a run that cannot be fitted is left out with a warning saying why
    (the figures and the report do this), and named in the result's ``left_out`` (run -> why);
    otherwise its one-line error is raised.
    """
    ids = list(run_ids) if run_ids is not None else table.run_ids(df)
    if not ids:
        raise EntropyLawError("no runs to fit")
    if pairing not in MODES:
        raise EntropyLawError(f"unknown pairing {pairing!r} (expected one of {', '.join(MODES)})")
    check_options(options, OWN)  # once, before any run: not every run left out for it
    if pool:
        pairs = [pair(df, r, x=x, y=y, mode=pairing) for r in ids]
        fit = fit_family(pairs, **options)
        ykeys = {p.attrs["y_key"] for p in pairs}
        return Fits([_attach(fit, df, ids, sorted(ykeys)[0], compare)])
    fits = Fits()
    # each run on its own rows (sliced once, not the whole table masked per run); a project's
    # runs in forked processes, their warnings and errors said here in run order
    one = functools.partial(_fit_or_error, y=y, x=x, pairing=pairing, compare=compare, **options)
    for run_id, (fit, err) in zip(ids, parallel.map_runs(one, df, ids)):
        if err is not None:
            if not skip_errors:
                raise err
            warnings.warn(f"run {run_id!r} not fitted: {err}", EntropyLawWarning, stacklevel=2)
            fits.left_out[run_id] = str(err)
            continue
        fits.append(fit)
    return fits


class Fits(list):
    """The fits of :func:`fit_runs`, a list, with ``left_out``: the runs that could not be fitted, with why."""

    def __init__(self, fits=(), left_out: dict | None = None):
        super().__init__(fits)
        self.left_out: dict[str, str] = dict(left_out or {})


def each_run(one, run_ids: list, stacklevel: int = 3, alone_raises: bool = True,
             warn: bool = True) -> tuple[dict, dict]:
    """``{run: one(run)}`` for each of ``run_ids``, and the runs left out, run -> why: with several
    runs, one that ``one`` refuses (an :class:`EntropyLawError`) is left out with a warning (``warn``;
    else the caller says them); with one, its error is the caller's (``alone_raises``; else it is
    left out too). ``forecast`` and ``predict`` on a sweep leave out alike.

    >>> def one(r):
    ...     if r == "b":
    ...         raise EntropyLawError("run 'b': too few points")
    ...     return r.upper()
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     each_run(one, ["a", "b"])
    ({'a': 'A'}, {'b': 'too few points'})
    """
    out, left_out = {}, {}
    for rid in run_ids:
        try:
            out[rid] = one(rid)
        except EntropyLawError as err:
            if len(run_ids) == 1 and alone_raises:
                raise
            why = str(err).removeprefix(f"run {rid!r}: ")
            if warn:
                warnings.warn(f"run {rid!r} left out: {why}", EntropyLawWarning, stacklevel=stacklevel)
            left_out[rid] = why
    return out, left_out


def warn_left_out(left_out: dict[str, str], stacklevel: int = 3) -> None:
    """A warning for each run left out, with why (:func:`each_run`'s, where its caller said them later)."""
    for rid, why in left_out.items():
        warnings.warn(f"run {rid!r} left out: {why}", EntropyLawWarning, stacklevel=stacklevel)


SHOWN_KINDS = 5  # the reasons a left-out line states before counting the runs left out for others


def left_out_line(left_out: dict[str, str], lead: str = "") -> str:
    """One line naming the runs left out, each with why; the runs left out for one reason are
    said once with it, counted, the first few named (a sweep whose windows are all too short
    would otherwise repeat one reason for every run, a line of thousands of characters).

    >>> left_out_line({"B": "run 'B': no entropy metric 'entropy' to pair the scores with"}, "nothing fitted")
    "nothing fitted; left out (1 run): B (no entropy metric 'entropy' to pair the scores with)"
    >>> left_out_line({r: f"{k} points in the window" for r, k in zip("abcde", (2, 2, 1, 2, 2))})
    'left out (5 runs: a, b, c and 2 more): 1–2 points in the window'
    >>> left_out_line(dict(zip("abcde", ["no entropy", "no entropy", "no score", "no entropy", "no entropy"])))
    'left out (5 runs): no entropy (4 runs: a, b, d and 1 more); c (no score)'
    """
    if not left_out:
        return lead
    whys = {f"run {r!r}: {str(why).split(f'run {r!r}: ', 1)[-1]}": (r, str(why).split(f"run {r!r}: ", 1)[-1])
            for r, why in left_out.items()}
    kinds = same_kinds(whys)
    n = len(left_out)
    if len(kinds) == 1 and n > 1:
        text = f"left out ({count(n, 'run')}: {some_names(kinds[0][1])}): {kinds[0][0]}"
    else:
        shown = [f"{whys[members[0]][0]} ({whys[members[0]][1]})" if len(members) == 1
                 else f"{why} ({count(len(runs), 'run')}: {some_names(runs)})"
                 for why, runs, members in kinds[:SHOWN_KINDS]]
        rest = sum(len(members) for _, _, members in kinds[SHOWN_KINDS:])
        more = f"; ... and {count(rest, 'more run')} left out for other reasons" if rest else ""
        text = f"left out ({count(n, 'run')}): " + "; ".join(shown) + more
    return f"{lead}; {text}" if lead else text


def _fit_or_error(rows: pd.DataFrame, run_id: str, **options) -> tuple:
    try:
        return fit_run(rows, run_id, **options), None
    except EntropyLawError as err:
        return None, err


def fits_frame(fits: list[EntropyLawFit]) -> pd.DataFrame:
    """One row of :meth:`EntropyLawFit.to_dict` per fit (a list of fits, as ``fit_all`` gives, or one fit)."""
    fits = [fits] if isinstance(fits, EntropyLawFit) else fits
    try:
        given = list(fits)
    except TypeError:
        given = None
    if given is None or isinstance(fits, (str, bytes)) or not all(isinstance(f, EntropyLawFit) for f in given):
        odd = type(fits).__name__ if given is None else next((type(f).__name__ for f in given
                                                             if not isinstance(f, EntropyLawFit)), "str")
        raise EntropyLawError(f"`fits`: expected the fits of entropylaw.fit_all (a list of EntropyLawFit), not {odd}")
    return pd.DataFrame([f.to_dict() for f in given])
