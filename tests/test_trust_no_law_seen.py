"""A fit whose slope is not told from 0 while the law explains under half the score, or whose whole
ceiling interval lies outside the score's range, was a "weak fit (usable with care)": the newcomer read a
ceiling of 1.093 for an accuracy, or one of a reward that does not follow the entropy at all (R² 0.01).
The law does not describe such a run; the flag says so."""

from pathlib import Path
from types import SimpleNamespace

import numpy as np

import entropylaw as el
from entropylaw.fit.trust import GOOD, NOT_APPLICABLE, WEAK, judge

DATA = Path(__file__).resolve().parents[1] / "data" / "real"


def _fit(a=0.5, se=0.1, r2=0.8, n=30, ci=(0.6, 0.8), score_range=None, kind="validation"):
    return SimpleNamespace(a_=a, a_stderr_=se, r2_=r2, n_=n, ceiling_ci_=ci, score_range=score_range,
                           R_=np.linspace(0.2, 0.7, n), meta_={"score_kind": kind})


def test_no_slope_and_little_explained_is_no_law():
    level, reasons = judge(_fit(a=0.03, se=0.11, r2=0.01))
    assert level == NOT_APPLICABLE and reasons == ["the score does not follow the entropy: a = 0.03 ± 0.11, R² = 0.01"]


def test_either_alone_stays_weak():
    assert judge(_fit(a=0.3, se=0.2, r2=0.8))[0] == WEAK  # slope unclear, the law explains the score
    level, reasons = judge(_fit(a=0.3, se=0.05, r2=0.3))  # a clear slope, much noise around it
    assert level == WEAK and reasons == ["R² = 0.30 < 0.5: the law explains little of the score"]
    assert judge(_fit())[0] == GOOD


def test_a_ceiling_out_of_reach_is_no_law_one_that_reaches_past_the_range_weak():
    level, reasons = judge(_fit(ci=(1.02, 1.17)))
    assert level == NOT_APPLICABLE and reasons == ["ceiling interval [1.02, 1.17] lies wholly above [0, 1]: no "
                                                   "score reaches it"]
    assert judge(_fit(ci=(-1.5, -1.1), score_range=(-1.0, 1.0)))[1][0].startswith("ceiling interval [-1.5, -1.1] "
                                                                                   "lies wholly below [-1, 1]")
    level, reasons = judge(_fit(ci=(0.9, 1.1)))
    assert level == WEAK and reasons == ["ceiling interval [0.9, 1.1] leaves [0, 1], the range of a fraction"]
    # a training reward whose values lie in [0, 1] need not be bounded by 1 (a format reward's sum reaches 2): weak
    level, reasons = judge(_fit(ci=(1.02, 1.17), kind="training score"))
    assert level == WEAK and reasons == ["ceiling interval [1.02, 1.17] leaves [0, 1], the range of a fraction"]


def test_real_runs_flagged_as_the_scatter_shows():
    t = el.load(DATA / "trl_qwen2.5-7b__exp1a__rho1.00_seed44.parquet",
                DATA / "trl_qwen3.5-9b__variants__dapo_rho1.0_seed43.parquet",
                DATA / "trl_qwen3.5-9b__variants__dapo_rho3.0_seed42.parquet", warn=False)
    flags = {f.run_id_: f.trust_ for f in el.fit_all(t)}
    assert flags == {"qwen2.5-7b__exp1a__rho1.00_seed44": NOT_APPLICABLE,  # R² 0.006, a 0.03 ± 0.11
                     # a training reward: its range is not known to end at 1 (ceiling [1.016, 1.170])
                     "qwen3.5-9b__variants__dapo_rho1.0_seed43": WEAK,
                     "qwen3.5-9b__variants__dapo_rho3.0_seed42": WEAK}, flags  # ceiling [0.895, 1.242]


def test_a_ceiling_within_a_point_of_the_range_reaches_it():
    """A training reward's law of R² 0.92 (a = 1.46 ± 0.034) read its ceiling 1.0054 [1.0020, 1.0089]:
    "ceiling interval [1, 1.01] lies wholly above [0, 1]: no score reaches it", law does not apply, and
    `algorithms` left the run out of a GRPO/PPO test it had made. Within a point of the range the ceiling
    is the range's edge: a weak fit, its ceiling leaving [0, 1]."""
    level, reasons = judge(_fit(a=1.46, se=0.034, r2=0.92, ci=(1.002, 1.0089), kind="training score"))
    assert level == WEAK and reasons == ["ceiling interval [1, 1.01] leaves [0, 1], the range of a fraction"]
    assert judge(_fit(ci=(-0.009, -0.001)))[0] == WEAK
    assert judge(_fit(ci=(1.011, 1.02)))[0] == NOT_APPLICABLE


def test_the_algorithm_test_keeps_a_training_reward_whose_ceiling_is_one():
    runs = [DATA / f"verl_{a}_deepseek-llm-7b-chat_gsm8k_mi300.parquet" for a in ("grpo", "ppo")]
    if not all(p.exists() for p in runs):
        import pytest
        pytest.skip("the shipped real runs are absent")
    t = el.load(*runs, warn=False)
    test = el.algorithms(t, y="score")
    assert not test.left_out_, test.left_out_


def test_a_score_all_nan_or_a_slope_without_error_is_not_a_good_fit():
    """Every comparison with a NaN is False: a fit of a score all NaN (a, its error, R², the ceiling all NaN) and
    one whose slope had no standard error passed every test and read 'good fit', with nothing said."""
    nan = float("nan")
    all_nan = _fit(a=nan, se=nan, r2=nan, ci=(nan, nan))
    all_nan.R_ = np.full(30, nan)
    level, reasons = judge(all_nan)
    assert level == NOT_APPLICABLE and reasons == ["the score is not a number at all 30 points: nothing was fitted"]
    level, reasons = judge(_fit(se=nan))
    assert level == WEAK and reasons == ["a's standard error is nan: whether a differs from 0 is not known"]
    level, reasons = judge(_fit(se=nan, ci=(nan, nan)))
    assert level == WEAK and len(reasons) == 2 and "ceiling's interval is [nan, nan]" in reasons[1]
    level, reasons = judge(_fit(a=nan))
    assert level == NOT_APPLICABLE and reasons == ["a = nan: no slope was fitted"]


def test_an_exact_law_whose_iid_error_is_nan_is_not_good():
    """The iid covariance of points lying exactly on the law can be a tiny negative number: its root, NaN."""
    H = np.linspace(1.2, 0.2, 12)
    fit = el.EntropyLawFit(interval="iid", warn=False).fit(H, 1 - 0.3 * np.exp(H))
    fit.a_stderr_ = float("nan")  # the rounding that gives it depends on the platform's BLAS
    assert judge(fit)[0] == WEAK
