"""The API under the commands, on its hostile cases: one rule for the fit window at its bounds,
forecasts of several runs when one cannot be forecast, and each command's checks made before
anything slow."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import entropylaw as el
from entropylaw import api, table
from entropylaw.errors import EntropyLawError, EntropyLawWarning
from entropylaw.fit.early import EarlyPrediction
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.data import window_end as forecast_window
from entropylaw.fit.window import window_end


@pytest.mark.parametrize("kwargs, match", [
    (dict(fit_frac=0.5, fit_steps=10), "at most one"),
    (dict(fit_frac=0.0), "strictly between 0 and 1"),
    (dict(fit_frac=1.0), "strictly between 0 and 1"),
    (dict(fit_steps=0), "must be positive"),
    (dict(fit_steps=102), "reaches past the log"),            # 101 steps logged: 100 .. 200
    (dict(required=True), "exactly one"),
    (dict(fit_frac=0.5, fit_steps=10, required=True), "exactly one"),
    (dict(fit_steps=101, leave_some=True), "nothing left to predict"),
])
def test_the_window_rule_refuses_each_bad_window_with_the_api_name(kwargs, match):
    with pytest.raises(EntropyLawError, match=match) as err:
        window_end(100, 200, **kwargs)
    assert "--" not in str(err.value)  # API words; the CLI says its flags


def test_the_window_rule_at_its_edges_and_from_a_resumed_log():
    assert window_end(100, 200) == 200                      # live: everything logged
    assert window_end(100, 200, fit_steps=101) == 200       # the whole log is a window ...
    assert window_end(100, 200, fit_steps=1) == 100         # ... and so is its first step
    assert window_end(100, 200, fit_frac=0.25) == 125       # measured from where the log starts


def test_the_forecast_and_the_early_prediction_use_the_same_window():
    steps = np.arange(101, 301, 1.0)
    run = RunData.from_arrays(steps, 0.8 - 0.3 * np.exp(-(steps - 101) / 40))
    for frac in (0.1, 0.15, 0.5):
        assert EarlyPrediction(fit_frac=frac).window_end(steps) == forecast_window(run, fit_frac=frac)
    assert EarlyPrediction(fit_steps=30).window_end(steps) == forecast_window(run, fit_steps=30) == 130


def _run(name="ok"):
    steps = np.arange(0, 200, 10)
    return table.from_records([(int(s), "val/gsm8k", float(0.8 - 0.4 * np.exp(-s / 50))) for s in steps], run_id=name)


def test_forecasts_of_several_runs_leave_out_the_one_that_cannot_be_forecast():
    df = table.stack([_run("ok"), table.from_records([(0, "val/gsm8k", 0.3)], run_id="one-point")])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fcs = el.forecast_all(df, fit_frac=0.3, methods=["exp-saturation"], n_boot=20)
    assert list(fcs) == ["ok"] and list(fcs.left_out) == ["one-point"]
    assert any(issubclass(w.category, EntropyLawWarning) and "one-point" in str(w.message) for w in caught)
    assert "run ok: forecasting val/gsm8k" in str(fcs)
    # the JSON lists the run left out after the one forecast (a lone dict would lose it)
    docs = fcs.to_dict()
    assert [d["run_id"] for d in docs] == ["ok", "one-point"] and "1 validation point" in docs[1]["left_out"]
    # one run forecast: a list of one, the shape of several runs'
    [one] = el.forecast_all(_run("ok"), fit_frac=0.3, methods=["exp-saturation"], n_boot=20).to_dict()
    assert one["run_id"] == "ok" and "left_out" not in one
    with pytest.raises(EntropyLawError):                    # the same run alone: its own error, not a warning
        el.forecast_all(table.from_records([(0, "val/gsm8k", 0.3)], run_id="one-point"), fit_frac=0.3)


def test_a_forecast_takes_a_horizon_or_steps_not_both():
    df = _run("ok")
    fc = el.forecast(df, fit_steps=60, horizon=40, methods=["exp-saturation"], n_boot=20)
    assert list(fc.at_steps) == [99.0]                      # the window ends at step 59
    # a backtest's window ends at its rule's step (0.33 of 190 steps: 62.7): the horizon counts from step 62,
    # a whole step (it was forecast at step 102.7); a horizon shorter than the part step is kept after the end
    fc = el.forecast(df, fit_frac=0.33, horizon=40, methods=["exp-saturation"], n_boot=20)
    assert fc.window_end == pytest.approx(62.7) and list(fc.at_steps) == [102.0]
    short = el.forecast(df, fit_frac=0.33, horizon=0.1, methods=["exp-saturation"], n_boot=20).at_steps[0]
    assert short == pytest.approx(62.8)
    with pytest.raises(EntropyLawError, match="at most one of `at_steps` and `horizon`"):
        el.forecast(df, fit_steps=60, horizon=40, at_steps=[150], n_boot=20)


def test_each_command_checks_its_arguments_before_anything_slow(tmp_path):
    with pytest.raises(EntropyLawError, match="`output`"):
        el.ingest("data/real-sizes", output=tmp_path / "runs.txt")
    assert not (tmp_path / "runs.txt").exists()
    with pytest.raises(EntropyLawError, match="unknown option 'no_such'"):
        el.probe("no-such-model", "no-such.jsonl", no_such=1)
    with pytest.raises(EntropyLawError, match="`samples`"):
        api.probe_checkpoints(["no-such-ckpt"], "no-such-prompts", samples=0)
    with pytest.raises(EntropyLawError, match="`micro_batch_size` 0"):  # before the missing model is opened
        el.audit("no-such-model", "no-such.jsonl", logged=1.0, micro_batch_size=0)
    with pytest.raises(EntropyLawError, match="no input given"):
        el.report(None, (), out=tmp_path / "r")
    with pytest.raises(EntropyLawError, match="`fit_frac`"):
        el.figures(_run("ok"), out=tmp_path / "f", fit_frac=1.0)
    assert not (tmp_path / "r").exists() and not (tmp_path / "f").exists()


@pytest.mark.parametrize("kw, said", [
    (dict(formats=["xyz"]), r"`formats` \('xyz',\): expected file formats among png, pdf, svg"),  # was matplotlib's
    (dict(formats=[]), r"`formats` \(\): expected file formats among"),
    (dict(which="nope"), "unknown figure 'nope'"),  # was read letter by letter: unknown figure 'n'
])
def test_figures_refuse_a_bad_format_or_name_before_anything_is_drawn(tmp_path, kw, said):
    with pytest.raises(EntropyLawError, match=said):
        el.figures(_run("ok"), out=tmp_path / "f", **kw)
    assert not (tmp_path / "f").exists()


def test_figures_take_one_format_or_name_alone(tmp_path):
    steps = np.arange(0, 200, 10)
    t = table.from_records([(int(s), "entropy", float(0.1 + np.exp(-s / 50))) for s in steps], run_id="ok")
    t = table.stack([t, _run("ok")])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EntropyLawWarning)
        res = el.figures(t, out=tmp_path / "f", which="law", formats="svg")
    assert res.paths and all(p.suffix == ".svg" and p.name.startswith("law") for p in res.paths)


@pytest.mark.parametrize("df, kw, said", [
    (3, {}, "`df`: expected the tidy run table .* got a int"),  # was TypeError: object of type 'int' has no len()
    ("data/real", {}, r"`df`: .*read it first with el.load\('data/real'\)"),  # was AttributeError
    (None, dict(fit_frac=1.5), "`fit_frac` must lie strictly between 0 and 1"),  # was drawn as 150 % of each run
])
def test_overview_refuses_what_it_cannot_show(df, kw, said):
    with pytest.raises(EntropyLawError, match=said):
        el.overview(_run("ok") if df is None else df, **kw)


def test_overview_without_sources_names_none(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EntropyLawWarning)
        first = str(el.overview(_run("ok"))).splitlines()[0]
    assert first.startswith("Read 1 run: ") and " from :" not in first


def test_report_words_must_be_a_function(tmp_path):
    """words="plain" was TypeError 'str' object is not callable, after the figures were drawn."""
    with pytest.raises(EntropyLawError, match="`words` 'plain': expected a function"):
        el.report(_run("ok"), out=tmp_path / "r", words="plain")
    assert not (tmp_path / "r").exists()
