"""A window measured as a fraction of a run ends between two logged steps (0.33 * 390 = 128.7);
what the output names is the last step logged in it, never the rule's fraction of a step."""

import numpy as np

from entropylaw.fit.forecast.core import forecast
from entropylaw.fit.forecast.data import RunData
from entropylaw.fit.forecast.text import one_line_rows


def _forecast():
    steps = np.arange(0, 400, 10.0)
    y = 0.8 - 0.5 * np.exp(-steps / 80) + 0.004 * np.cos(steps)
    run = RunData.from_arrays(steps, y, steps, 1.0 - steps / 800)
    return forecast(run, fit_frac=0.33, methods=["last-value"], n_boot=50)


def test_forecast_names_the_windows_last_logged_step():
    fc = _forecast()
    assert fc.window_end == 0.33 * 390  # the rule is unchanged: the same points are fitted
    assert fc.last_logged == 120.0 and fc.to_dict()["last_logged_step"] == 120.0
    text = str(fc)
    assert "from steps 0..120 " in text and "no information after step 120 is used" in text
    assert "128.7" not in text
    assert one_line_rows({"r": fc})[0]["window"] == "<= 120"
