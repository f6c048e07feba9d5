"""The forecast section names the default method of each kind of score, as the first table's
key does, and a row names its method only where it is not its kind's default: with most rows
of a sweep forecast by last-value (the default could not run, or its forecast was refused),
the section called last-value 'the default method' and named logit-drift, the default, in
every other row (CS336 sweep, 28 runs)."""

from __future__ import annotations

from entropylaw.fit.forecast.core import default_method
from entropylaw.page.forecasts import forecast_table_html
from entropylaw.page.page import defaults_said
from entropylaw.results.rows import method_names


def _row(number, method, kind="validation"):
    tag = "" if method == default_method(kind) else method
    return {"run_id": f"run{number}", "number": number, "label": f"run{number}", "method": method,
            "method_tag": tag, "target_kind": kind, "forecast": 0.5, "forecast_ci": (0.4, 0.6),
            "final_observed": 0.55, "window_end": 8.0, "n_window": 2, "conf": 0.9, "regime": ""}


def test_the_default_is_the_kinds_not_the_method_most_rows_show():
    default = default_method("validation")
    other = "last-value" if default != "last-value" else "power"
    rows = [_row(1, default)] + [_row(i, other) for i in range(2, 5)]
    names = method_names(rows)
    said = defaults_said(names)
    assert f"<b>{default}</b>" in said and "default method for validation scores" in said
    assert f"<b>{other}</b>" not in said
    page = forecast_table_html(rows, names["method"])
    # the default's row names no method; each row of another names it
    assert page.count(f'<span class="muted tag">{other}</span>') == 3
    assert f'<span class="muted tag">{default}</span>' not in page


def test_kinds_with_their_own_defaults_are_each_named():
    kinds = {"validation": default_method("validation"), "training score": default_method("training score")}
    names = method_names([_row(1, kinds["validation"]), _row(2, kinds["training score"], "training score")])
    said = defaults_said(names)
    assert all(f"<b>{m}</b>" in said for m in kinds.values())
    assert "validation scores" in said and "training scores" in said


def test_a_forecast_column_no_row_has_is_left_out_and_said():
    """The CS336 page's forecast table had a plateau and a law ceiling column n/a in all 28 rows."""
    from entropylaw.page.forecasts import forecast_table_html, left_out_columns

    rows = [{"run_id": f"r{i}", "number": i + 1, "label": f"r{i}", "forecast": 0.4, "forecast_ci": (0.3, 0.5),
             "plateau": float("nan"), "law_ceiling": float("nan"), "final_observed": 0.45, "inside": True,
             "window_end": 8.0, "n_window": 2, "conf": 0.9} for i in range(3)]
    html = forecast_table_html(rows, "logit-drift")
    assert "plateau [" not in html and "law ceiling [" not in html and html.count("<td>") >= 3
    assert [w.split(" (")[0] for w in left_out_columns(rows)] == ["plateau", "law ceiling"]
    rows[1]["law_ceiling"], rows[1]["law_ceiling_ci"] = 0.6, (0.5, 0.7)
    shown = forecast_table_html(rows, "logit-drift")
    assert "law ceiling [90 %]" in shown and "plateau [" not in shown and shown.count('class="void">n/a') == 2
    assert [w.split(" (")[0] for w in left_out_columns(rows)] == ["plateau"]


def test_a_law_ceiling_fitted_past_the_range_is_marked_where_it_is_shown():
    """A window whose (entropy, score) pairs put the law's ceiling past 1 showed ``1.000 [1.000, 1.000]``
    in the report's forecast table: an edge shown as a certainty. It carries ‡ and its key."""
    import numpy as np

    import entropylaw.table as table
    from entropylaw.fit.forecast.methods import BEYOND
    from entropylaw.page.forecasts import beyond_key
    from entropylaw.results.cache import LAW_METHOD, forecast_runs
    from entropylaw.results.rows import forecast_rows_of

    steps = np.arange(0, 200, 5)
    h = 1.0 - 0.6 * steps / steps[-1]  # R = -0.5 exp(H) + 1.6: the ceiling b - a is 1.1
    r = -0.5 * np.exp(h) + 1.6 + np.random.default_rng(0).normal(0, 0.004, len(steps))
    recs = [(int(s), "entropy", float(e)) for s, e in zip(steps, h)] + \
        [(int(s), "score", float(v)) for s, v in zip(steps, r)]
    t = table.from_records(recs, run_id="past")
    computed, _ = forecast_runs(t, ["past"], 0.5, 50, 0.9)
    run, fc = computed["past"]
    assert any(BEYOND in w for w in fc.methods[LAW_METHOD].warnings)  # the law's own fit said it
    [row] = forecast_rows_of([{"run_id": "past", "number": 1, "label": "past"}], computed)
    assert row["law_ceiling_beyond"] and row["law_ceiling"] == 1.0, row
    html = forecast_table_html([row], "logit-drift")
    assert "<span class=dagger>‡</span>" in html and "past what the score can reach" in beyond_key([row])
    row["law_ceiling_beyond"] = False
    assert "‡" not in forecast_table_html([row], "logit-drift") and beyond_key([row]) == ""
