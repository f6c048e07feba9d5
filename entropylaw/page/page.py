"""One self-contained HTML page: where each run saturates, the forecast, then the details.

The first screen answers "where does each run saturate, with what uncertainty, and can
I trust it": a compact table (one line per run, grouped by model; short labels with the
full id on hover and in the numbered list under it; numbers right-aligned with the same
decimals down a column; the fit's trust flag and its first reason on every row) beside
the ceiling figure. Then the forecast of each final score from the run's first steps,
then the coefficients, the figures (each titled by what it shows; a click opens it at
full size), and the fits' warnings grouped by kind.

Images are PNGs embedded as base64 ``data:`` URIs, styles and scripts are inline, and
nothing is fetched from the network, so the file can be mailed or attached to a review.
The page is text only (no drawing, no computing here): it renders the page's model
(:class:`entropylaw.page.model.PageModel`: the rows, the figures as PNG bytes, the notes),
which :mod:`entropylaw.page.model` computes once.

A run row is a mapping (:func:`entropylaw.results.model.run_results` makes them) with any
of ``run_id, label, family, number, color, marker, linestyle, model, algorithm,
score_key, score_kind, n, a, a_stderr, b, b_stderr, ceiling, ceiling_ci, r2, rmse,
final_observed, trust, trust_reasons, best_form, fraction``; missing numbers show as
``n/a``. A forecast row: ``window_end, n_window, final_step, final_observed, forecast,
forecast_ci, plateau, plateau_ci, law_ceiling, law_ceiling_ci, method, conf, reason``.

>>> from entropylaw.results.model import RunResults
>>> html = render_html(PageModel("demo", RunResults([{"run_id": "r1", "a": 0.1, "a_stderr": 0.01, "b": 0.8,
...                                                   "ceiling": 0.7, "ceiling_ci": (0.65, 0.75), "r2": 0.97,
...                                                   "trust": "good fit"}]), warnings=["r1: only 4 points"]))
>>> "0.100 ± 0.010" in html and "0.700 [0.650, 0.750]" in html and "only 4 points" in html
True
>>> group_warnings(["r1: only 4 points", "r2: only 6 points", "r1: a < 0"])
[('only # points', ['r1: only 4 points', 'r2: only 6 points']), ('a < #', ['r1: a < 0'])]
"""

from __future__ import annotations

import base64
import re
from typing import Mapping, Sequence

from entropylaw._version import __version__
from entropylaw.page.assets import CHECK_SCRIPT, CSS, ZOOM_SCRIPT
from entropylaw.page.audit_section import audit_section
from entropylaw.page.cells import (NOT_APPLICABLE, _family_rows, _mixed_within_families, _run_cells, breakable,
                                     cell, decimals, esc, flag, interval, pm, swatch)
from entropylaw.page.forecasts import _forecast_cells, forecast_table_html
from entropylaw.page.model import PageModel, ReportFigure
from entropylaw.page.project import MANY_RUNS, overview_html
from entropylaw.results.values import row_float


def summary_table(rows: Sequence[Mapping], forecasts: Sequence[Mapping] = ()) -> str:
    """The first table: one line per run, its trust flag and first reason beside the numbers;
    with ``forecasts``, the forecast of the final score (interval, method), the gain to go and the call."""
    d = decimals([row_float(r, "ceiling") for r in rows] + [row_float(r, "final_observed") for r in rows])
    mixed = _mixed_within_families(rows)
    by_id = {f.get("run_id"): f for f in forecasts}
    pct = next((f"{100 * float(f['conf']):g} %" for f in forecasts if f.get("conf")), "90 %")
    from entropylaw.fit.forecast.core import decision_method, default_method

    # each row's method is its kind of score's default; a row that shows another (last-value
    # where the default cannot run) names it. The header names the default when there is one
    kinds = sorted({f.get("target_kind") for f in forecasts if f.get("target_kind")})
    defaults = sorted({default_method(k) for k in kinds})
    curves = sorted({decision_method(k) for k in kinds})
    if not kinds:  # rows that do not say their kind: the column names the method most of them show
        from collections import Counter

        defaults = [m for m, _ in Counter(f.get("method") for f in forecasts if f.get("method")).most_common(1)]
        curves = [m for m, _ in Counter(f.get("call_method") for f in forecasts if f.get("call_method")).most_common(1)]
    common = defaults[0] if len(defaults) == 1 else "default"
    stop_by = curves[0] if len(curves) == 1 else ""
    fc_head = ("" if not forecasts else
               f'<th title="the final score forecast from the run\'s first steps only, {pct} interval, by {esc(common)}">'
               f'forecast [{pct}]<br><span class="muted">{esc(common)}</span></th><th title="what continuing to the '
               'run\'s last step adds (points); the call: stop / continue where the gain\'s 90 % interval lies below / '
               'above one binomial standard error of the validation set (or the window\'s noise), 1 to 3 points">'
               'gain · call<br><span class="muted">points'
               + (f", {esc(stop_by)}" if stop_by else "") + '</span></th>')
    r2_head = "" if forecasts else '<th title="R² of the fit">R²</th>'
    head = ('<tr><th></th><th class="num">#</th><th class="l">run</th>'
            '<th title="ceiling b − a of the law fitted to the whole run, 95 % interval">ceiling b−a [95 % CI]</th>'
            f'{fc_head}<th title="a validation score at the run\'s last step; a training score\'s mean over the last 5 % of steps">final score</th>{r2_head}'
            '<th class="l">trust</th><th class="l">why</th></tr>')
    body = []
    for heading, r in _family_rows(rows, 9 if forecasts else 8):
        if heading:
            body.append(heading)
        trust = str(r.get("trust") or "")
        ceiling = interval(row_float(r, "ceiling"), r.get("ceiling_ci"), d, bool(r.get("fraction", True)))
        ceiling = ceiling.replace("†", '<span class="dagger" title="the interval leaves [0, 1]">†</span>')
        if trust == NOT_APPLICABLE and ceiling != "n/a":
            ceiling = f'<span class="void" title="not a forecast: the law does not describe this run">({ceiling})</span>'
        reasons = [str(x) for x in r.get("trust_reasons") or []]
        why = reasons[0] if reasons else ("—" if trust == "good fit" else "")
        more = f" (+{len(reasons) - 1})" if len(reasons) > 1 else ""
        n = r.get("n")
        tip = "; ".join(reasons + ([f"{int(n)} paired points, score {r.get('score_key', '')}"] if n else []))
        body.append(
            f"<tr><td>{swatch(r)}</td>{_run_cells(r, mixed)}"
            f"<td>{ceiling}</td>{_forecast_cells(by_id.get(r.get('run_id')), d, common, stop_by) if forecasts else ''}"
            f"<td>{cell(row_float(r, 'final_observed'), d)}</td>{'' if forecasts else '<td>' + cell(row_float(r, 'r2'), 2) + '</td>'}"
            f'<td class="l">{flag(trust)}</td><td class="why" title="{esc(tip)}">{esc(why + more)}</td></tr>')
    return f'<table class="runs"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'


def details_table(rows: Sequence[Mapping]) -> str:
    """Every fitted number of every run (wide: it scrolls in its own box)."""
    d = decimals([row_float(r, "b") for r in rows] + [row_float(r, "a") for r in rows])
    dc = decimals([row_float(r, "ceiling") for r in rows])
    head = ('<tr><th>#</th><th class="l">run id</th><th class="l">model, algorithm</th>'
            '<th class="l">score</th><th>n</th><th>a ± s.e.</th><th>b ± s.e.</th><th>ceiling [95 % CI]</th>'
            '<th>R²</th><th title="root mean square of the residuals of the fit, in score units (in-sample)">'
            'RMSE of fit</th><th class="l" title="the functional form AIC prefers">form (AIC)</th>'
            '<th class="l">trust: every reason</th></tr>')
    body = []
    for r in rows:
        reasons = "; ".join(str(x) for x in r.get("trust_reasons") or []) or "—"
        n = r.get("n")
        body.append(
            f"<tr><td>{r.get('number', '')}</td><td class=\"l id\">{breakable(r.get('run_id', ''))}</td>"
            f"<td class=\"l\">{esc(r.get('model') or '—')}<br>{esc(r.get('algorithm') or '—')}</td>"
            f"<td class=\"l id\">{breakable(r.get('score_key') or '—')}</td><td>{'n/a' if n is None else int(n)}</td>"
            f"<td class=\"nums\">{pm(row_float(r, 'a'), row_float(r, 'a_stderr'), d)}</td>"
            f"<td class=\"nums\">{pm(row_float(r, 'b'), row_float(r, 'b_stderr'), d)}</td>"
            f"<td class=\"nums\">{interval(row_float(r, 'ceiling'), r.get('ceiling_ci'), dc, bool(r.get('fraction', True)))}</td>"
            f"<td>{cell(row_float(r, 'r2'), 2)}</td><td>{cell(row_float(r, 'rmse'), dc)}</td>"
            f"<td class=\"l\">{esc(r.get('best_form') or '—')}</td>"
            f'<td class="l">{flag(str(r.get("trust") or ""))} {esc(reasons)}</td></tr>')
    return f'<div class="scroll"><table class="details"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table></div>'


def group_warnings(messages: Sequence[str]) -> list[tuple[str, list[str]]]:
    """Warnings of the same kind together: ``[(pattern, [messages])]``, in order of first
    appearance; the pattern drops the run prefix and puts ``#`` for numbers."""
    groups: dict[str, list[str]] = {}
    for m in dict.fromkeys(messages):
        text = re.sub(r"^[^\s:]+: ", "", str(m), count=1)
        text = re.sub(r"'[^']*'", "'…'", text)
        key = re.sub(r"[-+]?\d+(\.\d+)?(e[-+]?\d+)?", "#", text)
        groups.setdefault(key, []).append(str(m))
    return list(groups.items())


def warnings_html(messages: Sequence[str]) -> str:
    if not messages:
        return "<p>The fits raised no warnings.</p>"
    items = []
    for pattern, ms in group_warnings(messages):
        if len(ms) == 1:
            items.append(f"<li>{esc(ms[0])}</li>")
        else:
            items.append(f"<li><details><summary>{len(ms)} runs: {esc(pattern)}</summary><ul>"
                         + "".join(f"<li>{esc(m)}</li>" for m in ms) + "</ul></details></li>")
    return '<ul class="warn">' + "".join(items) + "</ul>"


def figure_html(fig: ReportFigure, side: bool = False, heading: bool = True) -> str:
    data = base64.b64encode(fig.png).decode("ascii")
    title = f"<h3>{esc(fig.title)}</h3>" if heading else ""
    caption = (f"<figcaption>{esc(fig.caption)}</figcaption>" if not side else
               f'<figcaption class="muted">Click to enlarge. <details><summary>What it shows</summary>'
               f"{esc(fig.caption)}</details></figcaption>")
    return (f'<figure class="{"side" if side else ""}" id="{esc(fig.name)}">{title}'
            f'<img data-zoom alt="{esc(fig.title)}" title="click: full size" src="data:image/png;base64,{data}">'
            f"{caption}</figure>")


KEY = ("<b>good fit</b>: a &gt; 0 and distinguishable from 0, R² ≥ 0.5, ≥ 10 points · <b>weak fit</b>: usable with "
       "care, the reason says why · <b>law does not apply</b>: a ≤ 0, entropy rising or exploding, or a degenerate "
       "score: its ceiling (greyed) is not a forecast · <span class=\"dagger\">†</span> the interval leaves [0, 1]")


def forecast_key(forecasts: Sequence[Mapping]) -> str:
    """Which method forecasts each kind of score (the defaults of the backtest's rule)."""
    from entropylaw.fit.forecast.core import decision_method, default_method

    kinds = sorted({f.get("target_kind") for f in forecasts if f.get("target_kind")})
    if not kinds:
        return ""
    said = "; ".join(f"{esc(k)}: {esc(default_method(k))} (gain and call: {esc(decision_method(k))})"
                     for k in kinds)
    return f" · forecast by the default for the score, {said}; a row that shows another names it"


def render_html(model: PageModel) -> str:
    """The page of ``model`` as one string (UTF-8, no external references), top-down."""
    title, runs, forecasts, fit_frac = model.title, model.runs.rows, model.runs.forecasts, model.fit_frac
    warnings, notes, sources = model.warnings, model.notes, model.sources
    figures, lead, forecast_figure = model.figures, model.lead, model.forecast_figure
    n = len(runs)
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{esc(title)}</title><style>{CSS}</style>",
             f"<script>{CHECK_SCRIPT}</script></head><body>",
             f"<h1>{esc(title)}</h1>",
             f'<p class="sub">{n} run{"s" if n != 1 else ""}'
             + (" from " + ", ".join(esc(s) for s in sources) if sources else "")
             + f" · law R = −a·exp(H) + b fitted per run; its ceiling b − a is the score when the entropy is used "
               f"up · H in nats · entropylaw {esc(__version__)}</p>",
             '<nav><a href="#saturation">Where runs saturate</a><a href="#forecast">Forecast</a>'
             '<a href="#details">Coefficients</a><a href="#figures">Figures</a>'
             f'<a href="#warnings">Warnings ({len(warnings)})</a></nav>'
             + (overview_html(runs, forecasts) if len(runs) > MANY_RUNS else ""),  # a project: what matters first
             '<section id="saturation"><h2>Where each run saturates (the law\'s ceiling), where it is heading, '
             "and whether to trust the fit</h2>"]
    if runs:
        parts.append('<div class="first"><div class="tablebox">' + summary_table(runs, forecasts)
                     + f'<p class="key">{KEY}{forecast_key(forecasts)}</p></div>'
                     + (figure_html(lead, side=True, heading=False) if lead else "") + "</div>")
        ids = "".join(f'<li value="{r.get("number", i + 1)}">{esc(r.get("run_id", ""))}'
                      + (f" — {esc(r['model'])}" if r.get("model") else "")
                      + (f", {esc(r['algorithm'])}" if r.get("algorithm") else "") + "</li>"
                      for i, r in enumerate(runs))
        parts.append(f'<p class="muted">Runs, by the number after each label:</p><ol class="ids">{ids}</ol>')
    else:
        parts.append("<p>No run had enough paired (entropy, score) points to fit.</p>")
    parts.append("</section>")
    parts.append(f'<section id="forecast"><h2>Forecast of each final score from the first {100 * fit_frac:.0f} % '
                 "of the run</h2>")
    if forecasts:
        from collections import Counter

        from entropylaw.fit.forecast.core import describe_method
        from entropylaw.fit.forecast.core import default_method

        shown = Counter(f.get("method") for f in forecasts if f.get("method")).most_common(1)
        method = shown[0][0] if shown else default_method()  # no run could be forecast: the default, named

        parts.append(f'<p class="muted">Each forecast sees only the run\'s first {100 * fit_frac:.0f} % of steps. '
                     f"<b>{esc(method)}</b> ({esc(describe_method(method))}) is the default method, chosen by a "
                     "rule fixed in advance on the backtest of the real runs that bounds the worst run's error as "
                     "well as the median's (for training scores its own rule's choice); where it cannot run, last-value is shown and named in its row. The "
                     "<b>law ceiling</b> uses the window's (entropy, score) pairs and is where the score would "
                     "settle once the entropy is used up. ✓: the final score observed later lies in the forecast's "
                     "interval.</p>")
        parts.append('<div class="first"><div class="tablebox">' + forecast_table_html(forecasts) + "</div>"
                     + (figure_html(forecast_figure, side=True, heading=False) if forecast_figure else "") + "</div>")
    else:
        parts.append("<p>No forecast could be made.</p>")
    parts.append("</section>")
    parts.append('<section id="details"><h2>Fitted coefficients of every run, with every reason behind its '
                 "trust flag</h2>")
    parts.append(details_table(runs) if runs else "<p>No fit.</p>")
    parts += [f'<p class="muted">{esc(note)}</p>' for note in notes]
    parts.append("</section>")
    parts.append('<section id="figures"><h2>Figures (click one to see it at full size)</h2>')
    if not figures:
        parts.append("<p>No further figure could be drawn from these inputs.</p>")
    parts += [figure_html(f) for f in figures]
    parts.append("</section>")
    parts.append(audit_section(model.audits))
    parts.append(f'<section id="warnings"><h2>Warnings from the fits ({len(warnings)}, grouped by kind)</h2>')
    parts.append(warnings_html(warnings))
    parts.append("</section>")
    parts.append(f'<div id="zoom" role="dialog" aria-label="figure at full size"></div>'
                 f"<script>{ZOOM_SCRIPT}</script></body></html>")
    return "\n".join(parts)
