"""The API's checks of what a caller passes, before anything is fitted: the tidy run table, and the
runs named among its runs (a name, or a list of names). Each mistake is one
:class:`~entropylaw.errors.EntropyLawError` naming the parameter.

>>> import entropylaw as el
>>> the_table("data/real")
Traceback (most recent call last):
...
entropylaw.errors.EntropyLawError: `df`: expected the tidy run table from entropylaw.load (columns run_id, step, \
metric, value), got a str: read it first with el.load('data/real')
>>> t = el.table.from_records([(1, "entropy", 0.5)], run_id="r")
>>> runs_of(t, "r"), runs_of(t, None)
(['r'], ['r'])
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

import entropylaw.table as table
from entropylaw.errors import EntropyLawError
from entropylaw.fit.law import EntropyLawFit
from entropylaw.fit.pairing import MODES
from entropylaw.fit.window import check_window
from entropylaw.terminal import not_found


def the_table(df, what: str = "df") -> pd.DataFrame:
    """``df`` when it is the tidy run table :func:`entropylaw.load` gives; else one clear error naming
    ``what`` (the parameter)."""
    if isinstance(df, pd.DataFrame) and table.is_table(df):
        return df
    got = "a DataFrame without those columns" if isinstance(df, pd.DataFrame) else f"a {type(df).__name__}"
    hint = f": read it first with el.load({os.fspath(df)!r})" if isinstance(df, (str, os.PathLike)) else ""
    raise EntropyLawError(f"`{what}`: expected the tidy run table from entropylaw.load (columns run_id, step, "
                          f"metric, value), got {got}{hint}")


def runs_of(df, runs, what: str = "runs") -> list[str]:
    """The runs of ``df`` that ``runs`` names (one name, or a list of names; None: every run), checked:
    a name that is no run of ``df`` is an error naming ``what``, never a run left out for it."""
    known = table.run_ids(the_table(df))
    if not known:
        raise EntropyLawError("`df`: the table holds no runs (no rows)")
    if runs is None:
        return known
    try:
        names = [runs] if isinstance(runs, str) else list(runs)
    except TypeError:
        names = None
    if names is None or not all(isinstance(r, str) for r in names):
        raise EntropyLawError(f"`{what}` {runs!r}: expected a run's name or a list of names")
    have = set(known)
    missing = [r for r in names if r not in have]
    if missing:
        raise EntropyLawError(f"`{what}`: {not_found('run', missing[0], known)}")
    return names


def fit_call(conf=0.95, pairing="nearest-earlier", score_range=None) -> None:
    """The options of a call that pairs and fits every run (``predict_all``, ``algorithms``), checked
    once before any run: a mistake of the call is one error naming it, not every run left out for it."""
    if pairing not in MODES:
        raise EntropyLawError(f"unknown pairing {pairing!r} (expected one of {', '.join(MODES)})")
    EntropyLawFit(conf=conf, score_range=score_range).check()


def predict_call(options: dict, known) -> None:
    """``predict_all``'s ``options`` (``known``: :func:`entropylaw.predict`'s keywords), checked once:
    an unknown keyword, a window that is not a number or out of its bounds, the horizon, and
    :func:`fit_call`'s."""
    unknown = [k for k in options if k not in known]
    if unknown:
        raise EntropyLawError(f"unknown option `{unknown[0]}` (expected one of {', '.join(known)})")
    for k in ("fit_frac", "fit_steps", "predict_steps"):
        v = options.get(k)
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating))):
            raise EntropyLawError(f"`{k}` {v!r}: expected a number")
    check_window(options.get("fit_frac"), options.get("fit_steps"), required=True)
    horizon = options.get("predict_steps")
    if horizon is not None and not horizon > 0:
        raise EntropyLawError(f"`predict_steps` must be positive (got {horizon})")
    fit_call(**{k: options[k] for k in ("conf", "pairing", "score_range") if k in options})


def entropy_key(df, ids, x_key) -> None:
    """``x_key`` named (not the default, ``entropy``) that none of the runs ``ids`` logs is a mistake
    of the call's: read as runs that log no entropy, ``forecast --x-key nope`` left the law's verdict
    on each window out, unsaid (a run that logs no entropy under the default name is no mistake)."""
    if x_key is None or x_key == table.ENTROPY:
        return
    logged = sorted(set(df.loc[df["run_id"].isin(list(ids)), "metric"].astype(str)))
    if x_key not in logged:
        raise EntropyLawError(f"`x_key`: {not_found('metric', x_key, logged)}")
