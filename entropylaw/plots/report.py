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

A run row is a mapping (:func:`entropylaw.plots.rows.summary_rows` makes them) with any
of ``run_id, label, family, number, color, marker, linestyle, model, algorithm,
score_key, score_kind, n, a, a_stderr, b, b_stderr, ceiling, ceiling_ci, r2, rmse,
final_observed, trust, trust_reasons, best_form, fraction``; missing numbers show as
``n/a``. A forecast row: ``window_end, n_window, final_step, final_observed, forecast,
forecast_ci, plateau, plateau_ci, law_ceiling, law_ceiling_ci, method, conf, reason``.

>>> html = render_html("demo", [{"run_id": "r1", "a": 0.1, "a_stderr": 0.01, "b": 0.8,
...                              "ceiling": 0.7, "ceiling_ci": (0.65, 0.75), "r2": 0.97,
...                              "trust": "good fit"}],
...                    figures=[], warnings=["r1: only 4 points"])
>>> "0.100 ± 0.010" in html and "0.700 [0.650, 0.750]" in html and "only 4 points" in html
True
>>> group_warnings(["r1: only 4 points", "r2: only 6 points", "r1: a < 0"])
[('only # points', ['r1: only 4 points', 'r2: only 6 points']), ('a < #', ['r1: a < 0'])]
"""

from __future__ import annotations

import base64
import html as html_lib
import io
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import matplotlib.pyplot as plt

from entropylaw import __version__
from entropylaw.fileio import atomic_dir
from entropylaw.plots.placement import settle
from entropylaw.plots.report_assets import CHECK_SCRIPT, CSS, ZOOM_SCRIPT
from entropylaw.plots.style import rc
from entropylaw.plots.report_audit import audit_section

FLAG_CLASS = {"good fit": "good", "weak fit": "weak", "law does not apply": "na"}
NOT_APPLICABLE = "law does not apply"


@dataclass
class ReportFigure:
    """A figure for the page: its title (what it shows), PNG bytes and a caption."""

    title: str
    png: bytes
    caption: str = ""
    name: str = ""


def figure_png(fig, close: bool = True) -> bytes:
    """The figure as PNG bytes without a timestamp (same figure, same bytes)."""
    settle(fig)
    buf = io.BytesIO()
    with plt.rc_context(rc()):
        fig.savefig(buf, format="png", metadata={"Software": None})
    if close:
        plt.close(fig)
    return buf.getvalue()


def _e(value) -> str:
    return html_lib.escape(str(value), quote=True)


def _num(row: Mapping, key: str) -> float:
    try:
        return float(row.get(key))
    except (TypeError, ValueError):
        return float("nan")


def decimals(values, significant: int = 3, most: int = 4) -> int:
    """Decimals that give the column's typical value ``significant`` digits (same for the column).

    >>> decimals([0.69, 0.71, 0.05]), decimals([12.5, 30.1]), decimals([])
    (3, 1, 3)
    """
    v = sorted(abs(x) for x in values if x is not None and x == x and x != 0 and math.isfinite(x))
    if not v:
        return significant
    typical = v[len(v) // 2]
    return max(0, min(most, significant - 1 - math.floor(math.log10(typical))))


def cell(value: float, d: int) -> str:
    return "n/a" if value != value else f"{value:.{d}f}"


def interval(value: float, ci, d: int, fraction: bool = True) -> str:
    """``0.699 [0.695, 0.703]``, with a dagger when a fraction's interval leaves [0, 1]."""
    if value != value:
        return "n/a"
    if ci is None or len(ci) != 2:
        return cell(value, d)
    out = f"{value:.{d}f} [{float(ci[0]):.{d}f}, {float(ci[1]):.{d}f}]"
    if fraction and (ci[0] < 0 or ci[1] > 1):
        out += "†"
    return out


def pm(value: float, err: float, d: int) -> str:
    if value != value:
        return "n/a"
    return cell(value, d) if err != err else f"{value:.{d}f} ± {err:.{d}f}"


def swatch(row: Mapping) -> str:
    """A small line and marker in the run's colour: the key to the run in every figure."""
    c = _e(row.get("color") or "#888")
    dash = {"--": ' stroke-dasharray="4 2"', ":": ' stroke-dasharray="1.5 2"', "-.": ' stroke-dasharray="4 2 1 2"'}
    ls = dash.get(row.get("linestyle") or "-", "")
    shape = {"s": f'<rect x="8" y="2" width="6" height="6" fill="{c}"/>',
             "^": f'<polygon points="11,1.5 15,8.5 7,8.5" fill="{c}"/>',
             "D": f'<polygon points="11,1 15,5 11,9 7,5" fill="{c}"/>'}.get(
        row.get("marker") or "o", f'<circle cx="11" cy="5" r="3.2" fill="{c}"/>')
    return (f'<svg class="swatch" width="22" height="10" viewBox="0 0 22 10" aria-hidden="true">'
            f'<line x1="0" y1="5" x2="22" y2="5" stroke="{c}" stroke-width="1.6"{ls}/>{shape}</svg>')


def flag(trust: str) -> str:
    return f'<span class="flag {FLAG_CLASS.get(trust, "none")}">{_e(trust or "no fit")}</span>'


def _run_cells(row: Mapping, mixed_kinds: bool = False) -> str:
    """The run's number (its line in the list of full ids) and its short label (full id on hover)."""
    full = row.get("run_id", "")
    label = row.get("label") or full
    tag = ""
    if mixed_kinds and row.get("score_kind") == "training score":
        tag = ' <span class="void" title="fitted to the training score: the run logs no validation">train</span>'
    return (f'<td class="num">{row.get("number", "")}</td>'
            f'<td class="l run" title="{_e(full)}">{_e(label)}{tag}</td>')


def _kinds(rows) -> set:
    return {r.get("score_kind") for r in rows if r.get("score_kind")}


def _family_rows(rows, ncols):
    """Yield ``(family heading or None, row)``: a heading where the family changes (several
    families only), saying which score its runs were fitted to when they agree."""
    families = [r.get("family") for r in rows]
    several = len(set(families)) > 1
    for i, row in enumerate(rows):
        fam = families[i]
        if several and fam and (i == 0 or fam != families[i - 1]):
            members = [r for r in rows if r.get("family") == fam]
            kinds = _kinds(members)
            kind = {"validation": " · validation score", "training score": " · training score (no validation "
                    "logged)"}.get(next(iter(kinds)), "") if len(kinds) == 1 else ""
            n = len(members)
            yield (f'<tr class="family"><td colspan="{ncols}">{_e(fam)} · {n} run{"s" if n > 1 else ""}{_e(kind)}'
                   "</td></tr>"), row
        else:
            yield None, row


def _mixed_within_families(rows) -> bool:
    fams = {}
    for r in rows:
        fams.setdefault(r.get("family"), []).append(r)
    return any(len(_kinds(m)) > 1 for m in fams.values()) or (len(fams) == 1 and len(_kinds(rows)) > 1)


def stop_cell(f: Mapping) -> str:
    """The stop-paying step of one forecast row, with its interval in the tooltip."""
    if f.get("stop_now"):
        text = "now"
    elif f.get("stop_step") is not None:
        text = f"{f['stop_step']:.0f}"
    elif f.get("stop_searched_to") is not None:
        text = f"> {f['stop_searched_to']:.0f}"
    else:
        return '<td class="void">n/a</td>'
    ci = f.get("stop_step_ci")
    span = "" if ci is None else " [" + ", ".join("never" if v is None else f"{v:.0f}" for v in ci) + "]"
    tip = (f"step after which the expected gain over the next {f.get('lookahead', 0):.0f} steps is below "
           f"{f.get('stop_threshold', 0):.4f} ({f.get('stop_source', '')}); interval{span}")
    return f'<td title="{_e(tip)}">{_e(text)}</td>'


def _forecast_cells(f: Mapping | None, d: int, common: str) -> str:
    if not f or _num(f, "forecast") != _num(f, "forecast"):
        why = (f or {}).get("reason", "no forecast")
        return f'<td class="void" colspan="2" title="{_e(why)}">n/a</td>'
    frac = bool(f.get("fraction", True))
    value = interval(_num(f, "forecast"), f.get("forecast_ci"), d, frac)
    tip = f"{f.get('method', '')} from steps ≤ {f.get('window_end', float('nan')):.0f}, final step " \
          f"{f.get('final_step', float('nan')):.0f}"
    tag = "" if f.get("method") == common else f' <span class="muted">{_e(f.get("method", ""))}</span>'
    return f'<td title="{_e(tip)}">{value}{tag}</td>{stop_cell(f)}'


def summary_table(rows: Sequence[Mapping], forecasts: Sequence[Mapping] = ()) -> str:
    """The first table: one line per run, its trust flag and first reason beside the numbers;
    with ``forecasts``, the forecast of the final score (interval, method) and the stop-paying step."""
    d = decimals([_num(r, "ceiling") for r in rows] + [_num(r, "final_observed") for r in rows])
    mixed = _mixed_within_families(rows)
    by_id = {f.get("run_id"): f for f in forecasts}
    pct = next((f"{100 * float(f['conf']):g} %" for f in forecasts if f.get("conf")), "90 %")
    common = next((f.get("method") for f in forecasts if f.get("method")), "")
    stop_by = next((f.get("stop_method") for f in forecasts if f.get("stop_method")), common)
    fc_head = ("" if not forecasts else
               f'<th title="the final score forecast from the run\'s first steps only, {pct} interval, by {_e(common)}">'
               f'forecast [{pct}]<br><span class="muted">{_e(common)}</span></th><th title="the step after which '
               'the expected gain over the next 10 % of the run is below one binomial standard error of the '
               'validation set (or the window\'s noise)">stop paying<br><span class="muted">step, '
               f'{_e(stop_by)}</span></th>')
    r2_head = "" if forecasts else '<th title="R² of the fit">R²</th>'
    head = ('<tr><th></th><th class="num">#</th><th class="l">run</th>'
            '<th title="ceiling b − a of the law fitted to the whole run, 95 % interval">ceiling b−a [95 % CI]</th>'
            f'{fc_head}<th title="the last score logged">final score</th>{r2_head}'
            '<th class="l">trust</th><th class="l">why</th></tr>')
    body = []
    for heading, r in _family_rows(rows, 9 if forecasts else 8):
        if heading:
            body.append(heading)
        trust = str(r.get("trust") or "")
        ceiling = interval(_num(r, "ceiling"), r.get("ceiling_ci"), d, bool(r.get("fraction", True)))
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
            f"<td>{ceiling}</td>{_forecast_cells(by_id.get(r.get('run_id')), d, common) if forecasts else ''}"
            f"<td>{cell(_num(r, 'final_observed'), d)}</td>{'' if forecasts else '<td>' + cell(_num(r, 'r2'), 2) + '</td>'}"
            f'<td class="l">{flag(trust)}</td><td class="why" title="{_e(tip)}">{_e(why + more)}</td></tr>')
    return f'<table class="runs"><thead>{head}</thead><tbody>{"".join(body)}</tbody></table>'


def forecast_table(rows: Sequence[Mapping]) -> str:
    """Per run: the default method's forecast of the final score and its plateau, the law's
    ceiling from the same window, and the final score then observed."""
    d = decimals([_num(r, "final_observed") for r in rows])
    method = next((r.get("method") for r in rows if r.get("method")), "last-value")
    pct = next((f"{100 * float(r['conf']):g} %" for r in rows if r.get("conf")), "90 %")
    head = ('<tr><th></th><th class="num">#</th><th class="l">run</th>'
            '<th title="the forecast sees only these steps: up to this step, this many scores">window ≤ step · n</th>'
            f'<th title="{_e(method)}: uses the score logged in the window">'
            f'forecast [{pct}]</th><th title="the level the {_e(method)} method expects the score to settle at">'
            f'plateau [{pct}]</th><th title="b − a of the law fitted to the window\'s (entropy, score) pairs">'
            f'law ceiling [{pct}]</th><th title="the score at the run\'s last step (hover a value: the step)">'
            'observed</th><th title="observed final score inside the forecast\'s interval">in?</th></tr>')
    body = []
    for heading, r in _family_rows(rows, 9):
        if heading:
            body.append(heading)
        frac = bool(r.get("fraction", True))
        if r.get("reason") and _num(r, "forecast") != _num(r, "forecast"):
            body.append(f"<tr><td>{swatch(r)}</td>{_run_cells(r)}"
                        f'<td class="why" colspan="6" title="{_e(r["reason"])}">no forecast: {_e(r["reason"])}</td></tr>')
            continue
        window = f"≤ {r.get('window_end', float('nan')):.0f} · {r.get('n_window', '?')}"
        f, obs = _num(r, "forecast"), _num(r, "final_observed")
        ci = r.get("forecast_ci")
        inside = "" if ci is None or obs != obs else ("✓" if ci[0] <= obs <= ci[1] else "✗")
        law = interval(_num(r, "law_ceiling"), r.get("law_ceiling_ci"), d, frac)
        law_cell = (f'<td title="{_e(r.get("law_reason", ""))}" class="void">n/a</td>' if law == "n/a"
                    else f"<td>{law}</td>")
        body.append(
            f"<tr><td>{swatch(r)}</td>{_run_cells(r)}<td>{_e(window)}</td><td>{interval(f, ci, d, frac)}</td>"
            f"<td>{interval(_num(r, 'plateau'), r.get('plateau_ci'), d, frac)}</td>{law_cell}"
            f'<td title="step {cell(_num(r, "final_step"), 0)}">{cell(obs, d)}</td><td>{inside}</td></tr>')
    return f'<table class="runs"><thead>{head}</thead><tbody>{"".join(body).replace("†", "<span class=dagger>†</span>")}</tbody></table>'


def details_table(rows: Sequence[Mapping]) -> str:
    """Every fitted number of every run (wide: it scrolls in its own box)."""
    d = decimals([_num(r, "b") for r in rows] + [_num(r, "a") for r in rows])
    dc = decimals([_num(r, "ceiling") for r in rows])
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
            f"<tr><td>{r.get('number', '')}</td><td class=\"l id\">{_e(r.get('run_id', ''))}</td>"
            f"<td class=\"l\">{_e(r.get('model') or '—')}<br>{_e(r.get('algorithm') or '—')}</td>"
            f"<td class=\"l id\">{_e(r.get('score_key') or '—')}</td><td>{'n/a' if n is None else int(n)}</td>"
            f"<td class=\"nums\">{pm(_num(r, 'a'), _num(r, 'a_stderr'), d)}</td>"
            f"<td class=\"nums\">{pm(_num(r, 'b'), _num(r, 'b_stderr'), d)}</td>"
            f"<td class=\"nums\">{interval(_num(r, 'ceiling'), r.get('ceiling_ci'), dc, bool(r.get('fraction', True)))}</td>"
            f"<td>{cell(_num(r, 'r2'), 2)}</td><td>{cell(_num(r, 'rmse'), dc)}</td>"
            f"<td class=\"l\">{_e(r.get('best_form') or '—')}</td>"
            f'<td class="l">{flag(str(r.get("trust") or ""))} {_e(reasons)}</td></tr>')
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
            items.append(f"<li>{_e(ms[0])}</li>")
        else:
            items.append(f"<li><details><summary>{len(ms)} runs: {_e(pattern)}</summary><ul>"
                         + "".join(f"<li>{_e(m)}</li>" for m in ms) + "</ul></details></li>")
    return '<ul class="warn">' + "".join(items) + "</ul>"


def figure_html(fig: ReportFigure, side: bool = False, heading: bool = True) -> str:
    data = base64.b64encode(fig.png).decode("ascii")
    title = f"<h3>{_e(fig.title)}</h3>" if heading else ""
    caption = (f"<figcaption>{_e(fig.caption)}</figcaption>" if not side else
               f'<figcaption class="muted">Click to enlarge. <details><summary>What it shows</summary>'
               f"{_e(fig.caption)}</details></figcaption>")
    return (f'<figure class="{"side" if side else ""}" id="{_e(fig.name)}">{title}'
            f'<img data-zoom alt="{_e(fig.title)}" title="click: full size" src="data:image/png;base64,{data}">'
            f"{caption}</figure>")


KEY = ("<b>good fit</b>: a &gt; 0 and distinguishable from 0, R² ≥ 0.5, ≥ 10 points · <b>weak fit</b>: usable with "
       "care, the reason says why · <b>law does not apply</b>: a ≤ 0, entropy rising or exploding, or a degenerate "
       "score: its ceiling (greyed) is not a forecast · <span class=\"dagger\">†</span> the interval leaves [0, 1]")


def render_html(title: str, runs: Sequence[Mapping], figures: Sequence[ReportFigure],
                warnings: Sequence[str] = (), notes: Sequence[str] = (), sources: Sequence[str] = (),
                forecasts: Sequence[Mapping] = (), lead: ReportFigure | None = None,
                forecast_figure: ReportFigure | None = None, fit_frac: float = 0.15,
                audits: Sequence[Mapping] = ()) -> str:
    """The page as one string (UTF-8, no external references); ``audits``: ``entropylaw audit`` results."""
    n = len(runs)
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{_e(title)}</title><style>{CSS}</style>",
             f"<script>{CHECK_SCRIPT}</script></head><body>",
             f"<h1>{_e(title)}</h1>",
             f'<p class="sub">{n} run{"s" if n != 1 else ""}'
             + (" from " + ", ".join(_e(s) for s in sources) if sources else "")
             + f" · law R = −a·exp(H) + b fitted per run; its ceiling b − a is the score when the entropy is used "
               f"up · H in nats · entropylaw {_e(__version__)}</p>",
             '<nav><a href="#saturation">Where runs saturate</a><a href="#forecast">Forecast</a>'
             '<a href="#details">Coefficients</a><a href="#figures">Figures</a>'
             f'<a href="#warnings">Warnings ({len(warnings)})</a></nav>',
             '<section id="saturation"><h2>Where each run saturates (the law\'s ceiling), where it is heading, '
             "and whether to trust the fit</h2>"]
    if runs:
        parts.append('<div class="first"><div class="tablebox">' + summary_table(runs, forecasts)
                     + f'<p class="key">{KEY}</p></div>'
                     + (figure_html(lead, side=True, heading=False) if lead else "") + "</div>")
        ids = "".join(f'<li value="{r.get("number", i + 1)}">{_e(r.get("run_id", ""))}'
                      + (f" — {_e(r['model'])}" if r.get("model") else "")
                      + (f", {_e(r['algorithm'])}" if r.get("algorithm") else "") + "</li>"
                      for i, r in enumerate(runs))
        parts.append(f'<p class="muted">Runs, by the number after each label:</p><ol class="ids">{ids}</ol>')
    else:
        parts.append("<p>No run had enough paired (entropy, score) points to fit.</p>")
    parts.append("</section>")
    parts.append(f'<section id="forecast"><h2>Forecast of each final score from the first {100 * fit_frac:.0f} % '
                 "of the run</h2>")
    if forecasts:
        method = next((r.get("method") for r in forecasts if r.get("method")), "last-value")
        parts.append(f'<p class="muted">Each forecast sees only the run\'s first {100 * fit_frac:.0f} % of steps. '
                     f"<b>{_e(method)}</b> (the default method, chosen by a rule fixed in advance: the lowest median "
                     "error of the final validation score at 15 % of the run in the backtest on the real runs) uses the "
                     "score in that window; the <b>law ceiling</b> "
                     "uses the window's (entropy, score) pairs and is where the score would settle once the entropy "
                     "is used up. ✓: the final score observed later lies in the forecast's interval.</p>")
        parts.append('<div class="first"><div class="tablebox">' + forecast_table(forecasts) + "</div>"
                     + (figure_html(forecast_figure, side=True, heading=False) if forecast_figure else "") + "</div>")
    else:
        parts.append("<p>No forecast could be made.</p>")
    parts.append("</section>")
    parts.append('<section id="details"><h2>Fitted coefficients of every run, with every reason behind its '
                 "trust flag</h2>")
    parts.append(details_table(runs) if runs else "<p>No fit.</p>")
    parts += [f'<p class="muted">{_e(note)}</p>' for note in notes]
    parts.append("</section>")
    parts.append('<section id="figures"><h2>Figures (click one to see it at full size)</h2>')
    if not figures:
        parts.append("<p>No further figure could be drawn from these inputs.</p>")
    parts += [figure_html(f) for f in figures]
    parts.append("</section>")
    parts.append(audit_section(audits))
    parts.append(f'<section id="warnings"><h2>Warnings from the fits ({len(warnings)}, grouped by kind)</h2>')
    parts.append(warnings_html(warnings))
    parts.append("</section>")
    parts.append(f'<div id="zoom" role="dialog" aria-label="figure at full size"></div>'
                 f"<script>{ZOOM_SCRIPT}</script></body></html>")
    return "\n".join(parts)


def write_report(html: str, out_dir: str | os.PathLike, name: str = "report.html") -> Path:
    """Write the page into ``out_dir``: a new directory appears whole or not at all
    (:func:`entropylaw.fileio.atomic_dir`); returns the page's path."""
    with atomic_dir(out_dir) as tmp:
        (tmp / name).write_text(html, encoding="utf-8")
    return Path(out_dir) / name
