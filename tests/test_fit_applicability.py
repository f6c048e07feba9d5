"""law_applies: synthetic runs with a known answer, and the shipped real runs (data/real)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from entropylaw import table
from entropylaw.errors import EntropyLawError
from entropylaw.fit.applicability import APPLIES, DOES_NOT_APPLY, law_applies

REAL = Path(__file__).resolve().parents[1] / "data" / "real"
rng = np.random.default_rng(3)
STEPS = np.arange(0, 200, 5)


def _law_run(noise=0.01):
    H = 0.05 + 0.5 * np.exp(-STEPS / 50)
    return H, 0.95 - 0.4 * np.exp(H) + rng.normal(0, noise, len(H))


def test_a_run_that_follows_the_law_applies():
    H, R = _law_run()
    assert law_applies(STEPS, H, R) == (APPLIES, [])
    # sparse validation against the full entropy series gives the same verdict
    val_steps = STEPS[::4]
    assert law_applies(STEPS, H, R[::4], score_steps=val_steps) == (APPLIES, [])


def test_entropy_explodes_then_collapses():
    H, R = _law_run()
    H = H.copy()
    H[10:14] = [3.0, 8.23, 6.0, 2.0]  # a burst at steps 50-65, back near 0 afterwards
    verdict, reasons = law_applies(STEPS, H, R)
    assert verdict == DOES_NOT_APPLY
    first = float(np.median(H[:4]))  # first tenth of 40 points
    assert reasons == [f"entropy explodes ({first:.3g} -> peak 8.23 nats at step 55)"]


def test_entropy_that_starts_high_and_collapses_at_once_does_not_explode():
    """The maximum at the very start is where the run began, not an explosion (SmolLM2 under
    TRL at 4x batch: 2.11 nats at step 1, 0.4 nats by step 10 of 200)."""
    steps = np.arange(1, 201)
    H = 0.05 + 2.0 * np.exp(-(steps - 1) / 4.0)
    R = 0.9 - 0.1 * np.exp(H)  # 0.12 .. 0.79
    assert float(np.median(H[:20])) < H[0] / 3  # the start level is far below the first point
    assert law_applies(steps, H, R) == (APPLIES, [])
    # the same start with a later burst above it still explodes
    H2 = H.copy()
    H2[100:104] = 3.0
    verdict, reasons = law_applies(steps, H2, R)
    assert verdict == DOES_NOT_APPLY and reasons[0].startswith("entropy explodes (") \
        and reasons[0].endswith("-> peak 3 nats at step 101)")


def test_entropy_rises_and_does_not_fall():
    R = np.linspace(0.9, 0.6, len(STEPS))
    H = np.r_[np.full(20, 0.1), np.full(20, 0.4)]
    assert law_applies(STEPS, H, R) == (DOES_NOT_APPLY, ["entropy rises (0.1 -> 0.4 nats)"])
    H = np.r_[np.full(20, 0.2), np.full(20, 0.19)]
    verdict, reasons = law_applies(STEPS, H, np.linspace(0.2, 0.5, 40))
    assert verdict == DOES_NOT_APPLY and reasons[0] == "entropy falls only 5.0 % (0.2 -> 0.19 nats; the law needs 20 %)"
    H = np.r_[np.full(20, 0.2), np.full(20, 0.21)]  # up by less than "rises" says: no fall at all
    assert law_applies(STEPS, H, np.linspace(0.2, 0.5, 40))[1][0].startswith("entropy does not fall (0.2 -> 0.21")


def test_score_collapses_while_entropy_stays():
    H = 0.16 + 0.01 * np.sin(STEPS)
    R = np.r_[np.full(5, 0.6), np.linspace(0.6, 0, 5), np.zeros(30)]
    verdict, reasons = law_applies(STEPS, H, R)
    assert verdict == DOES_NOT_APPLY
    assert any(r.startswith("score collapses (0.6 -> 0)") for r in reasons)
    assert any(r.startswith("score degenerate: stuck at its floor 0 (") for r in reasons)


def test_degenerate_scores():
    H, _ = _law_run()
    assert law_applies(STEPS, H, np.full(len(H), 0.5)) == \
        (DOES_NOT_APPLY, ["score degenerate: constant (0.5 at all 40 points)"])
    R = np.full(len(H), -1.0)
    R[:3] = [0.01, -0.97, -0.99]
    verdict, reasons = law_applies(STEPS, H, R)
    assert reasons[0] == "score degenerate: stuck at its floor -1 (37 of 40 points)"
    assert reasons[1] == "score outside [0, 1] (-1 .. 0.01): not an accuracy"
    # a reward in [-1, 1] is fine when the user says so: only the floor is left
    assert law_applies(STEPS, H, R, score_range=None)[1] == [reasons[0]]


def test_a_constant_score_has_no_r_squared():
    """0.3 at every point: its float mean leaves a total sum of squares of ~1e-32, which gave
    R² = -1190.76 beside "score degenerate: constant"; R² is undefined there."""
    from entropylaw.fit.law import EntropyLawFit

    H = 0.05 + np.exp(-np.arange(50) / 10)  # 50 points of 0.3: a mean 1e-17 off, a sum of squares of 1.5e-31
    f = EntropyLawFit(warn=False).fit(H, np.full(len(H), 0.3))
    assert np.isnan(f.r2_)
    assert EntropyLawFit(warn=False).fit(H, 0.3 + 0.2 * (1 - np.exp(H - H[0]))).r2_ > 0.9


def test_score_falls_as_entropy_falls():
    H, _ = _law_run()
    R = 0.2 + 0.8 * (H - H.min()) + rng.normal(0, 0.005, len(H))  # a < 0
    verdict, reasons = law_applies(STEPS, H, R)
    corr = np.corrcoef(np.exp(H), R)[0, 1]
    assert verdict == DOES_NOT_APPLY and len(reasons) == 1
    assert reasons[0].startswith("score falls as entropy falls") and f"= {corr:.2f})" in reasons[0]


def test_bad_input():
    assert law_applies([1, 2, 3], [0.3, 0.2, 0.1], [0.1, 0.2, 0.3]) == \
        (DOES_NOT_APPLY, ["too few points (3; a trend needs at least 4)"])
    with pytest.raises(EntropyLawError, match="equal lengths.*score_steps"):
        law_applies(STEPS, np.ones(40), np.ones(10))
    H, R = _law_run()
    H[5], R[7] = np.nan, np.inf  # ignored, not an error
    assert law_applies(STEPS, H, R)[0] == APPLIES


EXPECTED = {  # run -> (verdict, words every reason list must contain)
    "trl_qwen2.5-7b__exp1a__rho0.30_seed42": (DOES_NOT_APPLY, ["entropy explodes"]),
    "trl_qwen2.5-7b__exp1a__rho1.00_seed42": (DOES_NOT_APPLY, ["entropy explodes", "entropy rises"]),
    "trl_qwen3.5-9b__sweep_coarse__rho0.70_seed44": (DOES_NOT_APPLY, ["entropy explodes", "entropy rises"]),
    "trl_qwen2.5-7b__exp1a__rho5.00_seed42": (DOES_NOT_APPLY, ["entropy rises"]),
    "trl_qwen2.5-7b__exp1a__rho0.10_seed43": (DOES_NOT_APPLY, ["entropy falls only 3.4 %", "score collapses"]),
    "verl_opd_qwen3-4b_aime24_collapse": (DOES_NOT_APPLY, ["stuck at its floor -1", "outside [0, 1]"]),
}


@pytest.mark.parametrize("path", sorted(REAL.glob("*.parquet")), ids=lambda p: p.stem)
def test_real_runs(path):
    """Every shipped real run; the exploding TRL runs and the degenerate distillation run
    do not apply, every other run does."""
    df = table.read(path)
    run = str(df["run_id"].iloc[0])
    vals = table.val_metrics(df, run)
    y = "val/mean" if "val/mean" in vals else vals[0] if vals else "score"
    h, r = table.series(df, run, "entropy"), table.series(df, run, y)
    verdict, reasons = law_applies(h.index, h.to_numpy(), r.to_numpy(), score_steps=r.index)
    want, words = EXPECTED.get(path.stem, (APPLIES, []))
    assert verdict == want, reasons
    for word in words:
        assert any(word in reason for reason in reasons), (word, reasons)
    if verdict == APPLIES:
        assert reasons == []
    if "entropy explodes" in words:  # the peak it names is the series' maximum
        assert f"peak {h.max():.3g} nats at step {h.idxmax()}" in " ".join(reasons)
