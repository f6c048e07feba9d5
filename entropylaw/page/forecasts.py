"""The report's forecast cells and table: each run's forecast of its final score from its
first steps, its interval, and the step after which it stops paying (:mod:`.page`). The
forecasts themselves are computed by :mod:`entropylaw.results.rows`.

>>> stop_cell({"stop_now": True, "stop_method": "power"}, "power")
'<td title="power: step after which the expected gain over the next 0 steps stays below 0.0000 (); interval">now</td>'
"""

from __future__ import annotations

from typing import Mapping, Sequence

from entropylaw.fit.forecast.core import decision_method, default_method
from entropylaw.page.cells import _family_rows, _run_cells, cell, decimals, esc, interval, swatch
from entropylaw.results.values import row_float


def stop_cell(f: Mapping, common: str | None = None) -> str:
    """The stop-paying step of one forecast row, with its interval in the tooltip; the method
    is named in the cell when it is not the column's (``common``)."""
    if f.get("stop_now"):
        text = "now"
    elif f.get("stop_step") is not None:
        text = f"{f['stop_step']:.0f}"
    elif f.get("stop_searched_to") is not None:
        text = f"> {f['stop_searched_to']:.0f}"
    else:
        return f'<td class="void" title="{esc(f.get("stop_reason", "no forecast"))}">n/a</td>'
    ci = f.get("stop_step_ci")
    span = "" if ci is None else " [" + ", ".join("never" if v is None else f"{v:.0f}" for v in ci) + "]"
    tip = (f"{f.get('stop_method', '')}: step after which the expected gain over the next {f.get('lookahead', 0):.0f} "
           f"steps stays below {f.get('stop_threshold', 0):.4f} ({f.get('stop_source', '')}); interval{span}")
    # a row of a known kind is tagged where it differs from that kind's curve; else from the column's
    kind = f.get("target_kind")
    expected = decision_method(kind) if kind else (common or f.get("stop_method"))
    tag = "" if common is None or f.get("stop_method") == expected else \
        f' <span class="muted">{esc(f.get("stop_method", ""))}</span>'
    return f'<td title="{esc(tip)}">{esc(text)}{tag}</td>'


def _forecast_cells(f: Mapping | None, d: int, common: str, stop_by: str | None = None) -> str:
    if not f or row_float(f, "forecast") != row_float(f, "forecast"):
        why = (f or {}).get("reason", "no forecast")
        shown = "no forecast" if str(why).startswith("no forecast") else "n/a"
        return f'<td class="void" colspan="2" title="{esc(why)}">{shown}</td>'
    frac = bool(f.get("fraction", True))
    value = interval(row_float(f, "forecast"), f.get("forecast_ci"), d, frac)
    tip = f"{f.get('method', '')} from steps ≤ {f.get('window_end', float('nan')):.0f}, final step " \
          f"{f.get('final_step', float('nan')):.0f}"
    expected = default_method(f["target_kind"]) if f.get("target_kind") else (common or f.get("method"))
    tag = "" if f.get("method") == expected else f' <span class="muted">{esc(f.get("method", ""))}</span>'
    return f'<td title="{esc(tip)}">{value}{tag}</td>{stop_cell(f, stop_by)}'


def forecast_table_html(rows: Sequence[Mapping]) -> str:
    """Per run: the default method's forecast of the final score and its plateau, the law's
    ceiling from the same window, and the final score then observed."""
    d = decimals([row_float(r, "final_observed") for r in rows])
    from collections import Counter

    counts = Counter(r.get("method") for r in rows if r.get("method"))
    method = counts.most_common(1)[0][0] if counts else "last-value"

    pct = next((f"{100 * float(r['conf']):g} %" for r in rows if r.get("conf")), "90 %")
    head = ('<tr><th></th><th class="num">#</th><th class="l">run</th>'
            '<th title="the forecast sees only these steps: up to this step, this many scores">window ≤ step · n</th>'
            f'<th title="{esc(method)}: uses the score logged in the window">'
            f'forecast [{pct}]</th><th title="the level the {esc(method)} method expects the score to settle at">'
            f'plateau [{pct}]</th><th title="b − a of the law fitted to the window\'s (entropy, score) pairs">'
            f'law ceiling [{pct}]</th><th title="the final score: a validation score at the run\'s last step, a training score\'s mean over the last 5 % of steps (hover a value)">'
            'observed</th><th title="observed final score inside the forecast\'s interval">in?</th></tr>')
    body = []
    for heading, r in _family_rows(rows, 9):
        if heading:
            body.append(heading)
        frac = bool(r.get("fraction", True))
        if r.get("reason") and row_float(r, "forecast") != row_float(r, "forecast"):
            body.append(f"<tr><td>{swatch(r)}</td>{_run_cells(r)}"
                        f'<td class="why" colspan="6" title="{esc(r["reason"])}">'
                        f'{esc(r["reason"] if r["reason"].startswith("no forecast") else "no forecast: " + r["reason"])}'
                        '</td></tr>')
            continue
        window = f"≤ {r.get('window_end', float('nan')):.0f} · {r.get('n_window', '?')}"
        f, obs = row_float(r, "forecast"), row_float(r, "final_observed")
        ci = r.get("forecast_ci")
        inside = "" if ci is None or obs != obs else ("✓" if ci[0] <= obs <= ci[1] else "✗")
        law = interval(row_float(r, "law_ceiling"), r.get("law_ceiling_ci"), d, frac)
        law_cell = (f'<td title="{esc(r.get("law_reason", ""))}" class="void">n/a</td>' if law == "n/a"
                    else f"<td>{law}</td>")
        body.append(
            f"<tr><td>{swatch(r)}</td>{_run_cells(r)}<td>{esc(window)}</td><td>{interval(f, ci, d, frac)}"
            + ("" if r.get("method") in (None, method) else f' <span class="muted">{esc(r["method"])}</span>')
            + "</td>"
            f"<td>{interval(row_float(r, 'plateau'), r.get('plateau_ci'), d, frac)}</td>{law_cell}"
            f'<td title="{esc(r.get("final_what", ""))}">{cell(obs, d)}</td><td>{inside}</td></tr>')
    return f'<table class="runs"><thead>{head}</thead><tbody>{"".join(body).replace("†", "<span class=dagger>†</span>")}</tbody></table>'
