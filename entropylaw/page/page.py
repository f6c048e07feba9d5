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
score_key, score_kind, n, a, a_stderr, b, b_stderr, ceiling, ceiling_ci, ceiling_void, r2,
rmse, final_observed, trust, trust_reasons, why, why_more, why_all, best_form, fraction``;
missing numbers show as ``n/a``. A forecast row: ``window_end, n_window, final_step,
final_observed, forecast, forecast_ci, inside, plateau, plateau_ci, law_ceiling,
law_ceiling_ci, method, method_tag, call, call_tag, conf, reason``. The first table's columns
are one spec (:data:`entropylaw.results.columns.COLUMNS`); the methods' names come with the
results (:attr:`entropylaw.results.model.RunResults.methods`): the page computes nothing.

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
from entropylaw.page.cells import (_family_rows, _mixed_within_families, _run_cells, breakable, cell, decimals, esc,
                                     flag, interval, pm, swatch)
from entropylaw.page.forecasts import (_forecast_cell, beyond_key, call_cell, forecast_table_html, left_out_columns,
                                     live_table_html)
from entropylaw.page.model import PageModel, ReportFigure
from entropylaw.page.project import overview_html
from entropylaw.results.columns import COLUMNS, Column, shown
from entropylaw.results.values import row_float


def _head(c: Column, names: Mapping, pct: str, fit_frac: float | None = None) -> str:
    """A column's heading: its text, a muted second line, what it means on hover; ``fit_frac``: the
    forecasts' window in a backtest, said in the headings (a finished run's "continue" is the call
    made at its first 15 %, not now)."""
    fill = {"pct": pct, "method": names.get("method", "default"),
            "call_method": f", {names['call_method']}" if names.get("call_method") else "",
            "window": f", first {100 * fit_frac:g} %" if fit_frac else "",
            "at": f", at {100 * fit_frac:g} %" if fit_frac else ""}
    cls = {"number": ' class="num"', "run": ' class="l"', "flag": ' class="l"', "why": ' class="l"'}.get(c.cell, "")
    tip = f' title="{esc(c.tip.format(**fill))}"' if c.tip else ""
    sub = f'<br><span class="muted">{esc(c.sub.format(**fill))}</span>' if c.sub else ""
    return f"<th{cls}{tip}>{esc(c.header.format(**fill))}{sub}</th>"


def _cell(c: Column, r: Mapping, f: Mapping | None, d: int, mixed: bool) -> str:
    """The cell of column ``c`` for run row ``r`` (``f``: its forecast row), drawn as its kind says."""
    kind = c.cell
    if kind == "swatch":
        return f"<td>{swatch(r)}</td>"
    if kind == "number":
        return f'<td class="num">{esc(r.get(c.key, ""))}</td>'
    if kind == "run":
        return _run_cells(r, mixed, number=False)
    if kind == "forecast":
        return _forecast_cell(f, d)
    if kind == "call":
        return call_cell(f or {})
    if kind == "flag":
        return f'<td class="l">{flag(str(r.get(c.key) or ""))}</td>'
    if kind == "why":
        more = f" (+{r['why_more']})" if r.get("why_more") else ""
        return f'<td class="why" title="{esc(r.get("why_all", ""))}">{esc(str(r.get("why", "")) + more)}</td>'
    value = row_float(r, c.key)
    if kind == "interval" and r.get("no_law"):  # where the law's ceiling would be: why there is none
        return f'<td class="void" title="{esc(r["no_law"])}">no law fit</td>'
    if kind == "interval":
        text = interval(value, r.get(f"{c.key}_ci"), d, bool(r.get("fraction", True)))
        text = text.replace("†", '<span class="dagger" title="the interval leaves [0, 1]">†</span>')
        if r.get(f"{c.key}_void") and text != "n/a":
            text = f'<span class="void" title="{esc(r[f"{c.key}_void"])}">({text})</span>'
        return f"<td>{text}</td>"
    return f"<td>{cell(value, d if c.digits is None else c.digits)}</td>"


def summary_table(rows: Sequence[Mapping], forecasts: Sequence[Mapping] = (), names: Mapping | None = None,
                  columns: Sequence[Column] = COLUMNS, fit_frac: float | None = None) -> str:
    """The first table: one line per run, drawn from the column spec (``columns``:
    :data:`entropylaw.results.columns.COLUMNS`), its trust flag and first reason beside the
    numbers; with ``forecasts``, the forecast of the final score (interval, method), the gain to
    go and the call. ``names``: the methods' names (:attr:`RunResults.methods`)."""
    d = decimals([row_float(r, "ceiling") for r in rows] + [row_float(r, "final_observed") for r in rows])
    mixed = _mixed_within_families(rows)
    by_id = {f.get("run_id"): f for f in forecasts}
    pct = next((f"{100 * float(f['conf']):g} %" for f in forecasts if f.get("conf")), "90 %")
    cols = shown(columns, forecasts=bool(forecasts), where="page")
    head = "<tr>" + "".join(_head(c, names or {}, pct, fit_frac) for c in cols) + "</tr>"
    body = []
    for heading, r in _family_rows(rows, len(cols)):
        if heading:
            body.append(heading)
        f = by_id.get(r.get("run_id"))
        body.append("<tr>" + "".join(_cell(c, r, f, d, mixed) for c in cols) + "</tr>")
    return f'<table class="runs"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'


def _ceiling(r: Mapping, d: int) -> str:
    """A run's ceiling and its interval; where the law does not describe the run, greyed in brackets with the
    reason on hover, as in the first table (the number is no forecast wherever it is shown)."""
    text = interval(row_float(r, "ceiling"), r.get("ceiling_ci"), d, bool(r.get("fraction", True)))
    if r.get("ceiling_void") and text != "n/a":
        text = f'<span class="void" title="{esc(r["ceiling_void"])}">({text})</span>'
    return text


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
        head_cells = (f"<tr><td>{r.get('number', '')}</td><td class=\"l id\">{breakable(r.get('run_id', ''))}</td>"
                      f"<td class=\"l\">{esc(r.get('model') or '—')}<br>{esc(r.get('algorithm') or '—')}</td>"
                      f"<td class=\"l id\">{breakable(r.get('score_key') or '—')}</td>")
        if r.get("no_law"):  # the law's numbers' place: one line of why there are none
            body.append(f'{head_cells}<td class="l" colspan="8">{flag(str(r.get("trust") or ""))} no law fit: '
                        f'{esc(r["no_law"])}</td></tr>')
            continue
        body.append(
            f"{head_cells}<td>{'n/a' if n is None else int(n)}</td>"
            f"<td class=\"nums\">{pm(row_float(r, 'a'), row_float(r, 'a_stderr'), d)}</td>"
            f"<td class=\"nums\">{pm(row_float(r, 'b'), row_float(r, 'b_stderr'), d)}</td>"
            f"<td class=\"nums\">{_ceiling(r, dc)}</td>"
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
       "care, the reason says why · <b>law does not apply</b>: a ≤ 0, a not told from 0 with R² &lt; 0.5, a ceiling "
       "out of the score's reach, entropy rising or exploding, or a degenerate score: its ceiling (greyed) is not a "
       "forecast · <span class=\"dagger\">†</span> the interval leaves [0, 1]")


def forecast_key(names: Mapping) -> str:
    """Which method forecasts each kind of score (the defaults of the backtest's rule)."""
    by_kind = names.get("by_kind") or {}
    if not by_kind:
        return ""
    said = "; ".join(f"{esc(k)}: {esc(m)} (gain and call: {esc(c)})" for k, (m, c) in by_kind.items())
    return f" · forecast by the default for the score, {said}; a row that shows another names it"


KINDS = {"validation": "validation scores", "training score": "training scores"}


def defaults_said(names: Mapping) -> str:
    """The forecast section's words for the default method of each kind of score (as the first
    table's key names them), and that a row forecast by another names it.

    >>> defaults_said({"by_kind": {"validation": ("logit-drift", "logit-drift")},
    ...                "descriptions": {"logit-drift": "a drift"}})[:70]
    '<b>logit-drift</b> (a drift) is the default method for validation scor'
    """
    by_kind, said = names.get("by_kind") or {}, names.get("descriptions") or {}
    rule = ("chosen by a rule fixed in advance on the backtest of the real runs that bounds the worst run's error "
            "as well as the median's")
    other = "a row forecast by another method (where the default cannot run) names it."
    each = [(KINDS.get(k, k), m, said.get(m, "")) for k, (m, _) in by_kind.items()]
    if not each:  # no run's kind is known: the method the rows show
        each = [("", names.get("shown", ""), names.get("description", ""))]
    if len({m for _, m, _ in each}) == 1:
        kinds, m, d = " and ".join(k for k, _, _ in each), each[0][1], each[0][2]
        return (f"<b>{esc(m)}</b>" + (f" ({esc(d)})" if d else "") + " is the default method"
                + (f" for {esc(kinds)}" if kinds else "") + f", {rule}; {other}")
    return (f"The default method, {rule}, is each kind of score's own: "
            + ", ".join(f"<b>{esc(m)}</b>" + (f" ({esc(d)})" if d else "") + f" for {esc(k)}" for k, m, d in each)
            + f"; {other}")


def _names(runs) -> str:
    runs = list(runs)
    return ", ".join(esc(r) for r in runs[:8]) + (f" and {len(runs) - 8} more" if len(runs) > 8 else "")


def _left_out_html(left_out: dict, rows: Sequence[Mapping] = ()) -> str:
    """The runs the page leaves out, named under its title (each one's reason under Warnings), and
    the runs it forecasts with no law fit (each one's reason in its rows)."""
    out = ""
    if left_out:
        out += (f'<p class="sub">Left out: {len(left_out)} run{"s" if len(left_out) != 1 else ""} with no score '
                f'({_names(left_out)}; why: <a href="#warnings">Warnings</a>)</p>')
    alone = [r.get("run_id", "") for r in rows if r.get("no_law")]
    if alone:
        out += (f'<p class="sub">Forecast alone, no law fit: {len(alone)} run{"s" if len(alone) != 1 else ""} '
                f'that log{"s" if len(alone) == 1 else ""} no policy entropy ({_names(alone)}; why: in '
                f'<a href="#saturation">{"its row" if len(alone) == 1 else "their rows"}</a>)</p>')
    return out


def render_html(model: PageModel) -> str:
    """The page of ``model`` as one string (UTF-8, no external references), top-down."""
    title, runs, forecasts, fit_frac = model.title, model.runs.rows, model.runs.forecasts, model.fit_frac
    warnings, notes, sources = model.warnings, model.notes, model.sources
    figures, lead, forecast_figure = model.figures, model.lead, model.forecast_figure
    names = model.runs.methods
    n = len(runs)
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{esc(title)}</title><style>{CSS}</style>",
             f"<script>{CHECK_SCRIPT}</script></head><body>",
             f"<h1>{esc(title)}</h1>",
             f'<p class="sub">{n} run{"s" if n != 1 else ""}'
             + (" from " + ", ".join(esc(s) for s in sources) if sources else "")
             + f" · law R = −a·exp(H) + b fitted per run; its ceiling b − a is the score when the entropy is used "
               f"up · H in nats · entropylaw {esc(__version__)}</p>"
             + _left_out_html(model.runs.left_out, runs),
             '<nav><a href="#saturation">Where runs saturate</a><a href="#forecast">Forecast</a>'
             '<a href="#details">Coefficients</a><a href="#figures">Figures</a>'
             f'<a href="#warnings">Warnings ({len(warnings)})</a></nav>'
             + (overview_html(runs, forecasts, model.runs.picks) if model.runs.picks is not None else ""),
             '<section id="saturation"><h2>Where each run saturates (the law\'s ceiling), where it is heading, '
             "and whether to trust the fit</h2>"]
    if runs:
        parts.append('<div class="first"><div class="tablebox">'
                     + summary_table(runs, forecasts, names, fit_frac=fit_frac)
                     + f'<p class="key">{KEY}{forecast_key(names)}</p></div>'
                     + (figure_html(lead, side=True, heading=False) if lead else "") + "</div>")
        ids = "".join(f'<li value="{r.get("number", i + 1)}">{esc(r.get("run_id", ""))}'
                      + (f" — {esc(r['model'])}" if r.get("model") else "")
                      + (f", {esc(r['algorithm'])}" if r.get("algorithm") else "") + "</li>"
                      for i, r in enumerate(runs))
        # the figures label runs by name alone: the number is the tables' # column
        parts.append(f'<p class="muted">Each run\'s full id, by its number (the # column of the tables):</p>'
                     f'<ol class="ids">{ids}</ol>')
    else:
        parts.append("<p>No run had enough paired (entropy, score) points to fit.</p>")
    parts.append("</section>")
    parts.append(f'<section id="forecast"><h2>Forecast of each final score from the first {100 * fit_frac:g} % '
                 "of the run</h2>")
    if model.runs.live:  # backtests all: a run still training is forecast live under them, as `forecast RUN` does
        said = model.runs.live_said("this page's forecasts are", "the table under them forecasts where it ends from "
                                      "every step logged")
        parts.append(f'<p class="live">{esc(said)}</p>')
    if forecasts:
        parts.append(f'<p class="muted">Each forecast sees only the run\'s first {100 * fit_frac:g} % of steps. '
                     f"{defaults_said(names)} The <b>law ceiling</b> uses the window's (entropy, score) pairs and is "
                     "where the score would settle once the entropy is used up. ✓: the final score observed later "
                     "lies in the forecast's interval.</p>")
        gone = left_out_columns(forecasts)
        parts.append('<div class="first"><div class="tablebox">' + forecast_table_html(forecasts, names["method"])
                     + (f'<p class="key">Not shown, no run has one: {esc("; ".join(gone))}.</p>' if gone else "")
                     + (f'<p class="key">{esc(beyond_key(forecasts))}.</p>' if beyond_key(forecasts) else "")
                     + (f'<p class="key">{esc(in_sample)}</p>' if (in_sample := model.runs.in_sample_said()) else "")
                     + "</div>" + (figure_html(forecast_figure, side=True, heading=False) if forecast_figure else "")
                     + "</div>")
    else:
        parts.append("<p>No forecast could be made.</p>")
    if model.runs.live_forecasts:
        parts.append('<div class="tablebox"><p class="muted"><b>Still training</b>: each forecast from every step it '
                     "logged to its planned last step (no later score to check it against).</p>"
                     + live_table_html(model.runs.live_forecasts) + "</div>")
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
