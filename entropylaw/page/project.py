"""The report's first screen for a whole project (more than
:data:`entropylaw.results.picks.MANY_RUNS` runs).

With 200 runs the per-run table runs for pages; a reader first wants the few runs that
matter: the best forecasts, the worst collapses (the lowest ceilings: where the entropy
runs out at the lowest score) and the fits not to trust, computed with the runs' results
(:attr:`entropylaw.results.model.RunResults.picks`). :func:`overview_html` lists those three
short lists first, then every run in one table sortable by any column (a click on its header;
plain JavaScript, no network). The page shows it after its navigation
(:func:`entropylaw.page.page.render_html`), so the rest of the page is unchanged.

>>> from entropylaw.results.picks import Picks
>>> rows = [{"run_id": f"r{i}", "number": i + 1, "ceiling": 0.5 + i / 100, "final_observed": 0.4,
...          "r2": 0.9, "trust": "good fit" if i % 5 else "weak fit", "trust_reasons": ["few points"]}
...         for i in range(20)]
>>> forecasts = [{"run_id": f"r{i}", "forecast": 0.3 + i / 50, "forecast_ci": (0.2, 0.9)} for i in range(20)]
>>> chosen = Picks(forecasts[::-1][:2], rows[1:3], [rows[0]], n_untrusted=7)
>>> html = overview_html(rows, forecasts, chosen)
>>> html.count("<li>"), "sortable" in html, html.index("r19") < html.index("r18"), "6 more" in html
(5, True, True, True)
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

from entropylaw.page.cells import esc
from entropylaw.results.picks import Picks
from entropylaw.results.values import as_float

SORT_SCRIPT = """
document.querySelectorAll('table.sortable th').forEach(function(th, col){
  th.addEventListener('click', function(){
    var body = th.closest('table').tBodies[0], rows = Array.from(body.rows);
    var dir = th.dataset.dir === 'asc' ? -1 : 1; th.dataset.dir = dir === 1 ? 'asc' : 'desc';
    rows.sort(function(a, b){
      var x = a.cells[col].dataset.v, y = b.cells[col].dataset.v;
      var nx = parseFloat(x), ny = parseFloat(y);
      if (!isNaN(nx) && !isNaN(ny)) return dir * (nx - ny);
      if (isNaN(nx) !== isNaN(ny)) return isNaN(nx) ? 1 : -1;
      return dir * String(x).localeCompare(String(y));
    });
    rows.forEach(function(r){ body.appendChild(r); });
  });
});
"""

CSS = """
#project .cols{display:flex;flex-wrap:wrap;gap:1.5em}#project .cols>div{flex:1 1 18em;min-width:16em}
#project ol{margin:.3em 0 0 1.2em;padding:0}#project li{margin:.15em 0}
table.sortable th{cursor:pointer;white-space:nowrap}table.sortable th:after{content:' \\2195';color:#999}
#project .allruns{max-height:32em;overflow:auto;margin-top:1em}
table.projecttable{border-collapse:collapse;font-size:.9em}table.projecttable td,table.projecttable th{padding:.2em .6em;
border-bottom:1px solid #ddd;text-align:right}table.projecttable td:nth-child(-n+4){text-align:left}
"""


def _cell(value, digits: int = 3) -> str:
    v = as_float(value)
    return f'<td data-v="{v if math.isfinite(v) else ""}">{f"{v:.{digits}f}" if math.isfinite(v) else "–"}</td>'


def _text(value) -> str:
    return f'<td data-v="{esc(value or "")}">{esc(value or "")}</td>'


def overview_html(rows: Sequence[Mapping], forecasts: Sequence[Mapping], chosen: Picks) -> str:
    """The project's first screen (see module docstring): the lists ``chosen`` names, then
    every run of ``rows`` with its forecast row."""
    fc = {f["run_id"]: f for f in forecasts}
    best, worst, untrusted = chosen.groups
    n_untrusted = chosen.n_untrusted

    def item(r, text, tip=""):
        title = f' title="{esc(tip)}"' if tip else ""
        return f"<li{title}><b>{esc(r['run_id'])}</b> {text}</li>"

    best_html = "".join(item(f, f"forecast {as_float(f['forecast']):.3f} "
                                f"({as_float(f['forecast_ci'][0]):.2f}–{as_float(f['forecast_ci'][1]):.2f})")
                        for f in best)
    worst_html = "".join(item(r, f"ceiling {as_float(r['ceiling']):.3f}, "
                                 f"final score {as_float(r.get('final_observed')):.3f}")
                         for r in worst)
    # each fit's first reason in full, as in the per-run table ("why"), the others on hover
    untrusted_html = "".join(item(r, f"{esc(r.get('trust', ''))}: {esc(r.get('why') or '')}"
                                     + (f" (+{r['why_more']})" if r.get("why_more") else ""), r.get("why_all", ""))
                             for r in untrusted)
    more = (f'<p class="muted">… and {chosen.more_untrusted} more (sort the table by trust)</p>'
            if chosen.more_untrusted else "")
    head = "".join(f"<th>{h}</th>" for h in ("#", "run", "model", "algorithm", "ceiling b − a", "final score",
                                             "R²", "forecast", "trust"))
    body = []
    for r in rows:
        f = fc.get(r["run_id"], {})
        body.append(f"<tr>{_cell(r.get('number'), 0)}{_text(r['run_id'])}{_text(r.get('model'))}"
                    f"{_text(r.get('algorithm'))}{_cell(r.get('ceiling'))}{_cell(r.get('final_observed'))}"
                    f"{_cell(r.get('r2'), 2)}{_cell(f.get('forecast'))}{_text(r.get('trust'))}</tr>")
    return (f'<style>{CSS}</style><section id="project"><h2>The runs that matter most, of {len(rows)}</h2>'
            '<div class="cols">'
            f"<div><h3>Best forecast final score</h3><ol>{best_html or '<li>no forecast</li>'}</ol></div>"
            f"<div><h3>Worst collapse (lowest ceiling, trusted fits)</h3><ol>{worst_html or '<li>none</li>'}</ol></div>"
            f"<div><h3>Fits not to trust ({n_untrusted})</h3><ol>{untrusted_html or '<li>none</li>'}</ol>{more}</div>"
            "</div>"
            f'<div class="allruns"><table class="sortable projecttable"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table></div>'
            '<p class="muted">Click a column header to sort. Each run\'s details follow below.</p>'
            f"<script>{SORT_SCRIPT}</script></section>")

