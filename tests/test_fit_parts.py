"""Pairing, alternative forms, early prediction, consumption, size law, algorithm test."""

from __future__ import annotations


import numpy as np
import pandas as pd
import pytest
from scipy import stats

from entropylaw import table
from entropylaw.errors import EntropyLawError
from entropylaw.fit.algorithms import AlgorithmTest
from entropylaw.fit.consumption import average_curve, consumption, share_within, steps_to_share
from entropylaw.fit.early import EarlyPrediction, error_vs_k
from entropylaw.fit.forms import compare_forms, fit_form, winner
from entropylaw.fit.pairing import pair
from entropylaw.fit.scaling import SizeLaw


def run_table(run_id="r", val_every=10, n_steps=200, a=0.3, b=0.9, noise=0.0, seed=0, extra_val=None):
    rng = np.random.default_rng(seed)
    steps = np.arange(1, n_steps + 1)
    H = 0.05 + np.exp(-steps / 50)
    rec = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
    for s in steps[val_every - 1::val_every]:
        rec.append((int(s), "val/gsm8k", float(b - a * np.exp(H[s - 1]) + noise * rng.standard_normal())))
    for s, name, v in extra_val or []:
        rec.append((s, name, v))
    return table.from_records(rec, run_id=run_id)


# ---------------------------------------------------------------- pairing
def test_pairing_modes_and_choice_of_score():
    t = table.from_records([(2, "entropy", 0.5), (4, "entropy", 0.4), (5, "val/a", 0.3), (4, "val/a", 0.2),
                            (0, "val/a", 0.1), (5, "score", 0.9)], run_id="r")
    same = pair(t, "r", mode="same")
    earlier = pair(t, "r")
    assert same[["step", "H", "R"]].values.tolist() == [[4, 0.4, 0.2]]
    assert earlier[["step", "H", "R"]].values.tolist() == [[4, 0.4, 0.2], [5, 0.4, 0.3]]
    assert same.attrs["dropped"] == {"no entropy at the same step": 2}
    assert earlier.attrs["y_key"] == "val/a" and earlier.attrs["mode"] == "nearest-earlier"
    assert pair(t, "r", y="score").attrs["y_key"] == "score"


def test_pairing_prefers_val_mean_and_errors():
    t = table.from_records([(1, "entropy", 0.5), (1, "val/a", 0.3), (1, "val/b", 0.2), (1, "val/mean", 0.25)],
                           run_id="r")
    assert pair(t, "r").attrs["y_key"] == "val/mean"
    t2 = table.from_records([(1, "entropy", 0.5), (2, "entropy", 0.4)], run_id="r")
    with pytest.raises(EntropyLawError, match="no score key"):
        pair(t2, "r")
    with pytest.raises(EntropyLawError, match="unknown pairing mode"):
        pair(t, "r", mode="later")


def test_a_score_after_a_gap_in_the_entropys_log_is_not_paired_with_the_entropy_before_it():
    """Entropy every 2 steps but none from step 10 to 80 (logged as text there): nearest-earlier
    paired 25 scores with step 8's entropy, up to 72 steps old (a final score forecast of 2.46
    for 0.82). A pair further back than 3 of the entropy's logging intervals is dropped, counted."""
    h_steps = [s for s in range(0, 121, 2) if not 10 <= s <= 80]
    r_steps = list(range(0, 121, 3))
    t = table.from_records([(s, "entropy", 1.0 - s / 200) for s in h_steps]
                           + [(s, "val/gsm8k", 0.2 + s / 300) for s in r_steps], run_id="r")
    p = pair(t, "r")
    # the reference: each score's last entropy step at or before it, kept within 3 x 2 steps
    last = {s: max(e for e in h_steps if e <= s) for s in r_steps}
    kept = [s for s in r_steps if s - last[s] <= 6]
    assert p["step"].tolist() == kept and p["H"].tolist() == pytest.approx([1.0 - last[s] / 200 for s in kept])
    assert p.attrs["dropped"] == {"the last entropy before it over 3 logging intervals earlier (a gap in its log)":
                                  len(r_steps) - len(kept)}
    assert len(r_steps) - len(kept) == 23


# ---------------------------------------------------------------- forms
def test_generating_form_wins_and_shape_is_recovered():
    rng = np.random.default_rng(0)
    H = 0.05 + np.exp(-np.arange(80) / 20)
    R = 0.8 - 0.2 * np.exp(H) + 0.002 * rng.standard_normal(80)
    comp = compare_forms(H, R)
    assert winner(comp)["bic"] == "exp"
    assert fit_form("exp-free", H, R)["c"] == pytest.approx(1.0, abs=0.1)
    Rp = 0.7 - 0.3 * H**0.5 + 0.002 * rng.standard_normal(80)
    assert winner(compare_forms(H, Rp))["aic"] == "power"
    assert fit_form("power", H, Rp)["ceiling"] == pytest.approx(0.7, abs=0.01)
    assert fit_form("linear", H, 0.6 - 0.1 * H)["ceiling"] == pytest.approx(0.6)


# ---------------------------------------------------------------- early prediction
def test_early_prediction_exact_law_and_bad_windows():
    t = run_table()
    p = pair(t, "r")
    ep = EarlyPrediction(fit_frac=0.2).fit(p)
    assert ep.fit_n_ == 4 and ep.rmse_predicted_ < 1e-10
    assert ep.final_predicted_ == pytest.approx(ep.final_observed_)
    assert ep.predicted_["in_fit"].sum() == 4
    with pytest.raises(EntropyLawError, match="not smaller than the run"):
        EarlyPrediction(fit_steps=500).fit(p)
    with pytest.raises(EntropyLawError, match="at least 3"):
        EarlyPrediction(fit_steps=15).fit(p)
    with pytest.raises(EntropyLawError, match="exactly one"):
        EarlyPrediction().fit(p)


def test_early_prediction_says_when_the_law_does_not_describe_its_window():
    """An entropy that rises over the window: the ceiling and the predicted scores (below 0 for
    an accuracy) were shown with no trust flag; they carry the verdict `fit` gives."""
    import entropylaw as el
    from entropylaw.fit.early import EarlyPredictions

    steps = np.arange(0, 120, 5)
    recs = ([(int(s), "entropy", 0.3 + 0.004 * s) for s in steps]
            + [(int(s), "val/math", 0.45 - 0.001 * s + 0.002 * np.sin(s)) for s in steps])
    df = table.from_records(recs, run_id="up")
    ep = EarlyPrediction(fit_frac=0.5, warn=False).fit(pair(df, "up"))
    assert ep.fit_.trust_ == "law does not apply" and ep.fit_.trust_reasons_[0].startswith("entropy rises")
    assert ep.to_dict()["trust"] == "law does not apply"
    text = str(EarlyPredictions({"up": ep}, fit_frac=0.5))
    [row] = [x for x in text.splitlines() if x.startswith("up ")]
    assert row.endswith("law does not apply") and "up: law does not apply: entropy rises" in text
    good = el.predict(run_table(), "r", fit_frac=0.5)
    assert (good.fit_.trust_ != "law does not apply"
            and not any(r.startswith("entropy") for r in good.fit_.trust_reasons_))


def test_error_vs_k_matches_refits():
    t = run_table(noise=0.01, seed=3)
    p = pair(t, "r")
    curve = error_vs_k(p["step"].to_numpy(), p["H"].to_numpy(), p["R"].to_numpy())
    for k in (3, 7, 12):
        X = np.column_stack([-np.exp(p["H"][:k]), np.ones(k)])
        a, b = np.linalg.lstsq(X, p["R"][:k], rcond=None)[0]
        pred = b - a * np.exp(p["H"][k:])
        row = curve[curve.fit_n == k].iloc[0]
        assert row.rmse_predicted == pytest.approx(np.sqrt(np.mean((pred - p["R"][k:]) ** 2)), rel=1e-9)
        assert row.ceiling == pytest.approx(b - a, rel=1e-9)


# ---------------------------------------------------------------- consumption
def test_consumption_definitions():
    t = run_table(val_every=20)
    c = consumption(t, "r")
    h = table.series(t, "r", "entropy")
    s = 100
    expect = (h.iloc[0] - h.loc[s]) / (h.iloc[0] - h.iloc[-1])
    assert c.set_index("step").loc[s, "entropy_consumed"] == pytest.approx(expect)
    r = table.series(t, "r", "val/gsm8k")
    assert c.set_index("step").loc[100, "performance_gain"] == pytest.approx(
        (r.loc[100] - r.iloc[0]) / (r.iloc[-1] - r.iloc[0]))
    sh = share_within(c, 0.5)
    assert sh["entropy"] == pytest.approx((h.iloc[0] - h.loc[100]) / (h.iloc[0] - h.iloc[-1]), abs=0.01)
    assert 0 < steps_to_share(c, 0.9) < 1
    avg = average_curve(table.concat([t, run_table("q", val_every=20)]))
    assert avg["entropy_consumed"].iloc[0] == 0 and avg["entropy_consumed"].iloc[-1] == pytest.approx(1)


# ---------------------------------------------------------------- size law
def test_size_law_matches_linregress_and_prediction_interval():
    rng = np.random.default_rng(2)
    N = np.array([0.5e9, 1.5e9, 3e9, 7e9, 14e9])
    u = np.log10(N)
    a = 0.05 + 0.06 * u + 0.003 * rng.standard_normal(5)
    b = 0.2 + 0.09 * u + 0.003 * rng.standard_normal(5)
    law = SizeLaw().fit(N, a, b)
    lr = stats.linregress(u, b - a)
    assert law.lines_["ceiling"]["slope"] == pytest.approx(lr.slope, rel=1e-9)
    p = law.predict(32e9)
    # independent prediction interval: statsmodels-free formula via the OLS hat value
    X = np.column_stack([np.ones(5), u])
    x0 = np.array([1, np.log10(32e9)])
    res = (b - a) - X @ np.linalg.lstsq(X, b - a, rcond=None)[0]
    s2 = res @ res / 3
    half = stats.t.ppf(0.975, 3) * np.sqrt(s2 * (1 + x0 @ np.linalg.inv(X.T @ X) @ x0))
    assert p["ceiling_hi"] - p["ceiling"] == pytest.approx(half, rel=1e-9)
    assert len(law.leave_one_out_) == 5
    with pytest.raises(EntropyLawError, match="unknown or non-positive"):
        SizeLaw().fit([1e9, np.nan, 3e9], [0.1, 0.2, 0.3], [0.5, 0.6, 0.7])


def test_size_law_takes_each_size_as_one_point_and_a_copy_adds_nothing():
    """Ten runs of five sizes, each run twice (a copied file, or two seeds), were fitted as ten
    points: the interval at 32B narrowed as if from ten sizes. Each size is the mean of its runs:
    a copy changes nothing, and two seeds fit as their means do (an OLS of the five means)."""
    rng = np.random.default_rng(4)
    N = np.array([0.5e9, 1.5e9, 3e9, 7e9, 14e9])
    a = 0.05 + 0.06 * np.log10(N) + 0.01 * rng.standard_normal(5)
    b = a + 0.4 + 0.01 * rng.standard_normal(5)
    once, twice = SizeLaw().fit(N, a, b).predict(32e9), SizeLaw().fit(np.r_[N, N], np.r_[a, a], np.r_[b, b])
    assert twice.predict(32e9) == pytest.approx(once, rel=1e-12) and twice.dof_ == 3
    seeds = a + 0.02 * rng.standard_normal(5)
    law = SizeLaw().fit(np.r_[N, N], np.r_[a, seeds], np.r_[b, b])
    lr = stats.linregress(np.log10(N), (a + seeds) / 2)
    assert law.lines_["a"]["slope"] == pytest.approx(lr.slope, rel=1e-9)
    half = law.predict(32e9)["a_hi"] - law.predict(32e9)["a"]
    u0, u = np.log10(32e9), np.log10(N)
    s = np.sqrt(np.sum(((a + seeds) / 2 - lr.intercept - lr.slope * u) ** 2) / 3)
    assert half == pytest.approx(stats.t.ppf(0.975, 3) * s * np.sqrt(1 + 1 / 5 + (u0 - u.mean()) ** 2
                                                                      / np.sum((u - u.mean()) ** 2)), rel=1e-9)


def test_size_law_prediction_interval_coverage():
    rng = np.random.default_rng(5)
    N = np.array([0.5e9, 1.5e9, 3e9, 7e9])
    hits = 0
    for _ in range(400):
        u = np.log10(N)
        a = 0.1 + 0.05 * u + 0.01 * rng.standard_normal(4)
        law = SizeLaw().fit(N, a, a + 0.5, loo=False)
        p = law.predict(32e9)
        new = 0.1 + 0.05 * np.log10(32e9) + 0.01 * rng.standard_normal()
        hits += p["a_lo"] <= new <= p["a_hi"]
    assert 0.92 <= hits / 400 <= 0.98


# ---------------------------------------------------------------- algorithm test
def _runs(rng, bs, n=50, phi=0.6):
    out = {}
    for i, b in enumerate(bs):
        H = 0.05 + np.exp(-np.arange(n) / rng.uniform(8, 15))
        e = np.zeros(n)
        for k in range(1, n):
            e[k] = phi * e[k - 1] + 0.01 * rng.standard_normal()
        out[f"r{i}"] = pd.DataFrame({"H": H, "R": b - 0.25 * np.exp(H) + e})
    return out


def test_algorithm_test_size_and_power():
    rng = np.random.default_rng(0)
    algs = {"r0": "grpo", "r1": "grpo", "r2": "rloo", "r3": "rloo"}
    p_null = [AlgorithmTest().fit(_runs(rng, [0.8] * 4), algs).p_value_ for _ in range(60)]
    assert np.mean(np.array(p_null) < 0.05) <= 0.15  # near the nominal 5 % despite autocorrelation
    alt = AlgorithmTest().fit(_runs(rng, [0.8, 0.8, 0.86, 0.86]), algs)
    assert alt.p_value_ < 0.01 and alt.verdict_.startswith("algorithm matters")
    with pytest.raises(EntropyLawError, match="at least 2 algorithms"):
        AlgorithmTest().fit(_runs(rng, [0.8, 0.8]), {"r0": "grpo", "r1": "grpo"})


def test_the_algorithm_test_leaves_out_runs_the_law_does_not_describe_and_says_one_run_each():
    """A PPO run whose entropy explodes and whose score collapses gave "algorithm matters"
    (its (a, b) a fit to a curve the law does not describe), and a run with no algorithm
    stopped the whole test: both are left out and named; one run of each algorithm is said."""
    import entropylaw as el
    from entropylaw import table as tt

    rng = np.random.default_rng(3)
    frames = []
    for rid, alg, b in (("g0", "grpo", 0.8), ("g1", "grpo", 0.8), ("r0", "rloo", 0.8), ("r1", "rloo", 0.8),
                        ("bad", "ppo", 0.8), ("anon", "", 0.8)):
        steps = np.arange(60)
        H = 0.05 + np.exp(-steps / 12) if rid != "bad" else 0.3 + 0.04 * steps  # "bad": entropy rises
        R = b - 0.25 * np.exp(H) + 0.01 * rng.standard_normal(60) if rid != "bad" else np.linspace(0.5, 0.0, 60)
        recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)] + \
               [(int(s), "val/math", float(r)) for s, r in zip(steps, R)]
        frames.append(tt.from_records(recs, run_id=rid, algorithm=alg))
    # a run of 2 points (a CS336 run stopped early) stopped the whole test too
    frames.append(tt.from_records([(0, "entropy", 0.5), (0, "val/math", 0.3), (1, "entropy", 0.4),
                                   (1, "val/math", 0.4)],
                                  run_id="short", algorithm="rloo"))
    df = pd.concat(frames, ignore_index=True)
    test = el.algorithms(df)
    assert test.algorithms_ == ["grpo", "rloo"] and len(test.pairs_) == 4
    assert set(test.left_out_) == {"bad", "anon", "short"}
    assert test.left_out_["short"] == "2 paired (entropy, score) points; the fit needs at least 3"
    assert test.left_out_["bad"].startswith("the law does not apply (entropy")
    assert "unknown algorithm" in test.left_out_["anon"] and not test.confounded_
    assert test.verdict_.startswith("consistent") and "left out: bad: the law does not apply" in str(test)
    one_each = el.algorithms(df, runs=["g0", "r0"])
    assert one_each.confounded_ == ["grpo", "rloo"] and "one run of grpo, rloo: what tells it apart" in str(one_each)
    with pytest.raises(EntropyLawError,
                       match=r"at least 2 algorithms.*left out \(1 run\): bad \(the law does not apply"):
        el.algorithms(df, runs=["g0", "g1", "bad"])


def test_a_ceiling_just_past_the_scores_bound_is_said_with_the_digits_that_show_it():
    """"ceiling -1 lies outside the score range -1,1": the ceiling was -1.00001, rounded to the bound."""
    import warnings

    from entropylaw.fit.law import EntropyLawFit

    H = np.linspace(0.1, 1.0, 20)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        EntropyLawFit(score_range=(-1.0, 1.0), interval="iid").fit(H, 0.5 * np.exp(H) - 1.50001)
    said = [str(w.message) for w in caught if "outside the score range" in str(w.message)]
    assert said and "ceiling -1.00001 lies outside the score range -1,1" in said[0], said


def test_an_early_prediction_says_when_the_later_scores_leave_its_band():
    """`predict` on a run that collapsed after its window: "good fit", final error 0.84, and nothing
    said. Most later scores outside the 95 % prediction band is said, as is a final prediction
    beyond the score's range."""
    rng = np.random.default_rng(0)
    steps = np.arange(1, 101)
    H = 0.05 + np.exp(-steps / 40)
    R = 0.9 - 0.3 * np.exp(H) + 0.01 * rng.standard_normal(len(steps))
    R[60:] = 0.0  # collapsed
    t = table.from_records([(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
                           + [(int(s), "val/gsm8k", float(r)) for s, r in zip(steps, R)], run_id="c")
    p = EarlyPrediction(fit_frac=0.3).fit(pair(t, "c"))
    later = p.predicted_[p.predicted_["scored"]]
    outside = int(((later["R"] < later["pred_lo"]) | (later["R"] > later["pred_hi"])).sum())
    assert outside >= 40 and p.notes_[0] == (f"after the window the law does not hold: {outside} of {len(later)} "
                                             "later scores lie outside its 95 % prediction band")
    assert p.to_dict()["notes"] == p.notes_ and p.notes_[0] in " ".join(p.report().split())
    # the same noise, no collapse: a band of real width (an exact law's band is ~1e-16 wide, and which side of it
    # each point falls is the BLAS's rounding)
    steady = table.from_records([(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
                                + [(int(s), "val/gsm8k", float(r)) for s, r in
                                   zip(steps, 0.9 - 0.3 * np.exp(H) + 0.01 * rng.standard_normal(len(steps)))],
                                run_id="s")
    assert EarlyPrediction(fit_frac=0.3).fit(pair(steady, "s")).notes_ == []


def test_an_early_prediction_says_when_the_run_collapses_at_its_end():
    """A run that collapsed over its last 6 of 40 steps: fewer than half the later scores leave the
    band, so `predict` said nothing beside "good fit" and a final error of 0.67."""
    rng = np.random.default_rng(1)
    steps = np.arange(1, 41)
    H = np.linspace(1.2, 0.1, 40)
    R = 1.0 - 0.3 * np.exp(H) + 0.01 * rng.standard_normal(40)
    R[34:] = 0.0  # collapsed
    t = table.from_records([(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
                           + [(int(s), "val/gsm8k", float(r)) for s, r in zip(steps, R)], run_id="c")
    p = EarlyPrediction(fit_frac=0.3).fit(pair(t, "c"))
    assert p.fit_.trust_ == "good fit" and p.final_error_ > 0.5
    assert len(p.notes_) == 1 and p.notes_[0].startswith("at its end the run leaves the law: the final score 0 lies "
                                                         "below the 95 % prediction band [")
    assert p.notes_[0].endswith("(the last 6 later scores outside it)") and p.to_dict()["notes"] == p.notes_
