"""The one-line forecast table: a gain whose call was refused (its curve's interval says nothing)
is no gain, and a gain read from another method than the final's is named."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from entropylaw.fit.forecast.text import one_line_rows


def _fc(decision, default="last-value"):
    final = {"forecast": 0.0, "lo": 0.0, "hi": 0.02, "no_forecast": None}
    return SimpleNamespace(methods={default: SimpleNamespace(ok=True, final=final)}, default=default,
                           decision=decision, fit_frac=None, final_observed=None, window_end=300.0, run_last=300.0,
                           last_logged=300.0, regime_name="instability", forecast=pd.DataFrame())


def test_a_refused_calls_gain_is_not_shown_and_another_methods_gain_is_named():
    """A run collapsed to 0: final last-value 0.000 [0.000, 0.020], beside it power's gain
    '-7.7 [-7.7, +59.6]' from an interval over the whole range, unnamed, with 'no call'."""
    gain = {"expected": -0.077, "lo": -0.077, "hi": 0.596, "to_step": 599.0}
    refused = {"method": "power", "gain": gain, "point": 0.01, "call": None,
               "reason": "no forecast: the power forecast's interval [0.00, 1.00] spans 100% of the score's range"}
    row = one_line_rows({"collapse": _fc(refused)})[0]
    assert row["gain"] == "-" and row["call"] == "no call (power: no forecast)"
    made = {**refused, "call": "stop", "reason": "the gain's upper bound is below the threshold"}
    row = one_line_rows({"collapse": _fc(made)})[0]
    assert row["gain"].endswith("(power)") and row["call"] == "stop"
    row = one_line_rows({"r": _fc({**made, "method": "last-value"})})[0]
    assert "(" not in row["gain"]
