"""One row of numbers per run, shared by the report's tables and the summary figures, made
from fits and forecasts already computed (:mod:`entropylaw.results.cache`; the whole flow:
:func:`entropylaw.results.model.run_results`).

:func:`summary_rows_of` gives each run (fitted or not) its label, family, look and fitted
numbers with the trust flag; :func:`forecast_rows_of` adds, per run, the forecast of its
final score from its first steps.

>>> import numpy as np
>>> from entropylaw import table
>>> steps = np.arange(0, 200, 10)
>>> H = 1.0 * np.exp(-steps / 60) + 0.1
>>> recs = [(int(s), "entropy", float(h)) for s, h in zip(steps, H)]
>>> recs += [(int(s), "val/mean", float(0.8 - 0.2 * np.exp(h))) for s, h in zip(steps, H)]
>>> from entropylaw.results.model import summary_rows
>>> rows, notes = summary_rows(table.from_records(recs, run_id="r1"))
>>> round(rows[0]["a"], 3), round(rows[0]["ceiling"], 3), rows[0]["n"], rows[0]["trust"]
(0.2, 0.6, 20, 'good fit')
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from entropylaw.fit.forecast import calibrate as cal
from entropylaw.fit.forecast.core import decision_method, default_method, describe_method
from entropylaw.fit.forecast.final import describe, final_value
from entropylaw.fit.forecast.line_notes import fell_back
from entropylaw.fit.forecast.methods import BEYOND
from entropylaw.fit.forecast.data_switch import SWITCH_SAID
from entropylaw.fit.forecast.schedule import LR_SAID
from entropylaw.fit.run import GOOD, NOT_APPLICABLE
from entropylaw.results.cache import LAW_METHOD
from entropylaw.results.values import as_float

NOT_FITTED = "not fitted"


def fit_dict(fit) -> dict:
    """The fit's numbers as plain floats (its ``to_dict()`` when it has one)."""
    d = dict(fit.to_dict()) if hasattr(fit, "to_dict") else {}
    for key in ("a", "b", "ceiling", "r2", "rmse", "n"):
        attr = f"{key}_"
        if key not in d and hasattr(fit, attr):
            d[key] = getattr(fit, attr)
    return d


def _is_fraction(values) -> bool:
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    return bool(len(v)) and v.min() >= 0 and v.max() <= 1


def summary_rows_of(ids, groups: dict, labels: dict, styles, meta: pd.DataFrame, fitted: dict,
                    notes, no_law: dict | None = None) -> list[dict]:
    """One row per run of ``ids``, grouped by family (``groups``, ``labels``:
    :func:`entropylaw.table.labels.run_labels`), with its look (``styles``), model and algorithm (``meta``, by run id)
    and its fit (``fitted``: :func:`entropylaw.results.cache.fitted_runs`; a run not fitted says why, from
    ``notes``); a run of ``no_law`` (run -> why: a score and no entropy) is never fitted: its row says why
    under ``no_law``, where the law's numbers would be."""
    rows, number = [], 0
    for family, members in groups.items():
        for run_id in members:
            number += 1
            row = {"run_id": run_id, "number": number, "label": labels[run_id], "family": family,
                   "color": styles.color(run_id), "marker": styles.marker(run_id),
                   "linestyle": styles.linestyle(run_id),
                   "model": meta.at[run_id, "model"] if run_id in meta.index else "",
                   "algorithm": meta.at[run_id, "algorithm"] if run_id in meta.index else ""}
            if run_id in (no_law or {}):
                row.update(trust=NOT_FITTED, trust_reasons=[no_law[run_id]], no_law=no_law[run_id])
                rows.append(explained(row))
                continue
            if run_id not in fitted:
                why = next((n.split("not fitted (", 1)[1].rstrip(")") for n in notes
                            if n.startswith(f"{run_id}: not fitted")), "no fit")
                # the row names its run: the error's own "<file>: run '<id>': " goes (5 lines of a cell)
                why = why.split(f"run {run_id!r}: ", 1)[-1]
                row.update(trust=NOT_FITTED, trust_reasons=[why])
                rows.append(explained(row))
                continue
            pts, fit = fitted[run_id]
            d = fit_dict(fit)
            row.update({k: d.get(k) for k in ("n", "a", "a_stderr", "b", "b_stderr", "ceiling", "ceiling_stderr",
                                               "ceiling_ci", "r2", "rmse")})
            row.update(score_key=fit.meta_.get("y_key", ""), score_kind=fit.meta_.get("score_kind", ""),
                       final_observed=final_score(fit.meta_.get("y_key", ""), pts),
                       final_step=float(pts["step"].iloc[-1]),
                       trust=getattr(fit, "trust_", ""), trust_reasons=list(getattr(fit, "trust_reasons_", [])),
                       best_form=getattr(fit, "best_form_aic_", ""), fraction=_is_fraction(pts["R"]))
            rows.append(explained(row))
    return rows


def explained(row: dict) -> dict:
    """``row`` with what the page says of its trust flag: the first reason (``why``; ``—`` for
    a good fit with none), how many more (``why_more``), every reason with the points it rests
    on (``why_all``), and why its ceiling is no forecast where the law does not apply
    (``ceiling_void``).

    >>> r = explained({"trust": "law does not apply", "trust_reasons": ["a < 0", "few points"], "n": 9})
    >>> r["why"], r["why_more"], r["why_all"], r["ceiling_void"][:14]
    ('a < 0', 1, 'a < 0; few points; 9 paired points, score ', 'not a forecast')
    """
    reasons = [str(x) for x in row.get("trust_reasons") or []]
    n = row.get("n")
    row["why"] = reasons[0] if reasons else ("—" if row.get("trust") == GOOD else "")
    row["why_more"] = max(len(reasons) - 1, 0)
    row["why_all"] = "; ".join(reasons + ([f"{int(n)} paired points, score {row.get('score_key', '')}"] if n else []))
    if row.get("trust") == NOT_APPLICABLE:
        row["ceiling_void"] = "not a forecast: the law does not describe this run"
    return row


def method_names(forecasts: list[dict]) -> dict:
    """What the page says of the methods: the forecast column's method (``method``: the
    default of the runs' kind of score, ``default`` where the kinds differ) and the call's
    (``call_method``), the method most rows show (``shown``, the default where none could run)
    with its ``description``, each kind's default and decision curve (``by_kind``) and what each
    default does (``descriptions``)."""
    kinds = sorted({f.get("target_kind") for f in forecasts if f.get("target_kind")})
    by_kind = {k: (default_method(k), decision_method(k)) for k in kinds}
    shown = Counter(f.get("method") for f in forecasts if f.get("method")).most_common(1)
    if kinds:
        defaults, curves = sorted({d for d, _ in by_kind.values()}), sorted({c for _, c in by_kind.values()})
    else:  # rows that do not say their kind: the column names the method most of them show
        defaults = [m for m, _ in shown]
        curves = [m for m, _ in Counter(f.get("call_method") for f in forecasts if f.get("call_method")).most_common(1)]
    method = shown[0][0] if shown else default_method()  # no run could be forecast: the default, named
    return {"method": defaults[0] if len(defaults) == 1 else "default",
            "call_method": curves[0] if len(curves) == 1 else "", "shown": method,
            "description": describe_method(method), "by_kind": by_kind,
            "descriptions": {d: describe_method(d) for d, _ in by_kind.values()}}


def final_score(y_key: str, pts) -> float:
    """The run's final score by the forecasts' rule (:mod:`entropylaw.fit.forecast.final`): a
    validation score's last value, a training score's mean over the run's last 5 % of steps."""
    return final_value(y_key, pts["step"].to_numpy(float), pts["R"].to_numpy(float))


def in_sample_said(forecasts: list[dict]) -> str | None:
    """What the backtests of ``forecasts`` (rows of :func:`forecast_rows_of`) are where some were among the runs the
    stored calibration was measured on (the shipped runs), else None: the screen and the page say the same.

    >>> in_sample_said([{"number": 1, "calibrated_on": True}, {"number": 2, "calibrated_on": False}])[:31]
    'in-sample: row 1 is among the r'
    """
    inside = [str(f.get("number", i)) for i, f in enumerate(forecasts, 1) if f.get("calibrated_on")]
    if not inside:
        return None
    who = ("every run here is" if len(inside) == len(forecasts) else
           f"row {inside[0]} is" if len(inside) == 1 else f"rows {', '.join(inside)} are")
    return (f"in-sample: {who} among the runs the stored calibration (interval factors, take-off and collapse rates) "
            "was measured on, so these backtests score the runs on what they taught it; analysis/bench_forecast.py "
            "and bench_decide.py leave each run's task or recipe out (docs/results.md).")


def forecast_rows_of(rows: list[dict], computed: dict, conf: float = 0.9) -> list[dict]:
    """Per summary row: the default method's forecast of the final score and its plateau
    (with ``conf`` intervals) from the run's first steps, and the law's ceiling from the same
    steps (``computed``: :func:`entropylaw.results.cache.forecast_runs`); rows that cannot be
    forecast say why."""
    out = []
    learned_on = set(cal.stored().get("run_ids") or [])  # the runs the stored calibration was measured on
    for row in rows:
        f = {k: row.get(k) for k in ("run_id", "number", "label", "family", "color", "marker", "linestyle")}
        f.update(method=None, conf=conf, calibrated_on=row.get("run_id") in learned_on)
        if row.get("no_law"):  # said where its law ceiling would be
            f["no_law"] = row["no_law"]
        done = computed.get(row["run_id"])
        if not isinstance(done, tuple):
            f["reason"] = str(done)
            out.append(f)
            continue
        run, fc = done
        observed = fc.final_observed
        # the page shows the window as "<= step": its last logged step, not the rule's 130.2
        f.update(window_end=float(fc.last_logged), n_window=int(fc.n_window), target_key=fc.target_key,
                 target_kind=fc.target_kind, final_step=float(fc.at_steps[-1]),
                 final_observed=float("nan") if observed is None else observed,
                 final_what=describe(fc.target_kind, fc.final_steps),
                 fraction=_is_fraction(run.target.values), bounds=run.bounds)
        table = fc.table().set_index("method")
        f["method"] = fc.default  # the default, or last-value where the default cannot run (said in fc.note)
        expected = default_method(fc.target_kind)
        # the method's name is shown beside a row only where it is not its kind's default
        # the screen's "*": the rule forecast's one-line view marks by
        f.update(fallback=fell_back(fc), method_tag="" if fc.default == expected else fc.default)
        f.update(regime_shown(fc))
        d = table.loc[fc.default]
        fin = fc.methods[fc.default].final
        if d["ok"] and fin and fin["no_forecast"]:
            f.update(reason=fin["no_forecast"], no_forecast=fin["no_forecast"])
        elif d["ok"]:
            f.update(forecast=fin["forecast"], forecast_ci=(fin["lo"], fin["hi"]),
                     plateau=as_float(d["plateau"]), plateau_ci=_pair(d["plateau_ci"]))
            if observed is not None and observed == observed:  # did the final score land in the interval?
                f["inside"] = bool(fin["lo"] <= observed <= fin["hi"])
        else:
            f["reason"] = str(d["reason"])
        dec = fc.decision or {}
        if dec and dec.get("method") is None:  # no curve that models change could run
            f.update(call_method=None, call=None, call_reason=dec.get("reason"))
        elif dec:
            g = dec["gain"]
            curve = decision_method(fc.target_kind)
            f.update(call_tag="" if dec.get("method") == curve else dec.get("method") or "")
            f.update(call_method=dec.get("method"), call=dec.get("call"), call_reason=dec.get("reason"),
                     gain=g["expected"], gain_ci=(g["lo"], g["hi"]), gain_to=g["to_step"], likely=dec.get("likely"),
                     threshold=dec.get("threshold"), threshold_source=dec.get("threshold_source"),
                     point=dec.get("point"), open_end=bool(dec.get("no_forecast")))
        law = table.loc[LAW_METHOD]
        if law["ok"]:
            f.update(law_ceiling=as_float(law["plateau"]), law_ceiling_ci=_pair(law["plateau_ci"]),
                     law_ceiling_beyond=any(BEYOND in w for w in fc.methods[LAW_METHOD].warnings))
            if fc.law_reasons:  # the law does not describe the window: its ceiling is said so where it is shown
                f["law_ceiling_void"] = "the law does not apply to the window: " + "; ".join(fc.law_reasons)
        else:
            f["law_reason"] = str(law["reason"])
        out.append(f)
    return out


def regime_shown(fc) -> dict:
    """What a forecast's row shows of its regime: ``regime`` (take-off, collapse risk; empty in
    saturation), ``regime_note``, the forecast's own words for it (its warnings: the rates it
    follows, the sweep it was pooled with, data that changes), and ``caution``, what else the
    forecast warns of where its regime says nothing (data that changes, a learning rate
    falling after the window; else empty): the report's forecast section names it."""
    words = list(fc.warnings or []) + [w for w in [(fc.regime or {}).get("sweep_note")] if w]
    name = {"take-off": "take-off", "instability": "collapse risk"}.get(fc.regime_name, "")
    caution = "" if name else next((label for start, label in ((SWITCH_SAID, "data changes"),
                                                                (LR_SAID, "learning rate falling"))
                                    if any(w.startswith(start) for w in words)), "")
    return {"regime": name, "regime_note": "; ".join(words), "caution": caution}


def _pair(value):
    if value is None or len(value) != 2:
        return None
    return float(value[0]), float(value[1])
