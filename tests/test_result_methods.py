"""Every result has the same methods, as lmfit's do: str() (what its command prints), to_dict(),
plot() and _repr_html_ for a notebook; the commands `predict` and `algorithms` only print them."""

import warnings
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest

import entropylaw as el
from entropylaw.errors import EntropyLawWarning
from entropylaw.fit.algorithms import AlgorithmTest
from entropylaw.fit.early import EarlyPrediction
from entropylaw.fit.law import EntropyLawFit

matplotlib.use("Agg")
ROOT = Path(__file__).resolve().parents[1]
SIZES = ROOT / "data" / "real-sizes"


def _run(b, n=40, seed=1):
    rng = np.random.default_rng(seed)
    H = 0.05 + np.exp(-np.arange(n) / 10)
    return pd.DataFrame({"step": 10 * np.arange(n), "H": H,
                         "R": b - 0.2 * np.exp(H) + 0.01 * rng.standard_normal(n)})


def _html_is_the_text(result):
    html = result._repr_html_()
    assert html.startswith("<pre") and html.endswith("</pre>")
    first = str(result).splitlines()[0].replace("<", "&lt;").replace(">", "&gt;").replace("&", "&amp;")
    assert first.split("&")[0][:30] in html


def test_an_algorithm_test_prints_plots_and_shows_itself():
    runs = {"g1": _run(0.8, seed=1), "g2": _run(0.8, seed=2), "r1": _run(0.8, seed=3)}
    t = AlgorithmTest().fit(runs, {"g1": "grpo", "g2": "grpo", "r1": "rloo"})
    text = str(t)
    assert text.startswith("algorithms: grpo, rloo; 3 runs, 120 points, AR(1) phi = ")
    assert t.verdict_ in text.splitlines() and text.splitlines()[2].startswith("(a, b) shared (0.2")
    assert t.confounded_ == ["rloo"] and "note: one run of rloo" in text  # one run: it may be the run, not rloo
    # the two models' coefficients recovered (truth: a = 0.2, b = 0.8 for both algorithms)
    assert t.shared_ == pytest.approx({"a": 0.2, "b": 0.8}, abs=0.02)
    for g in ("grpo", "rloo"):
        assert t.per_algorithm_[g] == pytest.approx({"a": 0.2, "b": 0.8}, abs=0.03)
    ax = t.plot()
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels[0].startswith("shared fit: R = -0.2") and any(s.startswith("rloo alone") for s in labels)
    assert t.to_dict()["n_runs"] == 3
    _html_is_the_text(t)


def test_an_early_prediction_prints_plots_and_shows_itself():
    pairs = _run(0.8, n=60)
    pairs.attrs.update(run_id="r", x_key="entropy", y_key="val/gsm8k", mode="same")
    ep = EarlyPrediction(fit_frac=0.3).fit(pairs)
    text = str(ep)
    assert text.startswith("run 'r': the law fitted on steps 0..170 (18 points) predicts 42 later scores")
    assert f"observed {ep.final_observed_:.4f}, predicted {ep.final_predicted_:.4f}" in text
    assert "error vs fit window" in ep.report(curve=True) and "error vs fit window" not in text
    ax = ep.plot()
    assert ax.get_xlabel() == "training step" and ax.get_title(loc="left") == "r"
    d = ep.to_dict()
    assert d["y_key"] == "val/gsm8k" and d["pairing"] == "same" and len(d["error_vs_k"]) == len(ep.error_vs_k_)
    _html_is_the_text(ep)


def test_a_fit_shows_itself_in_a_notebook():
    pairs = _run(0.8)
    fit = EntropyLawFit().fit(pairs["H"], pairs["R"])
    _html_is_the_text(fit)
    assert f"{fit.a_:.4f}" in fit._repr_html_()
    unfitted = EntropyLawFit()._repr_html_()  # nothing fitted: its repr, not an error
    assert unfitted.startswith('<pre style="white-space: pre-wrap">EntropyLawFit(form=')


@pytest.mark.skipif(not SIZES.is_dir(), reason="no data/real-sizes")
def test_many_early_predictions_are_what_the_command_prints(capsys):
    from entropylaw.cli.main import main

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EntropyLawWarning)
        df = el.load(str(SIZES))
        res = el.predict_all(df, fit_frac=0.3)
        scale = el.scale(df)
    assert list(res) == el.run_ids(df) and all(isinstance(p, EarlyPrediction) for p in res.values())
    assert main(["predict", str(SIZES), "--fit-frac", "0.3", "-q"]) == 0
    printed = capsys.readouterr().out
    assert printed.rstrip("\n") == str(res).replace("`forecast()`", "'entropylaw forecast'")
    _html_is_the_text(res)
    _html_is_the_text(scale)


@pytest.mark.parametrize("make, calls", [
    (EntropyLawFit, ["predict", "confidence_band", "prediction_band", "to_dict", "to_json", "plot", "to_lmfit"]),
    (EarlyPrediction, ["to_dict", "report", "plot"]),
    (AlgorithmTest, ["to_dict", "report", "plot"]),
])
def test_an_unfitted_estimator_says_so_as_scikit_learn_does(make, calls):
    from entropylaw.fit.estimator import NotFittedError

    est = make()
    for name in calls:
        args = ([0.5],) if name in ("predict", "confidence_band", "prediction_band") else ()
        with pytest.raises(NotFittedError, match=rf"this {make.__name__} is not fitted yet: call fit\(.*\) before"):
            getattr(est, name)(*args)
    assert issubclass(NotFittedError, el.EntropyLawError) and issubclass(NotFittedError, AttributeError)


@pytest.mark.parametrize("make", [EntropyLawFit, EarlyPrediction, AlgorithmTest])
def test_estimators_get_and_set_their_params(make):
    est = make()
    params = est.get_params()
    assert "conf" in params and params == type(est)(**params).get_params()
    assert est.set_params(conf=0.9) is est and est.get_params()["conf"] == 0.9
    with pytest.raises(el.EntropyLawError, match="unknown option `cnf`"):
        est.set_params(cnf=0.9)


def test_a_fit_with_set_params_is_the_fit_so_configured():
    H = 0.05 + np.exp(-np.arange(40) / 10)
    R = 0.8 - 0.2 * np.exp(H) + 0.01 * np.random.default_rng(0).standard_normal(40)
    f = EntropyLawFit().set_params(conf=0.9).fit(H, R)
    assert f.to_dict()["conf"] == 0.9 and f.to_dict()["ceiling_ci"] == list(EntropyLawFit(conf=0.9).fit(H, R).ceiling_ci_)


def test_each_result_s_repr_says_what_it_is_and_whether_the_law_describes_it():
    rising = pd.DataFrame({"step": 10 * np.arange(40), "H": np.linspace(0.2, 1.0, 40)})
    rising["R"] = 0.3 + 0.1 * np.exp(rising["H"]) + 0.001 * np.sin(np.arange(40))
    rising.attrs.update(run_id="up", x_key="entropy", y_key="val/gsm8k", mode="same")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EntropyLawWarning)
        bare = EntropyLawFit().fit(rising["H"], rising["R"])
        ep = EarlyPrediction(fit_frac=0.5).fit(rising)
    assert repr(bare).endswith("a <= 0: the law does not describe it>")
    assert repr(ep).startswith("<EarlyPrediction up: fit on steps 0..190 (n=20), final score (step 390) predicted")
    assert repr(ep).endswith(f"{ep.fit_.trust_}>") and ep.fit_.trust_ == ep.to_dict()["trust"] == "law does not apply"
    assert repr(EarlyPrediction(fit_frac=0.3)) == "EarlyPrediction(fit_steps=None, fit_frac=0.3, conf=0.95)"
    runs = {"g1": _run(0.8, seed=1), "g2": _run(0.8, seed=2), "r1": _run(0.8, seed=3)}
    t = AlgorithmTest().fit(runs, {"g1": "grpo", "g2": "grpo", "r1": "rloo"})
    assert repr(t) == f"<AlgorithmTest grpo, rloo: 3 runs; {t.verdict_}>" and repr(AlgorithmTest()) == "AlgorithmTest(conf=0.95)"
    assert repr(el.ingest(SIZES)) == "<Ingested 5 sources, 5 runs, 1676 rows>"


def test_a_forecast_plots_the_methods_named_and_refuses_one_it_has_not():
    """fc.plot(methods=["nope"]) drew no forecast, unsaid; methods="exp-saturation" was read letter by letter."""
    import matplotlib.pyplot as plt

    recs = [(s, "val/gsm8k", 0.8 - 0.4 * np.exp(-s / 80)) for s in range(0, 500, 10)]
    fc = el.forecast(el.table.from_records(recs, run_id="r"), fit_frac=0.4, methods=["exp-saturation", "last-value"],
                     n_boot=20)
    with pytest.raises(el.EntropyLawError, match="`methods`: 'nope' is not among this forecast's methods "
                                                 r"\(exp-saturation, last-value\)"):
        fc.plot(methods=["nope"])
    ax = fc.plot(methods="exp-saturation")
    assert [t.get_text() for t in ax.get_legend().get_texts() if t.get_text().startswith(("exp", "last"))] \
        == ["exp-saturation (recommended)" if fc.default == "exp-saturation" else "exp-saturation"]
    plt.close(ax.figure)
