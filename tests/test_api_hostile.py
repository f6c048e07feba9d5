"""A user's mistakes with the Python API: each is one EntropyLawError naming the parameter, before any
run is fitted or forecast (never a TypeError, KeyError or ValueError from deep inside, never every run
"left out" for a mistake of the call's), and the API refuses what the CLI refuses."""

import warnings

import numpy as np
import pandas as pd
import pytest

import entropylaw as el
from entropylaw.errors import EntropyLawError


def _runs(n=3):
    parts = []
    for i, rid in enumerate("abc"[:n]):
        s = np.arange(0, 200, 5.0)
        recs = [(t, "entropy", 1.0 * np.exp(-t / 40) + 0.1) for t in s]
        recs += [(t, "val/gsm8k", 0.3 + 0.05 * i + 0.3 * (1 - np.exp(-t / 40))) for t in s]
        parts.append(el.table.from_records(recs, run_id=rid))
    return pd.concat(parts, ignore_index=True)


@pytest.mark.parametrize("call", [el.fit, el.fit_all, el.forecast_all, el.rank, el.scale, el.summary,
                                  el.predict_all, el.algorithms])
@pytest.mark.parametrize("df", ["data/real", None, [1, 2], pd.DataFrame({"x": [1]})])
def test_not_a_run_table(call, df):
    with pytest.raises(EntropyLawError, match="`df`: expected the tidy run table"):
        call(df)


def test_report_not_a_run_table(tmp_path):
    with pytest.raises(EntropyLawError, match="`df`: expected the tidy run table"):
        el.report("data/real", out=tmp_path / "r")


@pytest.mark.parametrize("call", [el.fit_all, el.forecast_all, el.rank, el.scale, el.predict_all, el.fit,
                                  el.forecast])
def test_an_empty_table_is_said(call):
    with pytest.raises(EntropyLawError, match="the table holds no runs"):
        call(_runs().iloc[0:0])


@pytest.mark.parametrize("path", [None, 3, pd.DataFrame({"x": [1]})])
def test_snapshot_of_what_is_no_path(path):
    """`snapshot` follows a file: a table already read is named as such, not an OSError from pathlib."""
    with pytest.raises(EntropyLawError, match="`path`: expected the path of a log file"):
        el.snapshot(path)


def test_one_run_named_as_a_string_is_that_run():
    fits = el.fit_all(_runs(), runs="b")
    assert [f.run_id_ for f in fits] == ["b"]


@pytest.mark.parametrize("call", [el.fit_all, el.forecast_all, el.rank, el.scale])
def test_a_run_not_in_the_table_is_named(call):
    with pytest.raises(EntropyLawError, match="`runs`: no run 'nope'"):
        call(_runs(), runs=["nope"])


@pytest.mark.parametrize("kw, said", [
    (dict(fit_frac=0), "`fit_frac` must lie strictly between 0 and 1"),
    (dict(fit_frac=1.5), "`fit_frac` must lie strictly between 0 and 1"),
    (dict(fit_frac="0.25"), "`fit_frac` '0.25': expected a number"),
    (dict(conf=2), "the interval level"),
    (dict(n_boot=0), "n_boot = 0"),
    (dict(total_steps=-5), "`total_steps` -5"),
    (dict(threshold=-1), "`threshold` -1"),
    (dict(threshold=float("nan")), "`threshold` nan"),
    (dict(fitfrac=0.25), "unknown option `fitfrac`"),
])
def test_rank_refuses_a_bad_option_at_once(kw, said):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no run is left out for it (a warning each) first
        with pytest.raises(EntropyLawError, match=said):
            el.rank(_runs(), **kw)


def test_forecast_all_refuses_a_bad_option_at_once():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(EntropyLawError, match="`fit_frac` must lie strictly between 0 and 1"):
            el.forecast_all(_runs(), fit_frac=0)


@pytest.mark.parametrize("kw, said", [
    (dict(seed=-1), "`seed` -1: expected a whole number"),  # numpy's ValueError from deep inside
    (dict(seed="a"), "`seed` 'a': expected a whole number"),  # a TypeError
    (dict(at_steps=[]), "`at_steps` \\[\\]: expected a training step"),  # an IndexError
    (dict(at_steps=["x"]), "`at_steps` \\['x'\\]: expected a training step"),  # a ValueError
    (dict(at_steps=[float("nan")]), "`at_steps` \\[nan\\]: expected"),  # a table of nan..nan
    (dict(horizon=float("inf")), "`horizon` inf: expected a number of steps"),  # a forecast at step inf
    (dict(horizon=0), "`horizon` 0: expected"),  # was told as `at_steps` 195, a step it was not given
    (dict(methods=[3]), "`methods` \\[3\\]: expected a method's name or a list"),  # "unknown method 3"
    (dict(methods=[]), "`methods` \\[\\]: expected a method's name or a list"),  # every method was run
])
@pytest.mark.parametrize("call", [el.forecast_all, el.rank])
def test_where_and_how_to_forecast_are_checked_at_once(call, kw, said):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no run left out for a mistake of the call's
        with pytest.raises(EntropyLawError, match=f"^{said}"):
            call(_runs(), **kw)


@pytest.mark.parametrize("prior", ["data/real", [1, 2], 3])
@pytest.mark.parametrize("call", [el.forecast, el.forecast_all])
def test_a_prior_that_is_no_run_table_is_named(call, prior):
    """``prior="data/real"`` was a TypeError from deep inside (string indices must be integers)."""
    with pytest.raises(EntropyLawError, match="^`prior`: expected the tidy run table"):
        call(_runs(1), prior=prior)


def test_rank_threshold_beyond_the_score_range():
    """--threshold 5 on a score in [0, 1] was 'within 500.0 points of the best': nothing could be pruned."""
    with pytest.raises(EntropyLawError, match="`threshold` 5 is 500 points, the score's whole range"):
        el.rank(_runs(), fit_frac=0.5, threshold=5)


@pytest.mark.parametrize("kw, said", [
    (dict(score_range="0,1"), "`score_range` '0,1': expected"),
    (dict(score_range=(1, 0)), "`score_range` \\(1, 0\\): expected"),
    (dict(robust="xx"), "unknown robust loss 'xx'"),
    (dict(foo=1), "unknown option `foo`"),
    (dict(conf=95), "conf = 95"),
])
def test_fit_options(kw, said):
    with pytest.raises(EntropyLawError, match=f"^{said}"):  # the option's, not a file's
        el.fit(_runs(1), **kw)
    with pytest.raises(EntropyLawError, match=f"^{said}"):
        el.fit_all(_runs(), skip_errors=True, **kw)


def test_scale_options():
    df = _runs()
    with pytest.raises(EntropyLawError, match="`conf` = 2"):
        el.scale(df, conf=2)
    with pytest.raises(EntropyLawError, match="unknown option `foo`"):  # before: every run "cannot fit"
        el.scale(df, foo=1)


def test_fit_pool_empty_list():
    with pytest.raises(EntropyLawError, match="`pool` \\[\\]"):
        el.fit(_runs(), pool=[])


@pytest.mark.parametrize("path", ["", None, 3])
def test_load_refuses_what_is_no_path(path):
    """``el.load("")`` read the working directory, every log under it."""
    with pytest.raises(EntropyLawError, match="load: path"):
        el.load(path)


@pytest.mark.parametrize("kw, said", [
    (dict(at_steps="x"), "`at_steps` 'x': expected a training step"),
    (dict(at_steps=[float("nan")]), "`at_steps` \\[nan\\]: expected a training step"),
    (dict(methods=3), "`methods` 3: expected a method's name or a list of names"),
    (dict(prior="data/real"), "`prior`: expected the tidy run table from entropylaw.load .*got a str: read it first"),
])
def test_forecast_refuses_a_bad_option_naming_it(kw, said):
    """at_steps='x' was numpy's ValueError, prior='...' a TypeError 'string indices must be integers'."""
    for call in (lambda: el.forecast(_runs(1), fit_frac=0.5, **kw), lambda: el.forecast_all(_runs(), fit_frac=0.5, **kw)):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(EntropyLawError, match=said):
                call()


def test_one_method_named_alone_is_that_method():
    """methods="exp-saturation" was read letter by letter: "unknown method 'e'"."""
    fc = el.forecast(_runs(1), fit_frac=0.5, methods="exp-saturation", n_boot=20)
    assert list(fc.methods) == ["exp-saturation"]
    assert len(el.rank(_runs(), fit_frac=0.5, methods="exp-saturation", n_boot=20).to_dict()) == 3


@pytest.mark.parametrize("fits, odd", [(3, "int"), (["a"], "str"), ("abc", "str"), (None, "NoneType")])
def test_fits_frame_refuses_what_is_no_fit(fits, odd):
    """fits_frame(["a"]) was AttributeError 'str' object has no attribute 'to_dict'."""
    with pytest.raises(EntropyLawError, match=f"`fits`: expected the fits of entropylaw.fit_all .*not {odd}$"):
        el.fits_frame(fits)


def test_fits_frame_of_one_fit_is_its_row():
    f = el.fit(_runs(1))
    assert el.fits_frame(f).to_dict(orient="records") == el.fits_frame([f]).to_dict(orient="records")


@pytest.mark.parametrize("df", ["data/real", None])
def test_row_accounts_of_what_is_no_table(df):
    """row_accounts("data/real") was AttributeError 'str' object has no attribute 'attrs'."""
    with pytest.raises(EntropyLawError, match="`df`: expected the tidy run table"):
        el.row_accounts(df)
