"""A training score forecast to a far planned total (``--total-steps 1e12``): its final score is a
mean over the last 5 % of the steps, read at every logged interval there: 5e10 steps, an array of
74.5 GiB (``internal error: MemoryError`` from ``rank data/real --total-steps 1e12``)."""

import numpy as np

import entropylaw as el
from entropylaw import table
from entropylaw.fit.forecast.final import final_steps

MAX_FINAL_STEPS = 400  # final.MAX_FINAL_STEPS


def test_the_final_mean_is_read_at_a_bounded_number_of_steps_across_the_same_span():
    steps = final_steps("training score", origin=0.0, last=1e9, spacing=5.0)
    assert len(steps) <= MAX_FINAL_STEPS and steps[-1] == 1e9 and steps[0] <= 0.95e9 + 2 * 0.05e9 / MAX_FINAL_STEPS
    assert list(final_steps("training score", origin=0.0, last=200.0, spacing=5.0)) == [190.0, 195.0, 200.0]


def test_a_training_score_forecast_to_step_1e12_is_forecast_and_ranked():
    steps = np.arange(1, 201)
    h = 1.5 * np.exp(-steps / 60) + 0.2
    recs = [(int(s), "entropy", float(x)) for s, x in zip(steps, h)]
    recs += [(int(s), "score", float(9.0 - 4.0 * x + 0.05 * np.sin(s))) for s, x in zip(steps, h)]
    df = table.from_records(recs, run_id="rm")
    fc = el.forecast(df, total_steps=1e12, n_boot=20)
    assert fc.to_dict()["final"] is not None and "steps 9.5" in str(fc)
    assert el.rank(df, total_steps=1e12, n_boot=20).rows[0]["to_step"] == 1e12
