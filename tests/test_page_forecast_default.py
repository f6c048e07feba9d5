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
