"""The report's forecast cells and table: each run's forecast of its final score from its
first steps, its interval, what the rest of the run adds and the call (:mod:`.page`). The
forecasts themselves are computed by :mod:`entropylaw.results.rows`.

>>> call_cell({"call": "undecided", "call_method": "power", "gain": 0.03, "gain_ci": (-0.01, 0.06), "point": 0.01,
...            "gain_to": 400, "threshold": 0.012, "threshold_source": "noise"})
'<td title="power: continuing to step 400 adds +3.0 [-1.0, +6.0] points; threshold 1.2 points (noise)">+3.0 · undecided</td>'
"""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from entropylaw.page.cells import _family_rows, _run_cells, cell, decimals, esc, interval, swatch
from entropylaw.results.values import row_float
from entropylaw.terminal import gain


def _pts(v, point) -> str:
    return gain(v, point)


def call_cell(f: Mapping) -> str:
    """The gain to go and the call of one forecast row, the gain's interval and the threshold in
    the tooltip; the method is named in the cell where it is not its kind's (``call_tag``)."""
    if f.get("call") is None or f.get("gain") is None:
        return f'<td class="void" title="{esc(f.get("call_reason") or f.get("reason") or "no forecast")}">no call</td>'
    p, (lo, hi) = f.get("point"), f["gain_ci"]
    units = "points" if p else "(score units)"
    tip = (f"{f.get('call_method', '')}: continuing to step {f.get('gain_to', 0):.0f} adds {_pts(f['gain'], p)} "
           f"[{_pts(lo, p)}, {_pts(hi, p)}] {units}; threshold {_pts(f.get('threshold', 0), p).lstrip('+')} {units} "
           f"({f.get('threshold_source', '')})")
    likely = f.get("likely")
    if likely:
        tip += f"; likely {likely['call']} at step {likely['step']:.0f}"
    tag = f' <span class="muted tag">{esc(f["call_tag"])}</span>' if f.get("call_tag") else ""
    if f.get("open_end"):  # the lower bound alone clears the threshold; the end is not in the window
        tip += "; where the run ends is not in the window: the call reads the gain's lower bound alone"
        return f'<td title="{esc(tip)}">at least {esc(_pts(lo, p))} · {esc(f["call"])}{tag}</td>'
    return f'<td title="{esc(tip)}">{esc(_pts(f["gain"], p))} · {esc(f["call"])}{tag}</td>'


def live_table_html(rows: Sequence[Mapping]) -> str:
    """Per run still training (:attr:`entropylaw.results.model.RunResults.live_forecasts`): its forecast from
    every step it logged to its planned last step, what continuing there adds and the call."""
    d = decimals([row_float(r, "forecast") for r in rows])
    pct = next((f"{100 * float(r['conf']):g} %" for r in rows if r.get("conf")), "90 %")
    head = ('<tr><th></th><th class="num">#</th><th class="l">run</th>'
            '<th title="the forecast sees every step logged: up to this step, this many scores">logged ≤ step · n</th>'
            f'<th title="the score forecast at the run\'s planned last step">at step · forecast [{pct}]</th>'
            '<th title="what continuing to the planned last step adds (points), and the call">gain to go · call</th>'
            "</tr>")
    body = []
    for r in rows:
        window = f"≤ {row_float(r, 'window_end'):.0f} · {r.get('n_window', '?')}"
        at = f"step {row_float(r, 'final_step'):.0f} · "
        forecast = _forecast_cell(r, d).replace(">", ">" + esc(at), 1)  # the cell's text after its opening tag
        body.append(f"<tr><td>{swatch(r)}</td>{_run_cells(r)}<td>{esc(window)}</td>{forecast}{call_cell(r)}</tr>")
    return f'<table class="runs live"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'


def _forecast_cell(f: Mapping | None, d: int) -> str:
    """The forecast of one run's final score and its interval; the method is named in the cell
    where it is not its kind's default (``method_tag``)."""
    if not f or row_float(f, "forecast") != row_float(f, "forecast"):
        why = (f or {}).get("reason", "no forecast")
        shown = "no forecast" if str(why).startswith("no forecast") else "n/a"
        if (f or {}).get("remedy"):  # the window too short: how to get one, with the reason on hover
            why = f"{why}; {f['remedy']}"
        return f'<td class="void" title="{esc(why)}">{shown}</td>'
    frac = bool(f.get("fraction", True))
    value = interval(row_float(f, "forecast"), f.get("forecast_ci"), d, frac)
    tip = f"{f.get('method', '')} from steps ≤ {f.get('window_end', float('nan')):.0f}, final step " \
          f"{f.get('final_step', float('nan')):.0f}"
    return f'<td title="{esc(tip)}">{value}{tags(f.get("method_tag"), f)}</td>'


def tags(method: str | None, f: Mapping, caution: bool = False) -> str:
    """The line under a forecast: the method where it is not its kind's default, and the regime
    (take-off, collapse risk) with the forecast's words for it on hover; one line for both.
    ``caution``: also what else the forecast warns of where the regime says nothing (a learning
    rate falling, data that changes): the forecast section says it, the first screen keeps to
    the regimes, which move the forecast.

    >>> tags("last-value", {"regime": "collapse risk", "regime_note": "the entropy rose 2.7-fold"})
    ' <span class="muted tag">last-value · <span class="regime" title="the entropy rose 2.7-fold">collapse risk</span></span>'
    >>> tags("", {"regime": "", "caution": "learning rate falling"}), tags("", {"regime": ""})
    ('', '')
    """
    parts = [esc(method)] if method else []
    label = f.get("regime") or (f.get("caution") if caution else "")
    if label:
        parts.append(f'<span class="regime" title="{esc(f.get("regime_note") or label)}">{esc(label)}</span>')
    return f' <span class="muted tag">{" · ".join(parts)}</span>' if parts else ""


def forecast_table_html(rows: Sequence[Mapping], method: str = "") -> str:
    """Per run: the default method's forecast of the final score and its plateau, the law's
    ceiling from the same window, and the final score then observed; ``method``: the default
    (:attr:`entropylaw.results.model.RunResults.methods`), named in the headings; a row forecast
    by another than its kind's default names it (``method_tag``), as the first table does. A
    column no row has a value in (the plateau where every forecast is logit-drift's, which has
    none) is left out, and said under the table (:func:`left_out_columns`)."""
    d = decimals([row_float(r, "final_observed") for r in rows])
    pct = next((f"{100 * float(r['conf']):g} %" for r in rows if r.get("conf")), "90 %")
    plateau, law = (_any_value(rows, key) for key in ("plateau", "law_ceiling"))
    law = law or any(r.get("no_law") for r in rows)  # the column says why a run has no law
    head = ('<tr><th></th><th class="num">#</th><th class="l">run</th>'
            '<th title="the forecast sees only these steps: up to this step, this many scores">window ≤ step · n</th>'
            f'<th title="{esc(method)}: uses the score logged in the window">forecast [{pct}]</th>'
            + (f'<th title="the level the {esc(method)} method expects the score to settle at">plateau [{pct}]</th>'
               if plateau else "")
            + (f'<th title="b − a of the law fitted to the window\'s (entropy, score) pairs">law ceiling [{pct}]</th>'
               if law else "")
            + '<th title="the final score: a validation score at the run\'s last step, a training score\'s mean over '
            'the last 5 % of steps (hover a value)">observed</th>'
            '<th title="observed final score inside the forecast\'s interval">in?</th></tr>')
    width = 7 + plateau + law
    body = []
    for heading, r in _family_rows(rows, width):
        if heading:
            body.append(heading)
        frac = bool(r.get("fraction", True))
        if r.get("reason") and row_float(r, "forecast") != row_float(r, "forecast"):
            remedy = f'<br><span class="remedy">{esc(r["remedy"])}</span>' if r.get("remedy") else ""
            body.append(f"<tr><td>{swatch(r)}</td>{_run_cells(r)}"
                        f'<td class="why" colspan="{width - 3}" title="{esc(r["reason"])}">'
                        f'{esc(r["reason"] if r["reason"].startswith("no forecast") else "no forecast: " + r["reason"])}'
                        f'{remedy}</td></tr>')
            continue
        window = f"≤ {r.get('window_end', float('nan')):.0f} · {r.get('n_window', '?')}"
        f, obs = row_float(r, "forecast"), row_float(r, "final_observed")
        ci = r.get("forecast_ci")
        inside = {True: "✓", False: "✗"}.get(r.get("inside"), "")
        ceiling = interval(row_float(r, "law_ceiling"), r.get("law_ceiling_ci"), d, frac)
        ceiling += "‡" if r.get("law_ceiling_beyond") and ceiling != "n/a" else ""
        void = r.get("law_ceiling_void")
        law_cell = (f'<td class="why" title="{esc(r["no_law"])}">no law fit: {esc(r["no_law"])}</td>'
                    if r.get("no_law")
                    else f'<td title="{esc(r.get("law_reason", ""))}" class="void">n/a</td>' if ceiling == "n/a"
                    else f'<td><span class="void" title="{esc(void)}">({ceiling})</span>'
                    f'<span class="muted tag" title="{esc(void)}">law n/a</span></td>' if void
                    else f"<td>{ceiling}</td>")
        body.append(
            f"<tr><td>{swatch(r)}</td>{_run_cells(r)}<td>{esc(window)}</td><td>{interval(f, ci, d, frac)}"
            + tags(r.get("method_tag"), r, caution=True) + "</td>"
            + (f"<td>{interval(row_float(r, 'plateau'), r.get('plateau_ci'), d, frac)}</td>" if plateau else "")
            + (law_cell if law else "")
            + f'<td title="{esc(r.get("final_what", ""))}">{cell(obs, d)}</td><td>{inside}</td></tr>')
    marked = re.sub("([†‡])", r"<span class=dagger>\1</span>", "".join(body))
    return f'<table class="runs"><thead>{head}</thead><tbody>{marked}</tbody></table>'


def _any_value(rows: Sequence[Mapping], key: str) -> bool:
    return any(row_float(r, key) == row_float(r, key) for r in rows)  # a number (not NaN) in some row


def beyond_key(rows: Sequence[Mapping]) -> str:
    """The key to the law ceilings marked ‡ (fitted past the score's range, shown at its edge) and to those
    marked law n/a (the law does not describe the window), where a row has one."""
    keys = []
    if any(r.get("law_ceiling_beyond") for r in rows):
        keys.append("‡ the law fitted to the window puts its ceiling past what the score can reach: shown at the "
                    "edge of the range, its interval too; not a forecast of the edge")
    if any(r.get("law_ceiling_void") and row_float(r, "law_ceiling") == row_float(r, "law_ceiling") for r in rows):
        keys.append("law n/a: the law does not describe the window (hover for why): its ceiling (greyed) is not a "
                    "forecast")
    return " · ".join(keys)


def left_out_columns(rows: Sequence[Mapping]) -> list[str]:
    """The forecast table's columns no row has a value in, in words (said under the table)."""
    out = []
    if not _any_value(rows, "plateau"):
        out.append("plateau (the forecasts shown have none: logit-drift's climb, for one, has no plateau)")
    if not _any_value(rows, "law_ceiling") and not any(r.get("no_law") for r in rows):
        out.append("law ceiling (none from any run's window)")
    return out
