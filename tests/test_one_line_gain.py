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


def test_a_constant_scores_no_call_says_why():
    """A run whose validations are all 0.5: "no call" beside a gain, with no word of why."""
    from entropylaw.fit.forecast.decide import CONSTANT

    gain = {"expected": 0.005, "lo": -0.019, "hi": 0.028, "to_step": 599.0}
    flat = {"method": "last-value", "gain": gain, "point": 0.01, "call": None,
            "reason": f"{CONSTANT} (0.5 at all 15 points): nothing in it says whether or when it moves"}
    assert one_line_rows({"flat": _fc(flat)})[0]["call"] == "no call (constant score)"


def _rows():
    return [{"run": f"lr{i}e-6", "window": "<= 300", "final": "0.936 [0.876, 0.969]", "observed": None, "to": "599",
             "gain": "+0.5 [-2.7, +2.7]", "call": "undecided (stop ~513)" if i % 2 else "continue", "regime": ""}
            for i in range(1, 5)]


COLS = [("run", "run"), ("window", "window"), ("final [90 %]", "final"), ("to step", "to"), ("gain", "gain"),
        ("call", "call")]


def test_the_one_line_table_keeps_its_columns_at_80_and_60_columns():
    """At 80 columns (a terminal's default) a row 2 characters too wide was re-flowed word by word:
    'lr2e-6 <= 300 0.936 [0.876, 0.969] +0.5 [-2.7, +2.7] undecided (stop ~513)', out of its columns."""
    from entropylaw.fit.forecast.text import line_table

    for width in (80, 60):
        out = line_table(_rows(), COLS, width=width)  # as printed: a wrap after it would hide a line too wide
        lines = out.splitlines()
        assert all(len(ln) <= width for ln in lines), out
        at = lines[0 if width == 80 else 1].index("final")
        rows = [ln for ln in lines if "0.936" in ln]
        assert len(rows) == 4 and all(ln.index("0.936") == at for ln in rows), out
        assert all("undecided (stop" in ln for ln in lines if ln.startswith(("lr1", "lr3"))), out


def test_the_one_line_table_fits_40_columns_and_says_what_it_left_out():
    """Under ~50 columns the stacked rows' other cells and the "(left out at ...)" note ran to 57-65
    characters at 40 (a test wrapped the output before measuring it)."""
    from entropylaw.fit.forecast.text import line_table

    rows = [dict(r, observed="0.951", regime="take-off") for r in _rows()]
    cols = COLS[:3] + [("observed", "observed")] + COLS[3:] + [("regime", "regime")]
    out = line_table(rows, cols, width=40)
    assert all(len(ln) <= 40 for ln in out.splitlines()), out
    assert "left out at 40 columns" in out and all(f"lr{i}e-6" in out for i in range(1, 5)), out


def test_a_gain_stays_beside_its_interval_on_a_narrow_screen():
    """At 40 columns the stacked rows wrapped their cells at spaces: ``+21.1`` ended a line and
    ``[+8.2, +43.0]`` began the next. Each cell stays whole on its line, and the run's name has the
    room its line leaves beside the call, not the 10 characters of a column."""
    from entropylaw.fit.forecast.text import line_table

    rows = [{"run": f"grpo_clip_lr{lr}e-05_epoch{e}_batch128__{h}", "final": "0.423 [0.254, 0.674]",
             "gain": "+21.1 [+8.2, +43.0]", "call": "continue"}
            for lr, e, h in ((1, 1, "8jla7krl"), (2, 3, "whra6cbi"))]
    out = line_table(rows, [("run", "run"), ("final [90 %]", "final"), ("gain", "gain"), ("call", "call")], width=40)
    lines = out.splitlines()
    assert max(map(len, lines)) <= 40, out
    assert sum(line.strip() == "+21.1 [+8.2, +43.0]" for line in lines) == 2, out
    assert any(line.startswith("lr1e-05_epoch1") for line in lines) and "~" not in out, out


def test_a_gain_in_score_units_has_one_precision():
    """A reward in [-1, 1] has no points: its gain read ``+0 [+0, +0.01374]``, each number to its own
    significant figures, under "in (score units) or points". Three decimals each, and plain words."""
    from entropylaw.fit.forecast.text import gain_text

    d = {"gain": {"expected": 0.0, "lo": -0.00002, "hi": 0.01374}, "point": None}
    assert gain_text(d) == "+0.000 [+0.000, +0.014]"
    assert gain_text({"gain": {"expected": 0.085, "lo": 0.01, "hi": 0.2}, "point": 0.01}) == "+8.5 [+1.0, +20.0]"
